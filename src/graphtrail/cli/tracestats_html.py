"""``traces stats --html``: the production statistics as one self-contained page, in the report's style.

Same stylesheet as the evaluation report (evaluators' ``render.CSS``) so the two
pages read alike; plots are drawn on a bare matplotlib ``Figure`` (never
``pyplot``, as the report's are) and embedded as PNG data URIs, so the page is
one file that can be mailed or attached to an incident.
"""

from __future__ import annotations

import base64
import html
import io
from datetime import datetime, timezone
from typing import Any

from .tracestats import TraceStats

__all__ = ["render_stats_html"]

_BLUE, _RED, _GREY = "#1c7ed6", "#c92a2a", "#adb5bd"


def _png(fig: Any) -> str:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode()


def _plots(stats: TraceStats) -> dict[str, str]:
    from matplotlib.figure import Figure

    out: dict[str, str] = {}
    shares = [r.signals.uncited_share for r in stats.runs if r.signals.uncited_share is not None]
    hops = [r.signals.hops for r in stats.runs]
    if shares or hops:
        fig = Figure(figsize=(9.0, 3.4))
        ax1, ax2 = fig.subplots(1, 2)
        ax1.hist(shares, bins=[i / 10 for i in range(11)], color=_GREY, edgecolor="white")
        ax1.set_xlabel("share of visited entities left uncited")
        ax1.set_ylabel("runs")
        ax1.set_title("Visited but uncited")
        top = max(hops, default=0)
        ax2.hist(hops, bins=range(0, top + 2), color=_BLUE, edgecolor="white", align="left")
        ax2.set_xlabel("tool calls (hops) per run")
        ax2.set_title("Hops")
        out["distributions"] = _png(fig)
    trend = stats.trend()
    if trend:
        fig = Figure(figsize=(9.0, 3.4))
        ax = fig.add_subplot()
        labels = [datetime.fromisoformat(r["bucket"]).astimezone(timezone.utc).strftime("%m-%d %H:00" if stats.bucket == "hour" else "%Y-%m-%d")
                  for r in trend]
        x = range(len(trend))
        ax.bar(x, [r["runs"] for r in trend], color=_GREY, label="runs")
        ax.bar(x, [r["unsupported_runs"] for r in trend], color=_RED, label="runs with unsupported citations")
        ax.set_xticks(list(x), labels, rotation=45 if len(trend) > 6 else 0, ha="right" if len(trend) > 6 else "center")
        ax.set_ylabel("runs")
        ax.set_title(f"Per {stats.bucket} (UTC)")
        ax.legend(loc="upper left", frameon=False)
        out["trend"] = _png(fig)
    return out


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _table(table_id: str, header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def render_stats_html(stats: TraceStats) -> str:
    from graphtrail.evaluators.report.render import CSS

    d = stats.distributions()
    n = d["runs"]
    pct = lambda part: f"{part}/{n} ({part / n:.0%})" if n else "0/0"  # noqa: E731
    share, hops = d["uncited_share"], d["hops"]
    fmt = lambda v, k=2: "–" if v is None else f"{v:.{k}f}"  # noqa: E731
    plots = _plots(stats)
    signal_rows = [
        ["runs citing an entity no tool revealed", pct(d["runs_with_unsupported_citations"])],
        ["unsupported / grounded citations", f"{d['unsupported_citations']} / {d['grounded_citations']}"],
        ["answers whose entity no tool revealed", pct(d["answers_not_revealed"])],
        ["visited-but-uncited share (mean · p50 · p90)", f"{fmt(share['mean'])} · {fmt(share['p50'])} · {fmt(share['p90'])}"],
        ["hops per run (mean · p50 · p90 · max)", f"{fmt(hops['mean'], 1)} · {fmt(hops['p50'], 0)} · {fmt(hops['p90'], 0)} · {fmt(hops['max'], 0)}"],
        ["hops that revealed nothing", str(d["empty_hops"])],
        ["tool errors (runs affected)", f"{d['tool_errors']} ({d['runs_with_tool_errors']})"],
    ]
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',  # else a phone lays it out 980 px wide
        f"<title>graphtrail production statistics</title><style>{CSS}</style></head><body>",
        "<h1>graphtrail production statistics</h1>",
        f'<p class="note" id="meta">{n} run(s) from {_e(stats.source)}'
        + (f"; {stats.replays_skipped} evaluation replay(s) left out" if stats.replays_skipped else "") + "</p>",
        '<section id="signals"><h2>Provenance signals</h2>', _table("signals", ["Signal", "Value"], signal_rows),
    ]
    if "distributions" in plots:
        parts.append(f'<figure><img class="plot" alt="distributions" src="data:image/png;base64,{plots["distributions"]}">'
                     "<figcaption>Left: share of the entities a run visited that its answer does not cite. "
                     "Right: tool calls per run.</figcaption></figure>")
    parts.append("</section>")
    bad = stats.unsupported_runs()
    parts.append(f'<section id="unsupported"><h2>Runs with unsupported citations ({len(bad)})</h2>')
    parts.append('<p class="note">Each cited an entity no tool of the same run revealed. Open a run in your trace backend by its trace id.</p>')
    parts.append(_table("unsupported-runs", ["Trace id", "Started (UTC)", "Question", "Answer", "Cited, never revealed"], [
        [r.trace_id, datetime.fromtimestamp(r.start, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S") if r.start else "–",
         r.trajectory.question or "", r.trajectory.answer or "", ", ".join(r.signals.unsupported_citations)] for r in bad
    ]))
    parts.append("</section>")
    uncited = stats.uncited_entities()
    parts.append('<section id="uncited"><h2>Entities most often visited and left uncited</h2>')
    parts.append(_table("uncited-entities", ["Entity", "Runs", "Share of runs"], [
        [f"{stats.names[eid]} ({eid})" if eid in stats.names else eid, c, f"{s:.0%}"] for eid, c, s in uncited
    ]))
    parts.append("</section>")
    trend = stats.trend()
    parts.append(f'<section id="trend"><h2>Trend per {stats.bucket}</h2>')
    if "trend" in plots:
        parts.append(f'<figure><img class="plot" alt="trend" src="data:image/png;base64,{plots["trend"]}"></figure>')
    parts.append(_table("trend-table", ["From (UTC)", "Runs", "Unsupported", "Answer not revealed", "Mean uncited share", "Tool errors"], [
        [r["bucket"], r["runs"], r["unsupported_runs"], r["answers_not_revealed"], fmt(r["mean_uncited_share"]), r["tool_errors"]]
        for r in trend
    ]))
    parts.append("</section></body></html>")
    return "\n".join(parts)
