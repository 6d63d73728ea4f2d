"""compare.html: the comparison as one self-contained page in the report's style (its CSS, inline plot)."""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from typing import Any

from ..report.layout import plot_pair_html
from ..report.render import CSS
from .findings import findings
from .fmt import header_facts
from .model import ComparisonData
from .narrowplot import narrow_changes_svg
from .plot import changes_plot
from .rules import GateResult
from .tables import CONDITION_HEADER, QUESTION_HEADER, SCORE_HEADER, condition_rows, question_rows, score_rows

__all__ = ["render_html"]

_EXTRA_CSS = "tr.significant td{font-weight:600;background:#fff5f5}.ok{color:#2b8a3e}.broken{color:#c92a2a}"


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _table(table_id: str, header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        verdict = row[-1]
        cls = ' class="significant"' if verdict == "changed" else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    return f'<div class="scroll"><table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _gate_html(gate: GateResult | None) -> str:
    if gate is None or not gate.outcomes:
        return ""
    head = "gate passed" if gate.ok else f"{len(gate.broken)} rule(s) broken"
    items = "".join(f'<li class="{"broken" if o.broken else "ok"}">{_e(o.message)}</li>' for o in gate.outcomes)
    return f'<section id="gate"><h2 class="{"ok" if gate.ok else "broken"}">Gate: {_e(head)}</h2><ul>{items}</ul></section>'


def _drawn(draw: Callable[[ComparisonData], bytes | None], data: ComparisonData) -> bytes | None:
    try:
        return draw(data)
    except Exception as exc:  # noqa: BLE001 - the page is worth more than its plot
        logging.getLogger("graphtrail").warning("graphtrail: the comparison plot could not be drawn: %s", exc)
        return None


def render_html(data: ComparisonData, gate: GateResult | None = None, *, plot: bool = True) -> str:
    """compare.html: no scripts, no network; the plot is a base64 PNG, with a narrow SVG in its place on a phone
    (:mod:`.narrowplot`); a plot that fails to draw is left out with a warning.

    ``plot=False`` leaves the plot out: ``graphtrail history`` makes one page per pair of runs, and
    drawing is most of a page's cost; its own trend plots show the same moves.
    """
    facts = header_facts(data)
    png, narrow = (_drawn(changes_plot, data), _drawn(narrow_changes_svg, data)) if plot else (None, None)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">',
        f"<title>graphtrail comparison</title><style>{CSS}{_EXTRA_CSS}</style></head><body>",
        "<h1>graphtrail comparison</h1>",
        f'<p class="note" id="meta">{"<br>".join(_e(f) for f in facts)}</p>',
        *[f'<p class="warn">{_e(n)}</p>' for n in data.notes],
        '<section id="findings"><h2>Findings</h2><ul>' + "".join(f"<li>{_e(f)}</li>" for f in findings(data)) + "</ul></section>",
        _gate_html(gate),
    ]
    if png is not None:  # the wide PNG above 600 px, the narrow SVG (drawn for a phone, shown full size) below
        parts.append(f'<figure id="changes-plot">{plot_pair_html("changes", png, narrow, "Changes with 95% intervals")}'
                     "<figcaption>Each change NEW − BASE with its 95% paired bootstrap "
                     "interval; red where the paired test (McNemar or permutation) gives p &lt; alpha.</figcaption></figure>")
    parts += [
        '<section id="conditions"><h2>Per condition</h2>', _table("condition-changes", CONDITION_HEADER, condition_rows(data)), "</section>",
        '<section id="scores"><h2>Provenance scores</h2>', _table("score-changes", SCORE_HEADER, score_rows(data)), "</section>",
    ]
    events = question_rows(data)
    parts.append('<section id="per-question"><h2>Per question</h2>')
    parts.append(_table("question-events", QUESTION_HEADER, events) if events else '<p class="note">No question changed.</p>')
    parts.append("</section>")
    parts.append(f'<p class="note">Questions are paired by id. p-values: exact McNemar on each question\'s majority over '
                 f"trials (right/wrong), paired sign-flip permutation test for scores; intervals: 95% paired bootstrap over "
                 f"questions. A change whose p is not below {data.alpha:g} is inconclusive at this n, not &quot;no effect&quot;. "
                 f"Schema {_e(data.schema_version)}.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
