"""The report's charts drawn again for a phone: narrow enough to show at full size, so their text stays readable.

A laptop's accuracy chart is as wide as its conditions need (8 conditions: 8.8 in);
shrunk to a 390 px phone it would be unreadable, and scrolled sideways it shows half a
chart at a time. These figures are 3.6 in (346 CSS px) wide and as tall as their rows
need: one row per condition, its label above its bar (no rotated ticks), and for the
influence matrix the first :data:`NARROW_POSITIONS` visit positions with the colour bar
underneath. report.html shows them below 600 px instead of the wide ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure

from ..scoring.changed import is_gold_free
from .plotfonts import families, plain
from .influencegrid import influence_grid
from .plotsize import TICK_PT

if TYPE_CHECKING:
    from .model import Report

__all__ = ["NARROW_WIDTH_IN", "NARROW_POSITIONS", "narrow_figures"]

#: Width of every narrow figure, inches (96 CSS px each): inside a 390 px phone's page.
NARROW_WIDTH_IN = 3.6
#: Visit positions the narrow influence matrix shows (the laptop's shows up to 20).
NARROW_POSITIONS = 8


def _color(row: object) -> str:
    return "#1c7ed6" if getattr(row, "condition", "") == "baseline" else ("#868e96" if getattr(row, "per_entity", False) else "#74c0fc")


def _bars(rows: Sequence[object], values: Sequence[float], lows: Sequence[float], highs: Sequence[float], title: str,
          xlabel: str, noise: float | None = None) -> Figure:
    """One row per condition: its label above a horizontal bar with its interval."""
    n = len(rows)
    fig = Figure(figsize=(NARROW_WIDTH_IN, 0.52 * n + 1.15))
    ax = fig.add_axes((0.06, 0.72 / (0.52 * n + 1.15), 0.9, (0.52 * n) / (0.52 * n + 1.15)))
    y = np.arange(n)[::-1].astype(float)
    vals = np.asarray(values, dtype=float)
    ax.barh(y, vals, height=0.42, color=[_color(r) for r in rows])
    err = [vals - np.asarray(lows, dtype=float), np.asarray(highs, dtype=float) - vals]
    ax.errorbar(vals, y, xerr=err, fmt="none", ecolor="black", capsize=3, linewidth=1)
    for yi, row, v in zip(y, rows, vals):
        ax.text(0.0, yi + 0.3, f"{plain(getattr(row, 'label', ''))}: {100 * v:.0f}%", fontsize=TICK_PT,
                fontfamily=families(), va="bottom", ha="left")
    if noise is not None:
        ax.axvline(noise, color="#c92a2a", linestyle="--", linewidth=1.2)
        ax.text(noise, n - 0.35, f" noise floor {100 * noise:.0f}%", color="#c92a2a", fontsize=TICK_PT - 1, va="bottom")
    ax.set_xlim(0, 1.05)
    ax.set_ylim(-0.5, n - 0.05)
    ax.set_yticks([])
    ax.tick_params(axis="x", labelsize=TICK_PT)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0", "25%", "50%", "75%", "100%"])
    ax.set_xlabel(xlabel, fontsize=TICK_PT)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    fig.suptitle(title, fontsize=TICK_PT + 1, x=0.06, ha="left", y=1 - 0.12 / (0.52 * n + 1.15), va="top")
    return fig


def accuracy_narrow(report: "Report") -> Figure | None:
    rows = [r for r in report.conditions if r.accuracy is not None]
    if not rows:
        return None
    acc = [r.accuracy for r in rows]
    lows = [r.ci_low if r.ci_low is not None else r.accuracy for r in rows]
    highs = [r.ci_high if r.ci_high is not None else r.accuracy for r in rows]
    return _bars(rows, acc, lows, highs, f"Accuracy per condition\n(n = {report.stats.n_questions} questions)", "accuracy")  # type: ignore[arg-type]


def changed_narrow(report: "Report") -> Figure | None:
    if not is_gold_free(report):
        return None
    rows = [r for r in report.conditions if r.changed_rate is not None and not r.not_applicable]
    if not rows:
        return None
    rates = [r.changed_rate for r in rows]
    return _bars(rows, rates, rates, rates, f"Changed outputs per condition\n(n = {report.stats.n_questions}, no gold)",  # type: ignore[arg-type]
                 "output changed", noise=report.stats.noise_floor_answer)


def influence_narrow(report: "Report", max_questions: int = 40) -> Figure | None:
    found = influence_grid(report, max_questions, NARROW_POSITIONS)
    if found is None:
        return None
    qids, grid, cited, hidden, deepest = found.qids, found.grid, found.cited, found.hidden, found.deepest
    width = grid.shape[1]
    height = 0.26 * len(qids) + 2.3
    fig = Figure(figsize=(NARROW_WIDTH_IN, height))
    ax = fig.add_axes((0.36, 1.55 / height, 0.6, (height - 2.15) / height))
    ax.set_facecolor("#eeeeee")
    low = min(-1e-6, float(np.nanmin(grid)))
    image = ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap="RdBu_r", norm=TwoSlopeNorm(vmin=low, vcenter=0.0, vmax=1.0))
    if cited:
        ax.scatter(*zip(*cited), marker="o", s=12, color="#2b8a3e")
    if hidden:
        ax.scatter(*zip(*hidden), marker="x", s=18, color="black")
    ax.set_yticks(range(len(qids)), [plain(q)[:16] for q in qids], fontsize=TICK_PT - 1, fontfamily=families())
    ax.set_xticks(range(width), [str(j + 1) for j in range(width)], fontsize=TICK_PT)
    ax.set_xlabel("first-visit position", fontsize=TICK_PT)
    bar_ax = fig.add_axes((0.36, 0.62 / height, 0.6, 0.12 / height))
    bar = fig.colorbar(image, cax=bar_ax, orientation="horizontal")
    bar.ax.tick_params(labelsize=TICK_PT - 1)
    bar.set_label("influence (o cited, x hidden influencer)", fontsize=TICK_PT - 1)
    more = f", first {width} positions" if deepest > width else ""
    fig.suptitle(f"Per-entity influence{more}", fontsize=TICK_PT + 1, x=0.04, ha="left", y=1 - 0.1 / height, va="top")
    return fig


def narrow_figures() -> tuple[tuple[str, object], ...]:
    """(name, figure function) of each narrow drawing, named after the wide plot it stands in for."""
    return (("accuracy", accuracy_narrow), ("changed", changed_narrow), ("influence", influence_narrow))
