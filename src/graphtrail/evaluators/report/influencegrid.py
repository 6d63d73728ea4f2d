"""The influence matrix as data: questions x first-visit positions, shared by the laptop and phone drawings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .model import Report

__all__ = ["InfluenceGrid", "influence_grid"]


@dataclass(frozen=True)
class InfluenceGrid:
    """What the influence matrix shows: questions x first-visit positions, and where the marks go."""

    qids: list[str]
    grid: np.ndarray  # influence per (question, position); NaN where no entity
    cited: list[tuple[int, int]]  # (position, question) of cited entities
    hidden: list[tuple[int, int]]  # (position, question) of uncited influential ones
    deepest: int  # the deepest first-visit position among the questions shown (may exceed the grid's width)


def influence_grid(report: "Report", max_questions: int = 40, max_positions: int = 20) -> InfluenceGrid | None:
    """The matrix both influence drawings (laptop and phone) show; ``None`` when no entity was scored."""
    scored = [e for e in report.entities if e.influence is not None and e.visit_rank is not None]
    if not scored:
        return None
    qids = list(dict.fromkeys(e.question_id for e in scored))[:max_questions]
    deepest = max(e.visit_rank for e in scored if e.question_id in qids)  # type: ignore[type-var]
    width = min(max_positions, deepest)
    grid = np.full((len(qids), width), np.nan)
    row_of = {q: i for i, q in enumerate(qids)}
    cited_pts, hidden_pts = [], []
    for e in scored:
        if e.question_id not in row_of or e.visit_rank > width:  # type: ignore[operator]
            continue
        i, j = row_of[e.question_id], e.visit_rank - 1  # type: ignore[operator]
        grid[i, j] = e.influence
        if e.cited:
            cited_pts.append((j, i))
        elif e.influential:
            hidden_pts.append((j, i))
    return InfluenceGrid(qids, grid, cited_pts, hidden_pts, deepest)  # type: ignore[arg-type]
