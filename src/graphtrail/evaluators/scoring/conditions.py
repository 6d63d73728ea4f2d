"""The condition table: per condition, accuracy with its interval, the shift from baseline and its test.

Every number comes from the plain functions of :mod:`.stats` and :mod:`.metrics`
over the judged records: a cluster bootstrap over questions for accuracy, a
paired bootstrap for the shift from baseline, the exact McNemar test on each
question's majority outcome, and the smallest shift that test could detect.
:func:`power_notes` then says in words what this number of questions can and
cannot show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..records import RunRecord
from .aggregate import mean_n, runs_mean
from .metrics import MULTI_VARIANT_CONDITIONS, Runs, output_changed_rate
from .stats import (
    cluster_bootstrap,
    majority,
    mcnemar_exact,
    min_detectable_difference,
    paired_bootstrap_difference,
    pass_k,
)
from .tables import CONDITION_LABELS, PAPER_TABLE2, ConditionRow, Stats

__all__ = ["condition_rows", "power_notes"]


def _not_applicable_row(cond: str, by_q: Mapping[str, Sequence[RunRecord]], why: str) -> ConditionRow:
    """A condition that ran no experiment: its runs and cost, and why there are no numbers."""
    flat = [r for rs in by_q.values() for r in rs]
    return ConditionRow(
        condition=cond, label=CONDITION_LABELS.get(cond, cond), per_entity=cond in MULTI_VARIANT_CONDITIONS,
        n_questions=len(by_q), n_runs=len(flat), model_calls=sum(r.model_calls for r in flat),
        reused_calls=sum(r.reused_calls for r in flat), not_applicable=why,
    )


def condition_rows(
    runs: Runs,
    qids: Sequence[str],
    conditions: Sequence[str],
    not_applicable: Mapping[str, str],
    *,
    n_boot: int,
    seed: int,
    alpha: float,
    power: float,
    paper_reference: bool,
) -> list[ConditionRow]:
    """One row per condition, in ``conditions`` order; the coverage fields are left to :func:`.coverage.mark_rows`."""
    base_by_q = {q: [r.correct for r in runs[q].get("baseline", [])] for q in qids}
    rows: list[ConditionRow] = []
    for cond in conditions:
        by_q = {q: runs[q][cond] for q in qids if cond in runs[q]}
        if cond in not_applicable:
            rows.append(_not_applicable_row(cond, by_q, not_applicable[cond]))
            continue
        flat = [r for rs in by_q.values() for r in rs]
        per_q = [[r.correct for r in rs] for rs in by_q.values()]
        ci = cluster_bootstrap(per_q, n_boot=n_boot, seed=seed, confidence=1 - alpha)
        trials = max((len({r.key.trial for r in rs}) for rs in by_q.values()), default=0)
        row = ConditionRow(
            condition=cond,
            label=CONDITION_LABELS.get(cond, cond),
            per_entity=cond in MULTI_VARIANT_CONDITIONS,
            n_questions=ci.n,
            n_runs=len(flat),
            trials=trials,
            accuracy=ci.estimate,
            ci_low=ci.low,
            ci_high=ci.high,
            model_calls=sum(r.model_calls for r in flat),
            reused_calls=sum(r.reused_calls for r in flat),
            input_tokens=sum(r.input_tokens for r in flat),
            output_tokens=sum(r.output_tokens for r in flat),
            wall_time_s=round(sum(r.wall_time_s for r in flat), 3),
            paper_accuracy=PAPER_TABLE2.get(cond) if paper_reference else None,
        )
        row.changed_rate = output_changed_rate(flat, cond)
        row.exact_match = mean_n(runs_mean(rs, "exact") for rs in by_q.values())[0]
        row.f1 = mean_n(runs_mean(rs, "f1") for rs in by_q.values())[0]
        for k in range(1, trials + 1):
            row.pass_k[str(k)] = pass_k(per_q, k)
        if cond != "baseline":
            _compare_with_baseline(row, by_q, base_by_q, n_boot=n_boot, seed=seed, alpha=alpha, power=power)
        rows.append(row)
    return rows


def _compare_with_baseline(
    row: ConditionRow,
    by_q: Mapping[str, Sequence[RunRecord]],
    base_by_q: Mapping[str, list[bool | None]],
    *,
    n_boot: int,
    seed: int,
    alpha: float,
    power: float,
) -> None:
    """Fill the row's shift from baseline (paired bootstrap) and, for one-variant conditions, its McNemar test."""
    paired = [q for q in by_q if mean_n(base_by_q.get(q, []))[0] is not None and runs_mean(by_q[q], "correct") is not None]
    if paired:
        diff = paired_bootstrap_difference(
            [runs_mean(by_q[q], "correct") for q in paired],  # type: ignore[misc]
            [mean_n(base_by_q[q])[0] for q in paired],  # type: ignore[misc]
            n_boot=n_boot, seed=seed, confidence=1 - alpha,
        )
        row.delta, row.delta_ci_low, row.delta_ci_high = diff.estimate, diff.low, diff.high
    if not row.per_entity and paired:
        ref = [majority(base_by_q[q]) for q in paired]
        oth = [majority([r.correct for r in by_q[q]]) for q in paired]
        test = mcnemar_exact([bool(x) for x in ref], [bool(x) for x in oth])
        row.mcnemar_n, row.mcnemar_b, row.mcnemar_c, row.mcnemar_p = test.n, test.b, test.c, test.p_value
        psi = test.discordant / test.n
        row.mdd = min_detectable_difference(test.n, psi if psi > 0 else None, alpha=alpha, power=power)


def _pts(x: float) -> str:
    return f"{100 * x:+.0f} pts"


def power_notes(stats: Stats, rows: Sequence[ConditionRow], *, alpha: float, power: float) -> None:
    """Set ``stats``' best-case detectable shift and power statement; add one note per tested condition."""
    n = max((r.mcnemar_n or 0 for r in rows), default=0) or stats.n_questions
    best = min_detectable_difference(n, None, alpha=alpha, power=power)
    stats.mdd_best_case = best
    if best is None:
        stats.power_statement = (
            f"With n = {n} question(s), no accuracy shift can be detected with the exact McNemar test "
            f"at alpha = {alpha:g} with {power:.0%} power: far more questions are needed."
        )
    else:
        tail = (
            "Smaller differences between conditions cannot be told apart from chance at this n; "
            "treat them as inconclusive, not as 'no effect'."
            if best > 0.1
            else "This n is large enough to detect moderate shifts."
        )
        stats.power_statement = (
            f"With n = {n} questions, the exact McNemar test (alpha = {alpha:g}) detects an accuracy shift "
            f"with {power:.0%} power only if it is at least {100 * best:.0f} points, and that is the most "
            f"favourable case, where every affected question moves the same way. {tail}"
        )
    for r in rows:
        if r.mcnemar_p is None or r.delta is None:
            continue
        if r.mcnemar_p < alpha:
            stats.notes.append(f"{r.label}: {_pts(r.delta)} vs baseline, McNemar p = {r.mcnemar_p:.3g}: a detected shift.")
        else:
            psi = (r.mcnemar_b or 0) + (r.mcnemar_c or 0)
            reach = (
                f"shifts below {100 * r.mdd:.0f} points would usually be missed"
                if r.mdd is not None
                else "no shift at all is reliably detectable"
            )
            stats.notes.append(
                f"{r.label}: {_pts(r.delta)} vs baseline, McNemar p = {r.mcnemar_p:.2g}: not distinguishable from "
                f"no change; with {psi} of {r.mcnemar_n} questions discordant, {reach}."
            )
