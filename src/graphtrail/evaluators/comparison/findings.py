"""The sentences a comparison opens with: what changed for real, then what happened to which question.

Significant changes come first (smallest p first), each with its numbers; a
change that moved without reaching significance is called inconclusive at
this n, never "no effect"; and when nothing moved at all, it says so.
"""

from __future__ import annotations

from .fmt import arrow, delta, interval, p_value
from .model import ComparisonData

__all__ = ["findings"]


def _list(items: list[str], limit: int = 5) -> str:
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def findings(data: ComparisonData) -> list[str]:
    out: list[str] = []
    significant = sorted((c for c in data.changes if c.significant), key=lambda c: c.p_value or 0.0)
    for c in significant:
        test = "McNemar" if c.test == "mcnemar" else "paired permutation"
        out.append(f"{c.label}: {arrow(c)} ({delta(c)} {interval(c)}, {test} p = {p_value(c.p_value)}).")
    base_flips = [f for f in data.flips if f.condition == "baseline"]
    worse = [f.question_id for f in base_flips if f.base_correct and not f.new_correct]
    better = [f.question_id for f in base_flips if f.new_correct and not f.base_correct]
    if worse:
        out.append(f"{len(worse)} answer(s) went from right to wrong: {_list(worse)}.")
    if better:
        out.append(f"{len(better)} answer(s) went from wrong to right: {_list(better)}.")
    appeared = [i for i in data.influencers if i.appeared]
    gone = [i for i in data.influencers if not i.appeared]
    if appeared:
        names = [f"{i.name or i.entity_id} ({i.question_id})" for i in appeared]
        out.append(f"{len(appeared)} hidden influencer(s) appeared, entities that decide the answer without being cited: {_list(names)}.")
    if gone:
        names = [f"{i.name or i.entity_id} ({i.question_id})" for i in gone]
        out.append(f"{len(gone)} hidden influencer(s) disappeared: {_list(names)}.")
    if data.unsupported:
        items = [f"{u.question_id} ({u.reason}{': ' + ', '.join(u.entity_ids) if u.entity_ids else ''})" for u in data.unsupported]
        out.append(f"{len(data.unsupported)} question(s) whose citations became unsupported: {_list(items)}.")
    moved = [c for c in data.changes if not c.significant and c.delta not in (None, 0)]
    if moved:
        reach = f"; at this n only accuracy shifts of {100 * data.mdd:.0f} points or more are reliably detected" if data.mdd else ""
        out.append(f"{len(moved)} other change(s) are inconclusive at n = {data.n_questions}: "
                   f"{_list([c.label for c in moved], 4)}{reach}.")
    if not out:
        out.append("No change: every compared number is the same in BASE and NEW.")
    return out
