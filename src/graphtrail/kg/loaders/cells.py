"""One table cell read as what graphtrail needs, or a :class:`KGError` naming the file, row and column.

Columnar files (GraphRAG parquet) carry types: a column may hold numbers,
lists, bytes or infinities where text was meant. A cell is converted here,
strictly, so that a wrong type is a one-line error saying where, never a
crash deep in the loader or a silently mangled value (``str(b"A")`` is
``"b'A'"``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

from ..errors import KGError

__all__ = ["Cell", "blank"]


def blank(value: Any) -> bool:
    """Missing: ``None``, NaN or pandas' NA/NaT."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and math.isnan(float(value))


def _kind(value: Any) -> str:
    if hasattr(value, "shape") or isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, float) and math.isinf(value):
        return "infinity"
    return f"{type(value).__name__} {str(value)[:40]!r}"


class Cell:
    """A cell's value and where it is (``"entities.parquet row 3, column 'title'"``)."""

    def __init__(self, value: Any, where: str) -> None:
        self.value, self.where = value, where

    def fail(self, expected: str) -> KGError:
        return KGError(f"{self.where}: expected {expected}, found {_kind(self.value)}")

    def text(self, *, default: str | None = None) -> str | None:
        """A string (UTF-8 bytes decoded); missing gives ``default``; numbers and lists are errors."""
        value = self.value
        if blank(value):
            return default
        if isinstance(value, str):
            return value
        if isinstance(value, (bytes, bytearray)):
            try:
                return bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                raise KGError(f"{self.where}: bytes that are not UTF-8 text ({bytes(value)[:20]!r})") from None
        raise self.fail("text")

    def ident(self, *, required: bool = False) -> str | None:
        """An id: text, or a whole number (GraphRAG numbers communities); missing is ``None`` or an error."""
        value = self.value
        if blank(value):
            if required:
                raise KGError(f"{self.where}: missing (every row needs one)")
            return None
        if isinstance(value, bool) or _is_number(value) and not _whole(value):
            raise self.fail("an id (text or a whole number)")
        if _is_number(value):
            return str(int(value))
        found = self.text()
        if required and not found:
            raise KGError(f"{self.where}: empty (every row needs one)")
        return found

    def ids(self) -> list[str]:
        """A list of ids (a single string counts as one id); missing is empty."""
        value = self.value
        if blank(value):
            return []
        if isinstance(value, (str, bytes)):
            one = Cell(value, self.where).ident()
            return [one] if one else []
        if not (isinstance(value, (list, tuple)) or hasattr(value, "tolist")) or isinstance(value, dict):
            raise self.fail("a list of ids")
        items = value.tolist() if hasattr(value, "tolist") else list(value)
        if not isinstance(items, list):
            raise self.fail("a list of ids")
        return [found for item in items if (found := Cell(item, f"{self.where} (an item)").ident())]

    def whole(self, *, default: int = 0) -> int:
        """A whole number (``3``, ``3.0``, ``"3"``); missing gives ``default``."""
        value = self.value
        if blank(value):
            return default
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
        if isinstance(value, bool) or not _is_number(value) or not _whole(value):
            raise self.fail("a whole number")
        return int(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real)


def _whole(value: Any) -> bool:
    try:
        return math.isfinite(float(value)) and float(value) == int(value)
    except (OverflowError, ValueError, TypeError):
        return False
