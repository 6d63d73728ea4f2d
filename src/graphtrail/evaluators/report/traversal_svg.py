"""The traversal drawing of report.html: inline SVG a reader can hover, with labels that never overlap.

The PNG beside report.md stays matplotlib's (:func:`.plots.traversal_figure`); the
page gets this one because an ``<img>`` cannot show a node's details on hover. Each
node and edge carries a ``<title>`` (the entity, whether it was cited, the step and
tool that first revealed it; the relation of an edge). Labels are placed greedily:
each tries positions around its node and takes the first that overlaps no label or
node drawn so far; a label with no free place is left off the drawing (its node keeps
the hover title), so no two labels ever overlap. The drawing is made twice, landscape
for a laptop and portrait for a phone, each at a size where its text reads at the
page's body size; the page shows the one that fits (CSS in :mod:`.layout`).
"""

from __future__ import annotations

import html
import math
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

import networkx as nx

if TYPE_CHECKING:
    from .model import Traversal, TraversalNode

__all__ = ["traversal_svg", "label_boxes", "LAYOUTS"]

CITED = "#2b8a3e"
UNCITED = "#adb5bd"
INFLUENTIAL = "#c92a2a"

#: name -> (width, height, font size) in CSS px at natural size: wide for a laptop, narrow (portrait) for a phone.
LAYOUTS = {"wide": (880, 560, 13), "narrow": (360, 460, 12)}
_R = 9  # node radius
_PAD = 28  # margin inside the drawing
_CHAR_EM = 0.62  # a Latin character's width, in font sizes (system sans fonts average ~0.55: a little generous)


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    def hits(self, other: "Box") -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def inside(self, width: float, height: float) -> bool:
        return self.x0 >= 0 and self.y0 >= 0 and self.x1 <= width and self.y1 <= height


def _e(x: object) -> str:
    return html.escape("" if x is None else str(x))


def _hover(n: "TraversalNode") -> str:
    role = "cited" if n.cited else ("visited, not cited" if n.visited else "cited, never revealed by a tool")
    parts = [f"{n.name} ({n.id})" if n.name else n.id, role]
    if n.step is not None:
        parts.append(f"first revealed at step {n.step} by {n.tool}")
    if n.influential:
        parts.append("influential: hiding it alone changed the answer")
    if n.topic:
        parts.append("topic entity")
    if n.answer:
        parts.append("answer entity")
    return " · ".join(parts)


def _positions(tr: "Traversal", nodes: "list[TraversalNode]", width: int, height: int) -> dict[str, tuple[float, float]]:
    graph = nx.Graph()
    graph.add_nodes_from(n.id for n in nodes)
    keep = set(graph)
    graph.add_edges_from((s, t) for s, _, t in tr.edges if s in keep and t in keep and s != t)
    raw = nx.spring_layout(graph, seed=0, k=1.4 / max(1.0, len(nodes) ** 0.5))
    xs = [p[0] for p in raw.values()]
    ys = [p[1] for p in raw.values()]
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    # the label column on each side: nodes keep to the middle so labels to their left or right fit
    margin_x = _PAD + 60
    return {k: (margin_x + (x - min(xs)) / span_x * (width - 2 * margin_x),
                _PAD + 14 + (y - min(ys)) / span_y * (height - 2 * _PAD - 28)) for k, (x, y) in raw.items()}


def _text(n: "TraversalNode", limit: int = 22) -> str:
    name = n.name or n.id
    return name if len(name) <= limit else name[: limit - 1] + "…"


def label_boxes(text: str, x: float, y: float, font: float) -> list[tuple[str, Box, float, float]]:
    """Candidate places for ``text`` around a node at (x, y): (text-anchor, box, text x, baseline y), best first."""
    w = font * sum(1.0 if unicodedata.east_asian_width(c) in ("W", "F") else _CHAR_EM for c in text)
    h = font * 1.25
    gap = _R + 3
    return [
        ("start", Box(x + gap, y - h / 2, x + gap + w, y + h / 2), x + gap, y + font * 0.35),  # right
        ("end", Box(x - gap - w, y - h / 2, x - gap, y + h / 2), x - gap, y + font * 0.35),  # left
        ("middle", Box(x - w / 2, y - gap - h, x + w / 2, y - gap), x, y - gap - font * 0.3),  # above
        ("middle", Box(x - w / 2, y + gap, x + w / 2, y + gap + h), x, y + gap + font * 0.95),  # below
    ]


def _node_shape(n: "TraversalNode", x: float, y: float) -> str:
    fill = CITED if n.cited else UNCITED
    stroke = f' stroke="{INFLUENTIAL}" stroke-width="3"' if n.influential else ' stroke="#fff" stroke-width="1.5"'
    if n.topic:
        return f'<rect x="{x - _R:.1f}" y="{y - _R:.1f}" width="{2 * _R}" height="{2 * _R}" fill="{fill}"{stroke}/>'
    if n.answer:
        pts = []
        for i in range(10):
            r = _R * 1.35 if i % 2 == 0 else _R * 0.6
            a = -math.pi / 2 + i * math.pi / 5
            pts.append(f"{x + r * math.cos(a):.1f},{y + r * math.sin(a):.1f}")
        return f'<polygon points="{" ".join(pts)}" fill="{fill}"{stroke}/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{_R}" fill="{fill}"{stroke}/>'


def traversal_svg(tr: "Traversal", layout: str = "wide", max_nodes: int = 60) -> str:
    """One drawing of ``tr`` as an ``<svg>`` element (viewBox-scaled to its box's width)."""
    width, height, font = LAYOUTS[layout]
    nodes = tr.nodes[:max_nodes]
    height = max(260, min(height, 140 + 42 * len(nodes)))  # a few nodes need no tall drawing
    pos = _positions(tr, nodes, width, height)
    keep = {n.id for n in nodes}
    pid = f"trv-{layout}"
    out = [f'<svg class="traversal {layout}" id="{pid}" viewBox="0 0 {width} {height}" role="img" '
           f'aria-label="Traversal of {_e(tr.question_id)}" '
           f'style="max-width:{width}px" font-size="{font}">',
           f'<defs><marker id="{pid}-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#adb5bd"/></marker></defs>']
    for source, relation, target in tr.edges:
        if source not in keep or target not in keep or source == target:
            continue
        (x0, y0), (x1, y1) = pos[source], pos[target]
        d = math.hypot(x1 - x0, y1 - y0) or 1.0
        ux, uy = (x1 - x0) / d, (y1 - y0) / d
        out.append(f'<g class="edge"><title>{_e(relation)}</title><line x1="{x0 + ux * _R:.1f}" y1="{y0 + uy * _R:.1f}" '
                   f'x2="{x1 - ux * (_R + 2):.1f}" y2="{y1 - uy * (_R + 2):.1f}" stroke="#ced4da" stroke-width="1.5" '
                   f'marker-end="url(#{pid}-arrow)"/></g>')
    taken = [Box(x - _R - 2, y - _R - 2, x + _R + 2, y + _R + 2) for x, y in pos.values()]
    # cited, influential, topic and answer entities get their labels placed first
    order = sorted(nodes, key=lambda n: (not (n.topic or n.answer), not n.influential, not n.cited, n.step or 10**6))
    labels: dict[str, str] = {}  # node id -> its <text>
    for n in order:
        x, y = pos[n.id]
        text = _text(n)
        for anchor, box, tx, ty in label_boxes(text, x, y, font):
            if box.inside(width, height) and not any(box.hits(t) for t in taken):
                taken.append(box)
                labels[n.id] = (f'<text class="label" x="{tx:.1f}" y="{ty:.1f}" text-anchor="{anchor}" '
                                f'fill="#212529">{_e(text)}</text>')
                break
    for n in nodes:
        x, y = pos[n.id]
        out.append(f'<g class="node" data-id="{_e(n.id)}"><title>{_e(_hover(n))}</title>{_node_shape(n, x, y)}'
                   f'{labels.get(n.id, "")}</g>')
    out.append("</svg>")
    return "".join(out)
