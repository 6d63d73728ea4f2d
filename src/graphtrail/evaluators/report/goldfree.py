"""The parts of report.md/report.html that change when answers are not graded.

With no gold answers (``graphtrail eval --from-traces`` without ``--answers``)
the condition table leads with how often each condition changed the output
against the baseline and that rate over the baseline's own noise; accuracy,
McNemar and pass^k columns are left out, as are the per-question gold and
correctness columns. When only some questions are graded, accuracy stays but its
column says over how many. A fully graded report is untouched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..scoring.changed import GOLD_FREE_LINE, change_over_noise, graded_questions, is_gold_free

if TYPE_CHECKING:
    from .model import Report

__all__ = ["GOLD_FREE_LINE", "CHANGE_OVER_NOISE", "CHANGE_OVER_NOISE_TEXT", "is_gold_free", "graded_questions", "partial_line", "accuracy_header",
           "changed_table", "gold_free_power", "gold_free_glossary", "drop_gold_columns", "GOLD_COLUMNS"]

#: Per-question columns that mean nothing without gold answers.
GOLD_COLUMNS = ("Gold", "Correct")

#: Condition-table columns that need gold answers (left out of a gold-free report's glossary).
_ACCURACY_TERMS = ("McNemar p", "pass^k")

CHANGE_OVER_NOISE = "Change over noise"
CHANGE_OVER_NOISE_TEXT = (
    "a condition's output-changed rate minus the noise floor, in points: influence measured as a change of output; "
    "at or below 0 the change is indistinguishable from the agent's own randomness"
)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def partial_line(report: "Report") -> str | None:
    """``2 of 3 questions are graded: accuracy is over those only.`` when some but not all are."""
    graded, total = graded_questions(report), len(report.questions)
    if graded == 0 or graded == total:
        return None
    verb, which = ("is", "that one") if graded == 1 else ("are", f"those {graded}")
    return f"{graded} of {total} questions {verb} graded (gold answers or a judge): accuracy is over {which} only."


def accuracy_header(report: "Report") -> str:
    """The accuracy column's head: labelled with the count graded when not every question is."""
    graded, total = graded_questions(report), len(report.questions)
    if 0 < graded < total:
        return f"Accuracy, {graded} of {total} graded [95% CI]"
    return "Accuracy [95% CI]"


def _n_changed(report: "Report", condition: str) -> int:
    return sum(1 for q in report.questions if q.changed.get(condition) is not None)


def changed_table(report: "Report") -> tuple[list[str], list[list[str]]]:
    """Header and rows of a gold-free condition table: changed outputs first, no accuracy."""
    header = ["Condition", "Output changed", CHANGE_OVER_NOISE, "n"]
    rows = []
    for r in report.conditions:
        if r.not_applicable:
            rows.append([r.label, r.not_applicable] + ["–"] * (len(header) - 2))
            continue
        excess = change_over_noise(r, report)
        n = _n_changed(report, r.condition) or r.n_questions
        rows.append([
            r.label if r.valid else f"{r.label} (INVALID: see the banner)",
            _pct(r.changed_rate),
            "–" if excess is None else f"{100 * excess:+.0f} pts",
            str(n) + (f" × {r.trials}" if r.trials > 1 else ""),
        ])
    return header, rows


def gold_free_power(report: "Report") -> str:
    """The Statistics section's first line when nothing is graded (the usual one speaks of accuracy shifts)."""
    st = report.stats
    if st.noise_floor_answer is None:
        return ("No gold answers, so no accuracy shift is tested. With one baseline trial the noise floor is not "
                "measured: run --trials 2 or more to tell a changed output from chance.")
    return (f"No gold answers, so no accuracy shift is tested. With n = {st.n_questions} questions and "
            f"{st.baseline_trials} baseline trials, a changed-output rate at or below the "
            f"{_pct(st.noise_floor_answer)} noise floor is indistinguishable from the agent's own randomness.")


def gold_free_glossary(glossary: dict[str, str]) -> dict[str, str]:
    """The glossary without the accuracy terms, with "Change over noise" after "Output changed"."""
    out: dict[str, str] = {}
    for key, text in glossary.items():
        if key in _ACCURACY_TERMS:
            continue
        out[key] = text
        if key == "Output changed":
            out[CHANGE_OVER_NOISE] = CHANGE_OVER_NOISE_TEXT
    return out


def drop_gold_columns(header: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """The per-question table without the gold and correctness columns."""
    keep = [i for i, h in enumerate(header) if h not in GOLD_COLUMNS]
    return [header[i] for i in keep], [[row[i] for i in keep] for row in rows]
