"""How a change is written, the same way in the terminal, the PR comment and the HTML page."""

from __future__ import annotations

from ..._listing import listing
from .model import Change, ComparisonData, Side

__all__ = ["value", "delta", "interval", "p_value", "arrow", "side_name", "header_facts", "dropped_line"]


def value(change: Change, x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.0f}" if change.unit == "count" else f"{100 * x:.0f}%"


def delta(change: Change) -> str:
    if change.delta is None:
        return "–"
    return f"{change.delta:+.0f}" if change.unit == "count" else f"{100 * change.delta:+.0f} pts"


def interval(change: Change) -> str:
    if change.ci_low is None or change.ci_high is None:
        return ""
    if change.unit == "count":
        return f"[{change.ci_low:+.0f}, {change.ci_high:+.0f}]"
    return f"[{100 * change.ci_low:+.0f}, {100 * change.ci_high:+.0f}]"


def p_value(p: float | None) -> str:
    if p is None:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def arrow(change: Change) -> str:
    """``BASE -> NEW`` for one change."""
    return f"{value(change, change.base)} → {value(change, change.new)}"


def side_name(side: Side) -> str:
    """Agent and model; an agent that brings its own model (``"own"``) shows the model its calls reported."""
    model = side.model if side.model not in (None, "own") else (", ".join(side.models_observed) or side.model)
    parts = [p for p in (side.agent, model) if p]
    return " · ".join(parts) or "unnamed evaluation"


def header_facts(data: ComparisonData) -> list[str]:
    """The header lines every renderer shows: who is compared, on what, and what was left out."""
    facts = [
        f"BASE {side_name(data.base)} → NEW {side_name(data.new)}",
        f"{data.n_questions} questions paired, {len(data.conditions)} conditions; judge: {data.base.correctness}; "
        f"alpha = {data.alpha:g}",
    ]
    if data.differs:
        facts.append("What changed (the change under test): " + "; ".join(data.differs))
    drop = dropped_line(data)
    if drop:
        facts.append(drop)
    return facts


def dropped_line(data: ComparisonData) -> str | None:
    if not data.dropped:
        return None
    q = [d for d in data.dropped if d.kind == "question"]
    c = [d for d in data.dropped if d.kind == "condition"]
    parts = []
    if q:
        reasons: dict[str, list[str]] = {}
        for d in q:
            reasons.setdefault(d.reason, []).append(d.id)
        parts.append(f"{len(q)} question(s) dropped (" + "; ".join(
            f"{len(ids)} {why}: {listing(ids, 4)}" for why, ids in reasons.items()) + ")")
    if c:
        parts.append(f"{len(c)} condition(s) dropped (" + "; ".join(f"{d.id}: {d.reason}" for d in c) + ")")
    return "Not compared: " + "; ".join(parts)
