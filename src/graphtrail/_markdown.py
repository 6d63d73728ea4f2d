"""Markdown that data cannot restructure: how every value reaches report.md, compare.md and a PR comment.

A question, an answer or an entity name comes from users, models and graphs, and
a PR comment is rendered by GitHub. So every value placed in Markdown goes through
one of these helpers, chosen for where it lands (running text, a list item, a
table cell, a heading, a code span):

- it is **one line**: every line break (``\\n``, ``\\r``, U+2028 ...) and control
  character becomes a space, so ``"Alpha\\n~~~"`` cannot open a code fence,
  ``"\\n# X"`` cannot make a heading and a ``\\r`` cannot add table rows;
- it cannot start a block where it begins a line (``#``, ``>``, ``-``, ``1.`` ...),
  nor open HTML (``<`` before a letter), a character reference (``&name;``),
  emphasis, a link or strikethrough; in a cell ``|`` cannot split the row, in a
  heading ``#`` cannot close it;
- it cannot notify anyone: ``@octocat`` and ``@acme/security-team`` get a word
  joiner (U+2060, invisible) after the ``@``, so they read the same but are no
  longer mentions;
- it is at most :data:`MAX_VALUE` characters (a 200,000-character name is cut,
  with an ellipsis).

:func:`fit` keeps a whole document under a size (GitHub refuses comment bodies
over 65,536 characters), cutting at a line and saying where the rest is.
Escapes are backslashes (CommonMark renders ``\\*`` as ``*``), so the text
reads the same once rendered; only what could change the structure is escaped,
so the raw file stays readable too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["MAX_VALUE", "COMMENT_LIMIT", "one_line", "md_text", "md_cell", "md_heading", "md_code", "md_table", "fit"]

#: Longest value placed in Markdown, in characters; longer ones are cut with "…".
MAX_VALUE = 300
#: GitHub's limit for an issue or pull-request comment body (and graphtrail keeps below it in UTF-8 bytes,
#: which are never fewer than the characters or UTF-16 units GitHub may count).
COMMENT_LIMIT = 65_536

_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_REF = re.compile(r"&(?=#?\w+;)")
_INLINE = re.compile(r"([\\`*\[~])")  # every [ escaped: no link, image or definition can open
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # intraword _ is never emphasis in GFM
_BLOCK_START = re.compile(r"^(?:[#>+=\-]|\d{1,9}(?=[.)]))")
_MENTION = re.compile(r"(?<![A-Za-z0-9_`])@(?=[A-Za-z0-9])")
WORD_JOINER = "\u2060"


def one_line(value: Any, limit: int = MAX_VALUE) -> str:
    """``value`` as text on one line (every line break and control character a space), cut to ``limit`` characters."""
    text = " ".join(_BREAKS.sub(" ", "" if value is None else str(value)).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def md_text(value: Any, limit: int = MAX_VALUE, *, line_start: bool = True) -> str:
    """A value as running text (a paragraph, a list item, after a label): one line, inert, no mention.

    ``line_start``: the value may begin a line (or a list item), so a leading
    ``#``, ``>``, ``-``, ``+``, ``=`` or ``1.`` is escaped; a table cell or a
    heading's text cannot start a block, so there it is left as it is.
    """
    text = one_line(value, limit)
    text = _TAG.sub("&lt;", _REF.sub("&amp;", text))
    text = _INLINE.sub(r"\\\1", text)
    text = _UNDERSCORE.sub(r"\\_", text)
    if line_start and (m := _BLOCK_START.match(text)):
        text = text[: m.end()] + "\\" + text[m.end():] if text[0].isdigit() else "\\" + text
    return _MENTION.sub("@" + WORD_JOINER, text)


def md_cell(value: Any, limit: int = MAX_VALUE) -> str:
    """A value in a table cell: :func:`md_text`, and ``|`` cannot split the row."""
    return md_text(value, limit, line_start=False).replace("|", "\\|")


def md_heading(value: Any, limit: int = MAX_VALUE) -> str:
    """A value in a heading: :func:`md_text`, and no ``#`` can close the heading early."""
    return md_text(value, limit, line_start=False).replace("#", "\\#")


def md_code(value: Any, limit: int = MAX_VALUE) -> str:
    """A value as an inline code span: one line, fenced by more backticks than it holds (so it cannot end early)."""
    text = one_line(value, limit)
    run = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (run + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_table(header: Sequence[Any], rows: Sequence[Sequence[Any]], *, limit: int = MAX_VALUE) -> str:
    """A GitHub table: every cell through :func:`md_cell`, every row exactly as wide as the header."""
    width = len(header)

    def line(cells: Sequence[Any]) -> str:
        cells = [*list(cells)[:width], *[""] * (width - len(cells))]
        return "| " + " | ".join(md_cell(c, limit) for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * width, *(line(r) for r in rows)])


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def fit(text: str, limit: int = COMMENT_LIMIT, *, rest: str = "the full file") -> str:
    """``text`` if it is at most ``limit`` bytes; else its first lines and one closing line naming ``rest``.

    The cut is at a line; a ``<details>`` left open is closed, so the rest of a
    page it is embedded in is not folded away.
    """
    if _size(text) <= limit:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    used, opened = 0, 0
    reserve = 400 + _size(rest)
    for line in lines:
        if used + _size(line) + 1 > limit - reserve:
            break
        kept.append(line)
        used += _size(line) + 1
        opened += line.count("<details>") - line.count("</details>")
    dropped = len(lines) - len(kept)
    tail = ["", *["</details>"] * max(opened, 0), "",
            f"**Cut to fit a comment: and {dropped} more line(s).** Everything is in {md_text(rest)}.", ""]
    return "\n".join(kept + tail)
