"""Data strings in the report's plots: drawn as plain text, in fonts that have their glyphs.

Two things go wrong when question ids, entity names and answers are handed to
matplotlib as they are:

- a string with two ``$`` (a question id like ``usd$_{$1``) is parsed as
  mathtext, and a malformed one raises while the figure is saved, after the
  whole evaluation has run. :func:`plain` escapes every ``$`` so matplotlib
  draws the characters literally;
- the default font (DejaVu Sans) has no CJK glyphs, so ``中国`` comes out as
  empty boxes. :func:`families` lists DejaVu Sans followed by whichever CJK
  fonts are installed (matplotlib falls back glyph by glyph along that list),
  and :func:`drawable` tells whether a string can be drawn at all, so a caller
  can show an entity's id instead of a row of boxes.

Nothing here changes matplotlib's global ``rcParams``: callers pass
``fontfamily=families()`` to the texts they draw.
"""

from __future__ import annotations

import functools

__all__ = ["CJK_FAMILIES", "families", "drawable", "plain", "label"]

#: CJK fonts matplotlib can fall back to, in order of preference (Linux, macOS, Windows names).
CJK_FAMILIES: tuple[str, ...] = (
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Noto Sans CJK TC",
    "Noto Sans CJK KR",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Source Han Sans",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
    "PingFang SC",
    "Hiragino Sans GB",
    "Hiragino Sans",
    "Microsoft YaHei",
    "SimHei",
    "Malgun Gothic",
    "Yu Gothic",
    "Arial Unicode MS",
)

#: The base font: matplotlib's bundled default, so it is always present.
BASE_FAMILY = "DejaVu Sans"


@functools.lru_cache(maxsize=1)
def _font_files() -> dict[str, str]:
    """Installed family name -> one font file of that family (as matplotlib's font list knows them)."""
    from matplotlib import font_manager

    files: dict[str, str] = {}
    for entry in font_manager.fontManager.ttflist:
        # A regular face first; any face has the same character coverage for our purpose.
        if entry.name not in files or (entry.style == "normal" and entry.weight in (400, "normal")):
            files[entry.name] = entry.fname
    return files


@functools.lru_cache(maxsize=1)
def families() -> tuple[str, ...]:
    """The font families for data strings: DejaVu Sans, then the installed CJK fonts."""
    installed = _font_files()
    return (BASE_FAMILY, *(f for f in CJK_FAMILIES if f in installed))


@functools.lru_cache(maxsize=16)
def _charmap(path: str) -> frozenset[int]:
    from matplotlib.ft2font import FT2Font

    try:
        return frozenset(FT2Font(path).get_charmap())
    except Exception:  # noqa: BLE001 - an unreadable font covers nothing
        return frozenset()


@functools.lru_cache(maxsize=1)
def _coverage() -> frozenset[int]:
    installed = _font_files()
    covered: set[int] = set()
    for family in families():
        if family in installed:
            covered |= _charmap(installed[family])
    return frozenset(covered)


def drawable(text: str, fonts: tuple[str, ...] | None = None) -> bool:
    """Whether every visible character of ``text`` has a glyph in ``fonts`` (font files; default: :func:`families`)."""
    if fonts is None:
        covered = _coverage()
    else:
        covered = frozenset().union(*(_charmap(f) for f in fonts)) if fonts else frozenset()
    return all(ord(ch) in covered for ch in text if not ch.isspace())


def plain(text: object) -> str:
    """``text`` as matplotlib draws it literally: every ``$`` escaped, so it is never read as mathtext."""
    return str(text).replace("$", "\\$")


def label(text: str | None, fallback: str) -> str:
    """``text`` when it can be drawn in the installed fonts, else ``fallback`` (e.g. the entity id); escaped."""
    chosen = text if text and drawable(text) else fallback
    return plain(chosen)
