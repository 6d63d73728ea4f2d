"""Descriptions, by whom they belong to: withheld text goes wherever it appears, a kept entity's own text is never a leak.

An ablation withholds the text of hidden, masked and text-blocked entities.
What the real data would then show is the same output without that text, in
whatever shape the tool wrote it (a JSON value under any key, a line of a
passage, a table cell, a sentence of prose). So the output filter removes each
withheld description wherever it appears verbatim (:func:`remove_withheld`),
and the over-filtering check does not count what that removal took.

The other way round, a kept entity's description is its own property: deleting
another entity does not rewrite it. A hidden name inside it ("explained fission
with Otto Hahn") is no leak and no reason to cut the line, the row or the
sentence that holds it (:func:`without_kept_descriptions`).

Descriptions come from the evaluation's :class:`~.leaks.EntityNames` (the KG's,
and those the baseline runs' tools showed); those under
:data:`~.textleaks.MIN_WORDS` words are ordinary text and are left alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.messages import ToolMessage

from ....kg.views import GraphFilter
from .textleaks import MIN_WORDS, words

__all__ = ["withheld_texts", "remove_withheld", "without_kept_descriptions", "map_strings"]

#: A token no name holds: what a kept description is replaced by before names are read, so no phrase spans the gap.
_GAP = " graphtrailgap "


def _long_enough(text: str) -> bool:
    return len(words(text)) >= MIN_WORDS


def withheld_texts(graph_filter: GraphFilter, names: Any, text: str) -> list[str]:
    """The descriptions ``graph_filter`` withholds (of its hidden, masked and text-blocked entities) that ``text``
    may quote, longest first: only the entities the span index finds in ``text`` are looked at, so the cost does
    not grow with the withheld set (``full_isolation`` withholds nearly the whole graph)."""
    spans = getattr(names, "spans", None)
    if spans is None or not text:
        return []
    withheld = graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked
    owners = {eid for _, ids in spans.found(text) for eid in ids if eid in withheld}
    found = {t for eid in owners for t in spans.texts(eid) if _long_enough(t)}
    return sorted(found, key=len, reverse=True)


def _variants(text: str) -> list[str]:
    """``text`` as it appears raw and inside JSON strings (escaped, with and without ``ensure_ascii``)."""
    out = [text, json.dumps(text, ensure_ascii=False)[1:-1], json.dumps(text)[1:-1]]
    return list(dict.fromkeys(out))


def _remover(texts: Iterable[str]) -> Callable[[str], str] | None:
    variants = sorted({v for t in texts for v in _variants(t)}, key=len, reverse=True)
    if not variants:
        return None
    alternation = "|".join(re.escape(v) for v in variants)
    # a description that is a whole line goes with its line (a passage keeps its shape); elsewhere it goes alone
    whole_line = re.compile(rf"^[ \t]*(?:{alternation})[ \t]*(?:\r\n|\n|\r|$)", re.MULTILINE)
    inline = re.compile(rf"[ \t]?(?:{alternation})")

    def remove(value: str) -> str:
        if not any(v in value for v in variants):
            return value
        return inline.sub("", whole_line.sub("", value))

    return remove


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` with ``fn`` applied to every string in it (nested dicts, lists, tuples, a ToolMessage, Documents)."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, ToolMessage):
        return value.model_copy(update={"content": map_strings(value.content, fn), "artifact": map_strings(value.artifact, fn)})
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, tuple):
        return tuple(map_strings(v, fn) for v in value)
    page = getattr(value, "page_content", None)  # a retriever's Document: its text and its metadata
    if isinstance(page, str) and hasattr(value, "model_copy"):
        return value.model_copy(update={"page_content": fn(page), "metadata": map_strings(getattr(value, "metadata", {}), fn)})
    return value


def remove_withheld(output: Any, graph_filter: GraphFilter, names: Any) -> Any:
    """``output`` without any withheld description, wherever it appears verbatim (in any string, at any depth)."""
    if getattr(names, "spans", None) is None or not (graph_filter.hidden or graph_filter.masked or graph_filter.text_blocked):
        return output

    def remove(value: str) -> str:
        if len(value) < 8:
            return value
        remover = _remover(withheld_texts(graph_filter, names, value))
        return value if remover is None else remover(value)

    return map_strings(output, remove)


def without_kept_descriptions(text: str, graph_filter: GraphFilter, names: Any) -> str:
    """``text`` with the descriptions of entities ``graph_filter`` keeps cut out, for reading names in it.

    Only descriptions the span index finds in ``text`` are looked at, so a text
    quoting none costs one index lookup per word.
    """
    spans = getattr(names, "spans", None)
    if spans is None or not text:
        return text
    withheld = graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked
    owners = {eid for _, ids in spans.found(text) for eid in ids if eid not in withheld}
    if not owners:
        return text
    kept = [t for eid in sorted(owners) for t in spans.texts(eid) if _long_enough(t)]
    out = text
    for description in sorted(kept, key=len, reverse=True):
        pattern = r"\W+".join(re.escape(w) for w in re.findall(r"\w+", description))
        if pattern:
            out = re.sub(pattern, _GAP, out, flags=re.IGNORECASE)
    return out
