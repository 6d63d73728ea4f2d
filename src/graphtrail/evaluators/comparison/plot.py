"""One figure: every change with its 95% interval, so a reviewer sees at a glance what moved and how surely.

Drawn on a bare :class:`matplotlib.figure.Figure` (no pyplot state), like the
report's plots. Shares are in points, counts (hidden influencers) on their own
axis, because the two scales do not mix.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..report.plotfonts import families, plain
from .model import Change, ComparisonData

__all__ = ["changes_plot"]

SIGNIFICANT = "#c92a2a"
INCONCLUSIVE = "#868e96"


def _draw(ax: object, changes: list[Change], scale: float, xlabel: str) -> None:
    y = np.arange(len(changes))[::-1]
    for yi, c in zip(y, changes):
        d = (c.delta or 0.0) * scale
        low = (c.ci_low if c.ci_low is not None else c.delta or 0.0) * scale
        high = (c.ci_high if c.ci_high is not None else c.delta or 0.0) * scale
        color = SIGNIFICANT if c.significant else INCONCLUSIVE
        ax.errorbar([d], [yi], xerr=[[d - low], [high - d]], fmt="o", color=color, ecolor=color, capsize=3)  # type: ignore[attr-defined]
    ax.axvline(0, color="black", linewidth=0.8)  # type: ignore[attr-defined]
    ax.set_yticks(y, [plain(c.label) for c in changes], fontfamily=families())  # type: ignore[attr-defined]
    ax.set_xlabel(xlabel)  # type: ignore[attr-defined]
    ax.grid(axis="x", alpha=0.3)  # type: ignore[attr-defined]


def changes_plot(data: ComparisonData) -> bytes | None:
    """PNG of the changes NEW - BASE with their intervals; ``None`` when nothing was measured."""
    shares = [c for c in data.changes if c.delta is not None and c.unit == "share"]
    counts = [c for c in data.changes if c.delta is not None and c.unit == "count"]
    if not shares and not counts:
        return None
    height = 0.32 * (len(shares) + len(counts)) + 1.6
    fig = Figure(figsize=(8.0, height))
    ratios = [max(len(shares), 1), max(len(counts), 1)] if counts and shares else [1]
    axes = fig.subplots(len(ratios), 1, gridspec_kw={"height_ratios": ratios}, squeeze=False)[:, 0]
    if shares:
        _draw(axes[0], shares, 100.0, "change NEW − BASE (points), 95% paired bootstrap interval")
    if counts:
        _draw(axes[-1], counts, 1.0, "change in count, 95% interval")
    axes[0].set_title(f"BASE → NEW on {data.n_questions} paired questions (red: p < {data.alpha:g})", fontsize=10)
    fig.tight_layout()
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()
