"""Paired tests of BASE against NEW, question by question.

The same question answered by two versions of an agent is a pair, so every
test here is paired: exact McNemar for correct/incorrect (reusing
:func:`graphtrail.evaluators.scoring.stats.mcnemar_exact` on each question's majority
over trials, as the report does), and for scores a paired bootstrap interval
(:func:`~graphtrail.evaluators.scoring.stats.paired_bootstrap_difference`) with a
sign-flip permutation test for the p-value. The permutation test is exact for
up to 13 questions, so a handful of questions that all moved one way is
reported as what it is (p = 0.25 for three), never as a "significant" change
that a degenerate bootstrap interval would suggest.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..scoring.stats import mcnemar_exact, paired_bootstrap_difference
from .model import Change

__all__ = ["binary_change", "score_change", "permutation_p", "verdict"]

#: Resamples of the sign-flip test; 2**13 < this, so up to 13 questions are enumerated exactly.
N_PERMUTATIONS = 9999


def permutation_p(diffs: Sequence[float], *, seed: int = 0) -> float:
    """Two-sided p of a paired sign-flip permutation test of mean(diffs) = 0 (1.0 when nothing moved).

    Exact (every sign pattern) up to 13 questions, else ``N_PERMUTATIONS`` random patterns drawn
    with ``seed`` (p counted with the observed pattern, as scipy's ``permutation_test`` does).
    Written with NumPy: importing scipy.stats cost about a second of every ``compare``.
    """
    d = np.asarray(diffs, dtype=float)
    n = len(d)
    if n == 0 or not np.any(d != 0):
        return 1.0
    observed = float(np.mean(d))
    # Sums of the same values in another order differ by float error: count those as ties, at the
    # scale of the differences (scipy scales by the observed mean, which misses ties at a mean of 0).
    gamma = np.finfo(float).eps * 100 * float(np.sum(np.abs(d)))
    if 2**n <= N_PERMUTATIONS:
        signs = 1.0 - 2.0 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
        null = (signs * d).mean(axis=1)
        less, greater, total = int(np.sum(null <= observed + gamma)), int(np.sum(null >= observed - gamma)), 2**n
    else:
        rng = np.random.default_rng(seed)
        less = greater = 1  # the observed pattern itself
        for start in range(0, N_PERMUTATIONS, 1000):  # bounded memory at any number of questions
            rows = min(1000, N_PERMUTATIONS - start)
            null = (rng.choice((-1.0, 1.0), size=(rows, n)) * d).mean(axis=1)
            less += int(np.sum(null <= observed + gamma))
            greater += int(np.sum(null >= observed - gamma))
        total = N_PERMUTATIONS + 1
    return float(min(1.0, 2.0 * min(less, greater) / total))


def verdict(change: Change, alpha: float) -> str:
    """The words beside a change: "no change", "changed" (p < alpha) or "inconclusive at n = N"."""
    if change.n == 0:
        return change.verdict or "not measured"
    if change.p_value is None or (change.delta == 0 and change.p_value >= 1.0):
        return "no change"
    if change.p_value < alpha:
        return "changed"
    return f"inconclusive at n = {change.n}"


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def _finish(change: Change, alpha: float) -> Change:
    change.significant = change.p_value is not None and change.p_value < alpha and change.n > 0
    change.verdict = verdict(change, alpha)
    return change


def binary_change(
    change: Change, base: Sequence[float], new: Sequence[float], *, alpha: float, n_boot: int, seed: int,
) -> Change:
    """Fill ``change`` for a correct/incorrect-style outcome: McNemar on majorities, bootstrap CI on means.

    ``base``/``new`` are paired per-question means over trials in [0, 1]; a
    question counts as right on a strict majority of its trials (ties wrong).
    """
    change.test = "mcnemar"
    change.n = len(base)
    if change.n == 0:
        return _finish(change, alpha)
    change.base, change.new = float(np.mean(base)), float(np.mean(new))
    ci = paired_bootstrap_difference(new, base, n_boot=n_boot, seed=seed, confidence=1 - alpha)
    change.delta, change.ci_low, change.ci_high = ci.estimate, ci.low, ci.high
    test = mcnemar_exact([b > 0.5 for b in base], [x > 0.5 for x in new])
    change.b, change.c, change.p_value = test.b, test.c, test.p_value
    if test.discordant == 0 and change.delta:
        # majorities agree but trial shares moved (e.g. 2/3 -> 1/3 right is not a flip): test the shares instead
        change.test, change.p_value = "permutation", permutation_p(np.subtract(new, base), seed=seed)
    return _finish(change, alpha)


def score_change(
    change: Change, base: Sequence[float], new: Sequence[float], *, alpha: float, n_boot: int, seed: int,
    total: bool = False,
) -> Change:
    """Fill ``change`` for a score: paired bootstrap CI of the mean difference, sign-flip permutation p.

    ``total=True`` (counts such as hidden influencers) reports sums over the
    paired questions instead of means, and scales the interval to match.
    """
    change.test = "permutation"
    change.n = n = len(base)
    if n == 0:
        return _finish(change, alpha)
    scale = float(n) if total else 1.0
    change.base, change.new = float(np.mean(base)) * scale, float(np.mean(new)) * scale
    ci = paired_bootstrap_difference(new, base, n_boot=n_boot, seed=seed, confidence=1 - alpha)
    change.delta = None if ci.estimate is None else ci.estimate * scale
    change.ci_low = None if ci.low is None else ci.low * scale
    change.ci_high = None if ci.high is None else ci.high * scale
    change.p_value = permutation_p(np.subtract(new, base), seed=seed)
    return _finish(change, alpha)
