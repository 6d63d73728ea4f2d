"""The comparison as GitHub-flavoured Markdown: a pull-request comment, findings first.

Short by design: a status line, the findings and the broken rules are visible;
the tables are folded into ``<details>``. Every value from the data (questions,
answers, entity names, notes) goes through :mod:`graphtrail._markdown`, escaped
for where it lands, so data can neither open HTML, a code fence, a heading or a
quote, nor add or split a table row, nor mention anyone. The body stays under
GitHub's comment limit: the per-question table is capped at
:data:`MAX_QUESTION_ROWS` rows ("and N more"), and :func:`~graphtrail._markdown.fit`
cuts whatever is left over, pointing at the full comparison.
"""

from __future__ import annotations

import html

from ..._markdown import COMMENT_LIMIT, fit, md_code, md_table, md_text
from .findings import findings
from .fmt import header_facts
from .model import ComparisonData
from .rules import GateResult
from .tables import CONDITION_HEADER, QUESTION_HEADER, SCORE_HEADER, condition_rows, question_rows, score_rows

__all__ = ["render_markdown", "status", "MAX_QUESTION_ROWS", "BODY_LIMIT"]

#: Per-question rows in the comment; the rest are counted, and listed in compare.html / compare.json.
MAX_QUESTION_ROWS = 50
#: Longest table cell and finding, in characters.
CELL_LIMIT, FINDING_LIMIT = 160, 1500
#: The comment's size bound in UTF-8 bytes: under GitHub's 65,536 with room for a line a workflow adds.
BODY_LIMIT = COMMENT_LIMIT - 1536
_EVERYTHING = "compare.html and compare.json (`graphtrail compare BASE NEW --out DIR`)"


def _folded(summary: str, body: str) -> list[str]:
    # blank lines around the body: GitHub renders Markdown inside <details> only then
    return [f"<details><summary>{html.escape(summary)}</summary>", "", body, "", "</details>", ""]


def status(gate: GateResult | None) -> str:
    if gate is None or not gate.outcomes:
        return "graphtrail compare"
    if gate.ok:
        return f"graphtrail compare: ✅ no provenance regression ({len(gate.outcomes)} rule check(s) kept)"
    return f"graphtrail compare: ❌ {len(gate.broken)} rule(s) broken"


def render_markdown(data: ComparisonData, gate: GateResult | None = None, *, full: str | None = None) -> str:
    """The PR comment; ``full`` names where every row is (compare.html), for the "and N more" lines."""
    everything = full or _EVERYTHING
    facts = header_facts(data)
    lines = [f"### {status(gate)}", "", *[md_text(f) + "  " for f in facts], ""]
    lines += ["**Findings**", ""] + [f"- {md_text(f, FINDING_LIMIT)}" for f in findings(data)] + [""]
    if gate is not None and gate.broken:
        lines += ["**Broken rules**", ""] + [f"- {md_code(o.rule.text)}: {md_text(o.detail, line_start=False)}"
                                             for o in gate.broken] + [""]
    if data.notes:
        lines += [f"> {md_text(n)}" for n in data.notes] + [""]
    lines += _folded(f"Per condition ({len(data.conditions)} conditions)",
                     md_table(CONDITION_HEADER, condition_rows(data), limit=CELL_LIMIT))
    lines += _folded("Provenance scores", md_table(SCORE_HEADER, score_rows(data), limit=CELL_LIMIT))
    events = question_rows(data)
    if events:
        table = md_table(QUESTION_HEADER, events[:MAX_QUESTION_ROWS], limit=CELL_LIMIT)
        if len(events) > MAX_QUESTION_ROWS:
            table += f"\n\nand {len(events) - MAX_QUESTION_ROWS} more: every event is in {md_text(everything, line_start=False)}."
        lines += _folded(f"Per question ({len(events)} events)", table)
    if gate is not None and gate.outcomes and gate.ok:
        lines += _folded("Rules checked", "\n".join(f"- {md_code(o.rule.text)}: {md_text(o.message[len(o.rule.text) + 2:], line_start=False)}"
                                                    for o in gate.outcomes))
    lines.append(f"<sub>p-values: exact McNemar for right/wrong, paired sign-flip permutation for scores; "
                 f"95% paired bootstrap intervals over questions; schema {html.escape(data.schema_version)}.</sub>")
    return fit("\n".join(lines) + "\n", BODY_LIMIT, rest=everything)
