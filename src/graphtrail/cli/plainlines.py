"""Tables as ``key: value`` lines where a table cannot draw: pipes, CI logs, terminals under 100 columns.

A boxed table squeezed into 80 columns breaks words inside its cells ("full_isolat|ion")
and cuts columns past its border; a log viewer or ``grep`` reads neither. Below
:data:`NARROW` columns, or when the output is not a terminal, every table the CLI
prints (``compare``, ``traces stats``, ``kg info``) becomes lines instead:

- a two-column table: ``key: value``, one line per row;
- a wider one: one block per row, its first cell as the block's heading and the other
  cells as indented ``header: value`` lines (empty cells left out);

with the title first and the caption last. Piped lines are never wrapped (a log keeps
each line whole); on a narrow terminal they wrap between words. :func:`console` is the
Console the commands print through.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NARROW", "console", "as_lines", "wants_lines"]

#: Narrower than this (columns), tables print as lines.
NARROW = 100


def wants_lines(con: Any) -> bool:
    """Whether ``con`` should get lines rather than drawn tables."""
    return not con.is_terminal or con.width < NARROW


def _text(value: Any) -> str:
    from rich.text import Text

    if value is None:
        return ""
    if isinstance(value, Text):
        return value.plain
    if isinstance(value, str):
        try:
            return Text.from_markup(value).plain
        except Exception:  # noqa: BLE001 - not markup after all: the string as it is
            return value
    return str(value)


def _one_line(value: str) -> str:
    return " ".join(value.split())


def table_lines(table: Any) -> list[str]:
    """``table`` (a rich Table) as plain lines."""
    headers = [_one_line(_text(c.header)) for c in table.columns]
    columns = [[_one_line(_text(cell)) for cell in c._cells] for c in table.columns]  # noqa: SLF001 - rich keeps cells there
    rows = list(zip(*columns)) if columns else []
    out: list[str] = []
    if table.title:
        out.append(_one_line(_text(table.title)))
    indent = "  " if table.title else ""
    for row in rows:
        if len(row) == 2:
            key = row[0] or headers[0]
            out.append(f"{indent}{key}: {row[1]}" if row[1] else f"{indent}{key}")
            continue
        head = row[0] or "–"
        out.append(f"{indent}{(headers[0] + ': ') if headers[0] else ''}{head}")
        for header, cell in zip(headers[1:], row[1:]):
            if cell:
                out.append(f"{indent}  {header or '·'}: {cell}")
    if table.caption:
        out.append(_one_line(_text(table.caption)))
    return out


def as_lines(renderable: Any) -> Any:
    """``renderable`` with every Table in it (directly, or in a Group) turned into lines of Text."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    if isinstance(renderable, Table):
        return Text("\n".join(table_lines(renderable)))
    if isinstance(renderable, Group):
        return Group(*(as_lines(r) for r in renderable.renderables))
    return renderable


def console(**options: Any) -> Any:
    """A rich Console (``options`` as rich's) whose ``print`` turns tables into lines when :func:`wants_lines` says so."""
    from rich.console import Console

    class _Console(Console):
        def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - rich's name
            from rich.console import Group
            from rich.table import Table

            if wants_lines(self) and any(isinstance(o, (Table, Group)) for o in objects):
                objects = tuple(as_lines(o) for o in objects)
                if not self.is_terminal:
                    kwargs.setdefault("soft_wrap", True)  # a log keeps each line whole
            super().print(*objects, **kwargs)

    return _Console(**options)
