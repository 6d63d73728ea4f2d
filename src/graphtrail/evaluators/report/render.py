"""Markdown and self-contained HTML views of a :class:`Report`.

Both are plain string building (``html.escape`` for every value), no template
engine and no network: the HTML embeds its plots as base64 SVG (PNG still
accepted) and its CSS inline, so the file can be mailed or opened offline.
Layout for any screen: plots never shrink below ``MIN_SCALE`` of their natural
size (a narrow screen scrolls the plot's own box, never the page) and a click
or tap enlarges them (a CSS checkbox, no script); the per-question table folds
the answers under each ablation into one expandable cell, so it fits 1366 px
(the CSS and the plot embedding live in :mod:`.layout`). Element ids/classes
(``table#conditions``, ``img.plot``, ``figure#traversal``, ``section#findings``,
``section#hidden-influencers`` ...) are stable for browser tests.

report.md places every value from the data (questions, answers, entity names)
through graphtrail._markdown, as compare.md does: one line, no raw HTML, no
heading, quote, fence or mention made by data.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._markdown import md_table, md_text
from ..records import NO_CITATIONS
from ..scoring.coverage import banner_sentences
from ..scoring.methods import method_line
from ..scoring.unread import unread_sentence
from ..scoring.findings import findings, hidden_influencers
from ..scoring.headline import headline
from ..scoring.judges import JUDGE_TEXT, normalize
from .goldfree import (CHANGE_OVER_NOISE, CHANGE_OVER_NOISE_TEXT, GOLD_FREE_LINE, accuracy_header, changed_table,
                       drop_gold_columns, gold_free_glossary, gold_free_power, is_gold_free, partial_line)
from .layout import CSS, ENLARGE, plot_pair_html
from .meta import meta_html, meta_rows
from .traversal_svg import traversal_svg

if TYPE_CHECKING:
    from ..scoring.tables import ConditionRow, QuestionRow
    from .model import Report

__all__ = ["render_markdown", "render_html", "condition_table"]

#: Longest value in report.md (a question, an answer, a list of entities): the HTML page shows it whole.
CELL_LIMIT = 2000

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


#: One line per number a reader cannot be expected to know; shown as tooltips and under "How to read the numbers".
GLOSSARY: dict[str, str] = {
    "Output changed": "share of runs whose answer differs from the baseline's answer (for the baseline: repeated "
                      "trials that disagree with the first one)",
    "McNemar p": "exact paired test of per-question correctness against the baseline; below 0.05 is a detected "
                 "shift, above it the comparison is inconclusive at this n (not 'no effect')",
    "pass^k": "share of questions answered correctly in all k repeated trials (an unbiased estimate from the "
              "trials run): reliability, stricter than accuracy",
    "Influence": "how often hiding the entity alone changed the answer, minus the noise floor; negative means it "
                 "changed the answer less often than repeated baseline runs disagree by themselves: no detectable effect",
    "Kendall τ": "agreement between the order of the citations and the order the agent first visited them: "
                 "1 = same order, 0 = unrelated, −1 = reversed",
    "Structural gap": "excess change under visited-but-uncited removal minus excess change under text-only isolation: "
                      "positive when the uncited entities' place in the graph (ids, edges) matters beyond their text",
    "Noise floor": "how often repeated baseline runs of the same question disagree; changes at or below it are "
                   "indistinguishable from the agent's own randomness",
    "Support": "how the citations back the answer: cited (an answer entity is cited), edge (one traversed edge "
               "from a cited entity), text (a cited entity's text states it); n/a for yes/no answers, which name "
               "no entity a citation could back",
}

#: How a yes/no answer's support is shown: it names no entity, so entity support does not apply.
SUPPORT_NA = "n/a (yes/no)"


def _support(q: "QuestionRow") -> str:
    if q.support_how == "yes/no":
        return SUPPORT_NA
    return q.support_how or ("no" if q.supported is False else "–")


def _gold(gold: list[str]) -> tuple[str, str]:
    """(shown, all): the first gold answer plus ``+17``, and every alias for the tooltip."""
    if not gold:
        return "–", ""
    return gold[0] + (f" +{len(gold) - 1}" if len(gold) > 1 else ""), "; ".join(gold)


def entity_names(report: "Report") -> dict[str, str]:
    """Entity id -> name, from every entity the report scored or drew."""
    names = {e.entity_id: e.name for e in report.entities if e.name}
    if report.traversal is not None:
        for n in report.traversal.nodes:
            if n.name:
                names.setdefault(n.id, n.name)
    return names


def _has_paper_column(report: "Report") -> bool:
    return report.paper_reference and not is_gold_free(report) and any(r.paper_accuracy is not None for r in report.conditions)


def condition_table(report: "Report") -> tuple[list[str], list[list[str]]]:
    """Header and rows of the paper-style Table 2, as display strings (changed outputs first when nothing is graded)."""
    if is_gold_free(report):
        return changed_table(report)
    max_k = max((int(k) for r in report.conditions for k in r.pass_k), default=1)
    header = ["Condition", accuracy_header(report), "Exact match", "Token F1", "n", "Δ vs baseline [95% CI]", "McNemar p",
              "Output changed"]
    if max_k > 1:
        header.append(f"pass^{max_k}")
    paper = _has_paper_column(report)
    if paper:
        header.append("Paper's accuracy (different data)")
    rows = []
    for r in report.conditions:
        if r.not_applicable:
            rows.append([r.label, r.not_applicable] + ["–"] * (len(header) - 2))
            continue
        row = [
            (r.label + (" (estimated)" if r.method == "estimated" else "")) if r.valid else f"{r.label} (INVALID: see the banner)",
            f"{_pct(r.accuracy)}{_ci(r.ci_low, r.ci_high)}",
            _pct(r.exact_match),
            _num(r.f1),
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
    how = ", ".join(f"{k}: {v}" for k, v in sorted(report.scores.support_how.items())) or "–"
    if report.cited_nothing:  # scores of the citations: say why there are none, not "–"
        na = [("Source support", NO_CITATIONS, "whether the cited evidence backs the answer"),
              ("Grounded citations", NO_CITATIONS, "share of citations some tool returned"),
              ("Trajectory fidelity", NO_CITATIONS, "cited share of the topic→answer path")]
        rest = [r for r in _score_rows_all(report, how) if r[0] not in {n[0] for n in na}]
        return na + rest
    return _score_rows_all(report, how)


def _fidelity_missing(report: "Report") -> str:
    """Why no question has a fidelity: the questions' own notes, the most common first."""
    from collections import Counter

    notes = Counter(q.fidelity_note for q in report.questions if getattr(q, "fidelity_note", None))
    if not notes:
        return "no question's topic-to-answer path could be traced"
    note, n = notes.most_common(1)[0]
    return f"{note.removeprefix('not measured: ')} ({n} of {len(report.questions)} questions)"


def _score_rows_all(report: "Report", how: str) -> list[tuple[str, str, str]]:
    s = report.scores
    f = s.faithfulness
    yes_no = sum(1 for q in report.questions if q.support_how == "yes/no")
    if yes_no:
        how += f"; {yes_no} yes/no answer(s) not scored (they name no entity)"
    rows = [
        ("Source support", f"{_pct(s.source_support)} of {s.source_support_n} answers", f"how: {how}"),
        ("Grounded citations", _pct(s.grounded_citations), "share of citations some tool returned"),
        ("Coverage", f"{_pct(s.coverage)} over {s.coverage_n} questions", "share of influential entities that are cited"),
        ("Hidden influence", f"{s.hidden_influence} of {s.influential_entities} influential entities",
         f"uncited but influential ({s.entities_scored} entities scored)"),
        ("Trajectory fidelity", f"{_pct(s.fidelity)} over {s.fidelity_n} questions",
         f"cited share of the topic→answer path; precision {_pct(s.fidelity_precision)}; "
         f"order Kendall τ {_num(s.order_tau)} ({s.order_tau_n} q)") if s.fidelity_n else
        ("Trajectory fidelity", "not measured", _fidelity_missing(report)),
        ("Structural faithfulness", _num(f.get("score")),
         f"1 − excess change under uncited removal; mask {_num(f.get('mask_score'))}; "
         f"text-only excess {_num(f.get('excess_text_only'))}; structural gap {_num(f.get('structural_gap'))}"),
    ]
    if s.lds_n:
        rows.append(("Surrogate fit (LDS)", f"{_num(s.lds)} over {s.lds_n} questions", "held-out Spearman; trust weights above ~0.3"))
    else:
        rows.append(("Surrogate fit (LDS)", "not run",
                     "needs the random_subsets condition: graphtrail eval --conditions all (or add random_subsets)"))
    return rows


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    return md_table(header, rows, limit=CELL_LIMIT)


def _md(text: Any) -> str:
    """A value from the data, as running text in report.md (graphtrail._markdown: one line, inert)."""
    return md_text(text, limit=CELL_LIMIT)


def _ablation_conditions(report: "Report") -> list[str]:
    return [c.condition for c in report.conditions if not c.per_entity and c.condition != "baseline"]


def _question_rows(report: "Report") -> tuple[list[str], list[list[str]]]:
    """The per-question table for report.md: entity names with their ids, the first gold answer plus a count."""
    names = entity_names(report)
    conds = _ablation_conditions(report)

    def ents(ids: list[str], limit: int = 12) -> str:
        shown = ", ".join(f"{names[e]} ({e})" if e in names else e for e in ids[:limit])
        return shown + (f" +{len(ids) - limit} more" if len(ids) > limit else "")

    header = ["Question", "Gold", "Baseline answer", "Correct", "Cited", "Visited, uncited", "Support", "Fidelity",
              "Coverage", "Hidden influence"] + [f"{c} answer" for c in conds]
    rows = []
    for q in report.questions:
        rows.append([
            f"{q.question_id}: {q.question}",
            _gold(q.gold)[0],
            str(q.baseline_answer),
            {True: "yes", False: "no", None: "–"}[q.baseline_correct],
            ents(q.citations),
            ents(q.visited_uncited),
            _support(q),
            _pct(q.fidelity),
            _pct(q.coverage),
            ents(q.hidden_influence),
        ] + [str(q.answers.get(c, "–")) for c in conds])
    return drop_gold_columns(header, rows) if is_gold_free(report) else (header, rows)


def noise_note(report: "Report") -> str | None:
    """Why the baseline's "Output changed" and the noise floor can differ, when both are shown.

    Both estimate how often the agent's answer changes by chance, counted over different pairs:
    "Output changed" compares each later baseline trial with the first (the reference every
    condition's "Output changed" uses), the noise floor every pair of trials.
    """
    base = next((r for r in report.conditions if r.condition == "baseline"), None)
    floor = report.stats.noise_floor_answer
    if base is None or base.changed_rate is None or floor is None:
        return None
    same = _pct(base.changed_rate) == _pct(floor)
    text = (f"The baseline's Output changed ({_pct(base.changed_rate)}) compares each later trial with the first, "
            "the reference every condition's Output changed is measured against; the noise floor "
            f"({_pct(floor)}) counts disagreement over every pair of trials.")
    if not same:
        text += " Both estimate how often the answer changes by chance; they differ only in the pairs counted."
    return text


def judge_line(report: "Report") -> str:
    """Which judge decides ``correct`` (hence every accuracy figure), in one sentence; or that nothing is graded."""
    if is_gold_free(report):
        return GOLD_FREE_LINE
    how = JUDGE_TEXT.get(report.correctness, f"the judge {report.correctness!r}")
    partial = partial_line(report)
    return f"Correct means {how}. Exact match and token F1 are shown beside it." + (f" {partial}" if partial else "")


def cited_nothing_line(report: "Report") -> str | None:
    """The one sentence an agent that cites nothing gets at the top of the report."""
    if not report.cited_nothing:
        return None
    return (
        "The agent cited no entities in any baseline run, so cited removal, its random control and the isolations "
        "are not applicable; uncited removal and leave-one-out treat every visited entity as uncited."
    )


def render_markdown(report: "Report", plot_files: Mapping[str, str] | None = None) -> str:
    """report.md: the same sections as the HTML, plots linked as files beside it."""
    plot_files = plot_files or {}
    st = report.stats
    out = ["# graphtrail evaluation report", "", _md_table(["run", ""], [[k, v] for k, v, _ in meta_rows(report)]), ""]
    out += _md_banner(report)
    if (nothing := cited_nothing_line(report)) is not None:
        out += [f"**{_md(nothing)}**", ""]
    if (unread := unread_sentence(report.unread_tools)) is not None:
        out += [f"**{_md(unread)}**", ""]
    out += [_md(judge_line(report)), ""]
    found = findings(report)
    if found:
        lead = headline(report)
        out += ["## Findings", "", *([f"**{_md(lead)}**", ""] if lead else []), *[f"- {_md(f)}" for f in found], ""]
    out += ["## Changed outputs per condition" if is_gold_free(report) else "## Accuracy per condition", ""]
    out.append(_md_table(*condition_table(report)))
    out += ["", *([_md(how), ""] if (how := method_line(report)) else [])]
    if _has_paper_column(report):
        out += [PAPER_NOTE, ""]
    power = gold_free_power(report) if is_gold_free(report) else st.power_statement
    out += ["## Statistics", "", f"**Power.** {power}", ""]
    nf = (f"noise floor (answer disagreement between repeated baseline trials): {_pct(st.noise_floor_answer)}; "
          f"correctness disagreement: {_pct(st.noise_floor_correct)}; baseline trials: {st.baseline_trials}")
    out += [f"- {nf}", *([f"- {note}"] if (note := noise_note(report)) else []),
            f"- intervals: {st.confidence:.0%} cluster bootstrap over questions, {st.n_boot} resamples, seed {st.seed}"]
    out += [f"- {_md(n)}" for n in st.notes]
    out += ["", "## Provenance scores", "", _md_table(["Score", "Value", "Detail"], [list(r) for r in _score_rows(report)]), ""]
    out += ["How to read the numbers:", "", *[f"- **{k}**: {v}." for k, v in _glossary(report).items()], ""]
    for name, title in (("accuracy", "Accuracy per condition"), ("changed", "Changed outputs per condition"), ("influence", "Per-entity influence"), ("traversal", "Traversal")):
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
def _md_banner(report: "Report") -> list[str]:
    sentences = banner_sentences(report)
    return ["> **⛔ " + _md(sentences[0]) + "**", *[f"> {_md(s)}" for s in sentences[1:]], ""] if sentences else []


def _html_banner(report: "Report") -> str:
    sentences = banner_sentences(report)
    if not sentences:
        return ""
    return '<div class="invalid" id="coverage-banner" role="alert">' + "".join(f"<p>{_e(s)}</p>" for s in sentences) + "</div>"


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _glossary(report: "Report") -> dict[str, str]:
    return gold_free_glossary(GLOSSARY) if is_gold_free(report) else GLOSSARY


def _tip(header: str) -> str:
    """`` title="..."`` for a column whose number needs explaining (see :data:`GLOSSARY`)."""
    key = "pass^k" if header.startswith("pass^") else header
    for name, text in {**GLOSSARY, CHANGE_OVER_NOISE: CHANGE_OVER_NOISE_TEXT}.items():
        if key == name or key.startswith(name):
            return f' title="{_e(text)}"'
    return ""


def _html_table(table_id: str, header: list[str], rows: list[list[str]], row_classes: list[str] | None = None,
                paper_col: int | None = None) -> str:
    paper = ' class="paper"'
    head = "".join(f"<th{paper if i == paper_col else ''}{_tip(h)}>{_e(h)}</th>" for i, h in enumerate(header))
    body = []
    for n, row in enumerate(rows):
        cls = f' class="{_e(row_classes[n])}"' if row_classes else ""
        cells = "".join(f"<td{paper if i == paper_col else ''}>{_e(c)}</td>" for i, c in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f'<div class="scroll"><table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _ent(eid: str, names: Mapping[str, str]) -> str:
    """An entity by name, its id on hover (the id alone when the name is unknown)."""
    name = names.get(eid)
    return f'<span class="entity" title="{_e(eid)}">{_e(name)}</span>' if name else f'<span class="entity">{_e(eid)}</span>'


def _ents(ids: list[str], names: Mapping[str, str], limit: int = 6) -> str:
    if not ids:
        return "–"
    shown = ", ".join(_ent(e, names) for e in ids[:limit])
    if len(ids) <= limit:
        return shown
    rest = ", ".join(_ent(e, names) for e in ids[limit:])
    return f"{shown} <details><summary>+{len(ids) - limit} more</summary>{rest}</details>"


def _findings_html(report: "Report") -> str:
    found = findings(report)
    if not found:
        return ""
    lead = headline(report)
    items = "".join(f"<li>{_e(f)}</li>" for f in found)
    top = f'<p class="lead" id="headline">{_e(lead)}</p>' if lead else ""
    return f'<section id="findings"><h2>Findings</h2>{top}<ul>{items}</ul></section>'


def _hidden_html(report: "Report", names: Mapping[str, str]) -> str:
    """The uncited-but-influential entities, by name, near the top of the page."""
    head = '<section id="hidden-influencers"><h2>Hidden influencers</h2>'
    if not report.scores.entities_scored:
        return (f'{head}<p class="note">Not measured: entity influence needs the leave_one_out condition '
                "(graphtrail eval runs it by default).</p></section>")
    hidden = hidden_influencers(report)
    if not hidden:
        return f'{head}<p class="note">None: every entity whose removal changed the answer was cited.</p></section>'
    questions = {q.question_id: q.question for q in report.questions}
    items = "".join(
        f'<li>{_ent(h.entity_id, names)} <span class="note">in <span title="{_e(questions.get(h.question_id, ""))}">'
        f"{_e(h.question_id)}</span>, influence {_num(h.influence)}</span></li>"
        for h in hidden
    )
    return (f'{head}<p class="note">Visited by the agent, never cited, yet hiding each one alone changed the answer '
            f"({len(hidden)} entit{'y' if len(hidden) == 1 else 'ies'}):</p><ul>{items}</ul></section>")


#: Short column heads for the per-question answers under each ablation (the full label is the tooltip).
SHORT_LABELS = {
    "cited_removal": "Cited removed",
    "random_removal": "Random removed",
    "full_isolation": "Full isolation",
    "text_only_isolation": "Text-only",
    "uncited_removal": "Uncited removed",
    "uncited_mask": "Uncited masked",
}


def _questions_html(report: "Report", names: Mapping[str, str]) -> str:
    """Per question: names with ids on hover, the first gold answer plus a count, changed answers marked."""
    conds = _ablation_conditions(report)
    labels = {c.condition: c.label for c in report.conditions}
    head = ["<th>Question</th>", "<th>Gold</th>", "<th>Answer</th>", "<th>Correct</th>", "<th>Cited</th>",
            "<th>Visited, uncited</th>", f"<th{_tip('Support')}>Support</th>", "<th>Fidelity</th>", "<th>Coverage</th>",
            "<th>Hidden influence</th>"]
    if conds:
        head.append('<th title="the answer under each ablation; open a cell to read them">Under ablations</th>')
    gold_free = is_gold_free(report)
    if gold_free:
        del head[3], head[1]
    body = []
    for q in report.questions:
        gold, every = _gold(q.gold)
        base = normalize(q.baseline_answer)
        cells = [
            f'<td class="q"><b>{_e(q.question_id)}</b> {_e(q.question)}</td>',
            f'<td class="gold" title="{_e(every)}">{_e(gold)}</td>',
            f"<td>{_e(q.baseline_answer)}</td>",
            f"<td>{_e({True: 'yes', False: 'no', None: '–'}[q.baseline_correct])}</td>",
            f"<td>{_ents(q.citations, names)}</td>",
            f"<td>{_ents(q.visited_uncited, names, limit=4)}</td>",
            f"<td>{_e(_support(q))}</td>",
            f'<td class="num">{_e(_pct(q.fidelity))}</td>',
            f'<td class="num">{_e(_pct(q.coverage))}</td>',
            f"<td>{_ents(q.hidden_influence, names)}</td>",
        ]
        if conds:
            cells.append(_answers_cell(q, conds, labels, base))
        if gold_free:  # no gold, no correctness: drop those columns
            del cells[3], cells[1]
        # each cell named after its column: a phone shows a question as a card of labelled lines (CSS in .layout)
        cells = [c.replace("<td", f'<td data-label="{re.sub("<[^>]+>", "", h)}"', 1) for c, h in zip(cells, head)]
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="scroll"><table id="questions"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _answers_cell(q: "QuestionRow", conds: list[str], labels: Mapping[str, str], base: Any) -> str:
    """The answers under each ablation, folded: "2 of 6 differ" opens to one line per condition, changed ones shaded.

    One cell instead of a column per condition keeps the table within a 1366 px screen.
    """
    items, changed = [], 0
    for c in conds:
        differs = c in q.answers and normalize(q.answers.get(c)) != base
        changed += differs
        cls = ' class="changed" title="differs from the baseline answer"' if differs else ""
        answer = "–" if c not in q.answers else q.answers.get(c)
        items.append(f'<li{cls}><span class="cond" title="{_e(labels.get(c, c))}">{_e(SHORT_LABELS.get(c, c))}</span>: '
                     f"{_e(answer)}</li>")
    ran = sum(1 for c in conds if c in q.answers)
    summary = f"{changed} of {ran} differ" if ran else "not run"
    cls = ' class="answers changed"' if changed else ' class="answers"'
    return f"<td{cls}><details><summary>{_e(summary)}</summary><ul>{''.join(items)}</ul></details></td>"


def _glossary_html(report: "Report") -> str:
    items = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}.</dd>" for k, v in _glossary(report).items())
    return f'<h3>How to read the numbers</h3><dl id="glossary">{items}</dl>'


def render_html(report: "Report", plots: Mapping[str, bytes] | None = None) -> str:
    """report.html: self-contained (inline CSS, base64 plots), no scripts, no network."""
    plots = plots or {}
    st = report.stats
    names = entity_names(report)
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
        meta_html(report),
        _html_banner(report),
        *([f'<p class="warn" id="cited-nothing">{_e(cited_nothing_line(report))}</p>'] if report.cited_nothing else []),
        *([f'<p class="warn" id="unread-tools">{_e(unread_sentence(report.unread_tools))}</p>'] if report.unread_tools else []),
        f'<p class="note" id="judge">{_e(judge_line(report))}</p>',
        _findings_html(report),
        _hidden_html(report, names),
        ('<section id="changed-outputs"><h2>Changed outputs per condition</h2>' if is_gold_free(report)
         else '<section id="accuracy"><h2>Accuracy per condition</h2>'),
        _html_table("conditions", header, rows, [r.condition for r in report.conditions], paper_col),
        *([f'<p class="note" id="methods">{_e(how)}</p>'] if (how := method_line(report)) else []),
    ]
    if paper_col is not None:
        parts.append(f'<p class="paper">{_e(PAPER_NOTE)}</p>')
    if "accuracy" in plots:
        parts.append(f'<figure id="accuracy-plot">{plot_pair_html("accuracy", plots["accuracy"], plots.get("accuracy-narrow"), "Accuracy per condition with 95% intervals")}'
                     f"<figcaption>Accuracy per condition; bars are 95% cluster-bootstrap intervals.{ENLARGE}</figcaption></figure>")
    if "changed" in plots:
        parts.append(f'<figure id="changed-plot">{plot_pair_html("changed", plots["changed"], plots.get("changed-narrow"), "Changed outputs per condition")}'
                     f"<figcaption>Share of outputs that differ from the baseline's; dashed: the noise floor.{ENLARGE}</figcaption></figure>")
    parts.append("</section>")
    parts += [
        '<section id="statistics"><h2>Statistics</h2>',
        f'<p class="power" id="power">{_e(gold_free_power(report) if is_gold_free(report) else st.power_statement)}</p>'
        '<ul id="stat-notes">',
        f"<li>Noise floor (answer disagreement between repeated baseline trials): {_e(_pct(st.noise_floor_answer))}; "
        f"correctness disagreement: {_e(_pct(st.noise_floor_correct))}; baseline trials: {st.baseline_trials}.</li>",
        *([f'<li id="noise-note">{_e(note)}</li>'] if (note := noise_note(report)) else []),
        f"<li>Intervals: {st.confidence:.0%} cluster bootstrap over questions, {st.n_boot} resamples, seed {st.seed}.</li>",
        *[f"<li>{_e(n)}</li>" for n in st.notes],
        "</ul></section>",
        '<section id="scores"><h2>Provenance scores</h2>',
        _html_table("scores", ["Score", "Value", "Detail"], [list(r) for r in _score_rows(report)]),
        _glossary_html(report),
        "</section>",
    ]
    parts.append('<section id="entities"><h2>Entities</h2>')
    counts = Counter(e.label for e in report.entities)
    parts.append(_html_table("entity-labels", ["Label", "Entities"], [[LABEL_TEXT.get(k, k), str(v)] for k, v in sorted(counts.items())]))
    if "influence" in plots:
        parts.append(f'<figure id="influence">{plot_pair_html("influence", plots["influence"], plots.get("influence-narrow"), "Per-entity influence matrix")}'
                     "<figcaption>Influence of each visited entity (rows: questions; columns: first-visit position): "
                     "how often hiding it alone changed the answer, minus the noise floor. Red: it changed the answer; "
                     "white: no effect; blue (negative): it changed the answer less often than repeated baseline runs "
                     f"disagree by themselves, i.e. no detectable effect.{ENLARGE}</figcaption></figure>")
    ent_rows = [[e.question_id, e.entity_id, e.name or "", "yes" if e.cited else "no", str(e.visit_rank or "–"),
                 _pct(e.loo_change_rate), _num(e.surrogate_weight), _num(e.influence), LABEL_TEXT.get(e.label, e.label)]
                for e in report.entities]
    parts.append(f"<details><summary>All {len(ent_rows)} entities</summary>")
    parts.append(_html_table("entity-table", ["Question", "Entity", "Name", "Cited", "Visit #", "LOO change", "Surrogate w",
                                              "Influence", "Label"], ent_rows, [f"label-{e.label}" for e in report.entities]))
    parts.append("</details></section>")
    if report.traversal is not None and report.traversal.nodes:
        tr = report.traversal
        answer = f" Answer: {_e(tr.answer)}." if tr.answer else ""
        parts.append(f'<section><h2>Traversal of {_e(tr.question_id)}</h2><figure id="traversal">'
                     f'<p class="note">{_e(tr.question)}{answer}</p>'
                     f'{traversal_svg(tr, "wide")}{traversal_svg(tr, "narrow")}'
                     "<figcaption>Entities and edges the baseline run visited: green = cited, grey = visited but not cited, "
                     "red ring = influential, square = topic entity, star = answer entity. Hover or tap an entity for the "
                     "step and tool that revealed it, an edge for its relation.</figcaption></figure></section>")
    parts += ['<section id="per-question"><h2>Per question</h2>',
              '<p class="note">Hover a name for its id, a gold answer for every accepted alias; '
              "open a cell under <i>Under ablations</i> to read the answer under each condition; shaded ones differ from the baseline's.</p>",
              _questions_html(report, names), "</section>"]
    parts.append("</body></html>")
    return "\n".join(parts)
