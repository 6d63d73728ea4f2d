"""How each condition's numbers were obtained, said in the report (docs/ablations.md, "Routes").

``exact``: the agent ran on really-ablated data (the factory route, graphtrail's own
tools, the data-source wrappers). ``filtered``: its tool outputs were filtered by
entity id. ``estimated``: plain text was cut by names, a heuristic. Findings state
exact and filtered conditions as facts; an estimated one carries a visible caveat,
and every condition that is not exact says which route would make it so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..records import METHODS
from .coverage import IMPROVE_HINT

if TYPE_CHECKING:
    from .tables import ReportTables

__all__ = ["method_line", "estimated_caveat", "hedge", "MEANING"]

MEANING = {
    "exact": "the agent ran on really-ablated data",
    "filtered": "its tool outputs were filtered by entity id",
    "estimated": "plain-text tool outputs were cut by names, a heuristic",
}


def _rows(report: "ReportTables") -> list[Any]:
    return [r for r in report.conditions if r.condition != "baseline" and r.method and not r.not_applicable]


def method_line(report: "ReportTables") -> str | None:
    """``How each condition was measured: exact (...); estimated (...). To make ...``; ``None`` with nothing to say."""
    rows = _rows(report)
    if not rows:
        return None
    parts = []
    for method in METHODS:
        labels = [r.label for r in rows if r.method == method]
        if labels:
            parts.append(f"{method}, {MEANING[method]}: {', '.join(labels)}")
    text = "How each condition was measured: " + "; ".join(parts) + "."
    if any(r.method != "exact" for r in rows):
        text += f" To make a condition exact, {IMPROVE_HINT}."
    return text


def estimated_caveat(report: "ReportTables") -> str | None:
    """The findings' caveat naming the estimated conditions; ``None`` when there are none."""
    labels = [r.label for r in _rows(report) if r.method == "estimated" and r.valid]
    if not labels:
        return None
    return (f"Estimated, not measured: {', '.join(labels)}. Their tools returned plain text, which graphtrail can only "
            f"cut by names, so their numbers approximate the agent on ablated data; to make them exact, {IMPROVE_HINT}.")


def hedge(sentence: str | None, report: "ReportTables", *conditions: str) -> str | None:
    """``sentence`` marked as an estimate when one of the ``conditions`` it states is estimated."""
    if sentence is None:
        return None
    rows = [report.condition(c) for c in conditions]
    if any(r is not None and r.method == "estimated" for r in rows):
        return "(Estimated) " + sentence
    return sentence
