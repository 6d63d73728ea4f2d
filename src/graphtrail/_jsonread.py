"""``json.loads`` for user files: every way it can fail becomes one :class:`JSONInputError`.

``json.loads`` raises ``JSONDecodeError`` for malformed text, but also a plain
``ValueError`` for an integer of more than 4,300 digits (Python's limit on
int/str conversion) and ``RecursionError`` for deeply nested arrays. Readers of
user files turn all three into their own typed error, naming the file and,
where it can be known, the line.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["JSONInputError", "loads"]

_LONG_NUMBER = re.compile(r"-?\d{4000,}")


class JSONInputError(ValueError):
    """Text that is not usable JSON; ``line``/``column`` are 1-based, or None when unknown."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column

    def where(self, filename: str) -> str:
        """``"file line L column C"`` (as much as is known)."""
        if self.line is None:
            return filename
        return f"{filename} line {self.line}" + (f" column {self.column}" if self.column is not None else "")


def loads(text: str, first_line: int = 1) -> Any:
    """Parse ``text``; ``first_line`` is the file line ``text`` starts on (for one line of a JSONL file)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONInputError(f"invalid JSON: {exc.msg}", first_line + exc.lineno - 1, exc.colno) from None
    except RecursionError:
        raise JSONInputError("JSON nested too deeply to read", first_line if "\n" not in text else None) from None
    except ValueError as exc:  # an integer too long to convert (or a similar limit)
        m = _LONG_NUMBER.search(text)
        if m is not None:
            line = first_line + text.count("\n", 0, m.start())
            column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            return_reason = f"a number of {len(m.group().lstrip('-'))} digits is too long to read"
            raise JSONInputError(return_reason, line, column) from None
        raise JSONInputError(f"unreadable JSON value ({exc})", first_line if "\n" not in text else None) from None
