"""The comparison as GitHub-flavoured Markdown: a pull-request comment, findings first.

Short by design: a status line, the findings and the broken rules are visible;
the tables are folded into ``<details>``. Values from the data (questions,
answers, entity names) are escaped so they can neither open HTML nor break a
table row.
"""

from __future__ import annotations

import re
from typing import Any

from .findings import findings
from .fmt import header_facts
from .model import ComparisonData
from .rules import GateResult
from .tables import CONDITION_HEADER, QUESTION_HEADER, SCORE_HEADER, condition_rows, question_rows, score_rows

__all__ = ["render_markdown", "md_escape"]

_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#?\w+;)")


def md_escape(text: Any) -> str:
    """Data shown as text: no raw HTML, no character references, no emphasis from ``*``/``_``."""
    text = "" if text is None else str(text)
    text = _TAG.sub("&lt;", _ENTITY.sub("&amp;", text))
    return re.sub(r"([\\`*_\[\]])", r"\\\1", text)


def _table(header: list[str], rows: list[list[str]]) -> str:
    def cell(x: str) -> str:
        return md_escape(x).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _folded(summary: str, body: str) -> list[str]:
    # blank lines around the body: GitHub renders Markdown inside <details> only then
    return [f"<details><summary>{md_escape(summary)}</summary>", "", body, "", "</details>", ""]


def status(gate: GateResult | None) -> str:
    if gate is None or not gate.outcomes:
        return "graphtrail compare"
    if gate.ok:
        return f"graphtrail compare: ✅ no provenance regression ({len(gate.outcomes)} rule check(s) kept)"
    return f"graphtrail compare: ❌ {len(gate.broken)} rule(s) broken"


def render_markdown(data: ComparisonData, gate: GateResult | None = None) -> str:
    facts = header_facts(data)
    lines = [f"### {status(gate)}", "", md_escape(facts[0]) + "  ", *[md_escape(f) + "  " for f in facts[1:]], ""]
    lines += ["**Findings**", ""] + [f"- {md_escape(f)}" for f in findings(data)] + [""]
    if gate is not None and gate.broken:
        # a rule cannot hold a backtick (see .rules), so it is safe in a code span
        lines += ["**Broken rules**", ""] + [f"- `{o.rule.text}`: {md_escape(o.detail)}" for o in gate.broken] + [""]
    if data.notes:
        lines += [f"> {md_escape(n)}" for n in data.notes] + [""]
    cond = condition_rows(data)
    lines += _folded(f"Per condition ({len(data.conditions)} conditions)", _table(CONDITION_HEADER, cond))
    lines += _folded("Provenance scores", _table(SCORE_HEADER, score_rows(data)))
    events = question_rows(data)
    if events:
        lines += _folded(f"Per question ({len(events)} events)", _table(QUESTION_HEADER, events))
    if gate is not None and gate.outcomes and gate.ok:
        lines += _folded("Rules checked", "\n".join(f"- `{o.rule.text}`: kept ({md_escape(o.detail)})" for o in gate.outcomes))
    lines.append(f"<sub>p-values: exact McNemar for right/wrong, paired sign-flip permutation for scores; "
                 f"95% paired bootstrap intervals over questions; schema {data.schema_version}.</sub>")
    return "\n".join(lines) + "\n"
