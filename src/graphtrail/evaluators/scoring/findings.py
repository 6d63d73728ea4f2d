"""What an evaluation found, in two to four sentences built from its statistics.

A reader should not have to piece the conclusion together from three tables.
Each sentence carries its numbers and its caveat: a comparison whose exact
McNemar test does not reach ``alpha`` is called *inconclusive at n = N*, never
"no effect". The sentences are computed from a report alone (read through
:class:`~.tables.ReportTables`), so a saved ``results.json`` re-renders with them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..._listing import listing
from .changed import changed_findings, is_gold_free
from .methods import estimated_caveat, hedge

if TYPE_CHECKING:
    from .tables import ConditionRow, EntityRow, ReportTables

__all__ = ["findings", "hidden_influencers", "HiddenInfluencer"]

#: At most this many sentences: a summary, not a second copy of the tables.
MAX_FINDINGS = 4


@dataclass(frozen=True)
class HiddenInfluencer:
    """An entity the agent visited, did not cite, and that changed the answer when hidden."""

    question_id: str
    entity_id: str
    name: str | None
    influence: float | None

    @property
    def label(self) -> str:
        return self.name or self.entity_id


def hidden_influencers(report: "ReportTables") -> list[HiddenInfluencer]:
    """Uncited-but-influential entities, strongest first (ties in question order)."""
    order = {q.question_id: i for i, q in enumerate(report.questions)}
    hidden: list[EntityRow] = [e for e in report.entities if e.influential and not e.cited]
    hidden.sort(key=lambda e: (-(e.influence or 0.0), order.get(e.question_id, len(order)), e.visit_rank or 0))
    return [HiddenInfluencer(e.question_id, e.entity_id, e.name, e.influence) for e in hidden]


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _pts(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:+.0f} pts"


def _move(delta: float | None, what: str = "accuracy") -> str:
    """``cut accuracy by 47 points`` / ``raised accuracy by 5 points`` / ``left accuracy unchanged``."""
    if delta is None:
        return f"left {what} unmeasured"
    pts = round(100 * delta)
    if pts == 0:
        return f"left {what} unchanged"
    return f"{'cut' if pts < 0 else 'raised'} {what} by {abs(pts)} points"


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def _detected(row: "ConditionRow", alpha: float) -> bool | None:
    return None if row.mcnemar_p is None else row.mcnemar_p < alpha


def _test(row: "ConditionRow", report: "ReportTables") -> str:
    """``McNemar p = 0.031`` or ``McNemar p = 1; inconclusive at n = 12``."""
    if row.mcnemar_p is None:
        return f"no paired test; inconclusive at n = {row.n_questions}"
    text = f"McNemar {_p(row.mcnemar_p)}"
    if row.mcnemar_p >= report.stats.alpha:
        text += f"; inconclusive at n = {row.mcnemar_n or row.n_questions}"
    return text


def _names(items: list[HiddenInfluencer], limit: int = 4) -> str:
    """One label per hidden influencer counted (an entity hidden-influencing two questions counts twice)."""
    return listing([i.label for i in items], limit)


def _against_trial(report: "ReportTables") -> str:
    """What an answer-change rate is measured against (docs/metrics.md, "Output changed")."""
    return "against the first baseline trial" if report.stats.baseline_trials > 1 else "against the baseline's answer"


def _against_mean(report: "ReportTables") -> str:
    """What an accuracy shift is measured against: the baseline's accuracy, a mean over its trials."""
    k = report.stats.baseline_trials
    return f"against the mean of {k} baseline trials" if k > 1 else "against the baseline"


def _uncited_sentence(report: "ReportTables") -> str | None:
    removal, mask = report.condition("uncited_removal"), report.condition("uncited_mask")
    if removal is None or removal.accuracy is None:
        return None
    n_hidden = sum(len(q.visited_uncited) for q in report.questions)
    n_q = sum(1 for q in report.questions if q.visited_uncited)
    what = f"the {n_hidden} visited-but-uncited entities ({n_q} question{'' if n_q == 1 else 's'})"
    # Two different figures, each with what it is measured against: an answer-change rate
    # (against one reference answer) and an accuracy shift (against the baseline's mean accuracy).
    text = (f"Hiding {what} changed {_pct(removal.changed_rate)} of answers ({_against_trial(report)}) and "
            f"{_move(removal.delta)} ({_against_mean(report)}; {_test(removal, report)})")
    if mask is None or mask.accuracy is None:
        return text + "."
    text += (f"; masking only their names and text changed {_pct(mask.changed_rate)} of answers and moved accuracy "
             f"{_pts(mask.delta)} ({_test(mask, report)})")
    if (mask.changed_rate or 0.0) == 0.0 and mask.delta and report.stats.baseline_trials > 1:
        text += (" — with no answer changed, that shift is the baseline trials disagreeing among themselves, "
                 "not an effect of the mask")
    removal_seen, mask_seen = _detected(removal, report.stats.alpha), _detected(mask, report.stats.alpha)
    noise = report.stats.noise_floor_answer or 0.0
    if removal_seen and not mask_seen and (mask.changed_rate or 0.0) <= max(noise, 0.05):
        text += ": the agent relied on the graph's structure around those entities, not on their names"
        reach = mask.mdd if mask.mdd is not None else report.stats.mdd_best_case
        if reach is None or reach > 0.1:
            text += f" (though a smaller name effect could go unseen at n = {mask.mcnemar_n or mask.n_questions})"
    elif removal_seen and mask_seen:
        text += ": both the structure and the names of the uncited entities mattered"
    return text + "."


def _cited_sentence(report: "ReportTables") -> str | None:
    cited, rand, base = report.condition("cited_removal"), report.condition("random_removal"), report.condition("baseline")
    if cited is None or cited.accuracy is None:
        return None
    start = f"{_pct(base.accuracy)} → " if base is not None and base.accuracy is not None else ""
    text = (f"Removing the cited entities {_move(cited.delta)} ({start}{_pct(cited.accuracy)}, {_against_mean(report)}; "
            f"{_test(cited, report)})")
    if rand is not None and rand.accuracy is not None:
        text += f"; removing as many random entities {_move(rand.delta, 'it')} ({_test(rand, report)})"
    return text + "."


def _influence_sentence(report: "ReportTables") -> str | None:
    s = report.scores
    if not s.entities_scored:
        if report.condition("leave_one_out") is None:
            return None
        return "Leave-one-out ran but scored no entity, so which entities shaped each answer is unknown."
    hidden = hidden_influencers(report)
    noise = report.stats.noise_floor_answer
    rule = ("hiding the entity alone changed the answer in at least half its runs"
            + (f", beyond the {_pct(noise)} noise floor" if noise else ""))
    if not s.influential_entities:
        return f"Of {s.entities_scored} entities scored one at a time, none was influential ({rule})."
    text = (f"{s.influential_entities} of {s.entities_scored} entities scored one at a time were influential ({rule}); "
            f"{len(hidden)} of them were never cited")
    if hidden:
        text += f" (hidden influencers: {_names(hidden)})"
    if s.coverage is not None:
        text += f", so the citations cover {_pct(s.coverage)} of what shaped the answers"
    return text + "."


def _power_sentence(report: "ReportTables") -> str | None:
    st = report.stats
    parts = []
    if st.noise_floor_answer is not None:
        parts.append(f"Repeated baseline runs disagreed on {_pct(st.noise_floor_answer)} of answers "
                     "(the noise floor, over every pair of trials)")
    if st.mdd_best_case is None:
        parts.append(f"with n = {st.n_questions} questions no accuracy shift can be detected reliably")
    else:
        parts.append(f"with n = {st.n_questions} questions only shifts of {100 * st.mdd_best_case:.0f} points or more "
                     "are reliably detected")
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def _error_sentence(report: "ReportTables") -> str | None:
    """Failed runs are errors, not wrong answers: say how many, and the first message."""
    failing = [r for r in report.conditions if getattr(r, "error_rate", None)]
    if not failing:
        return None
    parts = [f"{r.label} {r.error_rate:.0%}" for r in failing]
    first = next((r.first_error for r in failing if r.first_error), "no message")
    return (f"Runs failed with an error ({', '.join(parts)}; first: {first[:160]}); failed runs count as errors, "
            "not as wrong answers, and a condition where more than 10% failed is invalid.")


def _sentences(report: "ReportTables") -> Iterator[str | None]:
    if is_gold_free(report):  # nothing graded: speak of changed outputs, not accuracy
        yield from changed_findings(report, _error_sentence(report), _influence_sentence(report))
        return
    yield _error_sentence(report)
    yield hedge(_uncited_sentence(report), report, "uncited_removal", "uncited_mask")
    yield hedge(_cited_sentence(report), report, "cited_removal", "random_removal")
    yield hedge(_influence_sentence(report), report, "leave_one_out")
    yield _power_sentence(report)


def findings(report: "ReportTables") -> list[str]:
    """Two to four sentences stating what the evaluation found, each with its numbers and caveat."""
    out = [s for s in _sentences(report) if s]
    caveat = estimated_caveat(report)  # estimated conditions are never stated as facts without it, first
    if caveat is not None:
        out.insert(0, caveat)
    if len(out) < 2 and report.condition("baseline") is not None and len(report.conditions) == 1:
        out.insert(0, "Only the baseline ran, so nothing was hidden from the agent: "
                      "run the ablation conditions to learn which entities shaped the answers.")
    return out[:MAX_FINDINGS]
