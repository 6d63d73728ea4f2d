"""One trend plot per headline score across the runs of a history, with each run's interval as a band.

Each plot is drawn twice, wide for a laptop and narrow for a phone (the page shows
the one that fits, see :mod:`.render`), so its labels stay at :data:`TICK_PT` on
either screen instead of a wide drawing being shrunk until it cannot be read.
The x axis is the run's number in the history table (run names can be long;
the table says which is which).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from ..report.plots import figure_bytes
from ..report.plotsize import TICK_PT
from .runs import SCORES, HistoryRun

__all__ = ["WIDTHS", "trend_plots"]

#: Figure widths in inches (1 in = 96 CSS px): the narrow drawing is 355 px, inside a 390 px phone; the wide one
#: 576 px, two to a row on a laptop.
WIDTHS = {"wide": 6.0, "narrow": 3.7}
_HEIGHT = 2.7
_LINE = "#1c7ed6"


def _figure(runs: Sequence[HistoryRun], key: str, title: str) -> Figure | None:
    xs, ys, band = [], [], []
    for i, run in enumerate(runs, start=1):
        score = run.scores.get(key)
        if score is None or score.value is None:
            continue
        xs.append(i)
        ys.append(score.value)
        band.append((i, score.low, score.high))
    if not xs:
        return None
    fig = Figure(figsize=(WIDTHS["wide"], _HEIGHT))
    ax = fig.add_subplot()
    lows = [(i, lo, hi) for i, lo, hi in band if lo is not None and hi is not None]
    if lows:
        ax.fill_between([i for i, _, _ in lows], [lo for _, lo, _ in lows], [hi for _, _, hi in lows],
                        color=_LINE, alpha=0.18, linewidth=0, label="95% interval")
    ax.plot(xs, ys, marker="o", markersize=4, color=_LINE, linewidth=1.6)
    ax.set_title(title, fontsize=TICK_PT + 1, loc="left")
    ax.set_xlabel("run", fontsize=TICK_PT)
    ax.tick_params(labelsize=TICK_PT)
    ax.set_xlim(0.5, len(runs) + 0.5)
    if key == "hidden_influence":
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
        ax.set_ylim(bottom=0)
    else:
        ax.set_ylim(-0.03, 1.03)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5))
    ax.grid(axis="y", color="#dee2e6", linewidth=0.6)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def _fit(fig: Figure, width: float) -> Figure:
    """``fig`` resized to ``width`` inches: one figure per score serves both drawings (built once, saved twice)."""
    fig.set_size_inches(width, _HEIGHT)
    fig.axes[0].xaxis.set_major_locator(MaxNLocator(nbins=10 if width > 5 else 5, integer=True))
    # Fixed margins in inches (room for "100%" ticks, the axis label and the title), not tight_layout:
    # ten figures per page, and measuring each one's text doubles the drawing time.
    fig.subplots_adjust(left=0.62 / width, right=1 - 0.12 / width, bottom=0.62 / _HEIGHT, top=1 - 0.44 / _HEIGHT)
    return fig


def trend_plots(runs: Sequence[HistoryRun],
                formats: Mapping[str, tuple[str, ...]] | None = None) -> dict[str, dict[str, dict[str, bytes]]]:
    """``{score key: {"wide"|"narrow": {format: bytes}}}``; a score no run has is left out.

    ``formats`` says which files to save per drawing (default SVG of both): history.md
    wants a PNG of the wide one only, and PNG is the slow format.
    """
    formats = formats or {size: ("svg",) for size in WIDTHS}
    out: dict[str, dict[str, dict[str, bytes]]] = {}
    for key, title, _higher in SCORES:
        fig = _figure(runs, key, title)
        if fig is None:
            continue
        out[key] = {}
        for size, width in WIDTHS.items():
            _fit(fig, width)
            out[key][size] = {fmt: figure_bytes(fig, fmt, tight=False) for fmt in formats.get(size, ("svg",))}
    return out
