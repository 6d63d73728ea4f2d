"""Plain text cut by its attribution unit: the passage that belongs to a withheld entity goes whole.

A retriever tool answers with passages joined by blank lines, each about one
entity and headed by its name (``"Lise Meitner: Austrian physicist ..."``,
``"## Lise Meitner"``, ``"Lise Meitner (id: p1)"``). A passage is its entity's
text, as a Document is (docs/ablations.md, "What an ablation does"): with the
entity hidden, masked or text-blocked, the passage goes whole, its other lines
("Colleague: Otto Hahn") with it, not only the line naming it. The other
passages are the other entities' text and stay as they are: a name of a hidden
entity inside one is for the model-input check to judge (it refuses the
condition rather than guess whether the passage is a stored text or a rendering
of the graph's edges).

Used only where *every* passage is headed by one entity the evaluation knows (by
id, name or alias; a masked one also by its placeholder); otherwise the line
heuristic of :mod:`.filters` applies. Either way the cut is read from plain text:
the call's method is ``estimated`` (:mod:`.method`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ....kg.relabel import placeholder
from ....kg.views import GraphFilter

__all__ = ["cut_passages"]

_BLOCKS = re.compile(r"\n[ \t]*\n+")
_ID_MENTION = re.compile(r"\(\s*(?:id|element_?id|node_?id)\s*[:=][^)]*\)", re.IGNORECASE)
_MARKS = " \t#*>_-•"


def _key(text: str) -> str:
    from .leaks import _key as key

    return key(text, True)


def _heading(line: str) -> str:
    """What a passage's first line names: the text before its first ``": "`` (or the whole line), marks aside."""
    line = _ID_MENTION.sub(" ", line).strip(_MARKS)
    head, colon, _rest = line.partition(":")
    return head.strip(_MARKS) if colon else line


def _owner(heading: str, labels: Mapping[str, str], known: Any) -> str | None:
    if not heading:
        return None
    key = _key(heading)
    if key in labels:
        return labels[key]
    if known is None:
        return None
    folded, exact = known.index()
    from .leaks import _key as raw_key

    match = folded.get(raw_key(heading, True)) or exact.get(raw_key(heading, False)) or ()
    ids = {eid for eid, _ in match}
    return next(iter(ids)) if len(ids) == 1 else None


def cut_passages(text: str, f: GraphFilter, names: Mapping[str, str], known: Any = None) -> str | None:
    """``text`` without the passages of withheld entities; ``None`` when ``text`` is not passages each headed by
    one known entity (then the caller cuts by lines)."""
    withheld = f.hidden | f.masked | f.text_blocked
    blocks = [b for b in _BLOCKS.split(text.strip("\n")) if b.strip()]
    if not withheld or len(blocks) < 2:  # one block: a passage or a list of lines, which the line cut reads
        return None
    labels: dict[str, str] = {}
    for eid in withheld:
        terms = [eid, names.get(eid), *(known.of(eid) if known is not None else ())]
        if eid in f.masked:
            terms += [placeholder(f, eid, t) for t in terms[1:] if t] + [f.masked_name(eid)]
        for term in terms:
            if isinstance(term, str) and term.strip():
                labels.setdefault(_key(term), eid)
    owners = [_owner(_heading(b.strip().splitlines()[0]), labels, known) for b in blocks]
    if any(o is None for o in owners):
        return None
    kept = [b for b, o in zip(blocks, owners) if o not in withheld]
    if len(kept) == len(blocks):
        return text
    return "\n\n".join(b.strip("\n") for b in kept)
