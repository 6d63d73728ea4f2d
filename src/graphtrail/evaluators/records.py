"""What one replay run produced: the unit the replay runner writes and the scorers read.

A :class:`RunRecord` is one (question, condition, trial) run. Records are
appended to the on-disk cache as JSON lines as soon as each run finishes, so an
interrupted evaluation loses nothing, and the scoring code works from records
alone (plus the questions and, optionally, the knowledge graph).

The replay side writes records and the scoring side reads them, so this module
(with :func:`question_field`, how both read a question) is what the two share;
it imports neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..tracer.trajectory import Trajectory

__all__ = ["RunKey", "RunRecord", "METHODS", "weakest_method", "CONDITIONS", "DEFAULT_CONDITIONS", "CITATION_CONDITIONS", "NO_CITATIONS", "question_field"]

#: Every ablation condition graphtrail knows, in report order.
CONDITIONS: tuple[str, ...] = (
    "baseline",
    "cited_removal",
    "random_removal",
    "full_isolation",
    "text_only_isolation",
    "uncited_removal",
    "uncited_mask",
    "leave_one_out",
    "random_subsets",
)

#: What ``evaluate`` runs when ``conditions`` is not given (random subsets are opt-in).
DEFAULT_CONDITIONS: tuple[str, ...] = CONDITIONS[:-1]

#: Conditions built from the baseline's citations: with no citations they are no experiment
#: (removal and its matched random control hide nothing, the isolations hide everything).
CITATION_CONDITIONS: tuple[str, ...] = ("cited_removal", "random_removal", "full_isolation", "text_only_isolation")

#: What such a condition shows, in every view and in results.json, when the agent cited nothing.
NO_CITATIONS = "not applicable: the agent cited no entities"


#: How a condition's numbers were obtained, strongest first (docs/ablations.md, "Routes"): ``exact`` (the agent ran
#: on really-ablated data), ``filtered`` (its tool outputs filtered by entity id), ``estimated`` (plain text cut
#: by names: a heuristic). A run is as weak as its weakest tool call, a condition as its weakest run.
METHODS: tuple[str, ...] = ("exact", "filtered", "estimated")


def weakest_method(methods: Any) -> str | None:
    """The weakest of ``methods`` (unknown and ``None`` ones ignored; ``None`` when none is left)."""
    known = [m for m in methods if m in METHODS]
    return max(known, key=METHODS.index) if known else None


def question_field(question: Any, name: str, default: Any = None) -> Any:
    """Read a field from a ``Question`` object or a plain dict alike."""
    if isinstance(question, Mapping):
        return question.get(name, default)
    return getattr(question, name, default)


class RunKey(BaseModel):
    """Identifies a run in the cache: (agent, model, question, condition, variant, trial, seed).

    ``variant`` separates runs of one condition that differ in what they hide:
    the entity id for ``leave_one_out``, the subset index for ``random_subsets``,
    and ``""`` otherwise.
    """

    model_config = ConfigDict(frozen=True)

    agent: str
    model: str
    question_id: str
    condition: str
    variant: str = ""
    trial: int = 0
    seed: int = 0

    def as_str(self) -> str:
        return "|".join(
            [self.agent, self.model, self.question_id, self.condition, self.variant, str(self.trial), str(self.seed)]
        )


class RunRecord(BaseModel):
    """One replay run and how its answer compares."""

    model_config = ConfigDict(extra="ignore")

    key: RunKey
    question: str
    answer: str | None = None
    citations: list[str] = Field(default_factory=list)
    status: str = "ok"  # "ok" | "no_answer" | "error"
    error: str | None = None

    # what the condition hid / masked / text-blocked (entity ids)
    hidden: list[str] = Field(default_factory=list)
    masked: list[str] = Field(default_factory=list)
    text_blocked: list[str] = Field(default_factory=list)

    # answer comparison
    correct: bool | None = None  # None when the question has no gold answer; cover exact match unless a judge decides
    exact: bool | None = None  # normalized exact match, reported beside ``correct``
    f1: float | None = None
    changed: bool | None = None  # answer differs from this question's baseline (trial 0)
    judge: dict[str, Any] = Field(default_factory=dict)  # extra judge verdicts by name

    # cost
    model_calls: int = 0  # calls that actually reached the model
    reused_calls: int = 0  # calls answered from the prefix-reuse store
    input_tokens: int = 0
    output_tokens: int = 0
    divergence_step: int | None = None  # first model call that was not reused (1-based); None if all reused
    wall_time_s: float = 0.0

    # per tool name, {"filtered": n, "unfiltered": m} calls under this run's filter
    # (None: the run hid nothing, or was recorded before graphtrail counted); see scoring.coverage
    tool_coverage: dict[str, dict[str, int]] | None = None
    # the model-input check: {channel: [entity ids]} of hidden/masked entities the model was given
    # in this run ({}: none; None: the run hid nothing, or was recorded before the check existed)
    input_leaks: dict[str, list[str]] | None = None
    # the model that actually answered, as its calls said: "provider/model param=value ..." ("; " between
    # several); None when no model call was seen (a plain function) or the record predates this field
    model_seen: str | None = None

    # how this run's ablation reached the agent: "factory" (the agent rebuilt on ablated data) or "filter"
    # (its tool outputs filtered); None: recorded before graphtrail said
    route: str | None = None
    # how its numbers were obtained (docs/ablations.md, "Routes"): "exact" | "filtered" | "estimated";
    # None: a baseline of the filter route, or a record that predates the field
    method: str | None = None

    trace_id: str | None = None
    baseline_trace_id: str | None = None
    trajectory: Trajectory | None = None

    def __repr__(self) -> str:
        from .._display import one_line, short

        k = self.key
        where = f"{k.question_id}/{k.condition}" + (f"[{k.variant}]" if k.variant else "") + f"#{k.trial}"
        return one_line("RunRecord", repr(where), f"answer={short(self.answer, 32)!r}", f"correct={self.correct}",
                        f"changed={self.changed}", self.status if self.status != "ok" else None)

    __str__ = __repr__
