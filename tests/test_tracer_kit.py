"""Shared agents, tools and fixtures for the tracer tests (this module holds no tests).

The tools are plain user tools written here (JSON outputs, one
``content_and_artifact`` tool): the tracer must work on anyone's agent, so the
tests do not use graphtrail.agents. The model is tests.fakes.ScriptedChatModel
driven by a policy that reads the conversation, so each run's calls depend on
its own question only: any cross-talk between concurrent runs shows up as
entities of the wrong question.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

import graphtrail
from graphtrail.tracer import get_memory_exporter
from tests.fakes import ScriptedChatModel, tool_call, unique_id


@tool
def search(query: str) -> str:
    """Find entities whose name matches the query (plain JSON output)."""
    n = query.split("-")[-1]
    return json.dumps(
        {"results": [{"id": f"N{n}-a", "name": f"Alpha {n}", "type": "city"}, {"id": f"N{n}-b", "name": f"Beta {n}"}]}
    )


@tool(response_format="content_and_artifact")
def neighbors(entity_id: str) -> tuple[str, dict[str, Any]]:
    """Neighbours of an entity (graphtrail artifact shape)."""
    n = entity_id.split("-")[0][1:]
    target = f"N{n}-c"
    artifact = {
        "entities": [{"id": target, "name": f"Gamma {n}", "type": "currency"}],
        "edges": [{"source": entity_id, "relation": "currency", "target": target}],
        "text_units": ["T1"],
    }
    return f"{entity_id} uses currency Gamma {n} ({target})", artifact


@tool
def submit_answer(answer: str, citations: list[str]) -> str:
    """Submit the final answer with the cited entity ids."""
    if not citations:
        raise ToolException("rejected: cite at least one entity id you visited")
    return "accepted"


submit_answer.handle_tool_error = True


@tool
def broken(entity_id: str) -> str:
    """A tool that always fails."""
    raise ValueError(f"backend down for {entity_id}")


def question_number(messages: list[BaseMessage]) -> str:
    first = next(m for m in messages if m.type == "human")
    return re.search(r"Q-(\d+)", str(first.content)).group(1)  # type: ignore[union-attr]


def kg_policy(messages: list[BaseMessage]) -> AIMessage:
    """search -> neighbors -> submit_answer, all about this conversation's question number."""
    n = question_number(messages)
    turn = sum(1 for m in messages if isinstance(m, AIMessage))
    if turn == 0:
        return AIMessage("", tool_calls=[tool_call("search", {"query": f"Q-{n}"}, unique_id())])
    if turn == 1:
        return AIMessage("", tool_calls=[tool_call("neighbors", {"entity_id": f"N{n}-a"}, unique_id())])
    if turn == 2:
        return AIMessage(
            "", tool_calls=[tool_call("submit_answer", {"answer": f"Answer {n}", "citations": [f"N{n}-c"]}, unique_id())]
        )
    return AIMessage(f"Answer {n}")


def kg_model(**kwargs: Any) -> ScriptedChatModel:
    return ScriptedChatModel(policy=kg_policy, **kwargs)


TOOLS = [search, neighbors, submit_answer]


def build_create_agent(model: Any = None, tools: list[Any] | None = None) -> Any:
    from langchain.agents import create_agent

    return create_agent(model or kg_model(), tools or TOOLS, name="kg-agent")


def build_react_agent(model: Any = None, tools: list[Any] | None = None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(model or kg_model(), tools or TOOLS)


def build_toolnode_graph(model: Any = None, tools: list[Any] | None = None, **toolnode_kwargs: Any) -> Any:
    tools = tools or TOOLS
    bound = (model or kg_model()).bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools, **toolnode_kwargs))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def build_custom_node_graph(model: Any = None, tools: list[Any] | None = None) -> Any:
    """A hand-written tool-calling node (no ToolNode); it does not pass config on."""
    tools = tools or TOOLS
    by_name = {t.name: t for t in tools}
    bound = (model or kg_model()).bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    def run_tools(state: MessagesState) -> dict[str, Any]:
        out: list[ToolMessage] = []
        for call in state["messages"][-1].tool_calls:
            out.append(by_name[call["name"]].invoke(call))
        return {"messages": out}

    def route(state: MessagesState) -> str:
        return "run_tools" if state["messages"][-1].tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("run_tools", run_tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["run_tools", END])
    graph.add_edge("run_tools", "agent")
    return graph.compile()


BUILDERS = {
    "create_agent": build_create_agent,
    "create_react_agent": build_react_agent,
    "toolnode_graph": build_toolnode_graph,
    "custom_node_graph": build_custom_node_graph,
}


#: Spans built when the run ends (the default for a fast run), or as each call finishes.
LIVE_MODES = [pytest.param(None, id="built-at-end"), pytest.param(0.0, id="built-live")]


def ask(n: int | str) -> dict[str, Any]:
    return {"messages": [("user", f"Which currency does Q-{n} use?")]}


@pytest.fixture
def memory(request):
    """graphtrail configured with the in-memory exporter; restored to "none" after.

    Parametrize it indirectly with a ``live_after`` (seconds) to trace in live mode:
    ``@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)``.
    """
    live_after = getattr(request, "param", None)
    graphtrail.configure(exporter="memory", **({} if live_after is None else {"live_after": live_after}))
    exporter = get_memory_exporter()
    yield exporter
    graphtrail.configure(exporter="none")


def by_name(spans: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for s in spans:
        out.setdefault(s.name, []).append(s)
    return out


def span_id(span: Any) -> str:
    return format(span.context.span_id, "016x")


def parent_id(span: Any) -> str | None:
    return format(span.parent.span_id, "016x") if span.parent is not None else None


def root_of(span: Any, spans: Any) -> Any:
    index = {s.context.span_id: s for s in spans}
    cur = span
    while cur.parent is not None and cur.parent.span_id in index:
        cur = index[cur.parent.span_id]
    return cur
