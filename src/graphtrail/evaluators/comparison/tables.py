"""The comparison's tables as plain strings, shared by the terminal, Markdown and HTML views."""

from __future__ import annotations

from .direction import HIGHER, better_when, judgement
from .fmt import arrow, delta, interval, p_value
from .model import Change, ComparisonData

__all__ = ["CONDITION_HEADER", "SCORE_HEADER", "QUESTION_HEADER", "condition_rows", "score_rows", "question_rows"]

#: "Better?" says which way the number moved (:mod:`.direction`); "Verdict" whether the move is significant.
CONDITION_HEADER = ["Condition", "Metric", "BASE → NEW", "Δ [95% CI]", "p", "Better?", "Verdict"]
SCORE_HEADER = ["Score", "BASE → NEW", "Δ [95% CI]", "p", "Better?", "Verdict"]
QUESTION_HEADER = ["Question", "Where", "BASE", "NEW", "What happened"]


def _numbers(c: Change) -> list[str]:
    test = {"mcnemar": " McNemar", "permutation": " perm."}.get(c.test or "", "") if c.p_value is not None else ""
    better = judgement(c)
    return [arrow(c), f"{delta(c)} {interval(c)}".strip(), p_value(c.p_value) + test,
            "control" if better == "no direction" else better, c.verdict]


def condition_rows(data: ComparisonData, *, changed_only: bool = False) -> list[list[str]]:
    """Accuracy and influence per compared condition (``changed_only``: leave out the "no change" rows)."""
    return [[c.condition or "", c.metric, *_numbers(c)] for c in data.changes
            if c.condition is not None and not (changed_only and c.verdict == "no change")]


def score_rows(data: ComparisonData) -> list[list[str]]:
    """Source support, grounded citations, fidelity, coverage, hidden influencers."""
    return [[c.label, *_numbers(c)] for c in data.changes if c.condition is None]


def _name(data: ComparisonData, eid: str) -> str:
    name = data.names.get(eid)
    return f"{name} ({eid})" if name else eid


def question_rows(data: ComparisonData) -> list[list[str]]:
    """One row per per-question event: flipped answers, hidden influencers, unsupported citations.

    A flip under the baseline is the answer users get; flips under ablations
    are grouped per question (they are what moved an influence).
    """
    rows: list[list[str]] = []
    grouped: dict[tuple[str, bool], list] = {}
    for f in data.flips:
        what = "right → wrong" if f.base_correct else "wrong → right"
        if f.condition == "baseline":
            rows.append([f.question_id, "baseline", f.base_answer or "–", f.new_answer or "–",
                         f"answer flipped {what} ({'worse' if f.base_correct else 'better'})"])
        else:
            grouped.setdefault((f.question_id, f.base_correct), []).append(f)
    for (qid, was_right), flips in grouped.items():
        what = "right → wrong" if was_right else "wrong → right"
        ways = {better_when("accuracy", f.condition) for f in flips}
        way = "" if len(ways) != 1 or None in ways else (" (better)" if (HIGHER in ways) != was_right else " (worse)")
        rows.append([qid, ", ".join(f.condition for f in flips), flips[0].base_answer or "–", flips[0].new_answer or "–",
                     f"under ablation: {what}{way}"])
    for i in data.influencers:
        rows.append([i.question_id, _name(data, i.entity_id), "–" if i.appeared else "hidden influencer",
                     "hidden influencer" if i.appeared else "–",
                     "hidden influencer appeared (worse)" if i.appeared else "hidden influencer disappeared (better)"])
    for u in data.unsupported:
        cited = ", ".join(_name(data, e) for e in u.citations) or "nothing"
        detail = f"cites {cited}" + (f"; no tool returned {', '.join(u.entity_ids)}" if u.entity_ids else "")
        rows.append([u.question_id, "baseline", "supported", u.answer or "–", f"citations {u.reason} (worse): {detail}"])
    return rows
