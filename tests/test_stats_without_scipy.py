"""The paired tests ``compare`` runs are computed without scipy.stats, and agree with it.

Importing scipy.stats took about a second of every ``compare`` (issue 30): the exact
binomial (McNemar) p, the sign-flip permutation p and the McNemar power are written
with NumPy and integers. scipy stays the reference these tests hold them to.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from graphtrail.evaluators.comparison.paired import N_PERMUTATIONS, permutation_p
from graphtrail.evaluators.scoring import stats as gstats


@pytest.mark.parametrize("n", [1, 2, 5, 12, 40, 200])
def test_the_binomial_p_is_scipys(n: int) -> None:
    for k in range(n + 1):
        assert gstats.binomial_half_p(k, n) == pytest.approx(stats.binomtest(k, n, 0.5).pvalue, rel=1e-12, abs=1e-15)


def _scipy_permutation_p(d: np.ndarray) -> float:
    res = stats.permutation_test((d, np.zeros_like(d)), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
                                 vectorized=True, n_resamples=N_PERMUTATIONS, alternative="two-sided", random_state=0)
    return float(min(1.0, res.pvalue))


def test_the_exact_permutation_p_is_scipys() -> None:
    rng = np.random.default_rng(3)
    for n in range(2, 14):  # 2**13 < N_PERMUTATIONS: every sign pattern, as scipy does
        for _ in range(15):
            d = rng.choice([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0], size=n)
            if np.any(d != 0):
                assert permutation_p(d) == pytest.approx(_scipy_permutation_p(d), abs=1e-12), d


def test_a_mean_of_zero_is_a_tie_not_float_noise() -> None:
    d = np.array([0, -0.5, -1, 1 / 3, 0.5, 0, -0.5, 1 / 3, -0.5, 0.5, 0.5, 1 / 3])  # sums to 0 exactly, not in floats
    assert permutation_p(d) == 1.0


def test_the_sampled_permutation_p_is_near_scipys() -> None:
    rng = np.random.default_rng(5)
    for n in (14, 30, 80):
        d = rng.choice([-1.0, 0.0, 0.5, 1.0], size=n)
        assert abs(permutation_p(d, seed=1) - _scipy_permutation_p(d)) < 0.03
        assert permutation_p(d, seed=1) == permutation_p(d, seed=1)


def test_power_and_detectable_difference_are_scipys(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [(n, disc, frac, alpha) for n in (1, 3, 12, 60) for disc in (0.1, 0.5, 1.0) for frac in (0.0, 0.5, 1.0) for alpha in (0.05, 0.2)]
    ours = [gstats.mcnemar_power(n, disc, disc * frac, alpha) for n, disc, frac, alpha in cases]
    mdd = [gstats.min_detectable_difference(n, c) for n in (4, 12, 50) for c in (None, 0.3)]
    monkeypatch.setattr(gstats, "_NUMPY_POWER_MAX_N", -1)  # the scipy path
    assert ours == pytest.approx([gstats.mcnemar_power(n, disc, disc * frac, alpha) for n, disc, frac, alpha in cases], abs=1e-9)
    assert mdd == [gstats.min_detectable_difference(n, c) for n in (4, 12, 50) for c in (None, 0.3)]
