"""Split text into lines at ``\\n`` only: how every JSONL and line-based file is read.

``str.splitlines()`` also breaks at U+2028, U+2029, U+0085, ``\\v``, ``\\f`` and
``\\x1c``-``\\x1e``. JSON allows those characters unescaped inside strings (and
``json.dumps(..., ensure_ascii=False)`` writes U+2028/U+2029/U+0085 as they are),
so a reader that uses ``splitlines()`` cuts a valid record in two. Files
graphtrail writes and reads back end lines with ``\\n`` (a ``\\r`` before it is
dropped, for files edited on Windows).
"""

from __future__ import annotations

__all__ = ["split_lines"]


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """``text.splitlines(keepends)``, but breaking at ``\\n`` (and ``\\r\\n``) only.

    Line ``i`` of the result is line ``i + 1`` of the file, as an editor counts them.
    """
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()  # text ending with a newline has no empty last line
        last_open = False
    else:
        last_open = True
    if keepends:
        out = [p + "\n" for p in parts]
        if last_open and out:
            out[-1] = out[-1][:-1]
        return out
    return [p[:-1] if p.endswith("\r") else p for p in parts]
