"""What an evaluation without gold answers found: findings about changed outputs, not accuracy.

Production traffic (``graphtrail eval --from-traces``) has no gold answers, so no
run is graded and every accuracy is ``None``. The scores that need no gold lead
instead: how often hiding part of the graph changed the agent's output, measured
against the baseline's own noise (repeated baseline trials that disagree).
:func:`graded_questions` tells the two cases apart from a report alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tables import ConditionRow, QuestionRow, ReportTables

__all__ = ["graded_questions", "is_gold_free", "change_over_noise", "changed_findings", "GOLD_FREE_LINE"]

#: The header line of a report in which no question is graded.
GOLD_FREE_LINE = (
    "No gold answers: accuracy is not shown. The scores that need none lead: how often each condition "
    "changed the output against the baseline, that change over the baseline's own noise, citation support and fidelity."
)


def _graded(q: "QuestionRow") -> bool:
    return q.baseline_correct is not None or any(v is not None for v in q.accuracy.values())


def graded_questions(report: "ReportTables") -> int:
    """How many questions some run was graded on (gold answers, or a judge that needs none)."""
    return sum(1 for q in report.questions if _graded(q))


def is_gold_free(report: "ReportTables") -> bool:
    """No question is graded: accuracy means nothing here and is left out of the report."""
    return bool(report.questions) and graded_questions(report) == 0


def change_over_noise(row: "ConditionRow", report: "ReportTables") -> float | None:
    """A condition's changed-output rate minus the noise floor; ``None`` for the baseline or with no noise measured."""
    noise = report.stats.noise_floor_answer
    if row.condition == "baseline" or row.changed_rate is None or noise is None:
        return None
    return row.changed_rate - noise


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _against(report: "ReportTables") -> str:
    return "against the first baseline trial" if report.stats.baseline_trials > 1 else "against the baseline's answer"


def _over_noise(row: "ConditionRow", report: "ReportTables") -> str:
    excess = change_over_noise(row, report)
    if excess is None:
        return "the noise floor is not measured"
    noise = _pct(report.stats.noise_floor_answer)
    if round(100 * excess) <= 0:
        return f"no more than the {noise} noise floor: indistinguishable from the agent's own randomness"
    return f"{100 * excess:.0f} points above the {noise} noise floor"


def _measured(row: "ConditionRow | None") -> bool:
    return row is not None and row.changed_rate is not None and not row.not_applicable


def _cited_sentence(report: "ReportTables") -> str | None:
    cited, rand = report.condition("cited_removal"), report.condition("random_removal")
    if cited is None or not _measured(cited):
        return None
    text = (f"Removing the cited entities changed {_pct(cited.changed_rate)} of outputs ({_against(report)}; "
            f"{_over_noise(cited, report)})")
    if rand is not None and _measured(rand):
        text += f"; removing as many random entities changed {_pct(rand.changed_rate)}"
    return text + "."


def _uncited_sentence(report: "ReportTables") -> str | None:
    removal, mask = report.condition("uncited_removal"), report.condition("uncited_mask")
    if removal is None or not _measured(removal):
        return None
    n_hidden = sum(len(q.visited_uncited) for q in report.questions)
    n_q = sum(1 for q in report.questions if q.visited_uncited)
    text = (f"Hiding the {n_hidden} visited-but-uncited entities ({n_q} question{'' if n_q == 1 else 's'}) changed "
            f"{_pct(removal.changed_rate)} of outputs ({_over_noise(removal, report)})")
    if mask is not None and _measured(mask):
        text += f"; masking only their names and text changed {_pct(mask.changed_rate)}"
    return text + "."


def _noise_sentence(report: "ReportTables") -> str:
    st = report.stats
    if st.noise_floor_answer is None:
        return ("With one baseline trial the agent's own noise is not measured, so a changed output may be chance: "
                "run --trials 2 or more to measure it.")
    return (f"Repeated baseline runs disagreed on {_pct(st.noise_floor_answer)} of outputs (the noise floor, over "
            f"{st.baseline_trials} trials); with n = {st.n_questions} questions each question moves a rate by "
            f"{100 / max(st.n_questions, 1):.0f} points.")


def changed_findings(report: "ReportTables", first: str | None, influence: str | None) -> Iterator[str | None]:
    """The sentences of a gold-free report; ``first`` (errors) and ``influence`` come from :mod:`.findings`."""
    yield first
    yield _uncited_sentence(report)
    yield _cited_sentence(report)
    yield influence
    yield _noise_sentence(report)
