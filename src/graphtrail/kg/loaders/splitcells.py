"""A tab- or pipe-separated file split into cells by numpy: where each cell starts and ends in the file, no text copied.

pyarrow's CSV reader tokenizes the file and copies every cell into a string
column: 0.08 s of CPU for the 27 MB triples file of a million edges, about
what ``pandas.read_csv`` takes for the whole load's yardstick. Without quotes
(only comma-separated files have them here), a cell is the bytes between two
separators, so the separators found by one vectorized comparison are every
cell's bounds (0.02 s). The triples' ends are then looked up among the entity
ids straight from the file's bytes (:mod:`.lookup`), and only what must become
strings (relation labels, descriptions, ends no id matched) is copied out
(:meth:`CellColumn.take`).

:func:`split_cells` answers only for the files where its cells are exactly
pyarrow's (no carriage return, no blank line, the same number of cells on
every line, valid UTF-8, no comment line or NUL); for any other file it
returns ``None`` and the caller reads it as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["CellColumn", "arrow_of", "first_cell", "split_cells"]

#: Bytes compared at a time when looking for separators: the comparison's masks stay in the CPU cache.
SCAN_BYTES = 1 << 20


class CellColumn:
    """One column of a delimited file: each cell's first byte (``starts``) and end (``ends``) in the file's bytes ``data``.

    Holds a view of the file (a memory map while the load runs): what outlives the load is copied out by :meth:`take`.
    """

    __slots__ = ("data", "buffer", "starts", "ends")

    def __init__(self, data: np.ndarray, buffer: Any, starts: np.ndarray, ends: np.ndarray) -> None:
        self.data, self.buffer, self.starts, self.ends = data, buffer, starts, ends

    def __len__(self) -> int:
        return len(self.starts)

    def slice(self, offset: int) -> "CellColumn":
        """The cells from row ``offset`` on (no copy)."""
        return CellColumn(self.data, self.buffer, self.starts[offset:], self.ends[offset:])

    def first(self) -> str:
        """The first cell's text."""
        return bytes(self.data[self.starts[0] : self.ends[0]]).decode("utf-8")

    def spans(self) -> Any:
        """An Arrow string array over the file's bytes whose even items are the cells (no copy).

        Its offsets are the cells' bounds interleaved (start, end, start, end
        ...): the odd items are what lies between two cells. The file was
        checked to be UTF-8 as a whole, and every item is cut from it at ASCII
        separators, so every item is UTF-8. ``string`` (32-bit offsets) for a
        file under 2 GB, else ``large_string``: half the offsets to allocate
        and write (a million-edge load copies three million cells).
        """
        import pyarrow as pa

        n = len(self.starts)
        kind, dtype = (pa.string(), np.int32) if len(self.data) < 2**31 - 1 else (pa.large_string(), np.int64)
        offsets = np.empty(2 * n, dtype=dtype)
        offsets[0::2], offsets[1::2] = self.starts, self.ends
        return pa.Array.from_buffers(kind, max(2 * n - 1, 0), [None, pa.py_buffer(offsets), self.buffer])

    def take(self, rows: np.ndarray | None = None) -> Any:
        """The cells at ``rows`` (ascending; default: all) as an Arrow string array (:meth:`spans`' type), copied out of the file."""
        import pyarrow as pa

        cells = self if rows is None else CellColumn(self.data, self.buffer, self.starts[rows], self.ends[rows])
        spans = cells.spans()
        if not len(cells):
            return pa.array([], type=spans.type)
        return spans.take(pa.array(np.arange(0, len(spans), 2, dtype=np.int32 if spans.type == pa.string() else np.int64)))


def arrow_of(column: Any) -> Any:
    """``column`` as Arrow: cells copied out of their file (:meth:`CellColumn.take`), an Arrow column as it is."""
    return column.take() if isinstance(column, CellColumn) else column


def first_cell(column: Any) -> str:
    """The first cell's text, of cells or of an Arrow column."""
    return column.first() if isinstance(column, CellColumn) else column[0].as_py()


def _separators(data: np.ndarray, delimiter: int, dtype: Any) -> tuple[np.ndarray, int]:
    """Positions of every delimiter and newline byte, ascending (a block at a time), and how many are newlines."""
    found, newlines = [], 0
    for at in range(0, len(data), SCAN_BYTES):
        block = data[at : at + SCAN_BYTES]
        newline = block == 10
        newlines += int(np.count_nonzero(newline))
        newline |= block == delimiter
        positions = np.flatnonzero(newline).astype(dtype, copy=False)
        positions += at
        found.append(positions)
    return (np.concatenate(found) if found else np.zeros(0, dtype=dtype)), newlines


def _is_utf8(buffer: Any, size: int) -> bool:
    """Whether the ``size`` bytes of ``buffer`` are UTF-8 (Arrow's validator, run by a cast from binary)."""
    import pyarrow as pa

    whole = pa.Array.from_buffers(pa.large_binary(), 1, [None, pa.py_buffer(np.array([0, size], dtype=np.int64)), buffer])
    try:
        whole.cast(pa.large_string())
    except (pa.ArrowInvalid, UnicodeError):
        return False
    return True


def split_cells(raw: Any, delimiter: str, max_columns: int = 64) -> list[CellColumn] | None:
    """The columns of a tab- or pipe-separated file as cell bounds, or ``None`` when pyarrow's reader must read it.

    ``raw``: bytes, or a memory map of the file. ``None`` for a comma (its
    quotes), a carriage return or a blank line (pyarrow ends lines at either
    and skips blank ones), a line with another number of cells than the first,
    more than ``max_columns`` columns or fewer than two, bytes that are not
    UTF-8, and anything :mod:`.delimited` leaves to the exact reader (a comment line, a NUL).
    Cells are not stripped. A byte-order mark is skipped.
    """
    try:
        import pyarrow as pa
    except ImportError:  # pyarrow is optional (graphtrail[graphrag]): the exact reader reads the file
        return None

    from .delimited import _needs_exact_reader

    if delimiter not in ("\t", "|") or len(raw) < 3 or raw.find(b"\r") >= 0 or _needs_exact_reader(raw):
        return None
    buffer = pa.py_buffer(raw)
    data = np.frombuffer(buffer, dtype=np.uint8)
    begin = 3 if raw[:3] == b"\xef\xbb\xbf" else 0
    if data.max() >= 0x80 and not _is_utf8(buffer, len(data)):  # (ASCII is UTF-8: one max, a sixth of the validator's time)
        return None
    dtype = np.int32 if len(data) < 2**30 else np.int64  # (the lookup adds a prefix's length to a position)
    separators, newlines = _separators(data[begin:], ord(delimiter), dtype)
    separators += begin
    if data[-1] != 10:  # the last line has no newline: the file's end closes it (pyarrow's reader needs a newline in one line)
        if not newlines:
            return None
        separators = np.append(separators, np.array(len(data), dtype=dtype))
        newlines += 1
    head = separators[: max_columns + 1]
    first_line = np.flatnonzero((data[np.minimum(head, len(data) - 1)] == 10) | (head == len(data)))
    n_columns = int(first_line[0]) + 1 if len(first_line) else max_columns + 1
    if not 2 <= n_columns <= max_columns or len(separators) % n_columns or newlines != len(separators) // n_columns:
        return None
    ends_of_lines = separators[n_columns - 1 :: n_columns]
    if not (data[ends_of_lines[:-1]] == 10).all():  # (the last may be the file's end) another number of cells, or a blank line
        return None
    starts = np.empty_like(separators)
    starts[0] = begin
    np.add(separators[:-1], 1, out=starts[1:])
    starts, ends = starts.reshape(-1, n_columns), separators.reshape(-1, n_columns)
    return [CellColumn(data, buffer, starts[:, k], ends[:, k]) for k in range(n_columns)]
