"""What ``evaluate`` is given, checked before anything runs: the questions and the condition names."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...agents.limits import MAX_QUESTION_CHARS
from ..errors import EvaluationError
from ..records import CONDITIONS, DEFAULT_CONDITIONS, question_field

__all__ = ["normalize_questions", "check_conditions"]


def normalize_questions(questions: Any) -> list[Any]:
    """``load_questions`` objects, dicts or strings, as objects/dicts with ``id`` and ``question``.

    Strings and dicts without an id get ``q-<sha1 of the text>``, stable across
    reorderings so the cache still matches. Duplicate ids are an error.
    """
    if isinstance(questions, (str, Mapping)) or not isinstance(questions, Iterable):
        questions = [questions]
    out: list[Any] = []
    seen: set[str] = set()
    for i, q in enumerate(questions):
        if isinstance(q, str):
            q = {"question": q, "answers": []}
        text = question_field(q, "question")
        if not isinstance(text, str) or not text.strip():
            raise EvaluationError(f"question #{i} has no 'question' text: {q!r}")
        if len(text) > MAX_QUESTION_CHARS:  # documented bound (graphtrail.agents.limits)
            raise EvaluationError(
                f"question #{i} has {len(text):,} characters, over the limit of {MAX_QUESTION_CHARS:,}; shorten it"
            )
        if question_field(q, "id") is None:
            if not isinstance(q, Mapping):
                raise EvaluationError(f"question #{i} has no 'id'")
            q = {**q, "id": "q-" + hashlib.sha1(text.encode()).hexdigest()[:10]}
        elif isinstance(q, Mapping):
            q = {**q, "id": str(q["id"])}
        qid = str(question_field(q, "id"))
        _check_lists(q, f"question #{i} ({qid[:40]!r})")
        if qid in seen:
            raise EvaluationError(f"duplicate question id {qid!r}; ids key the cache and must be unique")
        seen.add(qid)
        out.append(q)
    if not out:
        raise EvaluationError("no questions to evaluate")
    return out


#: Fields that hold lists of strings, checked before anything runs (scoring iterates them).
_LIST_FIELDS = ("answers", "answer_ids", "topic_ids")


def _check_lists(q: Any, where: str) -> None:
    """Each list field absent, ``None`` or a list of strings; anything else an :class:`EvaluationError`."""
    for name in _LIST_FIELDS:
        value = question_field(q, name)
        if value is None:
            continue
        if isinstance(value, str):
            raise EvaluationError(f"{where}: field {name!r}: expected a list of strings, got a single string (wrap it in [...])")
        if not isinstance(value, (list, tuple)):
            raise EvaluationError(f"{where}: field {name!r}: expected a list of strings, got {type(value).__name__}")
        for j, item in enumerate(value):
            if not isinstance(item, str):
                raise EvaluationError(f"{where}: field {name!r} item {j}: expected a string, got {type(item).__name__}")


def check_conditions(conditions: Sequence[str] | None) -> list[str]:
    """The ablation conditions to run (``None``: the defaults), in report order, without the baseline."""
    chosen = list(DEFAULT_CONDITIONS if conditions is None else conditions)
    unknown = [c for c in chosen if c not in CONDITIONS]
    if unknown:
        raise EvaluationError(f"unknown condition(s) {unknown}; known: {', '.join(CONDITIONS)}")
    return [c for c in CONDITIONS if c in chosen and c != "baseline"]
