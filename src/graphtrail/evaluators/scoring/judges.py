"""Answer judges: is this answer right, how close is it, did it change?

A judge is any callable ``(answer, question, context) -> bool | float | dict``.
graphtrail ships four deterministic ones (cover exact match, which decides
``correct`` by default, exact match, token F1, output changed) built on
:mod:`graphtrail.agents.answers`, and :class:`LLMJudge`, which asks any
LangChain chat model for a JSON verdict. :func:`apply_judges`
fills a list of :class:`RunRecord` with their verdicts; the scorers then read
only the records.

Judges never raise into the evaluation: a judge that fails yields a verdict
``{"value": None, "error": ...}`` for that record, so one bad call does not
lose a whole run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..records import RunRecord, question_field

__all__ = [
    "Judge",
    "JudgeContext",
    "JudgeVerdict",
    "exact_match",
    "cover_exact_match",
    "DEFAULT_CORRECTNESS",
    "JUDGE_TEXT",
    "token_f1_score",
    "output_changed",
    "as_judge",
    "verdict_value",
    "LLMJudge",
    "parse_verdict",
    "apply_judges",
    "question_field",
]

JudgeVerdict = bool | float | dict[str, Any]


@dataclass
class JudgeContext:
    """What a judge may look at besides the answer and the question."""

    baseline_answer: str | None = None
    kg: Any = None  # graphtrail.agents.KnowledgeGraph | None
    record: RunRecord | None = None


@runtime_checkable
class Judge(Protocol):
    """A named answer judge."""

    name: str

    def __call__(self, answer: str | None, question: Any, context: JudgeContext) -> JudgeVerdict: ...


def _answers_module() -> Any:
    # Imported lazily: the answer normalisation lives with the agents (it knows aliases/ids).
    from ...agents import answers

    return answers


def _gold(question: Any) -> list[str]:
    return [str(a) for a in (question_field(question, "answers") or [])]


def exact_match(answer: str | None, question: Any, context: JudgeContext | None = None) -> bool | None:
    """Normalized exact match against the gold answers, ids or aliases; ``None`` without gold."""
    if not _gold(question) and not question_field(question, "answer_ids"):
        return None
    if answer is None:
        return False
    kg = context.kg if context is not None else None
    return bool(_answers_module().is_correct(answer, question, kg))


exact_match.name = "exact_match"  # type: ignore[attr-defined]


def cover_exact_match(answer: str | None, question: Any, context: JudgeContext | None = None) -> bool | None:
    """A gold answer, id or (given the KG) alias appears in the answer as whole words, after normalisation.

    The "cover exact match" of multi-hop QA evaluation: "The answer is Christopher
    Nolan." covers the gold "Christopher Nolan". It decides ``correct`` by default,
    because agents answer in sentences. Like every containment rule it also accepts
    an answer that names the gold among others or denies it ("not Nolan"); the
    report shows normalized exact match beside it, and an :class:`LLMJudge` reads meaning.
    ``None`` without gold.
    """
    if not _gold(question) and not question_field(question, "answer_ids"):
        return None
    if answer is None:
        return False
    kg = context.kg if context is not None else None
    return bool(_answers_module().is_correct(answer, question, kg, contains=True))


cover_exact_match.name = "cover_exact_match"  # type: ignore[attr-defined]

#: The judge that decides ``correct`` unless ``correctness=`` names another.
DEFAULT_CORRECTNESS = "cover_exact_match"

#: How each built-in judge that can decide ``correct`` is described in the report header.
JUDGE_TEXT: dict[str, str] = {
    "cover_exact_match": "cover exact match: a gold answer, id or alias appears in the answer as whole words "
    "(case, accents, punctuation and articles ignored)",
    "exact_match": "normalized exact match: the whole answer equals a gold answer, id or alias",
    "llm_judge": "an LLM judge (LLMJudge), asked whether the answer means a gold answer",
}


def token_f1_score(answer: str | None, question: Any, context: JudgeContext | None = None) -> float | None:
    """Best SQuAD-style token F1 of the answer against any gold answer; ``None`` without gold."""
    gold = _gold(question)
    if not gold:
        return None
    if answer is None:
        return 0.0
    return float(_answers_module().token_f1(answer, gold))


token_f1_score.name = "token_f1"  # type: ignore[attr-defined]


def normalize(answer: str | None) -> str | None:
    """The answer as compared across runs (``None`` stays ``None``)."""
    return None if answer is None else _answers_module().normalize_answer(answer)


def output_changed(answer: str | None, question: Any, context: JudgeContext) -> bool:
    """Whether the normalized answer differs from the baseline's (no answer vs an answer counts as a change)."""
    return normalize(answer) != normalize(context.baseline_answer)


output_changed.name = "output_changed"  # type: ignore[attr-defined]


@dataclass
class _NamedJudge:
    name: str
    fn: Callable[..., JudgeVerdict]

    def __call__(self, answer: str | None, question: Any, context: JudgeContext) -> JudgeVerdict:
        return self.fn(answer, question, context)


def as_judge(fn: Callable[..., JudgeVerdict] | Judge, name: str | None = None) -> Judge:
    """Give a plain callable a ``name`` (its ``__name__`` by default) so it can be used as a judge."""
    if name is None and isinstance(getattr(fn, "name", None), str):
        return fn  # type: ignore[return-value]
    return _NamedJudge(name or getattr(fn, "__name__", "judge"), fn)


def verdict_value(verdict: Any) -> float | None:
    """A verdict as a number in [0, 1]: bools to 0/1, numbers as is, dicts by ``correct``/``score``/``value``."""
    if verdict is None:
        return None
    if isinstance(verdict, bool):
        return 1.0 if verdict else 0.0
    if isinstance(verdict, (int, float)):
        return float(verdict)
    if isinstance(verdict, Mapping):
        for key in ("value", "correct", "score"):
            if key in verdict and verdict[key] is not None:
                return verdict_value(verdict[key])
    return None


# ------------------------------------------------------------------ LLM judge
_TRUE = {"true", "yes", "correct", "right", "1", "pass"}
_FALSE = {"false", "no", "incorrect", "wrong", "0", "fail"}

DEFAULT_INSTRUCTIONS = (
    "You grade answers to questions. Decide whether the candidate answer means the same as "
    "one of the reference answers (ignore case, punctuation, articles and harmless extra words; "
    "a different entity or value is wrong). Reply with only a JSON object: "
    '{"correct": true or false, "score": a number from 0 to 1, "reason": "one short sentence"}.'
)


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value >= 0.5
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def _json_objects(text: str) -> Iterable[dict[str, Any]]:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def parse_verdict(text: str) -> dict[str, Any]:
    """Read a grading reply: a JSON object anywhere in it (code fences fine), else a yes/no word.

    Returns ``{"correct": bool | None, "score": float | None, "reason": str}``;
    ``correct`` is ``None`` when the reply says neither.
    """
    for obj in _json_objects(text):
        lowered = {str(k).lower(): v for k, v in obj.items()}
        correct = None
        for key in ("correct", "is_correct", "verdict", "answer_correct", "match", "equivalent"):
            if key in lowered:
                correct = _as_bool(lowered[key])
                if correct is not None:
                    break
        score = lowered.get("score")
        score = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
        if correct is None and score is not None:
            correct = score >= 0.5
        if correct is not None:
            if score is None:
                score = 1.0 if correct else 0.0
            return {"correct": correct, "score": score, "reason": str(lowered.get("reason", ""))}
    words = re.findall(r"[a-z]+", text.lower())
    for word in words:
        if word in {"incorrect", "wrong", "false", "no"}:
            return {"correct": False, "score": 0.0, "reason": text.strip()[:200]}
        if word in {"correct", "right", "true", "yes"}:
            return {"correct": True, "score": 1.0, "reason": text.strip()[:200]}
    return {"correct": None, "score": None, "reason": text.strip()[:200]}


class LLMJudge:
    """Grades answers with any LangChain chat model, asking for a JSON verdict.

    ``model`` is a ``BaseChatModel`` or anything
    :func:`graphtrail.agents.resolve_model` accepts. The verdict dict carries
    ``correct``, ``score``, ``reason`` and, on failure, ``error``.
    """

    def __init__(self, model: Any, *, name: str = "llm_judge", instructions: str = DEFAULT_INSTRUCTIONS) -> None:
        if isinstance(model, str):
            from ...agents import resolve_model  # lazy: only when a model name is given

            model = resolve_model(model)
        self.model = model
        self.name = name
        self.instructions = instructions

    def messages(self, answer: str | None, question: Any) -> list[Any]:
        from langchain_core.messages import HumanMessage, SystemMessage

        gold = _gold(question) or ["(none given)"]
        body = (
            f"Question: {question_field(question, 'question', '')}\n"
            f"Reference answers: {json.dumps(gold, ensure_ascii=False)}\n"
            f"Candidate answer: {json.dumps(answer, ensure_ascii=False)}"
        )
        return [SystemMessage(content=self.instructions), HumanMessage(content=body)]

    def __call__(self, answer: str | None, question: Any, context: JudgeContext | None = None) -> dict[str, Any]:
        if answer is None:
            return {"correct": False, "score": 0.0, "reason": "no answer"}
        try:
            reply = self.model.invoke(self.messages(answer, question))
        except Exception as exc:  # a failing judge must not lose the run
            return {"correct": None, "score": None, "reason": "", "error": f"{type(exc).__name__}: {exc}"}
        content = getattr(reply, "content", reply)
        if isinstance(content, list):
            content = " ".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
        return parse_verdict(str(content))


# ------------------------------------------------------------------ applying judges
def _normalize_verdict(verdict: Any) -> dict[str, Any]:
    if isinstance(verdict, Mapping):
        out = dict(verdict)
        out.setdefault("value", verdict_value(verdict))
        return out
    return {"value": verdict_value(verdict)}


def apply_judges(
    records: Sequence[RunRecord],
    questions: Iterable[Any],
    *,
    kg: Any = None,
    judges: Sequence[Callable[..., JudgeVerdict] | Judge] = (),
    correctness: str | None = None,
    overwrite: bool = False,
) -> list[RunRecord]:
    """Copies of ``records`` with ``correct``, ``exact``, ``f1``, ``changed`` and ``judge`` filled.

    - ``correct`` / ``exact`` / ``f1`` / ``changed`` are computed only where ``None``
      (or always with ``overwrite=True``) with :func:`cover_exact_match`,
      :func:`exact_match`, :func:`token_f1_score` and :func:`output_changed`
      against the question's baseline trial-0 answer.
    - each extra judge's verdict goes to ``record.judge[name]`` as a dict with
      a numeric ``value``.
    - ``correctness="<judge name>"`` makes that judge decide ``correct``
      (``value >= 0.5``), e.g. an :class:`LLMJudge` for free-form answers.
    """
    by_id = {str(question_field(q, "id")): q for q in questions}
    named = [as_judge(j) for j in judges]
    if correctness is not None and correctness not in {j.name for j in named}:
        raise ValueError(f"correctness={correctness!r} names no judge in {[j.name for j in named]}")
    baseline: dict[str, str | None] = {}
    for rec in records:
        if rec.key.condition == "baseline" and rec.key.trial == 0 and rec.key.variant == "":
            baseline.setdefault(rec.key.question_id, rec.answer)
    out: list[RunRecord] = []
    for rec in records:
        rec = rec.model_copy(deep=False)
        question = by_id.get(rec.key.question_id, {"id": rec.key.question_id, "question": rec.question, "answers": []})
        ctx = JudgeContext(baseline_answer=baseline.get(rec.key.question_id), kg=kg, record=rec)
        if rec.status == "error":  # a failed run is an error, not a wrong answer: it has no verdict
            out.append(rec)
            continue
        if overwrite or rec.correct is None:
            rec.correct = cover_exact_match(rec.answer, question, ctx)
        if overwrite or rec.exact is None:
            rec.exact = exact_match(rec.answer, question, ctx)
        if overwrite or rec.f1 is None:
            rec.f1 = token_f1_score(rec.answer, question, ctx)
        if (overwrite or rec.changed is None) and rec.key.question_id in baseline:
            rec.changed = output_changed(rec.answer, question, ctx)
        if named:
            verdicts = dict(rec.judge)
            for judge in named:
                try:
                    verdicts[judge.name] = _normalize_verdict(judge(rec.answer, question, ctx))
                except Exception as exc:  # a user judge bug costs one verdict, not the run
                    verdicts[judge.name] = {"value": None, "error": f"{type(exc).__name__}: {exc}"}
            rec.judge = verdicts
            if correctness is not None:
                value = verdicts[correctness].get("value")
                if value is not None:
                    rec.correct = value >= 0.5
        out.append(rec)
    return out
