"""Per question and per entity: what the baseline cited and visited, how each condition did, which entities mattered.

Each question's baseline trial 0 is scored for source support and trajectory
fidelity (:mod:`.metrics`); its leave-one-out runs (and random subsets, if
run) score every visited entity's influence. :func:`overall_scores` then
averages the question rows into the report's headline scores.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from ..records import question_field
from .aggregate import mean_n, runs_mean
from .metrics import (
    Runs,
    baseline_record,
    coverage,
    entity_influence,
    fit_surrogate,
    source_support,
    structural_faithfulness,
    trajectory_fidelity,
)
from .stats import pairwise_disagreement
from .tables import ConditionRow, EntityRow, QuestionRow, Scores

__all__ = ["question_rows", "overall_scores"]


def question_rows(
    runs: Runs,
    qids: Sequence[str],
    conditions: Sequence[str],
    not_applicable: Mapping[str, str],
    by_id: Mapping[str, Any],
    kg: Any,
    base_answers: Mapping[str, Sequence[Hashable]],
    *,
    noise: float,
    seed: int,
    margin: float,
    surrogate_threshold: float,
    min_lds: float,
) -> tuple[list[QuestionRow], list[EntityRow]]:
    """One row per question in ``qids`` and one per entity its baseline visited or cited.

    ``base_answers`` holds each question's normalized baseline answers: how often
    they disagree is that question's noise floor (``noise``, the overall one, when
    it ran once).
    """
    rows: list[QuestionRow] = []
    entity_rows: list[EntityRow] = []
    for q in qids:
        question = by_id.get(q)
        base = baseline_record(runs[q])
        traj = base.trajectory if base is not None else None
        qrow = QuestionRow(
            question_id=q,
            question=str(question_field(question, "question", "") if question is not None else (base.question if base else "")),
            gold=[str(a) for a in (question_field(question, "answers") or [])] if question is not None else [],
            baseline_answer=base.answer if base else None,
            baseline_correct=base.correct if base else None,
            citations=list(base.citations) if base else [],
        )
        for cond in conditions:
            if cond in runs[q] and cond not in not_applicable:
                qrow.accuracy[cond] = runs_mean(runs[q][cond], "correct")
                cr = [r for r in runs[q][cond] if not (cond == "baseline" and r.key.trial == 0)]
                qrow.changed[cond] = runs_mean(cr, "changed") if cr else None
                first = runs[q][cond][0]
                qrow.answers[cond] = first.answer
        q_noise = pairwise_disagreement(base_answers[q])
        qrow.noise = q_noise
        if traj is not None:
            qrow.visited, qrow.visited_uncited = list(traj.visited), list(traj.visited_uncited)
            support = source_support(traj, question, kg)
            qrow.supported, qrow.support_how, qrow.grounded_citations = support.supported, support.how, support.grounded_citations
            fid = trajectory_fidelity(traj, question, kg)
            qrow.fidelity, qrow.fidelity_precision, qrow.order_tau = fid.recall, fid.precision, fid.order_tau
            qrow.path, qrow.fidelity_note = fid.path, fid.reason
            surrogate = None
            if "random_subsets" in runs[q]:
                surrogate = fit_surrogate(runs[q]["random_subsets"], traj.visited, seed=seed)
                qrow.lds = surrogate.lds if surrogate is not None else None
            ents = entity_influence(
                traj, runs[q].get("leave_one_out", ()), surrogate, noise=q_noise if q_noise is not None else noise,
                margin=margin, surrogate_threshold=surrogate_threshold, min_lds=min_lds, question_id=q,
            )
            qrow.coverage = coverage(ents)
            qrow.influential = [e.entity_id for e in ents if e.influential]
            qrow.hidden_influence = [e.entity_id for e in ents if e.influential and not e.cited]
            entity_rows += [EntityRow(**asdict(e)) for e in ents]
        rows.append(qrow)
    return rows, entity_rows


def overall_scores(
    rows: Sequence[ConditionRow],
    question_rows: Sequence[QuestionRow],
    entity_rows: Sequence[EntityRow],
    *,
    noise: float,
    cited_nothing: bool,
) -> Scores:
    """The headline scores: accuracy and answer change per condition, and the means of the question rows."""
    scores = Scores(
        accuracy={r.condition: r.accuracy for r in rows},
        output_changed={r.condition: r.changed_rate for r in rows},
    )
    scores.source_support, scores.source_support_n = mean_n(
        None if r.supported is None else float(r.supported) for r in question_rows
    )
    for r in question_rows:
        if r.supported is not None:
            key = r.support_how or "unsupported"
            scores.support_how[key] = scores.support_how.get(key, 0) + 1
    scores.grounded_citations = mean_n(r.grounded_citations for r in question_rows)[0]
    scores.coverage, scores.coverage_n = mean_n(r.coverage for r in question_rows)
    scored = [e for e in entity_rows if e.influential is not None]
    scores.entities_scored = len(scored)
    scores.influential_entities = sum(1 for e in scored if e.influential)
    scores.hidden_influence = sum(1 for e in scored if e.influential and not e.cited)
    scores.fidelity, scores.fidelity_n = mean_n(r.fidelity for r in question_rows)
    scores.fidelity_precision = mean_n(r.fidelity_precision for r in question_rows)[0]
    scores.order_tau, scores.order_tau_n = mean_n(r.order_tau for r in question_rows)
    scores.lds, scores.lds_n = mean_n(r.lds for r in question_rows)
    faith = structural_faithfulness(
        scores.output_changed.get("uncited_removal"),
        scores.output_changed.get("text_only_isolation"),
        scores.output_changed.get("uncited_mask"),
        noise=noise,
    )
    scores.faithfulness = asdict(faith)
    if cited_nothing:  # scores *of* the citations: none to score (coverage and hidden influence still say something)
        scores.source_support, scores.source_support_n, scores.support_how = None, 0, {}
        scores.grounded_citations = None
        scores.fidelity, scores.fidelity_n, scores.fidelity_precision = None, 0, None
        scores.order_tau, scores.order_tau_n = None, 0
    return scores
