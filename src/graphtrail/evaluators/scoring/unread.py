"""Tools whose outputs were not read as entities while other tools' were: their influence is not measured.

graphtrail measures an entity's influence by removing it from what the tools
return. A tool whose outputs revealed no entity in any baseline run (prose
about names that no graph or other tool gave, a format no extractor reads)
was called, and may have shaped the answers, but nothing it showed was ever
removed or scored. When other tools did reveal entities, the evaluation looks
complete while it is not, so the report names such tools in one sentence
(``Report.unread_tools``). When no tool revealed anything, the coverage guard's
"nothing revealed" reason says it instead (:mod:`.coverage`).

Not counted: calls that failed, calls that returned nothing (empty text, ``[]``,
``{}``, ``null``), and the answer tool (``submit_answer``, or a call carrying
``answer`` and ``citations``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...tracer.extract import ANSWER_TOOL
from ..records import RunRecord

__all__ = ["unread_tools", "unread_sentence"]

_EMPTY = frozenset({"", "[]", "{}", "null", "none", '""'})


def unread_tools(records: Iterable[RunRecord]) -> list[str]:
    """Tools that returned something in baseline runs but never an entity, while another tool did; sorted."""
    called: set[str] = set()
    revealing: set[str] = set()
    for record in records:
        traj = record.trajectory
        if record.key.condition != "baseline" or traj is None:
            continue
        for step in traj.steps:
            if step.entities or step.edges:
                revealing.add(step.tool)
            elif (step.error is None and step.tool != ANSWER_TOOL and not {"answer", "citations"} <= set(step.args)
                  and (step.output is None or step.output.strip().lower() not in _EMPTY)):
                called.add(step.tool)
    return sorted(called - revealing) if revealing else []


def unread_sentence(tools: Sequence[str]) -> str | None:
    """The report's sentence naming ``tools``; ``None`` when there are none."""
    if not tools:
        return None
    names = ", ".join(repr(t) for t in tools)
    return (f"Influence not measured for tool(s) {names}: they returned output in the baseline runs while other tools "
            "revealed entities, but their outputs were not read as entities. Return entity ids from them (JSON with an "
            "\"id\" key, a table with an id column), pass kg= so known names in their tables are read, or register an "
            "extractor (graphtrail.tracer.register_extractor).")
