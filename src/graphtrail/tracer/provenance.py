"""Per-run provenance signals: what a finished run says about its own grounding, at no model cost.

Every traced run ends with the same question a team running the agent for
customers asks of each answer: did it cite what its tools showed it? These
signals answer it from data the tracer already holds when a run ends (the
citations, the entities each tool call revealed, the answer, tool errors), so
they cost no model call and no replay. They go on the root span as
``graphtrail.provenance.*`` attributes (docs/spans.md), on the
:class:`~graphtrail.tracer.Trajectory` as ``provenance``, and into the OTel
metrics (:mod:`.metrics`). docs/production.md says what each can and cannot tell.

The function here is pure (plain data in, a model out) so the handler, the
trace-file readers and the tests compute the signals the same way.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from . import attributes as A

__all__ = ["ProvenanceSignals", "provenance_signals", "signals_of", "signals_attributes", "signals_from_attributes", "ABSTENTIONS"]

#: Answers that name no entity (abstentions, yes/no): "was the answer's entity revealed" does not apply to them.
ABSTENTIONS = frozenset({
    "unknown", "i don't know", "i do not know", "no answer", "none", "n/a", "not found", "cannot answer",
    "yes", "no", "true", "false",
})
_ARTICLES = ("the ", "a ", "an ")


class ProvenanceSignals(BaseModel):
    """What one finished run reveals about its grounding (docs/production.md)."""

    model_config = ConfigDict(extra="ignore")

    grounded_citations: list[str] = Field(default_factory=list, description="cited ids some tool of this run revealed")
    unsupported_citations: list[str] = Field(
        default_factory=list, description="cited ids no tool of this run revealed: the agent named what it was never shown"
    )
    answer_revealed: bool | None = Field(
        default=None,
        description="whether a tool revealed the entity the answer names; None without an answer, for an abstention, "
        "or when the answer names no entity graphtrail can match",
    )
    visited: int = Field(default=0, description="distinct entities the tools revealed")
    visited_uncited: int = Field(default=0, description="of those, how many the answer does not cite")
    uncited_share: float | None = Field(default=None, description="visited_uncited / visited; None when nothing was visited")
    hops: int = Field(default=0, description="tool calls that finished, the answer submission not counted")
    empty_hops: int = Field(default=0, description="tool calls that revealed no entity (errors included)")
    tool_errors: int = Field(default=0, description="tool calls that raised or returned an error message")

    @property
    def has_unsupported(self) -> bool:
        return bool(self.unsupported_citations)


@functools.lru_cache(maxsize=8192)  # entity names repeat across runs: normalize each once
def _norm(text: str) -> str:
    """Case-, accent- and punctuation-folded words, leading article dropped: how names are compared."""
    decomposed = unicodedata.normalize("NFKD", text)
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    words = " ".join(re.findall(r"[\w'-]+", folded))
    for article in _ARTICLES:
        if words.startswith(article):
            return words[len(article):]
    return words


def answer_entity_revealed(answer: str | None, names: Mapping[str, Sequence[str]], question: str | None = None) -> bool | None:
    """Whether ``answer`` names an entity the run revealed (``names``: ``{id: [name, *aliases]}``).

    True when the whole answer is a revealed entity's name, alias or id ("Nairobi",
    "E0412"), or when a sentence answer contains one as whole words that the
    question does not already name ("Inception was directed by Christopher Nolan."
    for "Who directed Inception?"). False otherwise. None without an answer, for
    an abstention ("unknown") or a yes/no answer: there is no entity to look for.
    """
    if answer is None:
        return None
    norm = _norm(answer)
    if not norm or norm in ABSTENTIONS:
        return None
    asked = f" {_norm(question)} " if question else ""
    padded = f" {norm} "
    for eid, labels in names.items():
        for label in (eid, *labels):
            if not label:
                continue
            key = _norm(str(label))
            if not key:
                continue
            if key == norm:
                return True
            if len(key) >= 3 and not key.replace(" ", "").isdigit() and f" {key} " in padded and f" {key} " not in asked:
                return True
    return False


def provenance_signals(
    citations: Sequence[str],
    step_entities: Iterable[Sequence[str]],
    *,
    answer: str | None = None,
    names: Mapping[str, Sequence[str]] | None = None,
    question: str | None = None,
    tool_errors: int = 0,
    answer_revealed: bool | None = None,
    use_answer: bool = True,
) -> ProvenanceSignals:
    """The signals of one finished run.

    - ``citations``: the ids the answer cites; ``step_entities``: per finished
      tool call, the ids it revealed (an empty one for a call that revealed nothing);
    - ``answer``, ``names`` (``{id: [name, *aliases]}`` of the revealed entities),
      ``question``: for ``answer_revealed`` (see :func:`answer_entity_revealed`);
      pass ``use_answer=False`` and ``answer_revealed`` to keep a value computed
      earlier (a trace read back holds no names in some content modes);
    - ``tool_errors``: tool calls that failed.
    """
    visited: dict[str, None] = {}
    hops = empty = 0
    for ids in step_entities:
        hops += 1
        if not ids:
            empty += 1
        for eid in ids:
            visited.setdefault(eid, None)
    cited = list(dict.fromkeys(citations))
    grounded = [c for c in cited if c in visited]
    unsupported = [c for c in cited if c not in visited]
    cited_set = set(cited)
    uncited = sum(1 for e in visited if e not in cited_set)
    revealed = answer_entity_revealed(answer, names or {}, question) if use_answer else answer_revealed
    return ProvenanceSignals(
        grounded_citations=grounded,
        unsupported_citations=unsupported,
        answer_revealed=revealed,
        visited=len(visited),
        visited_uncited=uncited,
        uncited_share=(uncited / len(visited)) if visited else None,
        hops=hops,
        empty_hops=empty,
        tool_errors=tool_errors,
    )


_enc = json.encoder.encode_basestring  # a str as a JSON string literal (what ensure_ascii=False writes), in C


def _json_ids(ids: list[str]) -> str:
    """``json.dumps(ids, ensure_ascii=False)`` for a list of str, written out: json.dumps with an
    option builds a new encoder per call, and this runs twice on every run."""
    if all(type(i) is str for i in ids):
        return "[" + ", ".join(map(_enc, ids)) + "]"
    return json.dumps(ids, ensure_ascii=False)


def signals_attributes(signals: ProvenanceSignals) -> dict[str, Any]:
    """The root span's ``graphtrail.provenance.*`` attributes (docs/spans.md). Lists are JSON strings, like
    graphtrail's other list attributes; counts and the flag are plain values, so a backend's tag search finds
    ``graphtrail.provenance.unsupported_count`` > 0 without parsing JSON."""
    attrs: dict[str, Any] = {
        A.PROV_GROUNDED: _json_ids(signals.grounded_citations),
        A.PROV_UNSUPPORTED: _json_ids(signals.unsupported_citations),
        A.PROV_UNSUPPORTED_COUNT: len(signals.unsupported_citations),
        A.PROV_VISITED_COUNT: signals.visited,
        A.PROV_VISITED_UNCITED_COUNT: signals.visited_uncited,
        A.PROV_HOPS: signals.hops,
        A.PROV_EMPTY_HOPS: signals.empty_hops,
        A.PROV_TOOL_ERRORS: signals.tool_errors,
    }
    if signals.answer_revealed is not None:
        attrs[A.PROV_ANSWER_REVEALED] = signals.answer_revealed
    if signals.uncited_share is not None:
        attrs[A.PROV_UNCITED_SHARE] = signals.uncited_share
    return attrs


def _ids(value: Any) -> list[str] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return None


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def signals_from_attributes(attrs: Mapping[str, Any]) -> ProvenanceSignals | None:
    """The signals a root span carries, or None for a span written before they existed."""
    grounded, unsupported = _ids(attrs.get(A.PROV_GROUNDED)), _ids(attrs.get(A.PROV_UNSUPPORTED))
    if grounded is None or unsupported is None:
        return None
    revealed = attrs.get(A.PROV_ANSWER_REVEALED)
    if isinstance(revealed, str):  # a backend that stores every tag as text
        revealed = {"true": True, "false": False}.get(revealed.lower())
    share = attrs.get(A.PROV_UNCITED_SHARE)
    try:
        share = float(share) if share is not None else None
    except (TypeError, ValueError):
        share = None
    return ProvenanceSignals(
        grounded_citations=grounded,
        unsupported_citations=unsupported,
        answer_revealed=revealed if isinstance(revealed, bool) else None,
        visited=_count(attrs.get(A.PROV_VISITED_COUNT)) or 0,
        visited_uncited=_count(attrs.get(A.PROV_VISITED_UNCITED_COUNT)) or 0,
        uncited_share=share,
        hops=_count(attrs.get(A.PROV_HOPS)) or 0,
        empty_hops=_count(attrs.get(A.PROV_EMPTY_HOPS)) or 0,
        tool_errors=_count(attrs.get(A.PROV_TOOL_ERRORS)) or 0,
    )


def signals_of(trajectory: Any) -> ProvenanceSignals:
    """A trajectory's signals: the ones recorded when its run ended, else computed from what it holds
    (a trajectory read from a file written before the signals existed). Computed ones know the entity
    names only as the trace recorded them, so ``answer_revealed`` may be None in ``ids-only``/``none`` modes."""
    recorded = getattr(trajectory, "provenance", None)
    if recorded is not None:
        return recorded
    steps = [s for s in trajectory.steps if s.tool != "submit_answer"]
    names: dict[str, list[str]] = {}
    for step in steps:
        for entity in step.entities:
            if entity.name:
                names.setdefault(entity.id, []).append(entity.name)
    answer = trajectory.answer if trajectory.status == "ok" else None
    return provenance_signals(
        trajectory.citations,
        (s.entity_ids for s in steps),
        answer=answer,
        names=names,
        question=trajectory.question,
        tool_errors=sum(1 for s in trajectory.steps if s.error),
    )
