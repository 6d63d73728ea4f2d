"""String columns (Arrow arrays) turned into what the graph stores, without Python code per row.

Shared by the loaders that read text cells: aliases (``;``-separated, each
stripped as ``str.strip()`` strips), Python's ``str.casefold`` of names, and
XML-escaped values that only some rows hold.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Callable
from itertools import repeat
from operator import methodcaller
from typing import Any

import numpy as np

from ..fields import ALIAS_SEPARATOR
from .delimited import PY_WHITESPACE

__all__ = ["WS_CLASS", "alias_tuples", "casefold", "or_default", "replace_where"]

# Python's str.strip() white space as an RE2 character class, for the alias cleanup below.
WS_CLASS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in PY_WHITESPACE) + "]"


def alias_tuples(column: Any) -> list[tuple[str, ...]]:
    """Each cell's ``;``-separated aliases, stripped, empty ones dropped (what the exact reader reads).

    White space around the separators is removed in Arrow, so each cell is then
    one ``str.split`` and a filter, called from C (no Python code per row).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    cells = pc.replace_substring_regex(pc.utf8_trim(column, characters=PY_WHITESPACE),
                                       f"{WS_CLASS}*{ALIAS_SEPARATOR}{WS_CLASS}*", ALIAS_SEPARATOR)
    filled = pc.greater(pc.utf8_length(cells), 0)
    rows = np.flatnonzero(filled.to_numpy(zero_copy_only=False))
    # filter(None, ...) drops the empty aliases (";;", a separator at either end).
    tuples = map(tuple, map(filter, repeat(None), map(methodcaller("split", ALIAS_SEPARATOR), cells.filter(filled).to_pylist())))
    if len(rows) == len(cells):
        return list(tuples)
    out: list[tuple[str, ...]] = [()] * len(cells)
    deque(map(out.__setitem__, rows.tolist(), tuples), maxlen=0)  # each filled row's tuple into place, from C
    return out


def casefold(values: Any) -> Any:
    """``str.casefold`` of each string of an Arrow array: Arrow's lowercase for ASCII strings (the same there), Python's for the rest."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    other = pc.invert(pc.string_is_ascii(values))
    folded = pc.utf8_lower(values)
    if pc.any(other).as_py():
        folded = pc.replace_with_mask(folded, other, pa.array(list(map(str.casefold, values.filter(other).to_pylist())), type=folded.type))
    return folded


def replace_where(values: list[str], needle: str, convert: Callable[[str], str]) -> list[str]:
    """``values`` with ``convert`` applied to the rows that contain ``needle`` (found in C; the rest are not touched)."""
    rows = np.flatnonzero(np.fromiter(map(operator.contains, values, repeat(needle)), dtype=bool, count=len(values))).tolist()
    if not rows:
        return values
    out = list(values)
    deque(map(out.__setitem__, rows, map(convert, map(out.__getitem__, rows))), maxlen=0)
    return out


def or_default(values: list[str], default: list[str]) -> list[str]:
    """Per row, the value, or ``default``'s where the value is empty (rows found in C)."""
    rows = np.flatnonzero(np.fromiter(map(operator.not_, values), dtype=bool, count=len(values))).tolist()
    if not rows:
        return values
    out = list(values)
    deque(map(out.__setitem__, rows, map(default.__getitem__, rows)), maxlen=0)
    return out
