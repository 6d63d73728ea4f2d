"""The report's three figures, drawn from a :class:`Report` alone (so results.json can be re-plotted).

Figures are drawn on :class:`matplotlib.figure.Figure` with the Agg canvas,
never through ``pyplot``: no global backend switch, no shared state, safe in a
user's notebook or a server thread. Each function returns PNG bytes, or
``None`` when the report has nothing to draw. Data strings (question ids,
entity names, answers) go through :mod:`.plotfonts`: drawn literally (never
as mathtext) and in fonts that have their glyphs, else as the entity id.
"""

from __future__ import annotations

import io
import warnings
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .plotfonts import families, label, plain

if TYPE_CHECKING:
    from .model import Report, TraversalNode

__all__ = ["accuracy_plot", "influence_plot", "traversal_plot", "render_plots"]

CITED = "#2b8a3e"
UNCITED = "#adb5bd"
INFLUENTIAL = "#c92a2a"


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def accuracy_plot(report: "Report") -> bytes | None:
    """Accuracy per condition with its 95% cluster-bootstrap interval (and the paper's values, labelled)."""
    rows = [r for r in report.conditions if r.accuracy is not None]
    if not rows:
        return None
    fig = Figure(figsize=(max(6.0, 1.1 * len(rows)), 4.2))
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    acc = np.array([r.accuracy for r in rows], dtype=float)
    low = np.array([r.ci_low if r.ci_low is not None else r.accuracy for r in rows], dtype=float)
    high = np.array([r.ci_high if r.ci_high is not None else r.accuracy for r in rows], dtype=float)
    colors = ["#1c7ed6" if r.condition == "baseline" else ("#868e96" if r.per_entity else "#74c0fc") for r in rows]
    ax.bar(x, acc, color=colors, label="graphtrail (this run)")
    ax.errorbar(x, acc, yerr=[acc - low, high - acc], fmt="none", ecolor="black", capsize=4, label="95% CI")
    paper = [(i, r.paper_accuracy) for i, r in enumerate(rows) if r.paper_accuracy is not None]
    if paper and report.paper_reference:
        ax.scatter([i for i, _ in paper], [v for _, v in paper], marker="D", facecolors="none", edgecolors="#e8590c",
                   zorder=3, label="paper's Table 2 (different data)")
    ax.set_xticks(x, [plain(r.label.replace(" (mean over entities)", "\n(per entity)").replace(" (mean over subsets)", "\n(subsets)"))
                      for r in rows], rotation=30, ha="right", fontsize=8, fontfamily=families())
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title(f"Accuracy per condition (n = {report.stats.n_questions} questions)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _png(fig)


def influence_plot(report: "Report", max_questions: int = 40, max_positions: int = 20) -> bytes | None:
    """Heat map: questions x visit position, colour = entity influence; cited entities get a dot, hidden influence an x."""
    scored = [e for e in report.entities if e.influence is not None and e.visit_rank is not None]
    if not scored:
        return None
    qids = list(dict.fromkeys(e.question_id for e in scored))[:max_questions]
    width = min(max_positions, max(e.visit_rank for e in scored if e.question_id in qids))  # type: ignore[type-var]
    grid = np.full((len(qids), width), np.nan)
    row_of = {q: i for i, q in enumerate(qids)}
    cited_pts, hidden_pts = [], []
    for e in scored:
        if e.question_id not in row_of or e.visit_rank > width:  # type: ignore[operator]
            continue
        i, j = row_of[e.question_id], e.visit_rank - 1  # type: ignore[operator]
        grid[i, j] = e.influence
        if e.cited:
            cited_pts.append((j, i))
        elif e.influential:
            hidden_pts.append((j, i))
    fig = Figure(figsize=(max(5.0, 0.35 * width + 2.5), max(3.0, 0.28 * len(qids) + 1.5)))
    ax = fig.add_subplot()
    # Diverging around 0: red = the answer changed more than the noise floor, white = no effect,
    # blue = less than the noise floor; grey cells hold no entity.
    low = min(-1e-6, float(np.nanmin(grid)))
    ax.set_facecolor("#eeeeee")
    image = ax.imshow(
        np.ma.masked_invalid(grid), aspect="auto", cmap="RdBu_r", norm=TwoSlopeNorm(vmin=low, vcenter=0.0, vmax=1.0)
    )
    if cited_pts:
        ax.scatter(*zip(*cited_pts), marker="o", s=14, color=CITED, label="cited")
    if hidden_pts:
        ax.scatter(*zip(*hidden_pts), marker="x", s=22, color="black", label="uncited & influential")
    ax.set_yticks(range(len(qids)), [plain(q) for q in qids], fontsize=7, fontfamily=families())
    ax.set_xticks(range(width), [str(j + 1) for j in range(width)], fontsize=7)
    ax.set_xlabel("entity, by first-visit position in the baseline trajectory")
    ax.set_ylabel("question")
    ax.set_title("Per-entity influence (change rate above the noise floor)")
    fig.colorbar(image, ax=ax, label="influence")
    if cited_pts or hidden_pts:
        ax.legend(fontsize=7, loc="upper right", bbox_to_anchor=(1.0, 1.15), ncol=2)
    return _png(fig)


def traversal_plot(report: "Report", max_nodes: int = 60) -> bytes | None:
    """The traversal subgraph of one question: cited, visited-uncited and influential entities marked."""
    tr = report.traversal
    if tr is None or not tr.nodes:
        return None
    nodes = tr.nodes[:max_nodes]
    keep = {n.id for n in nodes}
    graph = nx.DiGraph()
    graph.add_nodes_from(n.id for n in nodes)
    relations = {}
    for source, relation, target in tr.edges:
        if source in keep and target in keep:
            graph.add_edge(source, target)
            relations[(source, target)] = relation
    pos = nx.spring_layout(graph, seed=0, k=1.2 / max(1.0, len(nodes) ** 0.5))
    fig = Figure(figsize=(8.0, 6.0))
    ax = fig.add_subplot()
    ax.set_axis_off()
    nx.draw_networkx_edges(graph, pos, ax=ax, edge_color="#ced4da", arrows=True, arrowsize=8)
    if len(relations) <= 30:
        nx.draw_networkx_edge_labels(graph, pos, edge_labels={k: plain(v) for k, v in relations.items()}, ax=ax,
                                     font_size=6, font_color="#868e96")
    fills = [CITED if n.cited else UNCITED for n in nodes]
    borders = [INFLUENTIAL if n.influential else "white" for n in nodes]
    shapes = {"o": [n for n in nodes if not (n.topic or n.answer)], "s": [n for n in nodes if n.topic], "*": [n for n in nodes if n.answer and not n.topic]}
    for shape, members in shapes.items():
        if not members:
            continue
        idx = [nodes.index(m) for m in members]
        nx.draw_networkx_nodes(graph, pos, nodelist=[m.id for m in members], ax=ax, node_shape=shape,
                               node_color=[fills[i] for i in idx], edgecolors=[borders[i] for i in idx],
                               linewidths=2.5, node_size=[420 if shape == "*" else 260] * len(members))
    for node_id, text in node_labels(nodes).items():
        x_pos, y_pos = pos[node_id]
        ax.text(x_pos, y_pos, text, fontsize=7, fontfamily=families(), ha="center", va="center", clip_on=True)
    handles = [
        Line2D([], [], marker="o", ls="", color=CITED, label="cited"),
        Line2D([], [], marker="o", ls="", color=UNCITED, label="visited, not cited"),
        Line2D([], [], marker="o", ls="", markerfacecolor="white", markeredgecolor=INFLUENTIAL, markeredgewidth=2.5, label="influential"),
        Line2D([], [], marker="s", ls="", color="#495057", label="topic entity"),
        Line2D([], [], marker="*", ls="", color="#495057", markersize=11, label="answer entity"),
    ]
    ax.legend(handles=handles, fontsize=8, loc="lower left", framealpha=0.9)
    title = tr.question if len(tr.question) < 90 else tr.question[:87] + "..."
    answer = label(str(tr.answer), "(answer not drawable in the installed fonts)")
    title = label(title, "(question not drawable in the installed fonts)")
    ax.set_title(f"{plain(tr.question_id)}: {title}\nanswer: {answer}", fontsize=9, fontfamily=families())
    return _png(fig)


def node_labels(nodes: "list[TraversalNode]", width: int = 24) -> dict[str, str]:
    """Node id -> the label drawn: the entity's name (cut to ``width``), or its id when the fonts lack a glyph."""
    return {n.id: label((n.name or n.id)[:width], n.id[:width]) for n in nodes}


def render_plots(report: "Report") -> dict[str, bytes]:
    """``{"accuracy": png, "influence": png, "traversal": png}`` for whatever the report can draw.

    A plot that fails to draw is left out with a warning: the reports around it
    (and the other plots) are worth more than a crash after a long evaluation.
    """
    out = {}
    for name, fn in (("accuracy", accuracy_plot), ("influence", influence_plot), ("traversal", traversal_plot)):
        try:
            png = fn(report)
        except Exception as exc:  # noqa: BLE001 - one figure must not cost the report
            warnings.warn(f"graphtrail: the {name} plot could not be drawn and is left out ({type(exc).__name__}: {exc})",
                          RuntimeWarning, stacklevel=2)
            continue
        if png is not None:
            out[name] = png
    return out
