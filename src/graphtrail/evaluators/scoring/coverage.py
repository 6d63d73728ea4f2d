"""The coverage guard: an ablation whose filter did not reach the agent's tools is not a result.

A condition's numbers mean "the agent with these entities gone" only if every
tool call that could show those entities went through the filter. Each replay
run records, per tool, how many calls were filtered and how many were not
(``RunRecord.tool_coverage``, counted by :mod:`graphtrail.evaluators.replay.filtered.interception`).
Here, from the records alone, a condition is judged:

- **escaped tools**: a tool whose outputs revealed entities in the question's
  baseline run had an unfiltered call in this condition. The agent may have
  seen exactly what the condition hid, so the condition is invalid.
- **leaked to the model**: in some run of the condition, the model was given a
  hidden entity's id, name or alias, or a masked entity's name (the model-input
  check, :mod:`graphtrail.evaluators.replay.filtered.leaks`, recorded in
  ``RunRecord.input_leaks``). The reason names the channel: a tool, a cached tool
  result, the system prompt, a message from a node that is not a tool.
- **nothing revealed**: no tool output of any baseline run revealed an entity.
  graphtrail then saw none of the agent's graph access (a chain that reads its
  graph directly, such as ``GraphQAChain``, or an extractor that cannot read
  the tool outputs), so no condition removed anything the agent used.

Invalid conditions keep their numbers in results.json (with ``valid: false``
and the reason) but the reports put a red banner above them, a warning is
logged, and ``evaluate(strict=True)`` raises
:class:`~graphtrail.evaluators.errors.CoverageError`. The banner's sentences read a
report through :class:`~.tables.ReportTables`, so this module imports no report code.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._listing import listing
from ..records import RunRecord, weakest_method

if TYPE_CHECKING:
    from .tables import ConditionRow, ReportTables

__all__ = ["ConditionCoverage", "condition_coverage", "mark_rows", "invalid_rows", "banner_sentences", "FIX_HINT"]

#: What to do about an escaped tool, said wherever the guard speaks.
FIX_HINT = (
    "register a filter for it (graphtrail.evaluators.register_tool_filter), or build the agent with "
    "graphtrail.evaluators.wrap_tool(tool) and call the tool in the run's context (not in a bare thread)"
)

#: A condition with more failed runs than this share is invalid: failed runs are errors, not wrong answers.
MAX_ERROR_RATE = 0.1


def _short(text: str | None, limit: int = 200) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: The start of the reason of a condition whose filter removed more than it hid.
OVER_FILTERED = "the filter could not cut out only the hidden entities from tool"

#: The start of the reason of a condition whose model was given what it hid.
LEAKED = "the model was given hidden or masked entities"

#: What makes a condition that is not exact exact, said wherever a report names one.
IMPROVE_HINT = ("build the agent from its data with evaluate(make_agent, questions, graph=data) (the factory route), "
                "or have its tools read graphtrail.kg.ablated_view / ablated_driver / ablated_connection")

NOTHING_REVEALED = (
    "no tool output of the baseline runs revealed a graph entity, so graphtrail could neither see nor filter "
    "the agent's graph access; expose graph lookups as LangChain tools, or register an extractor for their outputs"
)


@dataclass
class ConditionCoverage:
    """Tool-call counts of one condition and, if it is invalid, why."""

    filtered: int = 0
    unfiltered: int = 0
    escaped: list[str] = field(default_factory=list)  # tools that revealed entities at baseline and escaped here
    over_filtered: list[str] = field(default_factory=list)  # tools whose filter removed entities the condition keeps
    leaks: dict[str, set[str]] = field(default_factory=dict)  # channel -> hidden/masked ids the model was given
    leaked_runs: int = 0
    runs: int = 0
    errors: int = 0
    first_error: str | None = None
    methods: list[str] = field(default_factory=list)  # each run's RunRecord.method
    routes: set[str] = field(default_factory=set)

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.runs if self.runs else None
    reason: str | None = None

    @property
    def valid(self) -> bool:
        return self.reason is None


def _revealing_tools(record: RunRecord | None) -> set[str]:
    traj = record.trajectory if record is not None else None
    return {s.tool for s in traj.steps if s.entities or s.edges} if traj is not None else set()


def _baselines(records: Sequence[RunRecord]) -> dict[str, RunRecord]:
    out: dict[str, RunRecord] = {}
    for r in records:
        if r.key.condition == "baseline" and r.key.variant == "":
            current = out.get(r.key.question_id)
            if current is None or r.key.trial < current.key.trial:
                out[r.key.question_id] = r
    return out


def condition_coverage(records: Iterable[RunRecord]) -> dict[str, ConditionCoverage]:
    """Per condition present in ``records``: its filtered/unfiltered calls, errors and validity.

    The baseline is judged only on its error rate (it filters nothing).
    """
    recs = list(records)
    baselines = _baselines(recs)
    revealing = {q: _revealing_tools(r) for q, r in baselines.items()}
    anything_revealed = any(revealing.values())
    out: dict[str, ConditionCoverage] = defaultdict(ConditionCoverage)
    escaped: dict[str, set[str]] = defaultdict(set)
    over: dict[str, set[str]] = defaultdict(set)
    for r in recs:
        cond = r.key.condition
        cov = out[cond]
        cov.runs += 1
        if r.status == "error":
            cov.errors += 1
            cov.first_error = cov.first_error or r.error
        if cond == "baseline":
            continue
        if r.method:
            cov.methods.append(r.method)
        if r.route:
            cov.routes.add(r.route)
        if r.input_leaks:
            cov.leaked_runs += 1
            for channel, ids in r.input_leaks.items():
                cov.leaks.setdefault(channel, set()).update(ids)
        for tool, counts in (r.tool_coverage or {}).items():
            cov.filtered += counts.get("filtered", 0)
            unfiltered = counts.get("unfiltered", 0)
            cov.unfiltered += unfiltered
            if counts.get("over_filtered"):
                over[cond].add(tool)
            if unfiltered and tool in revealing.get(r.key.question_id, ()):
                escaped[cond].add(tool)
    for cond, cov in out.items():
        cov.escaped = sorted(escaped.get(cond, ()))
        cov.over_filtered = sorted(over.get(cond, ()))
        if cov.errors and cov.errors / cov.runs > MAX_ERROR_RATE:
            cov.reason = (f"{cov.errors} of {cov.runs} run(s) failed with an error ({cov.errors / cov.runs:.0%}, above the "
                          f"{MAX_ERROR_RATE:.0%} graphtrail accepts); first error: {_short(cov.first_error)}")
        elif cond == "baseline":
            pass
        elif cov.leaks:
            channels = "; ".join(f"{ch} ({listing(sorted(ids))})"
                                 for ch, ids in sorted(cov.leaks.items()))
            cov.reason = (f"{LEAKED} in {cov.leaked_runs} of {cov.runs} run(s), through: {channels}")
            if cov.routes == {"factory"}:  # the agent was built on the ablated data: it read graph data some other way
                cov.reason += ("; the agent reads graph data through a path other than graph= (a prompt, a second "
                               "store): pass that data through graph= as well")
        elif cov.over_filtered:
            tools = ", ".join(repr(t) for t in cov.over_filtered)
            cov.reason = (f"{OVER_FILTERED} {tools}: its filtered output lost entities this condition keeps, so the "
                          "model saw less than the ablated graph shows; register a filter for it "
                          "(graphtrail.evaluators.register_tool_filter) or ablate at the data source")
        elif cov.escaped:
            tools = ", ".join(repr(t) for t in cov.escaped)
            cov.reason = f"tool(s) {tools} revealed entities at baseline but ran unfiltered under this condition"
        elif baselines and not anything_revealed:
            cov.reason = NOTHING_REVEALED
    return dict(out)


def mark_rows(rows: Sequence["ConditionRow"], records: Iterable[RunRecord]) -> None:
    """Fill the coverage fields of the report's condition rows."""
    found = condition_coverage(records)
    for row in rows:
        cov = found.get(row.condition)
        if cov is None:
            continue
        row.error_rate, row.first_error = cov.error_rate, cov.first_error
        if row.condition == "baseline":
            row.valid, row.invalid_reason = cov.valid, cov.reason
            continue
        row.tool_calls_filtered, row.tool_calls_unfiltered = cov.filtered, cov.unfiltered
        row.method = weakest_method(cov.methods)
        row.route = next(iter(cov.routes)) if len(cov.routes) == 1 else None
        row.escaped_tools = list(cov.escaped)
        row.valid = cov.valid
        row.invalid_reason = cov.reason


def invalid_rows(report: "ReportTables") -> list["ConditionRow"]:
    return [r for r in report.conditions if not getattr(r, "valid", True)]


def banner_sentences(report: "ReportTables") -> list[str]:
    """The red banner's text, one sentence per point; empty when every condition is valid."""
    bad = invalid_rows(report)
    if not bad:
        return []
    names = ", ".join(r.label for r in bad)
    if all(r.route == "factory" for r in bad):  # the agent was rebuilt on the ablated data: the ablation reached it
        out = [f"Invalid results in {len(bad)} condition(s) ({names}): the agent was rebuilt on the ablated data, "
               "but graphtrail cannot vouch that their numbers measure it with those entities removed."]
    else:
        out = [f"Invalid results in {len(bad)} condition(s) ({names}): the ablation did not reach what the agent read, "
               "so their numbers do not measure the agent with those entities removed."]
    escaped = sorted({t for r in bad for t in r.escaped_tools})
    if escaped:
        out.append(f"Tools that escaped filtering: {', '.join(escaped)}. To fix: {FIX_HINT}.")
    leaked = [r for r in bad if (r.invalid_reason or "").startswith((LEAKED, OVER_FILTERED)) or "failed with an error" in (r.invalid_reason or "")]
    for r in leaked:
        out.append(f"{r.label}: {r.invalid_reason}.")
    if any(r.invalid_reason == NOTHING_REVEALED for r in bad):
        out.append(NOTHING_REVEALED[0].upper() + NOTHING_REVEALED[1:] + ".")
    return out


def warning_text(report: "ReportTables") -> str | None:
    """One line for the log and for :class:`~graphtrail.evaluators.errors.CoverageError`; ``None`` when all is valid."""
    sentences = banner_sentences(report)
    return " ".join(sentences) if sentences else None


def summary(report: "ReportTables") -> dict[str, Any]:
    """``{condition: reason}`` of the invalid conditions (for callers that want data, not prose)."""
    return {r.condition: r.invalid_reason for r in invalid_rows(report)}
