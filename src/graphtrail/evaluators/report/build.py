"""Assembling a :class:`~.model.Report` from scored tables, and choosing the traversal to draw.

The numbers come from :func:`graphtrail.evaluators.scoring.score_records`;
this module adds what only a report has (the run's ``meta``, the judge named
in the header) and the drawing data of one question's traversal.
:func:`build_report` is both steps in one call, for records from the replay
runner or built by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..records import RunRecord, question_field
from ..scoring.judges import DEFAULT_CORRECTNESS, Judge
from ..scoring.metrics import answer_entities, baseline_record
from ..scoring.score import Scored, score_records
from .model import Report, Traversal, TraversalNode

__all__ = ["build_report", "assemble_report", "pick_traversal"]


def build_report(
    records: Iterable[RunRecord],
    questions: Iterable[Any],
    kg: Any = None,
    *,
    meta: Mapping[str, Any] | None = None,
    judges: Sequence[Callable[..., Any] | Judge] = (),
    correctness: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    power: float = 0.8,
    margin: float = 0.0,
    surrogate_threshold: float = 0.1,
    min_lds: float = 0.3,
    paper_reference: bool | None = None,
    traversal_question: str | None = None,
) -> Report:
    """Score ``records`` (from the replay runner or hand-built) into a :class:`Report`.

    Missing ``correct``/``f1``/``changed`` fields are filled by the built-in
    judges; ``judges``/``correctness`` add or swap judges (see
    :func:`~graphtrail.evaluators.scoring.judges.apply_judges`). ``margin``,
    ``surrogate_threshold`` and ``min_lds`` set when an entity counts as
    influential (see :func:`~graphtrail.evaluators.scoring.metrics.entity_influence`).
    ``paper_reference`` shows the paper's Table 2 beside the accuracies; ``None`` (the default)
    shows it only when the questions come from its dataset (``metadata["dataset"]`` is
    2WikiMultiHopQA, see :func:`~graphtrail.evaluators.scoring.tables.on_paper_dataset`).
    """
    scored = score_records(
        records, questions, kg, judges=judges, correctness=correctness, n_boot=n_boot, seed=seed, alpha=alpha,
        power=power, margin=margin, surrogate_threshold=surrogate_threshold, min_lds=min_lds,
        paper_reference=paper_reference, not_applicable=(meta or {}).get("not_applicable"),
    )
    return assemble_report(scored, kg, meta=meta, traversal_question=traversal_question)


def assemble_report(
    scored: Scored, kg: Any = None, *, meta: Mapping[str, Any] | None = None, traversal_question: str | None = None
) -> Report:
    """The :class:`Report` of ``scored``, with ``meta`` and the traversal of ``traversal_question`` (else the most telling one)."""
    report = Report(
        meta=dict(meta or {}),
        conditions=scored.conditions,
        scores=scored.scores,
        entities=scored.entities,
        questions=scored.questions,
        stats=scored.stats,
        paper_reference=scored.paper_reference,
        correctness=scored.correctness or (meta or {}).get("correctness") or DEFAULT_CORRECTNESS,
        cited_nothing=scored.cited_nothing,
        unread_tools=scored.unread_tools,
    )
    report.traversal = pick_traversal(report, scored.runs, scored.questions_by_id, kg, traversal_question)
    return report


def pick_traversal(
    report: Report, runs: Mapping[str, Mapping[str, Sequence[RunRecord]]], by_id: Mapping[str, Any], kg: Any, chosen: str | None
) -> Traversal | None:
    """The question whose traversal is drawn: ``chosen``, else the one with most hidden influence, then most visited."""
    candidates = [q for q in report.questions if q.visited]
    if chosen is not None:
        candidates = [q for q in candidates if q.question_id == chosen]
    if not candidates:
        return None
    qrow = min(candidates, key=lambda q: (-len(q.hidden_influence), -len(q.influential), -min(len(q.visited), 25), q.question_id))
    base = baseline_record(runs[qrow.question_id])
    traj = base.trajectory if base else None
    if traj is None:
        return None
    question = by_id.get(qrow.question_id)
    topics = {str(t) for t in (question_field(question, "topic_ids") or [])} if question is not None else set()
    answers = set(answer_entities(traj.answer, traj, question, kg))
    influential = {e.entity_id: e.influential for e in report.entities if e.question_id == qrow.question_id}
    names = traj.entity_names
    visited = traj.visited  # a computed property: read once, not per node
    cited, seen = set(traj.citations), set(visited)
    first: dict[str, tuple[int, str]] = {}  # entity -> (step, tool) of the call that first revealed it
    for step in traj.steps:
        for eid in [*step.entity_ids, *(x for edge in step.edges for x in (edge.source, edge.target))]:
            first.setdefault(eid, (step.index, step.tool))
    nodes = [
        TraversalNode(id=e, name=names.get(e), cited=e in cited, visited=e in seen,
                      influential=influential.get(e), topic=e in topics, answer=e in answers,
                      step=first.get(e, (None, None))[0], tool=first.get(e, (None, None))[1])
        for e in dict.fromkeys([*visited, *traj.citations])
    ]
    return Traversal(
        question_id=qrow.question_id,
        question=qrow.question,
        answer=traj.answer,
        nodes=nodes,
        edges=[e.as_triple() for e in traj.edges],
    )
