"""Which evaluations may be compared, and which of their questions and conditions pair up.

A comparison is only worth its p-values when both sides measured the same
thing. Three differences make two evaluations apples and oranges, and each is
refused with one :class:`CompareError` line: a different graph (content hash),
no question in common, a different judge of correctness. Everything else that
differs (the model, the agent, trials, the graphtrail version) is what users
compare, so it is allowed and named in the header. Questions and conditions
present on one side only are dropped, each with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .fingerprint import read_fingerprint
from .model import CompareError, Dropped, Side

__all__ = ["load_evaluation", "check_comparable", "pair_questions", "pair_conditions", "side_of"]


def _results_path(src: str | Path) -> Path:
    p = Path(src)
    return p / "results.json" if p.is_dir() else p


def load_evaluation(src: Any, label: str) -> tuple[Any, str | None]:
    """``src`` (a Report, an evaluation folder, or its results.json) as a Report, plus the path it came from."""
    from ..report import Report, ReportError, load_report

    if isinstance(src, Report):
        return src, None
    if not isinstance(src, (str, Path)):
        raise CompareError(f"{label} must be an evaluation folder, a results.json or a Report, got {type(src).__name__}")
    path = _results_path(src)
    if not path.exists():
        where = f"{src} has no results.json" if Path(src).is_dir() else f"{label} not found: {src}"
        raise CompareError(f"{where}; pass an evaluation folder written by 'graphtrail eval' (or its results.json)")
    try:
        return load_report(path), str(path)
    except ReportError as exc:
        raise CompareError(f"{label}: {exc}; re-run that evaluation with this graphtrail to compare it") from None


def side_of(report: Any, label: str, path: str | None) -> Side:
    """The header facts of one evaluation (from its fingerprint, or older meta keys)."""
    fp = read_fingerprint(report)
    return Side(
        label=label, path=path, agent=fp["agent"], model=fp["model"], models_observed=fp["models_observed"],
        graphtrail_version=fp["graphtrail_version"], kg_hash=fp["kg_hash"], questions_hash=fp["questions_hash"],
        correctness=fp["correctness"], seed=fp["seed"], trials=fp["trials"], n_questions=len(report.questions),
        created=fp["created"], fingerprint_recorded=fp["recorded"],
    )


def _short(h: str) -> str:
    return h[:12]


def check_comparable(base: Side, new: Side) -> tuple[list[str], list[str]]:
    """Refuse apples and oranges; return (what differs, notes on what could not be checked)."""
    if base.kg_hash and new.kg_hash and base.kg_hash != new.kg_hash:
        raise CompareError(
            f"BASE and NEW were evaluated on different knowledge graphs (content hash {_short(base.kg_hash)} vs "
            f"{_short(new.kg_hash)}); evaluate both on the same graph, or re-run BASE on the new graph"
        )
    if base.correctness != new.correctness:
        raise CompareError(
            f"BASE's answers were judged by {base.correctness} and NEW's by {new.correctness}, so their accuracies "
            "are not comparable; evaluate both with the same judge (evaluate(correctness=...))"
        )
    differs: list[str] = []
    for name, a, b in (
        ("agent", base.agent, new.agent),
        ("model", base.model, new.model),
        ("model observed", ", ".join(base.models_observed) or None, ", ".join(new.models_observed) or None),
        ("trials", base.trials, new.trials),
        ("seed", base.seed, new.seed),
        ("graphtrail version", base.graphtrail_version, new.graphtrail_version),
    ):
        if a is not None and b is not None and a != b:
            differs.append(f"{name}: {a} -> {b}")
    notes: list[str] = []
    for side in (base, new):
        if not side.fingerprint_recorded:
            notes.append(
                f"{side.label} was written by a graphtrail that did not record the graph's content hash: "
                "that both used the same graph could not be checked"
            )
        elif side.kg_hash is None:
            notes.append(f"{side.label} recorded no graph content hash (no graph, or a database backend): the graph could not be checked")
    if base.questions_hash and new.questions_hash and base.questions_hash != new.questions_hash:
        notes.append("the question sets differ: only the questions both evaluations asked are compared")
    return differs, notes


def _gold(q: Any) -> list[str]:
    return sorted(str(a) for a in q.gold)


def pair_questions(base: Any, new: Any) -> tuple[list[tuple[Any, Any]], list[Dropped]]:
    """Pair questions by id; drop those on one side only, or that ask or grade differently under one id."""
    b_rows = {q.question_id: q for q in base.questions}
    n_rows = {q.question_id: q for q in new.questions}
    shared = [qid for qid in b_rows if qid in n_rows]
    if not shared:
        example = lambda rows: next(iter(rows), "none")  # noqa: E731
        raise CompareError(
            f"BASE and NEW share no question id (BASE has {len(b_rows)}, e.g. {example(b_rows)}; NEW has {len(n_rows)}, "
            f"e.g. {example(n_rows)}); compare two evaluations of the same question set"
        )
    dropped = [Dropped(kind="question", id=q, reason="only in BASE") for q in b_rows if q not in n_rows]
    dropped += [Dropped(kind="question", id=q, reason="only in NEW") for q in n_rows if q not in b_rows]
    skipped = {**((base.meta or {}).get("skipped_questions") or {}), **((new.meta or {}).get("skipped_questions") or {})}
    pairs: list[tuple[Any, Any]] = []
    for qid in shared:
        b, n = b_rows[qid], n_rows[qid]
        if b.question.strip() != n.question.strip():
            dropped.append(Dropped(kind="question", id=qid, reason="the question text differs under this id"))
        elif _gold(b) != _gold(n):
            dropped.append(Dropped(kind="question", id=qid, reason="the gold answers differ under this id"))
        elif qid in skipped:
            dropped.append(Dropped(kind="question", id=qid, reason=f"skipped by an evaluation: {skipped[qid]}"))
        else:
            pairs.append((b, n))
    if not pairs:
        raise CompareError(
            f"the {len(shared)} question id(s) BASE and NEW share ask or grade different questions; "
            "compare two evaluations of the same question set"
        )
    return pairs, dropped


def _scored(report: Any) -> dict[str, str | None]:
    """Each condition of a report -> ``None`` if it has numbers, else why not."""
    out: dict[str, str | None] = {}
    for row in report.conditions:
        if row.not_applicable:
            out[row.condition] = row.not_applicable
        elif not row.valid:
            out[row.condition] = f"invalid: {row.invalid_reason or 'a tool escaped the ablation filter'}"
        elif row.accuracy is None:
            out[row.condition] = "no judged runs"
        else:
            out[row.condition] = None
    return out


def pair_conditions(base: Any, new: Any) -> tuple[list[str], list[Dropped]]:
    """Conditions with numbers on both sides, in report order; the others dropped with their reason."""
    b, n = _scored(base), _scored(new)
    order = [c.condition for c in base.conditions] + [c.condition for c in new.conditions if c.condition not in b]
    kept: list[str] = []
    dropped: list[Dropped] = []
    for cond in order:
        if cond not in b or cond not in n:
            dropped.append(Dropped(kind="condition", id=cond, reason=f"only in {'BASE' if cond in b else 'NEW'}"))
        elif b[cond] or n[cond]:
            side, why = ("BASE", b[cond]) if b[cond] else ("NEW", n[cond])
            dropped.append(Dropped(kind="condition", id=cond, reason=f"{side}: {why}"))
        else:
            kept.append(cond)
    if "baseline" not in kept:
        raise CompareError("BASE and NEW do not both have a scored baseline condition; nothing to compare")
    return kept, dropped
