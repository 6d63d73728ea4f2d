"""compare.html's changes plot drawn again for a phone, so it is shown at full size and its labels stay readable.

The wide plot puts each change's label beside its interval; with labels such as
"influence of leave-one-out (mean over entities)" it is 8 in wide, and a 390 px phone
shrinks it to under half its size. This drawing is :data:`NARROW_WIDTH_IN` wide (the
report's phone width): each change's label and value sit above its interval, wrapped
when long, so the axis keeps the whole width. compare.html shows it below 600 px
instead of the wide one (the report's ``plot-wide``/``plot-narrow`` CSS).
"""

from __future__ import annotations

import io
import textwrap

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..report.narrowplots import NARROW_WIDTH_IN
from ..report.plotfonts import families, plain
from ..report.plotsize import TICK_PT
from .model import Change, ComparisonData

__all__ = ["narrow_changes_figure", "narrow_changes_svg"]

SIGNIFICANT = "#c92a2a"
INCONCLUSIVE = "#868e96"

#: Characters per label line at :data:`~..report.plotsize.TICK_PT` across the narrow axes.
_WRAP = 40
_LINE_IN = 0.19  # one label line
_MARK_IN = 0.26  # the interval under the label
_TITLE_IN = 0.62  # two title lines
_AXIS_IN = 0.62  # x tick labels and axis label under a panel
_LEFT, _WIDTH = 0.05, 0.9


def _label(c: Change, scale: float) -> str:
    d = (c.delta or 0.0) * scale
    value = f"{d:+.0f}\u00a0pts" if c.unit == "share" else f"{d:+g}"
    if c.significant:
        # no-break spaces: the wrap never leaves "(p =" at a line's end
        value += f" (p\u00a0=\u00a0{c.p_value:.2g})" if c.p_value is not None else " (significant)"
    return textwrap.fill(f"{plain(c.label)}: {value}", _WRAP, break_long_words=False, break_on_hyphens=False)


def _rows(changes: list[Change], scale: float) -> tuple[list[str], float]:
    labels = [_label(c, scale) for c in changes]
    return labels, sum(_MARK_IN + _LINE_IN * (t.count("\n") + 1) for t in labels) + 0.05


def _panel(fig: Figure, rect: tuple[float, float, float, float], changes: list[Change], labels: list[str],
           height_in: float, scale: float, xlabel: str) -> None:
    """Top to bottom: per change its label, then its interval; y is in inches from the panel's foot."""
    ax = fig.add_axes(rect)
    spans = [((c.ci_low if c.ci_low is not None else c.delta or 0.0) * scale,
              (c.ci_high if c.ci_high is not None else c.delta or 0.0) * scale) for c in changes]
    reach = max([abs(v) for span in spans for v in span] + [0.0])
    reach = reach * 1.12 if reach > 0 else (5.0 if scale > 1 else 1.0)
    top = height_in
    for c, text, (low, high) in zip(changes, labels, spans):
        lines = text.count("\n") + 1
        y_mark = top - _LINE_IN * lines - _MARK_IN / 2
        color = SIGNIFICANT if c.significant else INCONCLUSIVE
        d = (c.delta or 0.0) * scale
        ax.errorbar([d], [y_mark], xerr=[[d - low], [high - d]], fmt="o", color=color, ecolor=color, capsize=3, markersize=5)
        ax.text(-reach, top - 0.02, text, fontsize=TICK_PT, fontfamily=families(), ha="left", va="top",
                color=SIGNIFICANT if c.significant else "#212529", linespacing=1.15, zorder=3,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 0.6})
        top -= _LINE_IN * lines + _MARK_IN
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlim(-reach, reach)
    ax.set_ylim(0, height_in)
    ax.set_yticks([])
    ax.tick_params(axis="x", labelsize=TICK_PT)
    ax.set_xlabel(xlabel, fontsize=TICK_PT)
    ax.grid(axis="x", alpha=0.3)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def narrow_changes_figure(data: ComparisonData) -> Figure | None:
    """The changes NEW - BASE with their intervals, :data:`NARROW_WIDTH_IN` wide; ``None`` when nothing was measured."""
    shares = [c for c in data.changes if c.delta is not None and c.unit == "share"]
    counts = [c for c in data.changes if c.delta is not None and c.unit == "count"]
    panels = [(rows, scale, xlabel) for rows, scale, xlabel in (
        (shares, 100.0, "change NEW − BASE (points),\n95% paired bootstrap interval"),
        (counts, 1.0, "change in count, 95% interval"),
    ) if rows]
    if not panels:
        return None
    laid = [(_rows(rows, scale), rows, scale, xlabel) for rows, scale, xlabel in panels]
    axis_in = [_AXIS_IN + (0.17 if "\n" in xlabel else 0.0) for _, _, _, xlabel in laid]
    total = _TITLE_IN + sum(h for (_, h), *_ in laid) + sum(axis_in)
    fig = Figure(figsize=(NARROW_WIDTH_IN, total))
    y = total - _TITLE_IN
    for ((labels, h), rows, scale, xlabel), below in zip(laid, axis_in):
        y -= h
        _panel(fig, (_LEFT, y / total, _WIDTH, h / total), rows, labels, h, scale, xlabel)
        y -= below
    fig.suptitle(f"BASE → NEW on {data.n_questions} paired questions\n(red: p < {data.alpha:g})", fontsize=TICK_PT + 1,
                 x=_LEFT, ha="left", y=1 - 0.08 / total, va="top")
    return fig


def narrow_changes_svg(data: ComparisonData) -> bytes | None:
    """:func:`narrow_changes_figure` as SVG at its own size (fixed margins: no tight-bbox redraw), or ``None``."""
    fig = narrow_changes_figure(data)
    if fig is None:
        return None
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    # a fixed salt for the SVG's ids (else random per save): the same comparison renders the same page
    with matplotlib.rc_context({"svg.hashsalt": "graphtrail"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()
