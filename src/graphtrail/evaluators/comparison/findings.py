"""The sentences a comparison opens with: what changed for real, then what happened to which question.

Significant changes come first (worse, then better, then the controls; smallest
p first), each with its numbers and whether it is better or worse (:mod:`.direction`); a change that moved without
reaching significance is called inconclusive at this n, never "no effect"; and
when nothing moved at all, it says so. A count and the names after it agree
(:func:`graphtrail._listing.listing`).
"""

from __future__ import annotations

from ..._display import short
from ..._listing import listing
from .direction import judgement
from .fmt import arrow, delta, interval, p_value
from .model import Change, ComparisonData

__all__ = ["findings", "way"]

#: Longest name a finding shows (entity names and question ids come from the data).
NAME_WIDTH = 80


def way(change: Change) -> str:
    """``worse`` / ``better`` / ``neither better nor worse`` (a control), as a finding says it."""
    word = judgement(change)
    return "neither better nor worse" if word == "no direction" else word


def _named(name: str, detail: str) -> str:
    """``name (detail)``, each on one line and cut short: a finding names things, it does not quote them."""
    return f"{short(name, NAME_WIDTH)} ({short(detail, NAME_WIDTH)})"


def findings(data: ComparisonData) -> list[str]:
    out: list[str] = []
    order = {"worse": 0, "better": 1}  # what got worse leads; controls, which are neither, come last
    significant = sorted((c for c in data.changes if c.significant), key=lambda c: (order.get(way(c), 2), c.p_value or 0.0))
    for c in significant:
        test = "McNemar" if c.test == "mcnemar" else "paired permutation"
        out.append(f"{c.label}: {arrow(c)}, {way(c)} ({delta(c)} {interval(c)}, {test} p = {p_value(c.p_value)}).")
    base_flips = [f for f in data.flips if f.condition == "baseline"]
    worse = [short(f.question_id, NAME_WIDTH) for f in base_flips if f.base_correct and not f.new_correct]
    better = [short(f.question_id, NAME_WIDTH) for f in base_flips if f.new_correct and not f.base_correct]
    if worse:
        out.append(f"{len(worse)} answer(s) went from right to wrong (worse): {listing(worse)}.")
    if better:
        out.append(f"{len(better)} answer(s) went from wrong to right (better): {listing(better)}.")
    appeared = [i for i in data.influencers if i.appeared]
    gone = [i for i in data.influencers if not i.appeared]
    if appeared:
        names = [_named(i.name or i.entity_id, i.question_id) for i in appeared]
        out.append(f"{len(appeared)} hidden influencer(s) appeared (worse), entities that decide the answer without being "
                   f"cited: {listing(names)}.")
    if gone:
        names = [_named(i.name or i.entity_id, i.question_id) for i in gone]
        out.append(f"{len(gone)} hidden influencer(s) disappeared (better): {listing(names)}.")
    if data.unsupported:
        items = [_named(u.question_id, u.reason + (": " + listing(u.entity_ids, 3) if u.entity_ids else "")) for u in data.unsupported]
        out.append(f"{len(data.unsupported)} question(s) whose citations became unsupported (worse): {listing(items)}.")
    moved = [c for c in data.changes if not c.significant and c.delta not in (None, 0)]
    if moved:
        reach = f"; at this n only accuracy shifts of {100 * data.mdd:.0f} points or more are reliably detected" if data.mdd else ""
        out.append(f"{len(moved)} other change(s) are inconclusive at n = {data.n_questions}: "
                   f"{listing([f'{c.label} ({way(c)})' for c in moved], 4)}{reach}.")
    if not out:
        out.append("No change: every compared number is the same in BASE and NEW.")
    return out
