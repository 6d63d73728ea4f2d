"""A human-in-the-loop agent, streamed and resumed, through the factory route: every condition equals the oracle.

Every lookup waits for a human's approval (``HumanInTheLoopMiddleware``, an
interrupt); the function that runs the agent streams it (``stream_mode=["updates",
"values"]``) and resumes it with an approval until it ends. The agent is built
from a ``dict`` of id -> record (tests/foreign/passages.py) and looks people up by
name or id, answering in JSON-LD. ``evaluate(make_agent, questions, graph=data)``
rebuilds it on the ablated records; the oracle rebuilds it on records this test's
data module deleted itself (never through graphtrail's ``ablated``), run for run.
test_people_filtered.py runs the same kind of agent through the filter route.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphtrail.evaluators import evaluate

from . import passages as world
from .oracle import load_records
from .passages import answer_text, calls, human, rounds, scripted, subject_of, tool_outputs
from .test_factory_route import OPTIONS, oracle_answer


def _node(eid: str, record: dict[str, Any]) -> dict[str, Any]:
    node: dict[str, Any] = {"@id": eid, "@type": "Person" if record["type"] == "person" else "Organization",
                            "name": record["name"]}
    if record.get("description"):
        node["description"] = record["description"]
    for key in ("colleagues", "works_at"):
        if record.get(key):
            node[key] = [{"@id": other} for other in record[key]]
    return node


def _policy(messages: list[Any]) -> AIMessage:
    n, subject = rounds(messages), subject_of(human(messages))
    if n == 0:
        return calls(0, ("lookup", {"query": subject}))
    outs = [json.loads(o).get("@graph") or [] for o in tool_outputs(messages)]
    if not outs[0]:
        return AIMessage(content="I don't know.")
    me = outs[0][0]
    refs = [c["@id"] for c in me.get("colleagues") or []]
    if not refs:
        return AIMessage(content="I don't know.")
    if n == 1:
        return calls(1, ("lookup", {"query": refs[0]}), ("lookup", {"query": (me.get("works_at") or [{}])[0].get("@id", "")}))
    colleague = outs[1][0] if outs[1] else {}
    institute = outs[2][0].get("name") if len(outs) > 2 and outs[2] else None
    return AIMessage(content=answer_text(colleague.get("name"), colleague.get("description"), institute))


def hitl_agent(records: dict[str, dict[str, Any]]) -> Any:
    """The agent over ``records``: a function that streams it and approves every interrupted lookup."""

    @tool
    def lookup(query: str) -> str:
        """A scientist or an institute as schema.org JSON-LD, by exact name or id."""
        found = [_node(eid, r) for eid, r in records.items() if query in (eid, r.get("name"))]
        return json.dumps({"@context": "https://schema.org", "@graph": found[:1]})

    agent = create_agent(scripted(_policy, "scripted-hitl"), [lookup], checkpointer=InMemorySaver(), name="hitl",
                         middleware=[HumanInTheLoopMiddleware(interrupt_on={"lookup": True})])

    def ask(question: str) -> Any:
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        payload: Any = {"messages": [("user", question)]}
        final = None
        while True:
            interrupted = 0
            for mode, chunk in agent.stream(payload, config, stream_mode=["updates", "values"]):
                if mode == "updates" and "__interrupt__" in chunk:
                    interrupted = sum(len(i.value.get("action_requests", [])) for i in chunk["__interrupt__"])
                elif mode == "values":
                    final = chunk
            if not interrupted:
                return final
            payload = Command(resume={"decisions": [{"type": "approve"}] * interrupted})  # the human approves

    return ask


def test_human_in_the_loop_streamed_through_the_factory_route_equals_the_oracle(tmp_path: Path) -> None:
    report = evaluate(hitl_agent, world.questions(), graph=world.records(), out_dir=tmp_path, **OPTIONS)
    records = load_records(tmp_path)
    baseline = {r.key.question_id: r.answer for r in records if r.key.condition == "baseline"}
    assert baseline == {"q1": "Otto Hahn (German chemist who discovered fission) at Kaiser Wilhelm Institute",
                        "q2": "Pierre Curie (French physicist who studied magnetism) at Sorbonne"}
    wrong, checked = [], 0
    for record in records:
        if record.key.condition == "baseline":
            continue
        assert record.route == "factory" and record.method == "exact", record
        cut = (frozenset(record.hidden), frozenset(record.masked), frozenset(record.text_blocked))
        truth = oracle_answer(hitl_agent, world.records(cut), record.question)
        checked += 1
        if truth != record.answer:
            wrong.append((record.key.condition, cut, record.answer, truth))
    assert checked and wrong == [], f"runs that differ from the oracle: {wrong}"
    ran = {r.key.condition for r in records} - {"baseline"}
    assert ran >= {"uncited_removal", "uncited_mask", "leave_one_out", "cited_removal", "text_only_isolation"}, ran
    for condition in ran:
        row = report.condition(condition)
        assert row.valid and row.method == "exact", (condition, row.invalid_reason)
    assert {r.answer for r in records} - set(baseline.values()), "no condition changed an answer"
