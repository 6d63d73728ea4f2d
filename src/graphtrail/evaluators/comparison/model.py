"""The data of a comparison: plain pydantic models, so ``--format json`` is ``model_dump`` and nothing else.

Every number a renderer shows lives here; renderers (terminal, Markdown, HTML)
and the gate (:mod:`.rules`) only read it. The JSON schema is
``graphtrail.compare/1`` (docs/compare.md).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "COMPARE_SCHEMA",
    "CompareError",
    "Side",
    "Change",
    "Dropped",
    "Flip",
    "InfluencerChange",
    "CitationIssue",
    "ComparisonData",
]

COMPARE_SCHEMA = "graphtrail.compare/1"


class CompareError(ValueError):
    """Two evaluations cannot be compared (or a gate rule cannot be read); the message says why and what to do."""


class Side(BaseModel):
    """One of the two evaluations, as its header shows it."""

    label: Literal["BASE", "NEW"]
    path: str | None = None
    agent: str | None = None
    model: str | None = None
    models_observed: list[str] = Field(default_factory=list)
    graphtrail_version: str | None = None
    kg_hash: str | None = None
    questions_hash: str | None = None
    correctness: str = "cover_exact_match"
    seed: int | None = None
    trials: int | None = None
    n_questions: int = 0
    created: float | None = None
    fingerprint_recorded: bool = False


class Change(BaseModel):
    """One number as BASE -> NEW with its paired test.

    ``delta`` is NEW - BASE over the questions both evaluations scored (so
    ``base``/``new`` may differ a little from each report's own score, which
    averages over all of its questions). ``unit`` is ``share`` (fractions) or
    ``count`` (hidden influencers: ``base``/``new``/``delta`` and the interval
    are totals over the paired questions).
    """

    metric: str
    condition: str | None = None
    label: str
    unit: Literal["share", "count"] = "share"
    base: float | None = None
    new: float | None = None
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    test: Literal["mcnemar", "permutation"] | None = None
    p_value: float | None = None
    n: int = 0
    b: int | None = None  # McNemar: right in BASE, wrong in NEW
    c: int | None = None  # McNemar: wrong in BASE, right in NEW
    significant: bool = False
    verdict: str = ""

    @property
    def key(self) -> str:
        return f"{self.condition}.{self.metric}" if self.condition else self.metric


class Dropped(BaseModel):
    """A question or condition left out of the comparison, and why."""

    kind: Literal["question", "condition"]
    id: str
    reason: str


class Flip(BaseModel):
    """A question whose (majority) correctness differs between BASE and NEW under one condition."""

    question_id: str
    question: str
    condition: str
    base_correct: bool
    new_correct: bool
    base_answer: str | None = None
    new_answer: str | None = None


class InfluencerChange(BaseModel):
    """A visited-but-uncited entity that decides a question's answer in one evaluation and not the other."""

    question_id: str
    entity_id: str
    name: str | None = None
    appeared: bool  # True: hidden influencer in NEW only; False: in BASE only


class CitationIssue(BaseModel):
    """A question whose citations became unsupported in NEW."""

    question_id: str
    question: str
    answer: str | None = None
    citations: list[str] = Field(default_factory=list)
    reason: Literal["lost support", "invented citation"]
    entity_ids: list[str] = Field(default_factory=list)  # the citations no tool returned (invented citation)


class ComparisonData(BaseModel):
    """Everything a comparison found; :class:`~.api.Comparison` adds behaviour (check, render, write)."""

    schema_version: str = COMPARE_SCHEMA
    base: Side
    new: Side
    alpha: float = 0.05
    n_questions: int = 0
    conditions: list[str] = Field(default_factory=list)
    differs: list[str] = Field(default_factory=list)  # what the change under test is (model, agent, ...)
    notes: list[str] = Field(default_factory=list)  # what could not be checked, and other caveats
    dropped: list[Dropped] = Field(default_factory=list)
    changes: list[Change] = Field(default_factory=list)
    flips: list[Flip] = Field(default_factory=list)
    influencers: list[InfluencerChange] = Field(default_factory=list)
    unsupported: list[CitationIssue] = Field(default_factory=list)
    mdd: float | None = None  # smallest accuracy shift the exact McNemar test detects at this n (best case)
    names: dict[str, str] = Field(default_factory=dict)  # entity id -> name, for the renderers

    def change(self, metric: str, condition: str | None = None) -> Change | None:
        """The change of ``metric`` (under ``condition`` for per-condition metrics), or ``None``."""
        return next((c for c in self.changes if c.metric == metric and c.condition == condition), None)

    @property
    def counts(self) -> dict[str, int]:
        """The per-question events as numbers the gate can compare (``new_unsupported_citations`` ...)."""
        base_flips = [f for f in self.flips if f.condition == "baseline"]
        return {
            "new_unsupported_citations": len(self.unsupported),
            "new_hidden_influencers": sum(1 for i in self.influencers if i.appeared),
            "lost_hidden_influencers": sum(1 for i in self.influencers if not i.appeared),
            "flipped_to_wrong": sum(1 for f in base_flips if f.base_correct and not f.new_correct),
            "flipped_to_right": sum(1 for f in base_flips if f.new_correct and not f.base_correct),
            "flipped": len(base_flips),
            "dropped_questions": sum(1 for d in self.dropped if d.kind == "question"),
        }

    def to_dict(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        data["counts"] = self.counts
        return data
