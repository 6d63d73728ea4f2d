"""Statistics: cluster bootstrap, exact McNemar, noise floor, pass^k, power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sstats

from graphtrail.evaluators.scoring.stats import (
    cluster_bootstrap,
    majority,
    mcnemar_exact,
    mcnemar_power,
    min_detectable_difference,
    noise_floor,
    paired_bootstrap_difference,
    pairwise_disagreement,
    pass_hat_k,
    pass_k,
)


def test_cluster_bootstrap_resamples_questions_not_trials():
    per_q = [[1, 1, 1, 1, 1, 1]] * 10 + [[0]] * 10  # heavy trial counts must not outweigh questions
    ci = cluster_bootstrap(per_q, n_boot=4000, seed=1)
    assert ci.estimate == 0.5 and ci.n == 20
    assert 0.25 <= ci.low < 0.5 < ci.high <= 0.75
    assert cluster_bootstrap(per_q, seed=1) == cluster_bootstrap(per_q, seed=1)  # seeded
    constant = cluster_bootstrap([[1, 1]] * 5)
    assert (constant.low, constant.high) == (1.0, 1.0)
    assert cluster_bootstrap([]).estimate is None
    assert cluster_bootstrap([[1, None], [None]]).estimate == 1.0  # unjudged trials skipped
    one = cluster_bootstrap([[0, 1]])
    assert one.estimate == 0.5 and one.low is None


def test_paired_difference_interval_uses_the_pairing():
    ref = np.array([1.0] * 20)
    treated = np.array([0.0] * 10 + [1.0] * 10)
    d = paired_bootstrap_difference(treated, ref, seed=0)
    assert d.estimate == -0.5 and d.high < 0
    with pytest.raises(ValueError):
        paired_bootstrap_difference([1.0], [1.0, 0.0])


def test_mcnemar_exact_matches_the_binomial_test():
    ref = [True] * 8 + [False] * 2 + [True] * 10
    oth = [False] * 8 + [True] * 2 + [True] * 10
    res = mcnemar_exact(ref, oth)
    assert (res.n, res.b, res.c, res.discordant) == (20, 8, 2, 10)
    assert res.p_value == pytest.approx(sstats.binomtest(8, 10, 0.5).pvalue)
    assert res.p_value == pytest.approx(0.109375)
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0


def test_majority_ties_count_as_wrong():
    assert majority([True, True, False]) is True
    assert majority([True, False]) is False
    assert majority([None, True]) is True
    assert majority([None]) is None


def test_noise_floor_is_pairwise_disagreement_among_baseline_trials():
    assert pairwise_disagreement(["a", "a", "b"]) == pytest.approx(2 / 3)
    assert pairwise_disagreement(["a"]) is None
    assert noise_floor({"q1": ["a", "a", "b"], "q2": ["x", "x", "x"], "q3": ["only one"]}) == pytest.approx(1 / 3)
    assert noise_floor({"q1": ["a"]}) is None


def test_pass_hat_k_unbiased_estimator():
    assert pass_hat_k(5, 3, 2) == pytest.approx(math.comb(3, 2) / math.comb(5, 2))
    assert pass_hat_k(4, 4, 4) == 1.0 and pass_hat_k(4, 3, 4) == 0.0
    assert pass_k([[True, True, False], [True, True, True]], 2) == pytest.approx((1 / 3 + 1) / 2)
    assert pass_k([[True]], 2) is None
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)


def test_mcnemar_power_agrees_with_simulation():
    n, psi, delta = 30, 0.4, 0.3
    exact = mcnemar_power(n, psi, delta)
    rng = np.random.default_rng(0)
    p10, p01 = (psi + delta) / 2, (psi - delta) / 2
    draws = rng.multinomial(n, [p10, p01, 1 - psi], size=3000)
    rejections = [
        (b + c) > 0 and sstats.binomtest(int(b), int(b + c), 0.5).pvalue <= 0.05 for b, c, _ in draws
    ]
    assert exact == pytest.approx(np.mean(rejections), abs=0.03)
    assert mcnemar_power(n, psi, 0.0) <= 0.05
    with pytest.raises(ValueError):
        mcnemar_power(n, 0.1, 0.2)


def test_minimum_detectable_difference_says_when_n_is_too_small():
    small, large = min_detectable_difference(25), min_detectable_difference(400)
    assert small is not None and large is not None and small > 0.25 > 0.05 > large
    # the paper's 8-point drops (76% -> 68%) are far below what 25 questions can detect
    assert small > 0.08
    assert mcnemar_power(25, small, small) >= 0.8 > mcnemar_power(25, small - 0.01, small - 0.01)
    assert min_detectable_difference(25, 0.05) == small  # a shift brings its own discordance
    assert min_detectable_difference(25, 0.6) > small  # background churn dilutes the test
    assert min_detectable_difference(0) is None


@pytest.mark.parametrize("n", [1, 3, 12, 25, 60])
@pytest.mark.parametrize("discordant", [None, 0.1, 0.4, 0.9])
def test_minimum_detectable_difference_is_the_first_shift_with_the_power(n: int, discordant: float | None) -> None:
    # the search bisects (the power grows with the shift); a scan of every grid shift must agree
    grid = np.arange(0.005, 1.0 + 1e-9, 0.005)
    reached = [d for d in grid if mcnemar_power(n, min(max(float(d), discordant or 0.0), 1.0), float(d)) >= 0.8]
    assert min_detectable_difference(n, discordant) == (round(float(reached[0]), 6) if reached else None)
