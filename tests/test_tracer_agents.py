"""The tracer on real LangGraph agents: span tree, attributes, Trajectory, errors, content modes."""

from __future__ import annotations

import json
import re
import logging

from typing import Annotated

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.types import Command
from opentelemetry.trace import SpanKind, StatusCode

import graphtrail
from graphtrail.tracer import GraphTrailHandler, register_extractor, trajectories_from_spans, unregister_extractor
from graphtrail.tracer._safety import reset_warnings
from tests.fakes import ScriptedChatModel, tool_call, unique_id
from tests.test_tracer_kit import (
    BUILDERS,
    ask,
    broken,
    build_create_agent,
    build_toolnode_graph,
    by_name,
    kg_model,
    memory,  # noqa: F401 - fixture
    LIVE_MODES,
    neighbors,
    parent_id,
    search,
    span_id,
    submit_answer,
)


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
@pytest.mark.parametrize("node_spans", [False, True], ids=["default", "node_spans"])
@pytest.mark.parametrize("style", list(BUILDERS))
def test_each_agent_style_gives_one_trace_with_graph_attributes(memory, style, node_spans):
    agent = graphtrail.trace_agent(BUILDERS[style](), name="kg", **({"node_spans": True} if node_spans else {}))
    with graphtrail.capture() as cap:
        result = agent.invoke(ask(7), {"configurable": {"thread_id": "conv-7"}})
    assert result["messages"][-1].content == "Answer 7"
    spans = memory.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1
    names = by_name(spans)
    (root,) = names["invoke_agent kg"]
    assert root.parent is None
    assert len(names["chat scripted-model"]) == 4
    assert [s.attributes["gen_ai.tool.name"] for s in sorted(
        [s for s in spans if s.name.startswith("execute_tool")], key=lambda s: s.attributes["graphtrail.step"]
    )] == ["search", "neighbors", "submit_answer"]

    a = root.attributes
    assert a["gen_ai.operation.name"] == "invoke_agent" and a["openinference.span.kind"] == "AGENT"
    assert a["gen_ai.conversation.id"] == "conv-7"
    assert a["graphtrail.answer"] == "Answer 7"
    assert json.loads(a["graphtrail.citations"]) == ["N7-c"]
    assert json.loads(a["graphtrail.visited"]) == ["N7-a", "N7-b", "N7-c"]
    assert json.loads(a["graphtrail.visited_uncited"]) == ["N7-a", "N7-b"]
    (neigh,) = names["execute_tool neighbors"]
    sources = json.loads(a["graphtrail.citation_sources"])
    assert sources == {"N7-c": {"entity_id": "N7-c", "steps": [2], "span_ids": [span_id(neigh)]}}

    n = neigh.attributes
    assert n["gen_ai.operation.name"] == "execute_tool" and n["openinference.span.kind"] == "TOOL"
    assert n["graphtrail.step"] == 2
    assert json.loads(n["graphtrail.entities.visited"]) == ["N7-c", "N7-a"]  # the edge's far end is revealed too
    assert json.loads(n["graphtrail.edges.traversed"]) == [["N7-a", "currency", "N7-c"]]
    assert isinstance(n["langgraph.step"], int) and n["langgraph.node"] in ("tools", "run_tools")
    assert n["gen_ai.tool.call.id"].startswith("call_")
    chat = names["chat scripted-model"][0]
    assert chat.kind == SpanKind.CLIENT
    assert chat.attributes["gen_ai.request.model"] == "scripted-model"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 10 and chat.attributes["gen_ai.usage.output_tokens"] == 5

    # every span hangs off the root through spans of this trace (no orphans)
    ids = {span_id(s) for s in spans}
    assert all(parent_id(s) in ids for s in spans if s is not root)
    work = [s for s in spans if s.name.startswith(("chat", "execute_tool"))]
    assert all(isinstance(s.attributes["langgraph.step"], int) and s.attributes["langgraph.node"] for s in work)
    chains = [s for s in spans if s.attributes.get("openinference.span.kind") == "CHAIN"]
    if node_spans:
        # LangGraph nodes are CHAIN spans directly under the root; model and tool spans under them
        assert chains and all(parent_id(s) == span_id(root) for s in chains)
        assert {s.attributes["langgraph.node"] for s in chains} == {s.attributes["langgraph.node"] for s in work}
        assert all(parent_id(s) in {span_id(x) for x in chains} for s in work)
    else:
        # default: no node spans, model and tool spans hang directly under the root
        assert chains == [] and len(spans) == 1 + len(work)
        assert all(parent_id(s) == span_id(root) for s in work)

    (traj,) = cap.trajectories
    assert traj.answer == "Answer 7" and traj.citations == ["N7-c"] and traj.status == "ok"
    assert traj.question == "Which currency does Q-7 use?"
    assert traj.visited_uncited == ["N7-a", "N7-b"]
    assert [s.index for s in traj.steps] == [1, 2, 3]
    assert traj.steps[0].entities[0].name == "Alpha 7" and traj.steps[0].entities[0].type == "city"
    assert traj.trace_id == format(root.context.trace_id, "032x")
    assert trajectories_from_spans(spans) == [traj]


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
def test_parallel_tool_calls_in_one_step(memory):
    def policy(messages):
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn == 0:
            return AIMessage("", tool_calls=[
                tool_call("search", {"query": "Q-1"}, unique_id()),
                tool_call("neighbors", {"entity_id": "N1-a"}, unique_id()),
                tool_call("neighbors", {"entity_id": "N2-a"}, unique_id()),
            ])
        if turn == 1:
            return AIMessage("", tool_calls=[tool_call("submit_answer", {"answer": "x", "citations": ["N2-c"]}, unique_id())])
        return AIMessage("x")

    agent = graphtrail.trace_agent(build_create_agent(ScriptedChatModel(policy=policy)), name="par", node_spans=True)
    with graphtrail.capture() as cap:
        agent.invoke(ask(1))
    (traj,) = cap.trajectories
    tools = [s for s in memory.get_finished_spans() if s.name.startswith("execute_tool")]
    first_step = [s for s in tools if s.attributes["langgraph.step"] == 2]
    assert len(first_step) == 3
    # create_agent sends each call to its own "tools" task: one node span per call, same step
    index = {span_id(s): s for s in memory.get_finished_spans()}
    assert {index[parent_id(s)].name for s in first_step} == {"tools"}
    assert len({s.context.trace_id for s in index.values()}) == 1
    assert sorted(s.attributes["graphtrail.step"] for s in tools) == [1, 2, 3, 4]
    by_call = {s.tool_call_id: s for s in traj.steps}
    assert {tuple(s.entity_ids) for s in traj.steps if s.tool == "neighbors"} == {("N1-c", "N1-a"), ("N2-c", "N2-a")}
    assert len(by_call) == 4
    assert traj.citation_sources["N2-c"].steps == [next(s.index for s in traj.steps if s.entity_ids[0] == "N2-c")]


def test_tool_exception_is_an_error_span_and_the_agent_goes_on(memory):
    script = [
        AIMessage("", tool_calls=[tool_call("broken", {"entity_id": "E9"}, unique_id())]),
        AIMessage("", tool_calls=[tool_call("search", {"query": "Q-3"}, unique_id())]),
        AIMessage("The answer [E:N3-a]"),
    ]
    graph = build_toolnode_graph(ScriptedChatModel(script=script), [broken, search], handle_tool_errors=True)
    with graphtrail.capture() as cap:
        graphtrail.trace_agent(graph, name="err").invoke(ask(3))
    (traj,) = cap.trajectories
    assert traj.status == "ok" and traj.answer == "The answer" and traj.citations == ["N3-a"]
    assert traj.steps[0].error == "ValueError: backend down for E9" and traj.steps[0].entities == []
    assert traj.steps[1].error is None
    (span,) = [s for s in memory.get_finished_spans() if s.name == "execute_tool broken"]
    assert span.status.status_code == StatusCode.ERROR
    assert span.attributes["error.type"] == "ValueError"
    assert [e.name for e in span.events] == ["exception"]
    assert span.events[0].attributes["exception.message"] == "backend down for E9"
    assert trajectories_from_spans(memory.get_finished_spans()) == [traj]


def test_rejected_submission_then_accepted_one(memory):
    script = [
        AIMessage("", tool_calls=[tool_call("search", {"query": "Q-4"}, unique_id())]),
        AIMessage("", tool_calls=[tool_call("submit_answer", {"answer": "early", "citations": []}, unique_id())]),
        AIMessage("", tool_calls=[tool_call("submit_answer", {"answer": "late", "citations": ["N4-b"]}, unique_id())]),
    ]
    with graphtrail.capture() as cap:
        graphtrail.trace_agent(build_create_agent(ScriptedChatModel(script=script))).invoke(ask(4))
    (traj,) = cap.trajectories
    assert (traj.answer, traj.citations, traj.status) == ("late", ["N4-b"], "ok")
    rejected = traj.steps[1]
    assert rejected.tool == "submit_answer" and rejected.error and "rejected" in rejected.error
    span = next(s for s in memory.get_finished_spans() if s.attributes.get("graphtrail.step") == 2)
    assert span.status.status_code == StatusCode.ERROR


def test_all_submissions_rejected_is_no_answer(memory):
    script = [AIMessage("", tool_calls=[tool_call("submit_answer", {"answer": "guess", "citations": []}, unique_id())])]
    with graphtrail.capture() as cap:
        graphtrail.trace_agent(build_create_agent(ScriptedChatModel(script=script))).invoke(ask(5))
    (traj,) = cap.trajectories
    assert (traj.answer, traj.citations, traj.status) == (None, [], "no_answer")
    root = next(s for s in memory.get_finished_spans() if s.name.startswith("invoke_agent"))
    assert root.attributes["graphtrail.status"] == "no_answer" and "graphtrail.answer" not in root.attributes


@pytest.mark.parametrize("limit", ["model", "tool"])
def test_run_ended_by_a_call_limit_is_no_answer(memory, limit):
    """LangChain's limit middleware ends the run with a notice, which is not an answer."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelCallLimitMiddleware, ToolCallLimitMiddleware

    def keep_searching(messages):
        return AIMessage("", tool_calls=[tool_call("search", {"query": "Q-6"}, unique_id())])

    middleware = (
        ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")
        if limit == "model"
        else ToolCallLimitMiddleware(run_limit=2, exit_behavior="end")
    )
    agent = create_agent(ScriptedChatModel(policy=keep_searching), [search, submit_answer], middleware=[middleware])
    with graphtrail.capture() as cap:
        result = graphtrail.trace_agent(agent).invoke(ask(6))
    assert "limit" in result["messages"][-1].content  # the run really ended on the notice
    (traj,) = cap.trajectories
    assert (traj.answer, traj.citations, traj.status) == (None, [], "no_answer")
    assert traj.steps and all(step.tool == "search" for step in traj.steps)


def _all_values(spans):
    for s in spans:
        for v in s.attributes.values():
            yield str(v)
        for e in s.events:
            for v in e.attributes.values():
                yield str(v)


class SecretModel(ScriptedChatModel):
    api_key: str = "sk-test-SECRET-1234"
    default_headers: dict = {"Authorization": "Bearer HEADER-SECRET"}

    @property
    def _identifying_params(self):
        return {"model_name": self.model_name, "api_key": self.api_key, "default_headers": self.default_headers}


@pytest.mark.parametrize("mode", ["full", "ids-only", "none"])
def test_content_modes(mode, memory):
    graphtrail.configure(exporter="memory", content=mode)
    from graphtrail.tracer import get_memory_exporter

    exporter = get_memory_exporter()
    agent = graphtrail.trace_agent(build_create_agent(SecretModel(policy=kg_model().policy)), name="m")
    with graphtrail.capture() as cap:
        agent.invoke(ask(8), {"configurable": {"thread_id": "t", "api_key": "sk-CONFIG-SECRET"}})
    spans = exporter.get_finished_spans()
    values = list(_all_values(spans))
    assert not any("SECRET" in v for v in values)
    text_bits = ("Which currency", "uses currency Gamma", "Answer 8")
    has_text = any(bit in v for v in values for bit in text_bits)
    assert has_text == (mode == "full")
    (traj,) = cap.trajectories
    # ids and structure survive every mode
    assert traj.visited == ["N8-a", "N8-b", "N8-c"] and traj.citations == ["N8-c"]
    assert [s.tool for s in traj.steps] == ["search", "neighbors", "submit_answer"]
    neigh = traj.steps[1]
    assert [e.as_triple() for e in neigh.edges] == [["N8-a", "currency", "N8-c"]]
    if mode == "full":
        assert traj.answer == "Answer 8" and neigh.output and neigh.args == {"entity_id": "N8-a"}
        assert traj.steps[0].entities[0].name == "Alpha 8"
    elif mode == "ids-only":
        assert traj.answer is None and traj.question is None and neigh.output is None
        assert neigh.args == {"entity_id": "N8-a"}  # identifiers are structure
        assert traj.steps[0].args == {"query": "Q-8"}
        assert traj.steps[2].args == {"answer": "<redacted>", "citations": ["N8-c"]}
        assert traj.steps[0].entities[0].name == "Alpha 8"  # names are kept
    else:
        assert traj.answer is None and neigh.output is None and neigh.args == {}
        assert all(e.name is None and e.type is None for s in traj.steps for e in s.entities)
        assert not any(k.endswith(("input.value", "output.value", "step.args")) for s in spans for k in s.attributes)
    assert trajectories_from_spans(spans) == [traj]


def test_long_values_are_truncated_with_a_marker(memory):
    graphtrail.configure(exporter="memory", max_value_length=20)
    from graphtrail.tracer import get_memory_exporter

    with graphtrail.capture() as cap:
        graphtrail.trace_agent(build_create_agent()).invoke(ask(9))
    (traj,) = cap.trajectories
    out = traj.steps[1].output
    full = "N9-a uses currency Gamma 9 (N9-c)"
    assert out == full[:20] + f"…[truncated {len(full) - 20} chars]"
    assert traj.question == "Which currency does " + "…[truncated 8 chars]"
    assert trajectories_from_spans(get_memory_exporter().get_finished_spans()) == [traj]


def test_extractor_that_raises_and_junk_output_never_break_the_agent(memory, caplog):
    reset_warnings()

    from langchain_core.tools import tool

    @tool
    def junk(entity_id: str) -> str:
        """Returns junk."""
        return "{not json ] \x00"

    calls = []

    @register_extractor("search")
    def bad_extractor(output, args):
        calls.append(args)
        raise RuntimeError("extractor bug")

    try:
        script = [
            AIMessage("", tool_calls=[tool_call("junk", {"entity_id": "E1"}, unique_id())]),
            AIMessage("", tool_calls=[tool_call("search", {"query": "Q-2"}, unique_id())]),
            AIMessage("", tool_calls=[tool_call("search", {"query": "Q-3"}, unique_id())]),
            AIMessage("done [E:N2-a]"),
        ]
        with caplog.at_level(logging.WARNING, logger="graphtrail"), graphtrail.capture() as cap:
            out = graphtrail.trace_agent(build_create_agent(ScriptedChatModel(script=script), [junk, search])).invoke(ask(2))
    finally:
        unregister_extractor("search")
    assert out["messages"][-1].content == "done [E:N2-a]"
    (traj,) = cap.trajectories
    assert traj.steps[0].entities == []
    # the generic fallback still read the search output
    assert traj.steps[1].entity_ids == ["N2-a", "N2-b"] and traj.steps[2].entity_ids == ["N3-a", "N3-b"]
    assert calls == [{"query": "Q-2"}, {"query": "Q-3"}]
    warnings = [r for r in caplog.records if r.name == "graphtrail" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "extractor" in warnings[0].getMessage()


def test_extraction_order_artifact_then_extractor_then_fallback(memory):
    seen = []

    def neighbors_extractor(output, args):
        seen.append("neighbors")
        return {"entities": ["X"]}

    def search_extractor(output, args):
        seen.append("search")
        return {"entities": [{"id": "S1", "name": "From extractor"}], "edges": [["S1", "rel", "S2"]]}

    from langchain_core.tools import tool

    @tool
    def plain(entity_id: str) -> str:
        """Generic JSON output."""
        return json.dumps([{"entity_id": "P1", "label": "Pee"}, {"node_id": 2}, {"source": "P1", "predicate": "knows", "target": "P2"}])

    script = [
        AIMessage("", tool_calls=[
            tool_call("neighbors", {"entity_id": "N1-a"}, unique_id()),
            tool_call("search", {"query": "Q-1"}, unique_id()),
            tool_call("plain", {"entity_id": "x"}, unique_id()),
        ]),
        AIMessage("ok"),
    ]
    agent = graphtrail.trace_agent(
        build_create_agent(ScriptedChatModel(script=script), [neighbors, search, plain]),
        extractors={"neighbors": neighbors_extractor, "search": search_extractor},
    )
    with graphtrail.capture() as cap:
        agent.invoke(ask(1))
    steps = {s.tool: s for s in cap.trajectories[0].steps}
    assert steps["neighbors"].entity_ids == ["N1-c", "N1-a"]  # artifact wins, extractor not called
    assert steps["search"].entity_ids == ["S1", "S2"] and steps["search"].entities[0].name == "From extractor"
    assert [e.as_triple() for e in steps["search"].edges] == [["S1", "rel", "S2"]]
    assert steps["plain"].entity_ids == ["P1", "2", "P2"] and steps["plain"].entities[0].name == "Pee"
    assert [e.as_triple() for e in steps["plain"].edges] == [["P1", "knows", "P2"]]
    assert seen == ["search"]


def test_interrupt_is_control_flow_not_an_error(memory):
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import interrupt

    @tool
    def ask_human(question: str) -> str:
        """Ask a human."""
        return interrupt(question)

    script = [AIMessage("", tool_calls=[tool_call("ask_human", {"question": "ok?"}, unique_id())]), AIMessage("fine")]
    from langchain.agents import create_agent

    agent = graphtrail.trace_agent(create_agent(ScriptedChatModel(script=script), [ask_human], checkpointer=InMemorySaver()))
    with graphtrail.capture() as cap:
        out = agent.invoke(ask(1), {"configurable": {"thread_id": "hitl"}})
    assert "__interrupt__" in out
    spans = memory.get_finished_spans()
    assert not any(s.status.status_code == StatusCode.ERROR for s in spans)
    tool_span = next(s for s in spans if s.name == "execute_tool ask_human")
    assert tool_span.attributes["graphtrail.control_flow"] == "GraphInterrupt"
    (traj,) = cap.trajectories
    assert traj.status in ("ok", "no_answer") and traj.error is None and traj.steps == []


def test_tool_returning_a_command_is_a_step(memory):
    @tool
    def jump(entity_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Returns a Command."""
        return Command(update={"messages": [ToolMessage('{"id": "C1", "name": "Cee"}', tool_call_id=tool_call_id)]})

    script = [AIMessage("", tool_calls=[tool_call("jump", {"entity_id": "C1"}, unique_id())]), AIMessage("ok [E:C1]")]
    with graphtrail.capture() as cap:
        graphtrail.trace_agent(build_create_agent(ScriptedChatModel(script=script), [jump])).invoke(ask(1))
    (traj,) = cap.trajectories
    assert traj.steps[0].entity_ids == ["C1"] and traj.citations == ["C1"]


def test_user_passed_handler_traces_each_run(memory):
    handler = GraphTrailHandler(name="direct")
    agent = build_create_agent()
    with graphtrail.capture() as cap:
        agent.invoke(ask(11), {"callbacks": [handler]})
        agent.invoke(ask(12), {"callbacks": [handler]})
    assert [t.name for t in cap.trajectories] == ["direct", "direct"]
    assert [t.citations for t in cap.trajectories] == [["N11-c"], ["N12-c"]]
    assert len({t.trace_id for t in cap.trajectories}) == 2
    assert handler._recs == {}  # no state left behind


def test_a_bug_in_the_handler_never_reaches_the_agent(memory, caplog, monkeypatch):
    import graphtrail.tracer.spans as spans_module

    reset_warnings()

    def broken_usage(*args):
        raise RuntimeError("graphtrail bug")

    monkeypatch.setattr(spans_module, "_usage", broken_usage)
    agent = graphtrail.trace_agent(build_create_agent())
    with caplog.at_level(logging.WARNING, logger="graphtrail"), graphtrail.capture() as cap:
        results = [agent.invoke(ask(n)) for n in range(2)]
    assert [r["messages"][-1].content for r in results] == ["Answer 0", "Answer 1"]
    assert [t.citations for t in cap.trajectories] == [["N0-c"], ["N1-c"]]
    ours = [r for r in caplog.records if r.name == "graphtrail" and r.levelno == logging.WARNING]
    assert len(ours) == 1 and "could not record a chat run" in ours[0].getMessage()
    chats = [s for s in memory.get_finished_spans() if s.name.startswith("chat")]
    assert len(chats) == 8  # the spans still end


def test_node_spans_follow_configure_and_trace_agent_overrides_it():
    def chains(agent):
        exporter = graphtrail.tracer.get_memory_exporter()
        exporter.clear()
        with graphtrail.capture() as cap:
            agent.invoke(ask(3))
        spans = exporter.get_finished_spans()
        (traj,) = cap.trajectories
        assert [s.index for s in traj.steps] == [1, 2, 3]  # the trajectory is the same either way
        assert trajectories_from_spans(spans) == [traj]
        return sorted({s.name for s in spans if s.attributes.get("openinference.span.kind") == "CHAIN"})

    try:
        graphtrail.configure(exporter="memory", node_spans=True)
        assert chains(graphtrail.trace_agent(build_create_agent(), name="on")) == ["model", "tools"]
        assert chains(graphtrail.trace_agent(build_create_agent(), name="off", node_spans=False)) == []
        graphtrail.configure(exporter="memory")
        assert chains(graphtrail.trace_agent(build_create_agent(), name="default")) == []
    finally:
        graphtrail.configure(exporter="none")


# ---------------------------------------------------------------- spans are built when the run ends


def _shape(spans):
    """Span names, kinds, parents (by name) and attributes, without ids and times."""
    volatile = {"graphtrail.run_id", "graphtrail.citation_sources", "gen_ai.tool.call.id"}
    by_id = {span_id(s): s.name for s in spans}
    call_ids = re.compile(r'\\?"id\\?":\\?"call_\d+')  # tool-call ids inside gen_ai.*.messages differ per run
    return sorted(
        (s.name, str(s.kind), by_id.get(parent_id(s)) if s.parent else None,
         call_ids.sub("id:call", json.dumps({k: v for k, v in s.attributes.items() if k not in volatile}, sort_keys=True)))
        for s in spans
    )


def test_spans_are_the_same_whether_or_not_a_capture_reads_the_run(memory):
    # Without a capture() no Trajectory is built; the root's attributes come from the
    # same derivation rules, so what reaches the exporter must not change.
    agent = graphtrail.trace_agent(build_create_agent(), name="kg")
    agent.invoke(ask(3))
    uncaptured = memory.get_finished_spans()
    memory.clear()
    with graphtrail.capture() as cap:
        agent.invoke(ask(3))
    captured = memory.get_finished_spans()
    assert _shape(uncaptured) == _shape(captured)
    root = next(s for s in uncaptured if s.name.startswith("invoke_agent"))
    sources = json.loads(root.attributes["graphtrail.citation_sources"])
    step_span = {s.attributes["graphtrail.step"]: span_id(s) for s in uncaptured if s.name.startswith("execute_tool")}
    assert sources == {"N3-c": {"entity_id": "N3-c", "steps": [2], "span_ids": [step_span[2]]}}
    captured_root = next(s for s in captured if s.name.startswith("invoke_agent"))
    traj_sources = {k: v.model_dump() for k, v in cap.trajectories[0].citation_sources.items()}
    assert json.loads(captured_root.attributes["graphtrail.citation_sources"]) == traj_sources


def test_spans_built_at_the_end_keep_the_times_the_runs_had(memory):
    agent = graphtrail.trace_agent(build_create_agent(), name="kg")
    agent.invoke(ask(4))
    spans = memory.get_finished_spans()
    root = next(s for s in spans if s.name.startswith("invoke_agent"))
    children = sorted((s for s in spans if s is not root), key=lambda s: s.start_time)
    assert all(root.start_time <= s.start_time <= s.end_time <= root.end_time for s in children)
    # model and tool calls alternate and do not overlap: each ends before the next starts
    assert [s.name.split()[0] for s in children] == ["chat", "execute_tool"] * 3 + ["chat"]
    assert all(a.end_time <= b.start_time for a, b in zip(children, children[1:]))
    steps = [s.attributes["graphtrail.step"] for s in children if s.name.startswith("execute_tool")]
    assert steps == [1, 2, 3]


def test_the_root_keeps_the_ambient_span_of_its_start_not_of_its_end(memory):
    from opentelemetry import trace
    from uuid import uuid4

    handler = GraphTrailHandler(name="direct")
    tracer = trace.get_tracer("app", tracer_provider=graphtrail.tracer.get_tracer_provider())
    root_id, model_id = uuid4(), uuid4()
    with tracer.start_as_current_span("request-a") as request_a:
        handler.on_chain_start({}, {"messages": [("user", "q?")]}, run_id=root_id)
        handler.on_chat_model_start({}, [[AIMessage("q?")]], run_id=model_id, parent_run_id=root_id,
                                    invocation_params={"model": "m"})
    with tracer.start_as_current_span("request-b"):
        handler.on_llm_end(None, run_id=model_id)
        handler.on_chain_end({"messages": [AIMessage("done [E:X1]")]}, run_id=root_id)
    spans = memory.get_finished_spans()
    root = next(s for s in spans if s.name == "invoke_agent direct")
    chat = next(s for s in spans if s.name == "chat m")
    assert root.parent.span_id == request_a.get_span_context().span_id
    assert root.context.trace_id == request_a.get_span_context().trace_id
    assert chat.parent.span_id == root.context.span_id
    assert json.loads(root.attributes["graphtrail.citations"]) == ["X1"]
    assert handler._recs == {}


def test_a_failure_while_finishing_still_exports_the_whole_tree(memory, caplog, monkeypatch):
    import graphtrail.tracer.roots as roots_module

    reset_warnings()

    def broken_answer(*args, **kwargs):
        raise RuntimeError("graphtrail bug")

    monkeypatch.setattr(roots_module, "extract_answer", broken_answer)
    agent = graphtrail.trace_agent(build_create_agent(), name="kg")
    with caplog.at_level(logging.WARNING, logger="graphtrail"):
        result = agent.invoke(ask(5))
    assert result["messages"][-1].content == "Answer 5"
    ours = [r for r in caplog.records if r.name == "graphtrail" and r.levelno == logging.WARNING]
    assert len(ours) == 1 and "on_chain_end" in ours[0].getMessage()
    spans = memory.get_finished_spans()
    names = by_name(spans)
    (root,) = names["invoke_agent kg"]
    assert len(names["chat scripted-model"]) == 4 and len([s for s in spans if s.name.startswith("execute_tool")]) == 3
    assert all(parent_id(s) == span_id(root) for s in spans if s is not root)


def test_a_stream_read_only_in_part_ends_its_trace_without_an_error(memory):
    agent = graphtrail.trace_agent(build_create_agent(), name="kg")
    with graphtrail.capture() as cap:
        for _chunk in agent.stream(ask(2), stream_mode="updates"):
            break  # the caller has what it wanted
    (traj,) = cap.trajectories
    assert traj.status == "no_answer" and traj.error is None
    spans = memory.get_finished_spans()
    root = next(s for s in spans if s.name == "invoke_agent kg")
    assert root.status.status_code != StatusCode.ERROR
    assert root.attributes["graphtrail.control_flow"] == "GeneratorExit"
    assert [s.name for s in spans if s is not root] == ["chat scripted-model"]  # what ran before the stop
    assert agent.graphtrail_handler._recs == {}


# ---------------------------------------------------------------- long runs: spans as calls finish


def _peeking_agent(exporter, seen, pause_s=0.0):
    """An agent whose ``peek`` tool notes which spans had been exported when it ran."""
    import time as _time

    @tool
    def peek(n: int) -> str:
        """Note the exported spans."""
        if n == 1 and pause_s:
            _time.sleep(pause_s)
        seen.append(sorted(s.name for s in exporter.get_finished_spans()))
        return "ok"

    def policy(messages):
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn < 3:
            return AIMessage("", tool_calls=[tool_call("peek", {"n": turn}, unique_id())])
        return AIMessage("done [E:X1]")

    return graphtrail.trace_agent(build_create_agent(ScriptedChatModel(policy=policy), [peek]), name="peek")


def test_a_fast_run_exports_its_spans_when_it_ends(memory):
    seen: list[list[str]] = []
    _peeking_agent(memory, seen).invoke(ask(1))
    assert seen == [[], [], []]
    names = sorted(s.name for s in memory.get_finished_spans())
    assert names == ["chat scripted-model"] * 4 + ["execute_tool peek"] * 3 + ["invoke_agent peek"]


@pytest.mark.parametrize("memory", [0.0], indirect=True)
def test_live_spans_appear_as_calls_finish(memory):
    seen: list[list[str]] = []
    _peeking_agent(memory, seen).invoke(ask(1))
    # each peek sees the model calls and tools that finished before it; the root only ends last
    assert seen == [
        ["chat scripted-model"],
        ["chat scripted-model"] * 2 + ["execute_tool peek"],
        ["chat scripted-model"] * 3 + ["execute_tool peek"] * 2,
    ]
    spans = memory.get_finished_spans()
    assert spans[-1].name == "invoke_agent peek"
    root = spans[-1]
    assert all(parent_id(s) == span_id(root) for s in spans[:-1])
    assert json.loads(root.attributes["graphtrail.citations"]) == ["X1"]
    assert [s.attributes["graphtrail.model_call"] for s in spans if s.name.startswith("chat")] == [1, 2, 3, 4]


@pytest.mark.parametrize("memory", [0.5], indirect=True)
def test_a_run_goes_live_once_it_has_run_for_live_after(memory):
    # the first peek runs early (nothing exported yet); the second sleeps past
    # live_after, so everything finished by then is built and exported at once
    seen: list[list[str]] = []
    with graphtrail.capture() as cap:
        _peeking_agent(memory, seen, pause_s=0.6).invoke(ask(1))
    assert seen[0] == []
    assert seen[2] == ["chat scripted-model"] * 3 + ["execute_tool peek"] * 2
    (traj,) = cap.trajectories
    assert [s.index for s in traj.steps] == [1, 2, 3] and [m.index for m in traj.model_calls] == [1, 2, 3, 4]
    assert trajectories_from_spans(memory.get_finished_spans()) == [traj]


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_live_after_must_be_seconds(bad):
    with pytest.raises(ValueError, match="live_after"):
        graphtrail.configure(live_after=bad)
