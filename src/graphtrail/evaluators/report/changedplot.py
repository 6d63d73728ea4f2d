"""The figure a report without gold answers draws in place of the accuracy plot.

Bars: how often each condition changed the output against the baseline; a dashed
line: the noise floor (repeated baseline trials that disagree), below which a
change cannot be told from the agent's own randomness. Drawn only when no question
is graded, so a graded report keeps exactly its accuracy plot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure

from ..scoring.changed import is_gold_free
from .plotfonts import families, plain
from .plotsize import TICK_PT

if TYPE_CHECKING:
    from .model import Report

__all__ = ["changed_figure"]


def changed_figure(report: "Report") -> Figure | None:
    """Changed-output rate per condition with the noise floor; ``None`` when graded or nothing was measured."""
    if not is_gold_free(report):
        return None
    rows = [r for r in report.conditions if r.changed_rate is not None and not r.not_applicable]
    if not rows:
        return None
    fig = Figure(figsize=(max(6.0, 1.1 * len(rows)), 4.2))
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    colors = ["#1c7ed6" if r.condition == "baseline" else ("#868e96" if r.per_entity else "#74c0fc") for r in rows]
    ax.bar(x, [r.changed_rate for r in rows], color=colors)
    noise = report.stats.noise_floor_answer
    if noise is not None:
        ax.axhline(noise, color="#c92a2a", linestyle="--", linewidth=1.2, label=f"noise floor {100 * noise:.0f}%")
        ax.legend(fontsize=TICK_PT - 1, loc="upper right", frameon=False)
    ax.set_xticks(x, [plain(r.label.replace(" (mean over entities)", "\n(per entity)").replace(" (mean over subsets)", "\n(subsets)"))
                      for r in rows], rotation=30, ha="right", fontsize=TICK_PT, fontfamily=families())
    ax.set_ylim(0, 1.05)
    ax.tick_params(axis="y", labelsize=TICK_PT)
    ax.set_ylabel("output changed", fontsize=TICK_PT)
    ax.set_title(f"Changed outputs per condition (n = {report.stats.n_questions} questions, no gold answers)",
                 fontsize=TICK_PT + 1)
    return fig
