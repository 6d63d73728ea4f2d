"""How graphtrail's big objects show themselves: one line in a REPL, a small table in a notebook or rich.

``print(load_kg("countries"))`` used to dump every text unit (181 KB). Each big
public object now has a one-line ``__repr__`` built with :func:`one_line`, and
``_repr_html_`` (Jupyter) / ``__rich__`` (rich, IPython with rich) summaries
built from the same ``(label, value)`` rows with :func:`html_summary` and
:func:`rich_summary`. The rows are computed from what the object already holds:
a summary never loads or computes anything lazy.

This module imports nothing from graphtrail, so the tracer, the agents and the
evaluators can all use it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["short", "one_line", "html_summary", "rich_summary", "plural"]


def short(text: Any, width: int = 48) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 entity`` / ``759 entities``."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def one_line(kind: str, *parts: Any) -> str:
    """``Kind(part, part, ...)`` with ``None`` parts left out."""
    return f"{kind}({', '.join(str(p) for p in parts if p is not None)})"


def html_summary(title: str, rows: Iterable[tuple[str, Any]]) -> str:
    """A small two-column HTML table (every value escaped) under ``title``."""
    body = "".join(
        f'<tr><th style="text-align:left;padding-right:1em">{html.escape(str(k))}</th>'
        f'<td style="text-align:left">{html.escape(str(v))}</td></tr>'
        for k, v in rows
    )
    return f"<div><strong>{html.escape(title)}</strong><table>{body}</table></div>"


def rich_summary(title: str, rows: Sequence[tuple[str, Any]]) -> Any:
    """The same summary as a rich table (rich is imported only when a console renders it)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left", show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(Text(str(key)), Text(str(value)))  # Text: data is never read as rich markup
    return table
