"""From run records to scored tables: judge, then every row, score and statistic, in one pure call.

:func:`score_records` is the only place that aggregates. It reads the records,
the questions and (optionally) the knowledge graph, and returns a
:class:`Scored`: plain data, nothing drawn or written. The report package
assembles a :class:`~graphtrail.evaluators.report.Report` from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._listing import listing
from ..records import CITATION_CONDITIONS, NO_CITATIONS, RunRecord, question_field
from .aggregate import ordered_conditions
from .conditions import condition_rows, power_notes
from .coverage import mark_rows
from .unread import unread_tools
from .judges import Judge, apply_judges, normalize
from .metrics import Runs, baseline_record, group_runs
from .questions import overall_scores, question_rows
from .stats import noise_floor
from .tables import ConditionRow, EntityRow, QuestionRow, ReportError, Scores, Stats, on_paper_dataset

__all__ = ["Scored", "score_records"]


@dataclass
class Scored:
    """Everything :func:`score_records` computed, and what it computed it from."""

    records: list[RunRecord]  # judged
    runs: Runs  # question id -> condition -> judged records
    questions_by_id: dict[str, Any]
    conditions: list[ConditionRow]
    questions: list[QuestionRow]
    entities: list[EntityRow]
    scores: Scores
    stats: Stats
    cited_nothing: bool  # no baseline run cited any entity: the citation conditions are NO_CITATIONS
    unread_tools: list[str]  # tools whose outputs revealed no entity while other tools' did (.unread)
    paper_reference: bool
    correctness: str | None  # as asked for; None: the default judge (or the one the run's meta names)


def score_records(
    records: Iterable[RunRecord],
    questions: Iterable[Any],
    kg: Any = None,
    *,
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
    not_applicable: Mapping[str, str] | None = None,
) -> Scored:
    """Judge ``records`` and compute the condition table, the question and entity rows, the scores and statistics.

    Missing ``correct``/``f1``/``changed`` fields are filled by the built-in
    judges; ``judges``/``correctness`` add or swap judges (see
    :func:`~graphtrail.evaluators.scoring.judges.apply_judges`). ``not_applicable``
    (condition -> why) names conditions that ran no experiment.
    """
    questions = list(questions)
    if paper_reference is None:  # the paper's Table 2 only beside an evaluation on its own dataset
        paper_reference = on_paper_dataset(questions)
    by_id = {str(question_field(q, "id")): q for q in questions}
    recs = apply_judges(list(records), questions, kg=kg, judges=judges, correctness=correctness)
    if not recs:
        raise ReportError("no run records to report on")
    runs = group_runs(recs)
    qids = [q for q in by_id if q in runs] + sorted(q for q in runs if q not in by_id)
    # ---- an agent that cites nothing: the citation conditions are no experiment
    refs = [b for b in (baseline_record(runs[q]) for q in qids) if b is not None and b.status != "error"]
    cited_nothing = bool(refs) and not any(b.citations for b in refs)
    present = {r.key.condition for r in recs}
    na: dict[str, str] = {str(k): str(v) for k, v in (not_applicable or {}).items()}
    if cited_nothing:
        na.update({c: NO_CITATIONS for c in CITATION_CONDITIONS if c in present or c in na})
    conditions = ordered_conditions(present | set(na))

    # ---- noise floor from the repeated baseline
    base_answers = {q: [normalize(r.answer) for r in runs[q].get("baseline", []) if r.key.variant == ""] for q in qids}
    base_correct = {q: [r.correct for r in runs[q].get("baseline", []) if r.key.variant == "" and r.correct is not None] for q in qids}
    nf_answer = noise_floor(base_answers)
    nf_correct = noise_floor(base_correct)
    baseline_trials = max((len(v) for v in base_answers.values()), default=0)
    noise = nf_answer or 0.0
    stats = Stats(n_questions=len(qids), alpha=alpha, confidence=1 - alpha, power=power, n_boot=n_boot, seed=seed,
                  baseline_trials=baseline_trials, noise_floor_answer=nf_answer, noise_floor_correct=nf_correct)

    # ---- the tables
    rows = condition_rows(runs, qids, conditions, na, n_boot=n_boot, seed=seed, alpha=alpha, power=power,
                          paper_reference=paper_reference)
    mark_rows(rows, recs)
    q_rows, entity_rows = question_rows(runs, qids, conditions, na, by_id, kg, base_answers, noise=noise, seed=seed,
                                        margin=margin, surrogate_threshold=surrogate_threshold, min_lds=min_lds)
    scores = overall_scores(rows, q_rows, entity_rows, noise=noise, cited_nothing=cited_nothing)

    # ---- power, in words
    power_notes(stats, rows, alpha=alpha, power=power)
    if nf_answer is None:
        stats.notes.append(
            "The baseline ran once per question, so the noise floor is unknown and taken as 0; "
            "run trials >= 2 to measure how often the answer changes with nothing removed."
        )
    uncited_questions = [b.key.question_id for b in refs if not b.citations]
    if uncited_questions and not cited_nothing:
        stats.notes.append(
            f"{len(uncited_questions)} of {len(refs)} questions' baseline runs cited no entity "
            f"({listing(uncited_questions)}): for them cited and random removal hide nothing and the "
            "isolations hide every entity, so those conditions measure nothing about citations on these questions."
        )
    return Scored(
        records=recs, runs=runs, questions_by_id=by_id, conditions=rows, questions=q_rows, entities=entity_rows,
        scores=scores, stats=stats, cited_nothing=cited_nothing, paper_reference=paper_reference, correctness=correctness,
        unread_tools=unread_tools(recs),
    )
