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
        if qid in seen:
            raise EvaluationError(f"duplicate question id {qid!r}; ids key the cache and must be unique")
        seen.add(qid)
        out.append(q)
    if not out:
        raise EvaluationError("no questions to evaluate")
    return out


def check_conditions(conditions: Sequence[str] | None) -> list[str]:
    """The ablation conditions to run (``None``: the defaults), in report order, without the baseline."""
    chosen = list(DEFAULT_CONDITIONS if conditions is None else conditions)
    unknown = [c for c in chosen if c not in CONDITIONS]
    if unknown:
        raise EvaluationError(f"unknown condition(s) {unknown}; known: {', '.join(CONDITIONS)}")
    return [c for c in CONDITIONS if c in chosen and c != "baseline"]
