"""What a results.json must record so that a later ``graphtrail compare`` can trust it.

Two evaluations are only comparable when they ran on the same graph, the same
questions and the same judge; they are *meant* to differ in the agent or the
model. :func:`evaluation_fingerprint` is called once when an evaluation writes
its report and returns the dict stored as ``meta["fingerprint"]``;
:func:`read_fingerprint` reads it back, tolerating results.json files written
before graphtrail recorded it (their missing fields are ``None``, and the
comparison says what it could not check).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["FINGERPRINT_VERSION", "evaluation_fingerprint", "questions_hash", "kg_hash", "read_fingerprint"]

#: Bumped when the meaning of a fingerprint field changes.
FINGERPRINT_VERSION = 1


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def questions_hash(questions: Iterable[Any]) -> str:
    """A digest of the question set (ids, texts, gold answers), independent of the order given.

    Gold answers are part of it: a changed gold changes every accuracy, so two
    evaluations graded against different golds are not the same question set.
    """
    rows = sorted(
        (str(_field(q, "id")), str(_field(q, "question") or ""), sorted(str(a) for a in (_field(q, "answers") or [])))
        for q in questions
    )
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


def kg_hash(kg: Any) -> str | None:
    """The graph's content hash, or ``None`` when there is no graph or its backend cannot hash itself."""
    if kg is None:
        return None
    try:
        return str(kg.content_hash())
    except Exception:  # noqa: BLE001 - a database-backed graph may not hash; the comparison then says so
        return None


def _judge_names(judge: Any) -> list[str]:
    if judge is None:
        return []
    judges = judge if isinstance(judge, (list, tuple)) else [judge]
    return [str(getattr(j, "name", None) or getattr(j, "__name__", None) or type(j).__name__) for j in judges]


def _models_observed(records: Iterable[Any]) -> list[str]:
    """The model names the traced model calls reported (what actually answered, not what was asked for)."""
    seen: dict[str, None] = {}
    for rec in records:
        traj = getattr(rec, "trajectory", None)
        for call in getattr(traj, "model_calls", None) or ():
            if call.model:
                seen[str(call.model)] = None
    return list(seen)


def evaluation_fingerprint(kg: Any, evaluation: Any, run_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``meta["fingerprint"]`` for one evaluation: everything a later comparison checks or shows.

    ``evaluation`` is the replay phase's ``Evaluation`` (records and questions);
    ``run_kwargs`` the evaluation's options (trials, seed, conditions, judge, ...).
    """
    from ..._version import __version__

    records = list(evaluation.records)
    first = records[0].key if records else None
    conditions = sorted({r.key.condition for r in records})
    return {
        "version": FINGERPRINT_VERSION,
        "graphtrail_version": __version__,
        "kg_hash": kg_hash(kg),
        "questions_hash": questions_hash(evaluation.questions),
        "n_questions": len(evaluation.questions),
        "correctness": run_kwargs.get("correctness") or "cover_exact_match",
        "judges": _judge_names(run_kwargs.get("judge")),
        "conditions": conditions,
        "seed": run_kwargs.get("seed"),
        "trials": run_kwargs.get("trials"),
        "baseline_repeats": run_kwargs.get("baseline_repeats"),
        "agent": first.agent if first else None,
        "model": first.model if first else None,
        "models_observed": _models_observed(records),
    }


def read_fingerprint(report: Any) -> dict[str, Any]:
    """The fingerprint of a loaded report, with every field present (``None`` where it was not recorded).

    ``recorded`` is ``False`` for a results.json from a graphtrail that did not
    write one; agent, model, seed and judge then come from the older ``meta``
    keys, which every graphtrail version wrote.
    """
    meta = dict(report.meta or {})
    fp = meta.get("fingerprint")
    recorded = isinstance(fp, Mapping)
    fp = dict(fp) if recorded else {}
    out: dict[str, Any] = {
        "recorded": recorded,
        "graphtrail_version": fp.get("graphtrail_version"),
        "kg_hash": fp.get("kg_hash"),
        "questions_hash": fp.get("questions_hash"),
        "correctness": fp.get("correctness") or report.correctness,
        "judges": list(fp.get("judges") or []),
        "conditions": list(fp.get("conditions") or [c.condition for c in report.conditions]),
        "seed": fp.get("seed", meta.get("seed")),
        "trials": fp.get("trials", meta.get("trials")),
        "agent": fp.get("agent") or meta.get("agent"),
        "model": fp.get("model") or meta.get("model"),
        "models_observed": list(fp.get("models_observed") or []),
        "created": report.created,
    }
    return out
