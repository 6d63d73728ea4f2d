"""The one plain sentence a report opens with: what most shaped the answers, without numbers in brackets.

The findings (:mod:`.findings`) carry every number, test and caveat, which makes each
a paragraph; a reader skimming a report, or a phone screen, needs the conclusion first.
The headline picks the strongest result the statistics support, in this order: the
uncited entities mattered (their removal was a detected shift, or some were influential
on their own), the cited ones did, or nothing was detected at this n. It never claims
more than the findings below it say with their tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .changed import is_gold_free
from .findings import hidden_influencers

if TYPE_CHECKING:
    from .tables import ReportTables

__all__ = ["headline"]


def _detected(report: "ReportTables", condition: str) -> bool:
    row = report.condition(condition)
    return row is not None and row.mcnemar_p is not None and row.mcnemar_p < report.stats.alpha


def _share(x: float | None) -> str:
    return "none" if not x else f"{100 * x:.0f}%"


def headline(report: "ReportTables") -> str | None:
    """One sentence, or None when only the baseline ran (nothing was hidden, so nothing to conclude)."""
    ablations = [c for c in report.conditions if c.condition != "baseline"]
    if not ablations:
        return None
    answers = "outputs" if is_gold_free(report) else "answers"
    hidden = {h.entity_id for h in hidden_influencers(report)}
    removal = report.condition("uncited_removal")
    if _detected(report, "uncited_removal") and removal is not None:
        return (f"Entities the agent visited but did not cite shaped its {answers}: hiding them changed "
                f"{_share(removal.changed_rate)} of them.")
    if hidden:
        n = len(hidden)
        return (f"{n} entit{'y' if n == 1 else 'ies'} the agent visited but never cited changed its {answers} "
                f"when hidden on {'its' if n == 1 else 'their'} own.")
    cited = report.condition("cited_removal")
    if _detected(report, "cited_removal") and cited is not None:
        return (f"The agent's {answers} rest on the entities it cited: removing them changed "
                f"{_share(cited.changed_rate)} of them, and no uncited entity was shown to matter.")
    n = report.stats.n_questions
    return (f"No ablation changed the {answers} detectably with {n} question{'' if n == 1 else 's'}; "
            "that is inconclusive at this size, not evidence of no effect.")
