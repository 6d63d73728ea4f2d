"""The comparison as rich renderables: what ``graphtrail compare`` prints on a terminal.

Short: the per-condition table lists only the numbers that moved (the
unchanged ones are counted in one line); compare.html has every row.
"""

from __future__ import annotations

from typing import Any

from .findings import findings
from .fmt import header_facts
from .model import ComparisonData
from .rules import GateResult
from .tables import CONDITION_HEADER, QUESTION_HEADER, SCORE_HEADER, condition_rows, question_rows, score_rows

__all__ = ["render_terminal"]

#: Per-question rows shown on a terminal; the rest are in compare.html / --format json.
MAX_QUESTION_ROWS = 15


def _table(title: str, header: list[str], rows: list[list[str]], numeric: range) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left", title_style="bold")
    for i, h in enumerate(header):
        table.add_column(h, justify="right" if i in numeric else "left", overflow="fold")
    for row in rows:
        table.add_row(*row, style="bold" if row[-1] == "changed" else None)
    return table


def render_terminal(data: ComparisonData, gate: GateResult | None = None) -> Any:
    """A rich Group: header, findings, the changes that moved, per-question events, the gate."""
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = [Text(line, style="bold" if i == 0 else "") for i, line in enumerate(header_facts(data))]
    parts += [Text(n, style="yellow") for n in data.notes]
    parts.append(Text("\nFindings", style="bold"))
    parts += [Text(f"• {f}") for f in findings(data)]
    moved = condition_rows(data, changed_only=True)
    unchanged = len(condition_rows(data)) - len(moved)
    if moved:
        parts.append(_table("per condition (the numbers that moved)", CONDITION_HEADER, moved, range(2, 5)))
    if unchanged:
        parts.append(Text(f"{unchanged} per-condition number(s) unchanged.", style="dim"))
    parts.append(_table("provenance scores", SCORE_HEADER, score_rows(data), range(1, 4)))
    events = question_rows(data)
    if events:
        shown = events[:MAX_QUESTION_ROWS]
        parts.append(_table("per question", QUESTION_HEADER, shown, range(0)))
        if len(events) > len(shown):
            parts.append(Text(f"... and {len(events) - len(shown)} more (compare.html, --format json)", style="dim"))
    if gate is not None and gate.outcomes:
        parts.append(Text("gate: " + ("passed" if gate.ok else f"{len(gate.broken)} rule(s) broken"),
                          style="bold green" if gate.ok else "bold red"))
        parts += [Text(f"  {'✗' if o.broken else '✓'} {o.message}", style="red" if o.broken else "green") for o in gate.outcomes]
    return Group(*parts)
