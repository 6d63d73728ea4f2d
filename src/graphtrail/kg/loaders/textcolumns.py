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


#: Code points below this (Latin, Greek, Cyrillic) may be casefolded by Arrow's lowercase, except those where the two differ.
_ARROW_FOLDS_BELOW = 0x530
_arrow_folded: str | None = None


def _arrow_fold_pattern() -> str:
    """An RE2 pattern for strings Arrow's ``utf8_lower`` casefolds exactly as Python does, found once per process.

    Both map each code point on its own, so a string folds alike when each of
    its code points does. Which code points below :data:`_ARROW_FOLDS_BELOW`
    fold alike is measured here, against the Unicode tables of the Arrow and
    Python actually running (``ß`` and final sigma are among the few that do not).
    """
    global _arrow_folded
    if _arrow_folded is None:
        import pyarrow as pa
        import pyarrow.compute as pc

        chars = [chr(c) for c in range(0x80, _ARROW_FOLDS_BELOW)]
        lowered = pc.utf8_lower(pa.array(chars)).to_pylist()
        ranges: list[list[int]] = [[0, 0x7F]]
        for c, low in zip(chars, lowered):
            if low == c.casefold():
                if ranges[-1][1] == ord(c) - 1:
                    ranges[-1][1] = ord(c)
                else:
                    ranges.append([ord(c), ord(c)])
        _arrow_folded = "^[" + "".join(f"\\x{{{a:x}}}-\\x{{{b:x}}}" for a, b in ranges) + "]*$"
    return _arrow_folded


def casefold(values: Any) -> Any:
    """``str.casefold`` of each string of an Arrow array: Arrow's lowercase where it folds as Python does, Python's for the rest.

    Arrow's lowercase is Python's casefold for ASCII, and for the Latin, Greek
    and Cyrillic letters that :func:`_arrow_fold_pattern` finds alike; other
    strings are folded by Python (:func:`_python_casefold`).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    folded = pc.utf8_lower(values)
    other = pc.invert(pc.string_is_ascii(values))
    if not pc.any(other).as_py():
        return folded
    rows = np.flatnonzero(other.to_numpy(zero_copy_only=False))
    unusual = pc.invert(pc.match_substring_regex(values.take(rows), _arrow_fold_pattern()))
    rows = rows[unusual.to_numpy(zero_copy_only=False)]
    if len(rows):
        mask = np.zeros(len(values), dtype=bool)
        mask[rows] = True
        folded = pc.replace_with_mask(folded, pa.array(mask), _python_casefold(values.take(rows)).cast(folded.type))
    return folded


def _python_casefold(values: Any) -> Any:
    """Python's ``str.casefold`` of each string, by one call over them all, joined by NUL.

    ``casefold`` maps each character on its own (no context, unlike
    ``lower``'s final sigma) and keeps NUL, so folding the joined text and
    splitting it again gives each string's fold, without a Python string per row.
    Strings that hold a NUL themselves are folded one by one.
    """
    import codecs

    import pyarrow as pa
    import pyarrow.compute as pc

    if pc.any(pc.match_substring(values, "\x00")).as_py():
        return pa.array(list(map(str.casefold, values.to_pylist())), type=pa.large_string())
    joined = pc.binary_join_element_wise(values, pa.scalar("", values.type), pa.scalar("\x00", values.type))  # each string, then a NUL
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int64 if pa.types.is_large_string(joined.type) else np.int32)
    offsets = offsets[joined.offset : joined.offset + len(joined) + 1]
    text = codecs.decode(memoryview(joined.buffers()[2])[offsets[0] : offsets[-1]], "utf-8").casefold()
    return pc.list_flatten(pc.split_pattern(pa.array([text], type=pa.large_string()), "\x00")).slice(0, len(values))


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
