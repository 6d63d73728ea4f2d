"""Parallel tool calls are numbered in the order the model asked for them, not the order they finish.

The agents are real ``create_agent`` graphs (LangGraph runs the calls of one
message as concurrent tasks: threads for ``invoke``, asyncio tasks for
``ainvoke``). The finishing order is forced, not left to timing: each
``get_entity`` call waits until the tracer has seen the call requested after
it end. A ``Gates`` callback handler, listed after graphtrail's handler (so
LangChain calls it after graphtrail's for the same event), opens the gate when
a call ends; it also records the order calls ended in, so each test checks
that the order really was reversed.
"""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

import graphtrail
from graphtrail.tracer import GraphTrailHandler, trajectories_from_spans
from tests.fakes import ScriptedChatModel, tool_call, unique_id
from tests.test_tracer_kit import LIVE_MODES, build_toolnode_graph, memory  # noqa: F401 - fixture

WAIT_S = 10.0  # a gate that never opens fails the test instead of hanging it


class Gates(BaseCallbackHandler):
    """Opens ``waits_for[x]``'s gate when the call for entity ``x`` ends; records the end order."""

    run_inline = True  # called in list order, after graphtrail's handler, on the event loop too

    def __init__(self, waits_for: dict[str, str]) -> None:
        super().__init__()
        self.waits_for = waits_for  # entity -> the entity whose call must end first
        self.threads = {e: threading.Event() for e in waits_for.values()}
        self.loop_events: dict[str, asyncio.Event] = {}
        self.entity_of: dict[Any, str] = {}
        self.ended: list[str] = []

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: Any, inputs: Any = None, **kwargs: Any) -> None:
        if isinstance(inputs, dict) and "entity_id" in inputs:
            self.entity_of[run_id] = inputs["entity_id"]

    def on_tool_end(self, output: Any, *, run_id: Any, **kwargs: Any) -> None:
        entity = self.entity_of.get(run_id)
        if entity is None:
            return
        self.ended.append(entity)
        if entity in self.threads:
            self.threads[entity].set()
        if entity in self.loop_events:
            self.loop_events[entity].set()

    def wait(self, entity: str) -> None:
        first = self.waits_for.get(entity)
        if first is not None and not self.threads[first].wait(WAIT_S):
            raise TimeoutError(f"{first} never ended")

    async def await_(self, entity: str) -> None:
        first = self.waits_for.get(entity)
        if first is None:
            return
        if first in self.ended:
            return
        event = self.loop_events.setdefault(first, asyncio.Event())
        await asyncio.wait_for(event.wait(), WAIT_S)


def entity_tool(gates: Gates) -> StructuredTool:
    def get_entity(entity_id: str) -> str:
        """Look an entity up by id."""
        gates.wait(entity_id)
        return json.dumps({"id": entity_id, "name": f"Entity {entity_id}"})

    async def aget_entity(entity_id: str) -> str:
        await gates.await_(entity_id)
        return json.dumps({"id": entity_id, "name": f"Entity {entity_id}"})

    return StructuredTool.from_function(func=get_entity, coroutine=aget_entity, name="get_entity")


def parallel_policy(requested: list[dict[str, Any]]):
    def policy(messages: list[BaseMessage]) -> AIMessage:
        if sum(isinstance(m, AIMessage) for m in messages) == 0:
            return AIMessage("", tool_calls=requested)
        return AIMessage("done")

    return policy


def run_agent(agent: Any, gates: Gates, mode: str) -> Any:
    config = {"callbacks": [GraphTrailHandler(name="par"), gates]}
    question = {"messages": [("user", "Tell me about E1, E2 and E3")]}
    with graphtrail.capture() as cap:
        if mode == "async":
            asyncio.run(agent.ainvoke(question, config))
        else:
            agent.invoke(question, config)
    (traj,) = cap.trajectories
    return traj


def tool_spans_by_step(memory) -> list[Any]:
    tools = [s for s in memory.get_finished_spans() if s.name.startswith("execute_tool")]
    return sorted(tools, key=lambda s: s.attributes["graphtrail.step"])


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("style", ["create_agent", "toolnode_graph"])
def test_parallel_calls_are_numbered_in_request_order_when_they_finish_in_reverse(memory, mode, style):
    # create_agent runs each call as its own task; a ToolNode runs them all in one task (threads, or gather)
    gates = Gates({"E1": "E2", "E2": "E3"})  # E3 ends first, then E2, then E1
    requested = [tool_call("get_entity", {"entity_id": e}, unique_id()) for e in ("E1", "E2", "E3")]
    build = create_agent if style == "create_agent" else build_toolnode_graph
    agent = build(ScriptedChatModel(policy=parallel_policy(requested)), [entity_tool(gates)])
    traj = run_agent(agent, gates, mode)
    assert gates.ended == ["E3", "E2", "E1"]  # the finishing order really was the reverse

    ids = [c["id"] for c in requested]
    assert [s.tool_call_id for s in traj.steps] == ids
    assert [s.index for s in traj.steps] == [1, 2, 3]
    assert [s.entity_ids for s in traj.steps] == [["E1"], ["E2"], ["E3"]]
    spans = tool_spans_by_step(memory)
    assert [s.attributes["gen_ai.tool.call.id"] for s in spans] == ids
    assert [s.attributes["graphtrail.step"] for s in spans] == [1, 2, 3]
    assert trajectories_from_spans(memory.get_finished_spans()) == [traj]
    root = next(s for s in memory.get_finished_spans() if s.name == "invoke_agent par")
    assert json.loads(root.attributes["graphtrail.visited"]) == ["E1", "E2", "E3"]


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
def test_a_requested_call_that_never_runs_does_not_hold_the_others(memory, request):
    # ToolNode answers a call of an unknown tool without running anything: the
    # calls after it are numbered in request order among themselves all the same,
    # and live, their spans wait only until the agent moves on (the next model call)
    gates = Gates({"E1": "E2"})
    requested = [
        tool_call("no_such_tool", {"entity_id": "E0"}, unique_id()),
        tool_call("get_entity", {"entity_id": "E1"}, unique_id()),
        tool_call("get_entity", {"entity_id": "E2"}, unique_id()),
    ]
    agent = create_agent(ScriptedChatModel(policy=parallel_policy(requested)), [entity_tool(gates)])
    traj = run_agent(agent, gates, "sync")
    assert gates.ended == ["E2", "E1"]
    assert [(s.index, s.tool_call_id) for s in traj.steps] == [(1, requested[1]["id"]), (2, requested[2]["id"])]
    spans = tool_spans_by_step(memory)
    assert [s.attributes["gen_ai.tool.call.id"] for s in spans] == [requested[1]["id"], requested[2]["id"]]
    assert trajectories_from_spans(memory.get_finished_spans()) == [traj]
    if request.node.callspec.params["memory"] is not None:  # live: exported in the order they were built
        exported = [s.name for s in memory.get_finished_spans()]
        assert exported == ["chat scripted-model", "execute_tool get_entity", "execute_tool get_entity",
                            "chat scripted-model", "invoke_agent par"]


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
def test_tools_called_without_a_model_request_keep_the_finishing_order(memory):
    # An agent that calls its tools itself, concurrently, with plain arguments:
    # no tool_call_id ties the runs to a request, so nothing is reordered.
    gates = Gates({"E1": "E2"})
    get_entity = entity_tool(gates)

    def fan_out(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        with ThreadPoolExecutor(2) as pool:
            outs = list(pool.map(lambda e: get_entity.invoke({"entity_id": e}, config), ["E1", "E2"]))
        return {"messages": [AIMessage(" ".join(outs))]}

    graph = StateGraph(MessagesState)
    graph.add_node("fan_out", fan_out)
    graph.add_edge(START, "fan_out")
    graph.add_edge("fan_out", END)
    traj = run_agent(graph.compile(), gates, "sync")
    assert gates.ended == ["E2", "E1"]
    assert [(s.index, s.entity_ids, s.tool_call_id) for s in traj.steps] == [(1, ["E2"], None), (2, ["E1"], None)]
    assert [s.attributes["graphtrail.step"] for s in tool_spans_by_step(memory)] == [1, 2]


class HoldStart(BaseCallbackHandler):
    """Holds the start of ``entity``'s call until a model named ``model_name`` has started.

    ``before`` goes before graphtrail's handler in the callbacks (so graphtrail sees the
    call start only once released), ``after`` after it (so it releases the call only once
    graphtrail has seen the model start): the call is still waiting to start then.
    """

    run_inline = True

    def __init__(self, entity: str, model_name: str) -> None:
        super().__init__()
        self.entity, self.model_name = entity, model_name
        self.model_started = threading.Event()
        self.held = False
        self.before, self.after = self, _ModelStarted(self)

    def on_tool_start(self, serialized: Any, input_str: str, *, inputs: Any = None, **kwargs: Any) -> None:
        if isinstance(inputs, dict) and inputs.get("entity_id") == self.entity:
            self.held = self.model_started.wait(WAIT_S)


class _ModelStarted(BaseCallbackHandler):
    run_inline = True

    def __init__(self, hold: HoldStart) -> None:
        super().__init__()
        self.hold = hold

    def on_chat_model_start(self, serialized: Any, messages: Any, *, metadata: Any = None, **kwargs: Any) -> None:
        if (metadata or {}).get("ls_model_name") == self.hold.model_name:
            self.hold.model_started.set()


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
@pytest.mark.parametrize("pass_config", [True, False], ids=["config-passed", "config-from-context"])
def test_a_model_called_inside_a_tool_does_not_end_the_wait_for_calls_not_started_yet(memory, pass_config):
    # E2's tool asks a model of its own while E1's call has not started: E1 still
    # comes first. Passed the tool's injected config, LangChain makes that model a
    # sibling of the tool run (not its child): what tells it from the agent's next
    # model call is that a call of the batch is still running.
    inner = ScriptedChatModel(script=[AIMessage("inner says hi")], model_name="inner-model")
    gates = Gates({"E1": "E2"})
    get_entity = entity_tool(gates)

    def consult(entity_id: str, config: RunnableConfig) -> str:
        """Ask another model about an entity."""
        inner.invoke(f"about {entity_id}", config if pass_config else None)
        return json.dumps({"id": entity_id, "name": f"Entity {entity_id}"})

    consult_tool = StructuredTool.from_function(func=consult, name="consult")
    requested = [tool_call("get_entity", {"entity_id": "E1"}, unique_id()), tool_call("consult", {"entity_id": "E2"}, unique_id())]
    agent = create_agent(ScriptedChatModel(policy=parallel_policy(requested)), [get_entity, consult_tool])
    hold = HoldStart("E1", "inner-model")
    callbacks = [hold.before, GraphTrailHandler(name="par"), hold.after, gates]
    with graphtrail.capture() as cap:
        agent.invoke({"messages": [("user", "E1 and E2?")]}, {"callbacks": callbacks})
    (traj,) = cap.trajectories
    assert hold.held and gates.ended == ["E2", "E1"]
    assert [(s.index, s.tool_call_id) for s in traj.steps] == [(1, requested[0]["id"]), (2, requested[1]["id"])]
    assert [s.attributes["gen_ai.tool.call.id"] for s in tool_spans_by_step(memory)] == [c["id"] for c in requested]
    assert [m.model for m in traj.model_calls] == ["scripted-model", "inner-model", "scripted-model"]


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
def test_a_model_called_between_the_request_and_its_tools_gives_nothing_up(memory):
    # a guard node asks a model of its own after the agent's model and before the
    # tools run: no requested call has started yet, so none is given up
    gates = Gates({"E1": "E2"})
    requested = [tool_call("get_entity", {"entity_id": e}, unique_id()) for e in ("E1", "E2")]
    model = ScriptedChatModel(policy=parallel_policy(requested))
    guard_model = ScriptedChatModel(script=[AIMessage("looks fine")], model_name="guard-model")
    tools = [entity_tool(gates)]
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    def guard(state: MessagesState) -> dict[str, Any]:
        guard_model.invoke("is this call safe?")
        return {}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("guard", guard)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", lambda s: "guard" if s["messages"][-1].tool_calls else END, ["guard", END])
    graph.add_edge("guard", "tools")
    graph.add_edge("tools", "agent")
    traj = run_agent(graph.compile(), gates, "sync")
    assert gates.ended == ["E2", "E1"]
    assert [m.model for m in traj.model_calls] == ["scripted-model", "guard-model", "scripted-model"]
    assert [(s.index, s.tool_call_id) for s in traj.steps] == [(1, requested[0]["id"]), (2, requested[1]["id"])]
    assert [s.attributes["gen_ai.tool.call.id"] for s in tool_spans_by_step(memory)] == [c["id"] for c in requested]
