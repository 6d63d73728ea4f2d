"""Honest statistics for small evaluation sets: intervals, paired tests, noise, stability, power.

Everything here is a plain function over numbers, independent of records and
reports, so the definitions in ``docs/metrics.md`` map one-to-one onto code.

Conventions:

- A *question-level outcome* is the mean of a condition's trial outcomes for
  one question (trials are nested within questions). Condition accuracy is the
  unweighted mean of question-level outcomes, so a question run five times
  does not count five times.
- Intervals resample *questions* (clusters) with replacement, never trials,
  because trials of one question are not independent.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

__all__ = [
    "Interval",
    "McNemarResult",
    "question_means",
    "cluster_bootstrap",
    "paired_bootstrap_difference",
    "majority",
    "mcnemar_exact",
    "pairwise_disagreement",
    "noise_floor",
    "pass_hat_k",
    "pass_k",
    "mcnemar_power",
    "min_detectable_difference",
]


def _sstats() -> Any:
    """scipy.stats, imported on first use: it takes about a second, and most callers never reach it."""
    from scipy import stats

    return stats


@dataclass(frozen=True)
class Interval:
    """A point estimate with a (1 - alpha) interval; ``low``/``high`` are ``None`` when undefined."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar on paired binary outcomes.

    ``b`` = pairs where the reference was right and the other wrong,
    ``c`` = the reverse; ``p_value`` is the two-sided exact binomial test of
    ``b`` out of ``b + c`` at 1/2 (1.0 when there are no discordant pairs).
    """

    n: int
    b: int
    c: int
    p_value: float

    @property
    def discordant(self) -> int:
        return self.b + self.c


def question_means(per_question: Sequence[Sequence[float | bool | None]]) -> np.ndarray:
    """Mean of each question's trial outcomes, skipping ``None``; questions with none left are dropped."""
    out = []
    for trials in per_question:
        vals = [float(v) for v in trials if v is not None]
        if vals:
            out.append(sum(vals) / len(vals))
    return np.asarray(out, dtype=float)


#: Index draws up to this many entries (8 bytes each) are kept for reuse: a comparison bootstraps
#: a dozen numbers over the same questions with the same seed, and so does each run of a history.
_KEEP_INDICES = 250_000


@functools.lru_cache(maxsize=16)
def _kept_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    idx.setflags(write=False)  # shared between callers
    return idx


def _bootstrap_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    """The ``n_boot x n`` resampling indices, a pure function of its arguments (so small draws are reused)."""
    if isinstance(seed, int) and n * n_boot <= _KEEP_INDICES:  # seed None: fresh randomness each call
        return _kept_indices(n, n_boot, seed)
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def cluster_bootstrap(
    per_question: Sequence[Sequence[float | bool | None]],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval:
    """Percentile cluster-bootstrap interval of the mean question-level outcome.

    Questions are resampled with replacement (one vectorised draw of
    ``n_boot x n`` indices); each question contributes its mean over trials.
    """
    return _bootstrap_mean(question_means(per_question), n_boot=n_boot, seed=seed, confidence=confidence)


def _bootstrap_mean(values: np.ndarray, *, n_boot: int, seed: int, confidence: float) -> Interval:
    """The mean of per-question ``values`` with its percentile-bootstrap interval (questions resampled)."""
    n = len(values)
    if n == 0:
        return Interval(None, None, None, 0)
    estimate = float(values.mean())
    if n == 1:
        return Interval(estimate, None, None, 1)
    boots = values[_bootstrap_indices(n, n_boot, seed)].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(boots, [tail, 1.0 - tail])
    return Interval(estimate, float(low), float(high), n)


def paired_bootstrap_difference(
    treated: Sequence[float],
    reference: Sequence[float],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval:
    """Interval of ``mean(treated) - mean(reference)`` over paired question-level outcomes.

    Both arrays are indexed by the same questions and resampled with the same
    indices, so the interval reflects the pairing.
    """
    a = np.asarray(treated, dtype=float)
    r = np.asarray(reference, dtype=float)
    if a.shape != r.shape:
        raise ValueError("paired_bootstrap_difference needs equally long, paired inputs")
    return _bootstrap_mean(a - r, n_boot=n_boot, seed=seed, confidence=confidence)


def majority(outcomes: Sequence[bool | None]) -> bool | None:
    """A question's paired outcome over trials: correct on a strict majority; ties count as wrong.

    ``None`` entries (no gold answer) are skipped; all-``None`` gives ``None``.
    """
    vals = [bool(v) for v in outcomes if v is not None]
    if not vals:
        return None
    return sum(vals) * 2 > len(vals)


def mcnemar_exact(reference: Sequence[bool], other: Sequence[bool]) -> McNemarResult:
    """Exact (binomial) McNemar test of ``other`` against ``reference`` on paired outcomes."""
    if len(reference) != len(other):
        raise ValueError("mcnemar_exact needs paired outcomes of equal length")
    b = sum(1 for r, o in zip(reference, other) if r and not o)
    c = sum(1 for r, o in zip(reference, other) if o and not r)
    p = 1.0 if b + c == 0 else binomial_half_p(b, b + c)
    return McNemarResult(n=len(reference), b=b, c=c, p_value=min(1.0, p))


def binomial_half_p(k: int, n: int) -> float:
    """Two-sided exact binomial p of ``k`` successes in ``n`` at p = 0.5 (scipy's ``binomtest`` there).

    The distribution is symmetric, so the p is twice the smaller tail; in integers, exact at any n,
    and without scipy.stats, whose import cost about a second of every ``compare``.
    """
    low = min(k, n - k)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(low + 1)) / 2**n)


def pairwise_disagreement(values: Sequence[Hashable]) -> float | None:
    """Share of unordered pairs of trials whose values differ; ``None`` with fewer than two trials."""
    if len(values) < 2:
        return None
    pairs = list(combinations(values, 2))
    return sum(1 for x, y in pairs if x != y) / len(pairs)


def noise_floor(values_by_question: Mapping[str, Sequence[Hashable]]) -> float | None:
    """Mean over questions of the pairwise disagreement among repeated baseline trials.

    Pass normalized answers to get the answer noise floor, or correctness flags
    to get the accuracy noise floor. ``None`` when no question has two trials.
    """
    rates = [r for r in (pairwise_disagreement(v) for v in values_by_question.values()) if r is not None]
    return sum(rates) / len(rates) if rates else None


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(all k of k trials correct) from c correct of n trials: C(c,k)/C(n,k)."""
    if k < 1 or n < k:
        raise ValueError(f"pass^k needs 1 <= k <= n (got k={k}, n={n})")
    return math.comb(c, k) / math.comb(n, k)


def pass_k(per_question: Sequence[Sequence[bool | None]], k: int) -> float | None:
    """Mean pass^k over questions with at least ``k`` judged trials; ``None`` if there are none."""
    vals = []
    for trials in per_question:
        judged = [bool(v) for v in trials if v is not None]
        if len(judged) >= k:
            vals.append(pass_hat_k(len(judged), sum(judged), k))
    return sum(vals) / len(vals) if vals else None


#: Up to this many questions the power is computed with NumPy from a (n+1) x (n+1) table of
#: binomial probabilities; above it (tables of megabytes) with scipy.stats, imported then.
_NUMPY_POWER_MAX_N = 1500


def _binomial_table(n: int, p: float) -> np.ndarray:
    """``T[d, i] = P(Binomial(d, p) = i)`` for ``0 <= i <= d <= n`` (0 above the diagonal)."""
    d = np.arange(n + 1)[:, None]
    i = np.arange(n + 1)[None, :]
    below = i <= d
    if p <= 0.0 or p >= 1.0:
        return ((i == (d if p >= 1.0 else 0)) & below).astype(float)
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1)))))
    k = np.where(below, d - i, 0)
    log_pmf = log_fact[d] - log_fact[i] - log_fact[k] + i * math.log(p) + k * math.log1p(-p)
    return np.where(below, np.exp(np.where(below, log_pmf, 0.0)), 0.0)


def _binomial_row(n: int, p: float) -> np.ndarray:
    """``P(Binomial(n, p) = i)`` for ``0 <= i <= n``: the last row of :func:`_binomial_table`, without the table."""
    i = np.arange(n + 1)
    if p <= 0.0 or p >= 1.0:
        return (i == (n if p >= 1.0 else 0)).astype(float)
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1)))))
    k = n - i
    return np.exp(log_fact[n] - log_fact[i] - log_fact[k] + i * math.log(p) + k * math.log1p(-p))


@functools.lru_cache(maxsize=64)
def _critical_numpy(n: int, alpha: float) -> np.ndarray:
    """:func:`_critical_counts` for ``d = 0..n`` from the exact Binomial(d, 1/2) table; the same for every shift
    a power search tries (read-only: shared between calls)."""
    crit = _critical_counts(np.arange(n + 1), alpha, _binomial_table(n, 0.5))
    crit.setflags(write=False)
    return crit


def _critical_counts(d: np.ndarray, alpha: float, half: np.ndarray | None = None) -> np.ndarray:
    """Largest k with 2*P(Binom(d, 1/2) <= k) <= alpha, per d (-1 where no k qualifies)."""
    if half is None:
        stats = _sstats()
        k = stats.binom.ppf(alpha / 2.0, d, 0.5)
        k = np.where(stats.binom.cdf(k, d, 0.5) * 2.0 <= alpha, k, k - 1)
        return np.where(d > 0, k, -1).astype(int)
    ok = np.cumsum(half, axis=1) * 2.0 <= alpha  # [d, k]: the lower tail up to k is small enough
    ok &= np.arange(len(d))[None, :] <= d[:, None]
    k = np.where(ok.any(axis=1), ok.sum(axis=1) - 1, -1)  # tails grow with k: the True run starts at 0
    return np.where(d > 0, k, -1).astype(int)


def mcnemar_power(n: int, discordant: float, delta: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided exact McNemar test.

    ``n`` paired questions, probability ``discordant`` that a pair is
    discordant, and a true accuracy shift ``delta`` (= p10 - p01, so
    ``0 <= |delta| <= discordant``). The number of discordant pairs is
    Binomial(n, discordant); given it, the count in the shift's direction is
    Binomial(D, (discordant + |delta|) / (2 * discordant)).
    """
    delta = abs(delta)
    if n <= 0 or discordant <= 0:
        return 0.0
    if delta > discordant + 1e-12:
        raise ValueError("|delta| cannot exceed the discordant probability")
    d = np.arange(n + 1)
    pi = min(1.0, (discordant + delta) / (2.0 * discordant))
    if n > _NUMPY_POWER_MAX_N:
        stats = _sstats()
        weight = stats.binom.pmf(d, n, min(discordant, 1.0))
        crit = _critical_counts(d, alpha)
        ok = crit >= 0
        reject = np.zeros(n + 1)
        reject[ok] = stats.binom.cdf(crit[ok], d[ok], pi) + stats.binom.sf(d[ok] - crit[ok] - 1, d[ok], pi)
        return float(np.sum(weight * np.minimum(reject, 1.0)))
    weight = _binomial_row(n, min(discordant, 1.0))
    crit = _critical_numpy(n, alpha)
    table = _binomial_table(n, pi)
    cols = np.arange(n + 1)[None, :]
    lower = (cols <= crit[:, None]) & (crit[:, None] >= 0)  # i <= k
    upper = (cols >= (d - crit)[:, None]) & (crit[:, None] >= 0) & (cols <= d[:, None])  # i >= d - k
    reject = (table * lower).sum(axis=1) + (table * upper).sum(axis=1)
    return float(np.sum(weight * np.minimum(reject, 1.0)))


def min_detectable_difference(
    n: int, discordant: float | None = None, *, alpha: float = 0.05, power: float = 0.8, step: float = 0.005
) -> float | None:
    """Smallest accuracy shift the exact McNemar test detects with the given power.

    A shift of ``delta`` needs at least ``delta`` of the pairs to be
    discordant, so each candidate shift is evaluated at discordance
    ``max(discordant, delta)``: with ``discordant=None`` (or 0) that is the most
    favourable case, where every affected question moves the same way and the
    result is the smallest shift *any* effect must reach at this ``n``; with an
    observed discordance, background churn that dilutes the test is included.
    Returns ``None`` when no shift up to 100 points reaches the power.

    The power grows with the shift (more discordant pairs, or more of them in the
    shift's direction, each only raising the two-sided test's rejection chance), so
    the first grid shift that reaches it is found by bisection: about 8 power
    computations instead of up to 200 (``graphtrail history`` asks once per pair of runs).
    """
    if n <= 0:
        return None
    grid = np.arange(step, 1.0 + 1e-9, step)

    def reaches(j: int) -> bool:
        delta = float(grid[j])
        psi = max(delta, discordant or 0.0)
        return mcnemar_power(n, min(psi, 1.0), delta, alpha) >= power

    if not reaches(len(grid) - 1):
        return None
    lo, hi = -1, len(grid) - 1  # reaches(hi) holds; every index <= lo fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return round(float(grid[hi]), 6)
