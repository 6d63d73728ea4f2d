"""Tables in a tool's text output: Markdown tables and fixed-width text (``DataFrame.to_string()``).

A tool that answers with a table names its entities in rows, not in JSON. This
module finds such tables and reads them as rows (``{column: cell}``), so that

- the tracer's generic extraction (:mod:`.extract`) reads entities from a table
  that has an id column (``id``, ``entity_id``, ``node_id``), as from JSON rows;
- the evaluator reads known names in each row (its own name matcher: the tracer
  knows no graph), and its filter drops exactly the row holding a hidden entity,
  keeping the header and the separator.

What counts as a table:

- **Markdown**: a header line, a separator line (``|---|:--:|``) and the ``|``
  lines that follow;
- **fixed-width**: a header line of column names, then at least one line of the
  same width whose cells sit under the names (right- or left-aligned, as pandas
  writes them). The cells are the columns of characters between positions that
  are blank on every line; a part with no column name over it belongs to the
  named column on its right (a right-aligned value wider than its name); a part
  left of the first name is the index, and is not read. A frame too wide for
  pandas' line width comes in blocks of columns, each header ending in `` \\``:
  each block is a table of its own.

Anything else (prose, lists) is not a table. Only the first ``_MAX_LINES``
lines are read. Pure functions of the text, never raising.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._lines import split_lines

__all__ = ["Table", "find_tables", "table_rows"]

_MAX_LINES = 5000
_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_MD_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_COLUMN_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
_FOOTER = re.compile(r"^\s*\[\d+ rows x \d+ columns\]\s*$")


@dataclass
class Table:
    """One table: the line numbers of its header, separator and rows (0-based, as ``split_lines`` counts), and its rows."""

    header: int
    separator: int | None
    columns: list[str]
    row_lines: list[int] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)

    @property
    def frame_lines(self) -> set[int]:
        """The lines that are no row: header and separator."""
        return {self.header} | ({self.separator} if self.separator is not None else set())


def _md_cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip().replace("\\|", "|") for c in _MD_CELL_SPLIT.split(body)]


def _markdown(lines: list[str], start: int, end: int) -> tuple[Table, int] | None:
    """The Markdown table whose separator is line ``start`` (its header the line before)."""
    if start == 0 or "|" not in lines[start - 1] or not _MD_SEPARATOR.match(lines[start]) or "|" not in lines[start]:
        return None
    columns = _md_cells(lines[start - 1])
    table = Table(header=start - 1, separator=start, columns=columns)
    i = start + 1
    while i < end and "|" in lines[i] and lines[i].strip():
        cells = _md_cells(lines[i])
        table.row_lines.append(i)
        table.rows.append({c: (cells[k] if k < len(cells) else "") for k, c in enumerate(columns) if c})
        i += 1
    return (table, i) if table.rows else None


def _spans(line: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", line)]


def _fixed_width(lines: list[str], start: int, end: int) -> tuple[Table, int] | None:
    """The fixed-width table whose header is line ``start``."""
    header = lines[start].rstrip()
    if header.endswith(" \\"):  # pandas wrapping a wide frame (``str(df)``): each block's header ends in `` \\``
        header = header[:-1].rstrip()
    if start + 1 >= end or len(lines[start + 1].rstrip()) != len(header):  # cheapest test first: prose lines differ
        return None
    names = _spans(header)
    if len(names) < 2 or not all(_COLUMN_NAME.match(header[a:b]) for a, b in names):
        return None
    width = len(header)
    block = [start]
    i = start + 1
    while i < end and lines[i].strip() and not _FOOTER.match(lines[i]) and len(lines[i].rstrip()) == width:
        block.append(i)
        i += 1
    if len(block) < 2:
        return None
    texts = [lines[k].rstrip().ljust(width) for k in block]
    # every named column has a value under it, aligned to the name's right or left edge, on every row
    for a, b in names:
        if not all(t[b - 1] != " " or t[a] != " " for t in texts[1:]):
            return None
    blank = [all(t[p] == " " for t in texts) for p in range(width)]
    segments: list[tuple[int, int]] = []
    p = 0
    while p < width:
        if blank[p]:
            p += 1
            continue
        q = p
        while q < width and not blank[q]:
            q += 1
        segments.append((p, q))
        p = q
    owner: list[int | None] = []
    for a, b in segments:
        over = [k for k, (s, e) in enumerate(names) if s < b and a < e]
        if over:
            owner.append(over[0])
        elif b <= names[0][0]:
            owner.append(None)  # left of every name: the index
        else:  # a value wider than its name: right-aligned under the next name, else left-aligned under the last
            right = [k for k, (s, _) in enumerate(names) if s >= b]
            owner.append(right[0] if right else len(names) - 1)
    columns = [header[a:b] for a, b in names]
    table = Table(header=start, separator=None, columns=columns)
    for k, text in zip(block[1:], texts[1:]):
        cells = [""] * len(columns)
        for (a, b), o in zip(segments, owner):
            if o is not None:
                cells[o] = (cells[o] + " " + text[a:b].strip()).strip()
        table.row_lines.append(k)
        table.rows.append(dict(zip(columns, cells)))
    return table, i


def find_tables(text: str) -> list[Table]:
    """Every Markdown and fixed-width table in ``text``, in order; ``[]`` for text that holds none."""
    if not isinstance(text, str) or "\n" not in text.strip():
        return []
    lines = [line.rstrip("\r\n") for line in split_lines(text, keepends=True)[:_MAX_LINES]]
    end = len(lines)
    found: list[Table] = []
    i = 0
    while i < end:
        hit = _markdown(lines, i, end) if "-" in lines[i] else None
        if hit is None and lines[i].strip() and (i + 1 < end and "|" not in lines[i]):
            hit = _fixed_width(lines, i, end)
        if hit is not None:
            found.append(hit[0])
            i = hit[1]
        else:
            i += 1
    return found


def table_rows(text: str) -> list[dict[str, str]]:
    """The rows of every table in ``text``, as ``{column: cell}``."""
    return [row for table in find_tables(text) for row in table.rows]
