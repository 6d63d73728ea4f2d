"""A wrapped agent's invoke must give the same trace as a handler passed by hand,
keep the caller's run_id, end the root as an error when the run fails, and nest
whatever a tool runs under the tool span. These guard any faster invoke path
(e.g. one that skips LangGraph's chain callbacks: that one lost the tool nesting)."""

from __future__ import annotations

import re
import uuid

import pytest

import graphtrail
from graphtrail.tracer import GraphTrailHandler
from tests.test_tracer_kit import ask, build_create_agent, memory  # noqa: F401 - fixture

_TIMES = ("start_time", "end_time")
_CALL_IDS = re.compile(r'"id":"call_\d+"')  # tool-call ids inside gen_ai.*.messages


def _shape(spans):
    """Span names, parent names and attribute values, minus ids and times."""
    by_id = {s.context.span_id: s for s in spans}
    # ids: the fake model numbers its tool calls process-wide; span ids are random
    skip = {"graphtrail.run_id", "gen_ai.tool.call.id", "graphtrail.citation_sources"}
    return sorted(
        (
            s.name,
            by_id[s.parent.span_id].name if s.parent is not None else None,
            tuple(sorted((k, _CALL_IDS.sub('"id":"call"', v) if isinstance(v, str) else v)
                         for k, v in s.attributes.items() if k not in skip)),
        )
        for s in spans
    )


def _trajectory_fields(traj):
    data = traj.model_dump(exclude={"run_id", "trace_id", "span_id", *_TIMES})
    for group in ("steps", "model_calls"):
        for item in data[group]:
            for key in ("span_id", "tool_call_id", *_TIMES):
                item.pop(key, None)
    data.pop("citation_sources", None)  # holds span ids
    return data


def test_invoke_gives_the_same_trace_as_the_full_callback_path(memory):
    agent = graphtrail.trace_agent(build_create_agent(), name="kg")
    config = {"configurable": {"thread_id": "t-1"}}
    with graphtrail.capture() as fast_cap:
        agent.invoke(ask(3), config)
    fast = list(memory.get_finished_spans())
    memory.clear()
    with graphtrail.capture() as full_cap:  # a passed handler: chain callbacks and all
        build_create_agent().invoke(ask(3), {**config, "callbacks": [GraphTrailHandler(name="kg")]})
    full = list(memory.get_finished_spans())
    assert _shape(fast) == _shape(full)
    assert _trajectory_fields(fast_cap.trajectories[0]) == _trajectory_fields(full_cap.trajectories[0])


def test_invoke_root_keeps_the_callers_run_id(memory):
    agent = graphtrail.trace_agent(build_create_agent(), name="kg")
    run_id = uuid.uuid4()
    with graphtrail.capture() as cap:
        agent.invoke(ask(4), {"run_id": run_id})
    (traj,) = cap.trajectories
    assert traj.run_id == str(run_id)
    (root,) = [s for s in memory.get_finished_spans() if s.parent is None]
    assert root.attributes["graphtrail.run_id"] == str(run_id)


async def test_ainvoke_error_ends_the_root_as_error(memory):
    from tests.fakes import ScriptedChatModel

    def down(messages):
        raise RuntimeError("model backend down")

    agent = graphtrail.trace_agent(build_create_agent(model=ScriptedChatModel(policy=down)), name="kg")
    with graphtrail.capture() as cap:
        with pytest.raises(RuntimeError, match="backend down"):
            await agent.ainvoke(ask(6))
    (traj,) = cap.trajectories
    assert traj.status == "error" and "RuntimeError" in (traj.error or "")
    spans = memory.get_finished_spans()
    (root,) = [s for s in spans if s.parent is None]
    assert root.status.status_code.name == "ERROR"
    assert all(s.end_time is not None for s in spans)


def test_runs_inside_a_tool_nest_under_its_span(memory):
    """A tool that runs a model chain (a sub-agent, a summarizer) keeps it under the tool span."""
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool

    from tests.fakes import ScriptedChatModel
    from tests.test_tracer_kit import neighbors, search, submit_answer

    model = ScriptedChatModel(script=[AIMessage("short")], model_name="summarizer")
    summarizer = RunnableLambda(lambda text: model.invoke(text))  # a chain run between tool and model

    @tool("search")
    def search_and_summarize(query: str) -> str:
        """Search, then summarize the hits with a model."""
        hits = search.invoke({"query": query})
        summarizer.invoke(f"summarize {hits}")  # inherits the tool's callbacks from the context
        return hits

    agent = graphtrail.trace_agent(build_create_agent(tools=[search_and_summarize, neighbors, submit_answer]), name="kg")
    with graphtrail.capture() as cap:
        agent.invoke(ask(5))
    spans = memory.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    (inner,) = [s for s in spans if s.name == "chat summarizer"]
    assert by_id[inner.parent.span_id].name == "execute_tool search"
    # the agent's own model calls still hang off the root
    assert {by_id[s.parent.span_id].name for s in spans if s.name == "chat scripted-model"} == {"invoke_agent kg"}
    assert cap.trajectories[0].citations == ["N5-c"]
