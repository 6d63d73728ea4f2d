"""Means that skip what was not measured, and the order conditions are reported in.

A ``None`` (no gold answer, no baseline to compare with) is left out of a mean,
not counted as 0, so each mean also says how many values it is over.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..records import CONDITIONS, RunRecord

__all__ = ["ordered_conditions", "mean_n", "runs_mean"]


def ordered_conditions(present: Iterable[str]) -> list[str]:
    """``present`` in :data:`~graphtrail.evaluators.records.CONDITIONS` order; unknown names last, sorted."""
    present = set(present)
    return [c for c in CONDITIONS if c in present] + sorted(present - set(CONDITIONS))


def mean_n(values: Iterable[float | None]) -> tuple[float | None, int]:
    """The mean of the values that are not ``None``, and how many there were (``(None, 0)`` for none)."""
    vals = [float(v) for v in values if v is not None]
    return (sum(vals) / len(vals), len(vals)) if vals else (None, 0)


def runs_mean(runs: Sequence[RunRecord], field_name: str) -> float | None:
    """The mean of one record field (``correct``, ``f1``, ``changed`` ...) over ``runs``."""
    return mean_n(getattr(r, field_name) for r in runs)[0]
