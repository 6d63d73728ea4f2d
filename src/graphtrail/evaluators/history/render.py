"""history.html and history.md: the runs table, the trend plots and the links, from data alone.

The HTML page is self-contained (inline CSS, plots as data: URIs, no script). On a
phone the runs table turns into one card per run (each cell labelled) and each
trend plot is shown in its narrow drawing; on a laptop, the table and the wide
drawings. Links are relative, so the output folder can be moved with the runs.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..._markdown import md_cell, md_text
from ..report.layout import CSS
from .runs import SCORES, HistoryRun, Score

__all__ = ["COLUMNS", "render_html", "render_markdown", "score_text"]

#: The runs table's columns after the run number: header, and the one-line value of a run.
COLUMNS: tuple[str, ...] = ("date (UTC)", "run", "agent", "model", "graph", "questions",
                            *[title for _, title, _ in SCORES], "change")

#: Runs shown in the page's table before the rest fold into "N older runs".
RECENT = 20

_EXTRA_CSS = """
table.runs{font-size:.82rem}table.runs th,table.runs td{padding:.25rem .4rem}table.runs td.model{min-width:8rem;overflow-wrap:anywhere}
table.runs td.num,table.runs td.date{white-space:nowrap}
table.runs .ci{display:block;font-size:.75rem;color:#868e96}
.trend img{width:100%;height:auto;border:1px solid #dee2e6}.trend .narrow{display:none}
#trends .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,520px),1fr));gap:0 1.2rem}
figure.trend{margin:.6rem 0 1rem}
@media (max-width:700px){
 .trend .wide{display:none}.trend .narrow{display:block}
 table.runs thead{display:none}table.runs,table.runs tbody,table.runs tr,table.runs td{display:block;width:auto}
 table.runs tr{border:1px solid #dee2e6;border-radius:6px;margin:0 0 .8rem;padding:.3rem .5rem}
 table.runs td{border:none;border-bottom:1px solid #f1f3f5;padding:.25rem 0;white-space:normal;
  display:flex;justify-content:space-between;gap:1rem;text-align:right}
 table.runs td::before{content:attr(data-label);font-weight:600;text-align:left;color:#495057}
 table.runs .ci{display:inline;margin-left:.3rem}
 .scroll{overflow-x:visible}
}
"""


def score_text(score: Score | None, key: str) -> str:
    """A score with its interval, one line: ``83% [71%, 92%]``, ``4`` or ``–``."""
    if score is None or score.value is None:
        return "–"
    if key == "hidden_influence":
        return f"{score.value:.0f}"
    ci = f" [{100 * score.low:.0f}%, {100 * score.high:.0f}%]" if score.low is not None and score.high is not None else ""
    return f"{100 * score.value:.0f}%{ci}"


def _rel(target: Path | None, out: Path) -> str | None:
    """A relative URL from ``out`` to ``target``, percent-encoded (a ``|`` or space in a folder name
    must not end a Markdown table cell or a link). ``out`` is resolved already (once per page, not per link)."""
    if target is None:
        return None
    return quote(Path(os.path.relpath(target.resolve(), out)).as_posix(), safe="/.-_~")


def _row(i: int, run: HistoryRun, change: tuple[str | None, str], out: Path) -> list[tuple[str, str | None]]:
    """(text, link) per column, in :data:`COLUMNS` order."""
    cells: list[tuple[str, str | None]] = [
        (run.date, None), (run.label, _rel(run.report_html, out)), (run.agent, None), (run.model, None),
        (run.graph or "–", None), (str(run.questions), None),
    ]
    cells += [(score_text(run.scores.get(key), key), None) for key, _, _ in SCORES]
    link, text = change
    cells.append((text, link))
    return cells


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _score_html(text: str) -> str:
    """``83% [71%, 92%]`` as the value with its interval on a smaller line below (one line on a phone's card)."""
    value, sep, ci = text.partition(" [")
    return _e(value) + (f'<span class="ci">[{_e(ci)}</span>' if sep else "")


def _img(data: bytes, alt: str, cls: str) -> str:
    b64 = base64.b64encode(data).decode("ascii")
    return f'<img class="{cls}" alt="{_e(alt)}" src="data:image/svg+xml;base64,{b64}">'


def render_html(runs: Sequence[HistoryRun], plots: Mapping[str, Mapping[str, Mapping[str, bytes]]],
                changes: Sequence[tuple[str | None, str]], skipped: Sequence[str], out: Path) -> str:
    """The whole page; ``changes[i]`` is (link to the comparison with run i-1, its one-line summary)."""
    out = Path(out).resolve()
    first, last = runs[0], runs[-1]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">',
        f"<title>graphtrail history</title><style>{CSS}{_EXTRA_CSS}</style></head><body>",
        "<h1>graphtrail history</h1>",
        f'<p class="note" id="summary">{len(runs)} evaluation{"s" if len(runs) != 1 else ""}, '
        f"from {_e(first.date)} to {_e(last.date)} (UTC). Each score is shown with its 95% bootstrap interval over "
        "questions; &ldquo;change&rdquo; links the comparison with the run before (paired tests, "
        "<code>graphtrail compare</code>).</p>",
    ]
    if skipped:
        parts.append('<div class="warn" id="skipped"><p>Left out (not a readable evaluation):</p><ul>'
                     + "".join(f"<li>{_e(s)}</li>" for s in skipped) + "</ul></div>")
    header = "".join(f"<th>{_e(h)}</th>" for h in ("#", *COLUMNS))
    scored = {title for _, title, _ in SCORES}
    body = []
    for i, run in reversed(list(enumerate(runs, start=1))):  # newest first: what a team looks for
        tds = [f'<td data-label="#" class="num">{i}</td>']
        for label, (text, link) in zip(COLUMNS, _row(i, run, changes[i - 1], out)):
            cls = {"model": ' class="model"', "date (UTC)": ' class="date"'}.get(label, ' class="num"' if label in scored else "")
            if link:
                inner = f'<a href="{_e(link)}">{_e(text)}</a>'
            elif label in scored:
                inner = _score_html(text)
            elif label == "date (UTC)":
                inner = _e(text).replace(" ", "<br>", 1)  # day over time: a narrow column
            else:
                inner = _e(text)
            tds.append(f'<td data-label="{_e(label)}"{cls}>{inner}</td>')
        body.append("<tr>" + "".join(tds) + "</tr>")
    def table(table_id: str, rows: list[str]) -> str:
        return (f'<div class="scroll"><table class="runs" id="{table_id}"><thead><tr>{header}</tr></thead>'
                f"<tbody>{''.join(rows)}</tbody></table></div>")

    parts.append('<section id="runs-section"><h2>Runs</h2>' + table("runs", body[:RECENT]))
    if len(body) > RECENT:  # a phone shows each run as a card: the older ones fold away
        parts.append(f"<details><summary>{len(body) - RECENT} older runs</summary>{table('runs-older', body[RECENT:])}</details>")
    parts.append("</section>")
    parts.append('<section id="trends"><h2>Trends</h2><div class="grid">')
    if not plots:
        parts.append('<p class="note">No run has a score to plot.</p>')  # inside the grid: one cell
    for key, title, higher in SCORES:
        drawn = plots.get(key)
        if not drawn:
            continue
        better = "higher is better" if higher else "lower is better"
        alt = f"{title} per run with its 95% interval ({better})"
        parts.append(f'<figure class="trend" id="trend-{key}">'
                     + _img(drawn["wide"]["svg"], alt, "wide") + _img(drawn["narrow"]["svg"], alt, "narrow")
                     + f"<figcaption>{_e(title)} by run number ({better}); the band is each run's 95% interval."
                     "</figcaption></figure>")
    parts.append("</div></section></body></html>")
    return "\n".join(parts)


def render_markdown(runs: Sequence[HistoryRun], plot_files: Mapping[str, str],
                    changes_md: Sequence[tuple[str | None, str]], skipped: Sequence[str], out: Path) -> str:
    """history.md: the same table (links to each report.md and comparison), then the trend PNGs."""
    out = Path(out).resolve()
    lines = ["# graphtrail history", "",
             f"{len(runs)} evaluations, from {runs[0].date} to {runs[-1].date} (UTC). Scores with 95% bootstrap "
             "intervals over questions; *change* links the comparison with the run before.", ""]
    if skipped:
        lines += ["Left out (not a readable evaluation):", ""]
        lines += [f"- {md_text(s)}" for s in skipped]
        lines.append("")
    lines.append("| # | " + " | ".join(md_cell(h) for h in COLUMNS) + " |")
    lines.append("|" + "---|" * (len(COLUMNS) + 1))
    for i, run in reversed(list(enumerate(runs, start=1))):  # newest first, as on the page
        cells = _row(i, run, changes_md[i - 1], out)
        cells[1] = (run.label, _rel(run.report_md, out))
        shown = [f"[{md_cell(t)}](<{link}>)" if link else md_cell(t) for t, link in cells]
        lines.append(f"| {i} | " + " | ".join(shown) + " |")
    lines.append("")
    for key, title, higher in SCORES:
        if key in plot_files:
            lines += [f"![{title} per run ({'higher' if higher else 'lower'} is better)]({plot_files[key]})", ""]
    return "\n".join(lines)
