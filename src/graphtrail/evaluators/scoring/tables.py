"""The tables an evaluation's scores are kept in: one row per condition, per question, per entity.

These pydantic models are what :mod:`.score` computes from the records and what
a :class:`~graphtrail.evaluators.report.Report` holds (and ``results.json``
stores, field for field; docs/metrics.md, "results.json"). :class:`ReportTables`
is the shape of a report as the findings and the coverage banner read it, so
they work on a report without importing the report package.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from pydantic import BaseModel, Field

__all__ = [
    "CONDITION_LABELS",
    "PAPER_TABLE2",
    "PAPER_DATASET",
    "on_paper_dataset",
    "ReportError",
    "ConditionRow",
    "EntityRow",
    "QuestionRow",
    "Scores",
    "Stats",
    "ReportTables",
]

CONDITION_LABELS: dict[str, str] = {
    "baseline": "Baseline",
    "cited_removal": "Cited removal",
    "random_removal": "Random removal",
    "full_isolation": "Full isolation",
    "text_only_isolation": "Text-only isolation",
    "uncited_removal": "Visited-but-uncited removal",
    "uncited_mask": "Visited-but-uncited text mask",
    "leave_one_out": "Leave-one-out (mean over entities)",
    "random_subsets": "Random subsets (mean over subsets)",
}

#: Table 2 of arXiv:2605.15109, Agentic GraphRAG on 25 2WikiMultiHopQA questions, one run each.
#: A reference only: different data, model and agent.
PAPER_TABLE2: dict[str, float] = {
    "baseline": 0.76,
    "cited_removal": 0.36,
    "random_removal": 0.84,
    "full_isolation": 0.68,
    "text_only_isolation": 0.72,
    "uncited_removal": 0.68,
    "uncited_mask": 0.72,
}

#: The dataset Table 2 was measured on; its values are shown only beside an evaluation on it.
PAPER_DATASET = "2WikiMultiHopQA"


def on_paper_dataset(questions: Iterable[Any]) -> bool:
    """Whether every question says (``metadata["dataset"]``) it comes from :data:`PAPER_DATASET`.

    No bundled question set does, so by default no report shows the paper's column: beside
    a movie or countries agent, 2WikiMultiHopQA accuracies mean nothing.
    """
    want = re.sub(r"[^a-z0-9]", "", PAPER_DATASET.lower())
    seen = False
    for q in questions:
        meta = q.get("metadata") if isinstance(q, Mapping) else getattr(q, "metadata", None)
        dataset = (meta or {}).get("dataset") if isinstance(meta, Mapping) else None
        if not isinstance(dataset, str) or re.sub(r"[^a-z0-9]", "", dataset.lower()) != want:
            return False
        seen = True
    return seen


class ReportError(ValueError):
    """A report could not be built or loaded; the message says why.

    Defined with the tables because scoring raises it too (nothing to score);
    :mod:`graphtrail.evaluators.report` re-exports it.
    """



class ConditionRow(BaseModel):
    condition: str
    label: str
    per_entity: bool = False
    n_questions: int = 0
    n_runs: int = 0
    trials: int = 0
    accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    delta: float | None = None
    delta_ci_low: float | None = None
    delta_ci_high: float | None = None
    mcnemar_n: int | None = None
    mcnemar_b: int | None = None
    mcnemar_c: int | None = None
    mcnemar_p: float | None = None
    mdd: float | None = None
    changed_rate: float | None = None
    pass_k: dict[str, float | None] = Field(default_factory=dict)
    model_calls: int = 0
    reused_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    wall_time_s: float = 0.0
    paper_accuracy: float | None = None
    # coverage guard (.coverage): did the ablation filter reach every tool that mattered?
    valid: bool = True
    invalid_reason: str | None = None
    escaped_tools: list[str] = Field(default_factory=list)
    tool_calls_filtered: int | None = None
    tool_calls_unfiltered: int | None = None
    error_rate: float | None = None  # share of the condition's runs that failed with an error (not wrong answers)
    first_error: str | None = None
    exact_match: float | None = None  # normalized exact match, beside ``accuracy`` (which ``correct`` decides)
    f1: float | None = None  # mean token F1
    not_applicable: str | None = None  # why this condition has no numbers (e.g. NO_CITATIONS)
    # how its numbers were obtained, its weakest run's (docs/ablations.md, "Routes"): "exact" | "filtered" |
    # "estimated"; None: records from before graphtrail said
    method: str | None = None
    route: str | None = None  # "factory" (the agent rebuilt on ablated data) | "filter" (its tool outputs filtered)


class EntityRow(BaseModel):
    question_id: str
    entity_id: str
    name: str | None = None
    cited: bool
    visited: bool
    visit_rank: int | None = None
    loo_runs: int = 0
    loo_change_rate: float | None = None
    surrogate_weight: float | None = None
    influence: float | None = None
    influential: bool | None = None
    label: str


class QuestionRow(BaseModel):
    question_id: str
    question: str
    gold: list[str] = Field(default_factory=list)
    baseline_answer: str | None = None
    baseline_correct: bool | None = None
    citations: list[str] = Field(default_factory=list)
    visited: list[str] = Field(default_factory=list)
    visited_uncited: list[str] = Field(default_factory=list)
    accuracy: dict[str, float | None] = Field(default_factory=dict)
    changed: dict[str, float | None] = Field(default_factory=dict)
    answers: dict[str, str | None] = Field(default_factory=dict)
    supported: bool | None = None
    support_how: str | None = None
    grounded_citations: float | None = None
    fidelity: float | None = None
    fidelity_precision: float | None = None
    order_tau: float | None = None
    path: list[str] = Field(default_factory=list)
    fidelity_note: str | None = None
    coverage: float | None = None
    influential: list[str] = Field(default_factory=list)
    hidden_influence: list[str] = Field(default_factory=list)
    lds: float | None = None
    noise: float | None = None


class Scores(BaseModel):
    accuracy: dict[str, float | None] = Field(default_factory=dict)
    output_changed: dict[str, float | None] = Field(default_factory=dict)
    source_support: float | None = None
    source_support_n: int = 0
    support_how: dict[str, int] = Field(default_factory=dict)
    grounded_citations: float | None = None
    coverage: float | None = None
    coverage_n: int = 0
    entities_scored: int = 0
    influential_entities: int = 0
    hidden_influence: int = 0
    fidelity: float | None = None
    fidelity_precision: float | None = None
    fidelity_n: int = 0
    order_tau: float | None = None
    order_tau_n: int = 0
    faithfulness: dict[str, float | None] = Field(default_factory=dict)
    lds: float | None = None
    lds_n: int = 0


class Stats(BaseModel):
    n_questions: int = 0
    alpha: float = 0.05
    confidence: float = 0.95
    power: float = 0.8
    n_boot: int = 2000
    seed: int = 0
    baseline_trials: int = 0
    noise_floor_answer: float | None = None
    noise_floor_correct: float | None = None
    mdd_best_case: float | None = None
    power_statement: str = ""
    notes: list[str] = Field(default_factory=list)


class ReportTables(Protocol):
    """What of a report the findings and the coverage banner read (a :class:`~graphtrail.evaluators.report.Report` is one)."""

    conditions: list[ConditionRow]
    questions: list[QuestionRow]
    entities: list[EntityRow]
    scores: Scores
    stats: Stats

    def condition(self, name: str) -> ConditionRow | None: ...
