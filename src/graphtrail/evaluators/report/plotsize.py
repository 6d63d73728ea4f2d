"""How large the report's plots are drawn and shown, shared by the drawing and the HTML page.

One place for the numbers that decide whether a plot is readable: the text
size the figures are drawn with, how far the page may shrink a plot on a
narrow screen, and the natural width of an embedded SVG (what 100% means).
Imports nothing heavy, so the renderers can read it without loading matplotlib.
"""

from __future__ import annotations

import re

__all__ = ["TICK_PT", "MIN_SCALE", "PNG_DPI", "ZOOM", "svg_width_px", "tick_px"]

#: Font size (points) of tick labels and other data text: 13 px at natural size, 10 px at :data:`MIN_SCALE`.
TICK_PT = 10.0
#: The smallest share of its natural width the HTML report lets a plot shrink to; a narrower
#: screen scrolls the plot's own box sideways (never the page).
MIN_SCALE = 0.75
#: How much a click or tap enlarges a plot in the HTML report, relative to its natural size.
ZOOM = 1.5
#: PNG resolution: twice matplotlib's default 100 dpi, so the PNG files beside report.md stay sharp on dense screens.
PNG_DPI = 200

_SVG_WIDTH = re.compile(rb'<svg\b[^>]*?\swidth="([0-9.]+)(pt|px)?"')


def svg_width_px(svg: bytes) -> float | None:
    """The natural width of ``svg`` in CSS px (matplotlib writes points: 1 pt = 4/3 px), or None if it has none."""
    match = _SVG_WIDTH.search(svg[:4096])
    if match is None:
        return None
    value = float(match.group(1))
    return value * 4 / 3 if match.group(2) == b"pt" else value


def tick_px(scale: float) -> float:
    """The on-screen size (CSS px) of :data:`TICK_PT` text in a plot shown at ``scale`` of its natural size."""
    return TICK_PT * 4 / 3 * scale
