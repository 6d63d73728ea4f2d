"""Markdown and self-contained HTML views of a :class:`Report`.

Both are plain string building (``html.escape`` for every value), no template
engine and no network: the HTML embeds its plots as base64 PNGs and its CSS
inline, so the file can be mailed or opened offline. Element ids/classes
(``table#conditions``, ``img.plot``, ``figure#traversal`` ...) are stable for
browser tests.
"""

from __future__ import annotations

import base64
import html
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .report import ConditionRow, Report

__all__ = ["render_markdown", "render_html", "condition_table"]

LABEL_TEXT = {
    "cited_influential": "cited & influential",
    "cited_not_influential": "cited & not influential",
    "uncited_influential": "uncited & influential (hidden influence)",
    "uncited_not_influential": "uncited & not influential",
    "cited_unknown": "cited, influence not measured",
    "uncited_unknown": "uncited, influence not measured",
}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _num(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    if x is None:
        return "–"
    return "<0.001" if x < 0.001 else f"{x:.3f}"


def _ci(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f" [{100 * low:.0f}, {100 * high:.0f}]"


def _delta(r: "ConditionRow") -> str:
    if r.delta is None:
        return "–"
    ci = "" if r.delta_ci_low is None else f" [{100 * r.delta_ci_low:+.0f}, {100 * r.delta_ci_high:+.0f}]"  # type: ignore[operator]
    return f"{100 * r.delta:+.0f} pts{ci}"


#: Said under the condition table whenever it shows the paper's column.
PAPER_NOTE = (
    "The paper's column is a reference only: arXiv:2605.15109, Agentic GraphRAG on 25 "
    "2WikiMultiHopQA questions, one run per condition; different data, model and agent."
)


def _has_paper_column(report: "Report") -> bool:
    return report.paper_reference and any(r.paper_accuracy is not None for r in report.conditions)


def condition_table(report: "Report") -> tuple[list[str], list[list[str]]]:
    """Header and rows of the paper-style Table 2, as display strings."""
    max_k = max((int(k) for r in report.conditions for k in r.pass_k), default=1)
    header = ["Condition", "Accuracy [95% CI]", "n", "Δ vs baseline [95% CI]", "McNemar p", "Output changed"]
    if max_k > 1:
        header.append(f"pass^{max_k}")
    paper = _has_paper_column(report)
    if paper:
        header.append("Paper's accuracy (different data)")
    rows = []
    for r in report.conditions:
        row = [
            r.label if r.valid else f"{r.label} (INVALID: see the banner)",
            f"{_pct(r.accuracy)}{_ci(r.ci_low, r.ci_high)}",
            str(r.n_questions) + (f" × {r.trials}" if r.trials > 1 else ""),
            _delta(r),
            _p(r.mcnemar_p) if not r.per_entity else "n/a (per entity)",
            _pct(r.changed_rate),
        ]
        if max_k > 1:
            row.append(_pct(r.pass_k.get(str(max_k))))
        if paper:
            row.append(_pct(r.paper_accuracy))
        rows.append(row)
    return header, rows


def _score_rows(report: "Report") -> list[tuple[str, str, str]]:
    s = report.scores
    f = s.faithfulness
    how = ", ".join(f"{k}: {v}" for k, v in sorted(s.support_how.items())) or "–"
    return [
        ("Source support", f"{_pct(s.source_support)} of {s.source_support_n} answers", f"how: {how}"),
        ("Grounded citations", _pct(s.grounded_citations), "share of citations some tool returned"),
        ("Coverage", f"{_pct(s.coverage)} over {s.coverage_n} questions", "share of influential entities that are cited"),
        ("Hidden influence", f"{s.hidden_influence} of {s.influential_entities} influential entities",
         f"uncited but influential ({s.entities_scored} entities scored)"),
        ("Trajectory fidelity", f"{_pct(s.fidelity)} over {s.fidelity_n} questions",
         f"cited share of the topic→answer path; precision {_pct(s.fidelity_precision)}; "
         f"order Kendall τ {_num(s.order_tau)} ({s.order_tau_n} q)"),
        ("Structural faithfulness", _num(f.get("score")),
         f"1 − excess change under uncited removal; mask {_num(f.get('mask_score'))}; "
         f"text-only excess {_num(f.get('excess_text_only'))}; structural gap {_num(f.get('structural_gap'))}"),
        ("Surrogate fit (LDS)", f"{_num(s.lds)} over {s.lds_n} questions", "held-out Spearman; trust weights above ~0.3"),
    ]


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _question_rows(report: "Report") -> tuple[list[str], list[list[str]]]:
    conds = [c.condition for c in report.conditions if not c.per_entity and c.condition != "baseline"]
    header = ["Question", "Gold", "Baseline answer", "Correct", "Cited", "Visited, uncited", "Support", "Fidelity",
              "Coverage", "Hidden influence"] + [f"{c} answer" for c in conds]
    rows = []
    for q in report.questions:
        rows.append([
            f"{q.question_id}: {q.question}",
            "; ".join(q.gold),
            str(q.baseline_answer),
            {True: "yes", False: "no", None: "–"}[q.baseline_correct],
            ", ".join(q.citations),
            ", ".join(q.visited_uncited[:12]) + (" …" if len(q.visited_uncited) > 12 else ""),
            q.support_how or ("no" if q.supported is False else "–"),
            _pct(q.fidelity),
            _pct(q.coverage),
            ", ".join(q.hidden_influence),
        ] + [str(q.answers.get(c, "–")) for c in conds])
    return header, rows


def _meta_line(report: "Report") -> str:
    when = datetime.fromtimestamp(report.created, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    bits = [f"{k}: {v}" for k, v in report.meta.items() if isinstance(v, (str, int, float, bool))]
    return " · ".join([when, *bits])


def render_markdown(report: "Report", plot_files: Mapping[str, str] | None = None) -> str:
    """report.md: the same sections as the HTML, plots linked as files beside it."""
    plot_files = plot_files or {}
    st = report.stats
    out = ["# graphtrail evaluation report", "", _meta_line(report), ""]
    out += _md_banner(report)
    out += ["## Accuracy per condition", ""]
    out.append(_md_table(*condition_table(report)))
    out.append("")
    if _has_paper_column(report):
        out += [PAPER_NOTE, ""]
    out += ["## Statistics", "", f"**Power.** {st.power_statement}", ""]
    nf = (f"noise floor (answer disagreement between repeated baseline trials): {_pct(st.noise_floor_answer)}; "
          f"correctness disagreement: {_pct(st.noise_floor_correct)}; baseline trials: {st.baseline_trials}")
    out += [f"- {nf}", f"- intervals: {st.confidence:.0%} cluster bootstrap over questions, {st.n_boot} resamples, seed {st.seed}"]
    out += [f"- {n}" for n in st.notes]
    out += ["", "## Provenance scores", "", _md_table(["Score", "Value", "Detail"], [list(r) for r in _score_rows(report)]), ""]
    for name, title in (("accuracy", "Accuracy per condition"), ("influence", "Per-entity influence"), ("traversal", "Traversal")):
        if name in plot_files:
            out += [f"![{title}]({plot_files[name]})", ""]
    counts = Counter(e.label for e in report.entities)
    if counts:
        out += ["## Entities", ""]
        out.append(_md_table(["Label", "Entities"], [[LABEL_TEXT.get(k, k), str(v)] for k, v in sorted(counts.items())]))
        hidden = [e for e in report.entities if e.label == "uncited_influential"]
        if hidden:
            out += ["", "Uncited but influential entities (hidden influence):", ""]
            out.append(_md_table(["Question", "Entity", "Name", "Influence"],
                                 [[e.question_id, e.entity_id, e.name or "", _num(e.influence)] for e in hidden]))
        out.append("")
    out += ["## Per question", "", _md_table(*_question_rows(report)), ""]
    return "\n".join(out)


# ------------------------------------------------------------------ HTML
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#212529}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #dee2e6;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{border:1px solid #dee2e6;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f1f3f5}tr.baseline td{font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.paper{color:#868e96;font-style:italic}.note{color:#495057}.power{background:#fff4e6;border-left:4px solid #e8590c;padding:.5rem 1rem}
img.plot{max-width:100%;border:1px solid #dee2e6;margin:.5rem 0}figure{margin:1rem 0}
.label-uncited_influential{background:#ffe3e3}.label-cited_influential{background:#ebfbee}
details{margin:.5rem 0}
.invalid{background:#fff5f5;border:2px solid #e03131;color:#c92a2a;padding:.5rem 1rem;font-weight:600}
"""


def _md_banner(report: "Report") -> list[str]:
    from .tool_coverage import banner_sentences

    sentences = banner_sentences(report)
    return ["> **⛔ " + sentences[0] + "**", *[f"> {s}" for s in sentences[1:]], ""] if sentences else []


def _html_banner(report: "Report") -> str:
    from .tool_coverage import banner_sentences

    sentences = banner_sentences(report)
    if not sentences:
        return ""
    return '<div class="invalid" id="coverage-banner" role="alert">' + "".join(f"<p>{_e(s)}</p>" for s in sentences) + "</div>"


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _html_table(table_id: str, header: list[str], rows: list[list[str]], row_classes: list[str] | None = None,
                paper_col: int | None = None) -> str:
    paper = ' class="paper"'
    head = "".join(f"<th{paper if i == paper_col else ''}>{_e(h)}</th>" for i, h in enumerate(header))
    body = []
    for n, row in enumerate(rows):
        cls = f' class="{_e(row_classes[n])}"' if row_classes else ""
        cells = "".join(f"<td{paper if i == paper_col else ''}>{_e(c)}</td>" for i, c in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _img(name: str, png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="plot" id="plot-{name}" alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def render_html(report: "Report", plots: Mapping[str, bytes] | None = None) -> str:
    """report.html: self-contained (inline CSS, base64 plots), no scripts, no network."""
    plots = plots or {}
    st = report.stats
    header, rows = condition_table(report)
    paper_col = len(header) - 1 if _has_paper_column(report) else None
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # An empty icon: served over HTTP, browsers would otherwise ask for /favicon.ico and log a 404.
        '<link rel="icon" href="data:,">',
        f"<title>graphtrail report</title><style>{CSS}</style></head><body>",
        "<h1>graphtrail evaluation report</h1>",
        f'<p class="note" id="meta">{_e(_meta_line(report))} · schema {_e(report.schema_version)}</p>',
        _html_banner(report),
        '<section id="accuracy"><h2>Accuracy per condition</h2>',
        _html_table("conditions", header, rows, [r.condition for r in report.conditions], paper_col),
    ]
    if paper_col is not None:
        parts.append(f'<p class="paper">{_e(PAPER_NOTE)}</p>')
    if "accuracy" in plots:
        parts.append(f'<figure id="accuracy-plot">{_img("accuracy", plots["accuracy"], "Accuracy per condition with 95% intervals")}'
                     "<figcaption>Accuracy per condition; bars are 95% cluster-bootstrap intervals.</figcaption></figure>")
    parts.append("</section>")
    parts += [
        '<section id="statistics"><h2>Statistics</h2>',
        f'<p class="power" id="power">{_e(st.power_statement)}</p><ul id="stat-notes">',
        f"<li>Noise floor (answer disagreement between repeated baseline trials): {_e(_pct(st.noise_floor_answer))}; "
        f"correctness disagreement: {_e(_pct(st.noise_floor_correct))}; baseline trials: {st.baseline_trials}.</li>",
        f"<li>Intervals: {st.confidence:.0%} cluster bootstrap over questions, {st.n_boot} resamples, seed {st.seed}.</li>",
        *[f"<li>{_e(n)}</li>" for n in st.notes],
        "</ul></section>",
        '<section id="scores"><h2>Provenance scores</h2>',
        _html_table("scores", ["Score", "Value", "Detail"], [list(r) for r in _score_rows(report)]),
        "</section>",
    ]
    parts.append('<section id="entities"><h2>Entities</h2>')
    counts = Counter(e.label for e in report.entities)
    parts.append(_html_table("entity-labels", ["Label", "Entities"], [[LABEL_TEXT.get(k, k), str(v)] for k, v in sorted(counts.items())]))
    if "influence" in plots:
        parts.append(f'<figure id="influence">{_img("influence", plots["influence"], "Per-entity influence matrix")}'
                     "<figcaption>Influence of each visited entity (rows: questions; columns: first-visit position).</figcaption></figure>")
    ent_rows = [[e.question_id, e.entity_id, e.name or "", "yes" if e.cited else "no", str(e.visit_rank or "–"),
                 _pct(e.loo_change_rate), _num(e.surrogate_weight), _num(e.influence), LABEL_TEXT.get(e.label, e.label)]
                for e in report.entities]
    parts.append(f"<details><summary>All {len(ent_rows)} entities</summary>")
    parts.append(_html_table("entity-table", ["Question", "Entity", "Name", "Cited", "Visit #", "LOO change", "Surrogate w",
                                              "Influence", "Label"], ent_rows, [f"label-{e.label}" for e in report.entities]))
    parts.append("</details></section>")
    if "traversal" in plots and report.traversal is not None:
        parts.append(f'<section><h2>Traversal of {_e(report.traversal.question_id)}</h2><figure id="traversal">'
                     f'{_img("traversal", plots["traversal"], "Traversal subgraph")}'
                     "<figcaption>Entities and edges the baseline run visited: green = cited, grey = visited but not cited, "
                     "red ring = influential, square = topic entity, star = answer entity.</figcaption></figure></section>")
    qh, qr = _question_rows(report)
    parts += ['<section id="per-question"><h2>Per question</h2>', _html_table("questions", qh, qr), "</section>"]
    parts.append("</body></html>")
    return "\n".join(parts)
