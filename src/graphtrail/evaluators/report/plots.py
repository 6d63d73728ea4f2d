"""The report's three figures, drawn from a :class:`Report` alone (so results.json can be re-plotted).

Figures are drawn on :class:`matplotlib.figure.Figure` with the Agg canvas,
never through ``pyplot``: no global backend switch, no shared state, safe in a
user's notebook or a server thread. Each ``*_plot`` function returns the
figure's bytes (PNG at 2x by default, or SVG), or ``None`` when the report has
nothing to draw; :func:`render_plot_formats` saves each figure in several formats at once, so the
report writes PNG files beside report.md and embeds SVG in report.html (sharp at
any size, see :mod:`.layout`) without building a figure twice.
Text is drawn at :data:`TICK_PT` points or more, so it stays readable when a
phone shows the plot at :data:`MIN_SCALE` of its natural size. Data strings (question ids,
entity names, answers) go through :mod:`.plotfonts`: drawn literally (never
as mathtext) and in fonts that have their glyphs, else as the entity id.
"""

from __future__ import annotations

import io
import warnings
from typing import TYPE_CHECKING

import matplotlib
import networkx as nx
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .influencegrid import influence_grid
from .plotfonts import families, label, plain
from .plotsize import MIN_SCALE, PNG_DPI, TICK_PT

if TYPE_CHECKING:
    from .model import Report, TraversalNode

__all__ = ["accuracy_plot", "influence_plot", "traversal_plot", "render_plots", "render_plot_formats", "figure_bytes",
           "TICK_PT", "MIN_SCALE", "PNG_DPI"]

CITED = "#2b8a3e"
UNCITED = "#adb5bd"
INFLUENTIAL = "#c92a2a"

def figure_bytes(fig: Figure, fmt: str = "png", *, tight: bool = True) -> bytes:
    """``fig`` saved as ``png`` (at :data:`PNG_DPI`) or ``svg`` (text as paths: no font needed to view it).

    ``tight=False`` keeps the figure's own size and margins: a figure laid out with fixed
    margins saves in about half the time (no extra draw to measure its bounding box).
    """
    if fmt not in ("png", "svg"):
        raise ValueError(f"plot format must be 'png' or 'svg', not {fmt!r}")
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    bbox = "tight" if tight else None
    if fmt == "png":
        fig.savefig(buf, format="png", dpi=PNG_DPI, bbox_inches=bbox)
    else:
        # A fixed salt for the SVG's element ids (else random per save): the same report renders
        # byte for byte the same page, so `graphtrail report` re-renders it exactly.
        with matplotlib.rc_context({"svg.hashsalt": "graphtrail"}):
            fig.savefig(buf, format="svg", bbox_inches=bbox, metadata={"Date": None})
    return buf.getvalue()


def accuracy_plot(report: "Report", fmt: str = "png") -> bytes | None:
    """Accuracy per condition with its 95% cluster-bootstrap interval (and the paper's values, labelled)."""
    fig = accuracy_figure(report)
    return None if fig is None else figure_bytes(fig, fmt)


def accuracy_figure(report: "Report") -> Figure | None:
    """The figure of :func:`accuracy_plot`."""
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
                      for r in rows], rotation=30, ha="right", fontsize=TICK_PT, fontfamily=families())
    ax.set_ylim(0, 1.05)
    ax.tick_params(axis="y", labelsize=TICK_PT)
    ax.set_ylabel("accuracy", fontsize=TICK_PT)
    title = f"Accuracy per condition (n = {report.stats.n_questions} questions)"
    if paper and report.paper_reference:
        # Between title and axes, not beside them: the figure stays as narrow as its bars (phones show it larger).
        ax.set_title(title, fontsize=TICK_PT + 1, pad=26)
        ax.legend(fontsize=TICK_PT - 1, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, frameon=False)
    else:  # bars and intervals only: the caption says what they are
        ax.set_title(title, fontsize=TICK_PT + 1)
    return fig


def influence_plot(report: "Report", max_questions: int = 40, max_positions: int = 20, fmt: str = "png") -> bytes | None:
    """Heat map: questions x visit position, colour = entity influence; cited entities get a dot, hidden influence an x."""
    fig = influence_figure(report, max_questions, max_positions)
    return None if fig is None else figure_bytes(fig, fmt)


def influence_figure(report: "Report", max_questions: int = 40, max_positions: int = 20) -> Figure | None:
    """The figure of :func:`influence_plot`."""
    found = influence_grid(report, max_questions, max_positions)
    if found is None:
        return None
    qids, grid, cited_pts, hidden_pts = found.qids, found.grid, found.cited, found.hidden
    width = grid.shape[1]
    fig = Figure(figsize=(max(5.0, 0.35 * width + 2.5), max(3.0, 0.3 * len(qids) + 1.8)))
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
    ax.set_yticks(range(len(qids)), [plain(q) for q in qids], fontsize=TICK_PT, fontfamily=families())
    ax.set_xticks(range(width), [str(j + 1) for j in range(width)], fontsize=TICK_PT)
    ax.set_xlabel("entity, by first-visit position in the baseline trajectory", fontsize=TICK_PT)
    ax.set_ylabel("question", fontsize=TICK_PT)
    ax.set_title("Per-entity influence (change rate above the noise floor)", fontsize=TICK_PT + 1, pad=28)
    bar = fig.colorbar(image, ax=ax)
    bar.set_label("influence", fontsize=TICK_PT)
    bar.ax.tick_params(labelsize=TICK_PT)
    if cited_pts or hidden_pts:
        ax.legend(fontsize=TICK_PT - 1, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False)
    return fig


def traversal_plot(report: "Report", max_nodes: int = 60, fmt: str = "png") -> bytes | None:
    """The traversal subgraph of one question: cited, visited-uncited and influential entities marked."""
    fig = traversal_figure(report, max_nodes)
    return None if fig is None else figure_bytes(fig, fmt)


def traversal_figure(report: "Report", max_nodes: int = 60) -> Figure | None:
    """The figure of :func:`traversal_plot`."""
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
                                     font_size=TICK_PT - 2, font_color="#868e96")
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
        ax.text(x_pos, y_pos, text, fontsize=TICK_PT - 1, fontfamily=families(), ha="center", va="center", clip_on=True)
    handles = [
        Line2D([], [], marker="o", ls="", color=CITED, label="cited"),
        Line2D([], [], marker="o", ls="", color=UNCITED, label="visited, not cited"),
        Line2D([], [], marker="o", ls="", markerfacecolor="white", markeredgecolor=INFLUENTIAL, markeredgewidth=2.5, label="influential"),
        Line2D([], [], marker="s", ls="", color="#495057", label="topic entity"),
        Line2D([], [], marker="*", ls="", color="#495057", markersize=11, label="answer entity"),
    ]
    ax.legend(handles=handles, fontsize=TICK_PT - 1, loc="lower left", framealpha=0.9)
    title = tr.question if len(tr.question) < 90 else tr.question[:87] + "..."
    answer = label(str(tr.answer), "(answer not drawable in the installed fonts)")
    title = label(title, "(question not drawable in the installed fonts)")
    ax.set_title(f"{plain(tr.question_id)}: {title}\nanswer: {answer}", fontsize=TICK_PT, fontfamily=families())
    return fig


def node_labels(nodes: "list[TraversalNode]", width: int = 24) -> dict[str, str]:
    """Node id -> the label drawn: the entity's name (cut to ``width``), or its id when the fonts lack a glyph."""
    return {n.id: label((n.name or n.id)[:width], n.id[:width]) for n in nodes}


def render_plot_formats(report: "Report", formats: tuple[str, ...] = ("png", "svg")) -> dict[str, dict[str, bytes]]:
    """``{"accuracy": {"png": ..., "svg": ...}, ...}``: each figure drawn once, saved in every format.

    A plot that fails to draw is left out with a warning: the reports around it
    (and the other plots) are worth more than a crash after a long evaluation.
    """
    out: dict[str, dict[str, bytes]] = {}
    from .changedplot import changed_figure

    figures = (("accuracy", accuracy_figure), ("changed", changed_figure), ("influence", influence_figure),
               ("traversal", traversal_figure))
    if "svg" in formats:  # the page's phone drawings (SVG only: report.md has the wide PNGs)
        from .narrowplots import narrow_figures

        figures += tuple((f"{name}-narrow", fn) for name, fn in narrow_figures())
    for name, fn in figures:
        try:
            fig = fn(report)
            if fig is None:
                continue
            fmts = ("svg",) if name.endswith("-narrow") else formats
            out[name] = {fmt: figure_bytes(fig, fmt, tight=not name.endswith("-narrow")) for fmt in fmts}
        except Exception as exc:  # noqa: BLE001 - one figure must not cost the report
            warnings.warn(f"graphtrail: the {name} plot could not be drawn and is left out ({type(exc).__name__}: {exc})",
                          RuntimeWarning, stacklevel=2)
    return out


def render_plots(report: "Report", fmt: str = "png") -> dict[str, bytes]:
    """``{"accuracy": bytes, ...}`` in ``fmt`` (``png`` or ``svg``) for whatever the report can draw."""
    return {name: files[fmt] for name, files in render_plot_formats(report, (fmt,)).items()}
