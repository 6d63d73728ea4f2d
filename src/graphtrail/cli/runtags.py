"""Which ablation condition and question each run in a trace file belongs to, and filters on them.

An evaluation's ``replay-traces.jsonl`` holds one trace per replay; its root span
carries ``graphtrail.condition``, ``graphtrail.question_id``, ``graphtrail.variant``
and ``graphtrail.trial``. ``graphtrail traces`` labels each panel with them and
filters on ``--condition`` / ``--question``. The tags are read from the root
spans' attributes, falling back to the trajectory's metadata (a
``trajectories.jsonl`` file, or spans without the attributes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._listing import listing
from .errors import InputError

__all__ = ["RunTags", "root_tags", "tags_of", "filter_runs", "describe_tags", "condition_counts"]

_KEYS = {
    "graphtrail.condition": "condition",
    "graphtrail.question_id": "question_id",
    "graphtrail.variant": "variant",
    "graphtrail.trial": "trial",
}


@dataclass(frozen=True)
class RunTags:
    condition: str | None = None
    question_id: str | None = None
    variant: str | None = None
    trial: int | None = None


def _value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "intValue", "doubleValue", "boolValue"):
        if key in value:
            return value[key]
    return None


def root_tags(records: Iterable[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """``(trace_id, span_id) -> {condition, question_id, variant, trial}`` for every span carrying them."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for doc in records:
        for rs in doc.get("resourceSpans") or doc.get("resource_spans") or []:
            for ss in rs.get("scopeSpans") or rs.get("scope_spans") or []:
                for span in ss.get("spans") or []:
                    found = {
                        _KEYS[a["key"]]: _value(a.get("value"))
                        for a in span.get("attributes") or []
                        if isinstance(a, dict) and a.get("key") in _KEYS
                    }
                    if found:
                        out[(str(span.get("traceId", "")).lower(), str(span.get("spanId", "")).lower())] = found
    return out


def tags_of(traj: Any, roots: dict[tuple[str, str], dict[str, Any]]) -> RunTags:
    found = dict(traj.metadata or {})
    found.update(roots.get(((traj.trace_id or "").lower(), (traj.span_id or "").lower()), {}))
    trial = found.get("trial")
    try:
        trial = int(trial) if trial is not None else None
    except (TypeError, ValueError):
        trial = None
    text = lambda k: str(found[k]) if found.get(k) not in (None, "") else None  # noqa: E731
    return RunTags(condition=text("condition"), question_id=text("question_id"), variant=text("variant"), trial=trial)


def describe_tags(tags: RunTags) -> str:
    """``uncited_removal · countries-0111 · trial 0`` (empty for a plain run)."""
    parts = []
    if tags.condition:
        parts.append(tags.condition + (f"[{tags.variant}]" if tags.variant else ""))
    if tags.question_id:
        parts.append(tags.question_id)
    if tags.trial is not None and tags.condition:
        parts.append(f"trial {tags.trial}")
    return " · ".join(parts)


def _split(values: Sequence[str] | None) -> list[str]:
    return [v.strip() for value in values or () for v in value.split(",") if v.strip()]


def filter_runs(
    runs: Sequence[tuple[Any, RunTags]], *, conditions: Sequence[str] | None, questions: Sequence[str] | None, file: Any
) -> list[tuple[Any, RunTags]]:
    """The runs matching every filter given: a condition among ``conditions``, a question id (or words of
    the question's text) among ``questions``. Matching nothing is an input error naming what is there."""
    wanted_c, wanted_q = _split(conditions), _split(questions)
    out = list(runs)
    if wanted_c:
        out = [(t, g) for t, g in out if g.condition in wanted_c]
    if wanted_q:
        out = [
            (t, g)
            for t, g in out
            if g.question_id in wanted_q or any(q.lower() in (t.question or "").lower() for q in wanted_q)
        ]
    if runs and not out:
        present = condition_counts(g for _, g in runs)
        what = " and ".join(
            x for x in (f"--condition {','.join(wanted_c)}" if wanted_c else "", f"--question {','.join(wanted_q)}" if wanted_q else "") if x
        )
        raise InputError(f"no run in {file} matches {what}", _what_is_there(runs, present, by_question=bool(wanted_q) and not wanted_c))
    return out


def _what_is_there(runs: Sequence[tuple[Any, RunTags]], conditions: dict[str, int], *, by_question: bool) -> str:
    """The hint after a filter that matched nothing: the question ids, or the conditions, in the file."""
    ids = list(dict.fromkeys(g.question_id for _, g in runs if g.question_id))
    if by_question and ids:
        shown = listing(ids, 8)
        return f"question ids in the file: {shown}"
    if conditions:
        return "conditions in the file: " + ", ".join(conditions)
    return "the file's runs carry no condition (a `graphtrail run` trace)"


def condition_counts(tags: Iterable[RunTags]) -> dict[str, int]:
    """How many runs each condition has, in first-seen order (runs without one are left out)."""
    counts = Counter(g.condition for g in tags if g.condition)
    return dict(counts)
