"""Agents written as the LangChain/LangGraph docs write them, evaluated under ablations.

For each agent style, ``evaluate`` must give valid filtered results: no hidden id
in any tool output the model saw, the answer gone when its only path (the cited
film and director) is hidden, unchanged when only uncited entities are hidden,
and every tool call of every filtered run counted as filtered. Or, when the agent
calls its tools where no evaluation can reach them, refuse loudly.
"""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from typing_extensions import TypedDict

import graphtrail
from graphtrail.evaluators import CoverageError, evaluate, load_report

from .world import EVAL_OPTIONS, Spy, dict_tools, make_model, questions, string_tools


def check_valid_ablation(report: Any, spy: Spy, n_questions: int = 1) -> None:
    """The assertions every agent style must pass."""
    assert spy.leaks() == [], "a hidden id reached the model"
    assert spy.filtered_calls() > 0, "no model call ran under a filter: the conditions never ran"
    base = report.condition("baseline")
    cited = report.condition("cited_removal")
    uncited = report.condition("uncited_removal")
    assert base.accuracy == 1.0
    # the cited film and director were the only path to the answer
    assert cited.changed_rate == 1.0 and cited.accuracy == 0.0
    # the producer (visited, not cited) was not needed
    assert uncited.changed_rate == 0.0 and uncited.accuracy == 1.0
    for row in (cited, uncited):
        assert row.valid, row.invalid_reason
        assert row.tool_calls_filtered and row.tool_calls_filtered >= n_questions
        assert row.tool_calls_unfiltered == 0


def test_create_react_agent_with_string_tools() -> None:
    spy = Spy()
    agent = create_react_agent(make_model(spy), string_tools())
    report = evaluate(agent, questions(), **EVAL_OPTIONS)
    check_valid_ablation(report, spy)
    q = report.questions[0]
    assert q.citations == ["d1", "m1"] and q.visited_uncited == ["c1"]


def test_create_agent_with_dict_tools_and_submit_answer() -> None:
    spy = Spy()
    agent = create_agent(make_model(spy, style="submit"), dict_tools(with_submit=True), name="films")
    report = evaluate(agent, questions(), **EVAL_OPTIONS)
    check_valid_ablation(report, spy)
    # graphtrail did not rebuild the agent: its ToolNode still holds the user's own tools
    tool_node = agent.nodes["tools"].bound
    assert all(type(t).__name__ == "StructuredTool" for t in tool_node.tools_by_name.values())


# ---------------------------------------------------------------- the LangGraph tutorial's tool node


class State(TypedDict):
    messages: Annotated[list, add_messages]


class BasicToolNode:
    """As in the LangGraph tutorial: runs the tools requested in the last AIMessage."""

    def __init__(self, tools: list) -> None:
        self.tools_by_name = {tool.name: tool for tool in tools}

    def __call__(self, inputs: dict):
        if messages := inputs.get("messages", []):
            message = messages[-1]
        else:
            raise ValueError("No message found in input")
        outputs = []
        for tool_call in message.tool_calls:
            tool_result = self.tools_by_name[tool_call["name"]].invoke(tool_call["args"])
            outputs.append(ToolMessage(content=json.dumps(tool_result), name=tool_call["name"], tool_call_id=tool_call["id"]))
        return {"messages": outputs}


def route_tools(state: State):
    if isinstance(state, list):
        ai_message = state[-1]
    elif messages := state.get("messages", []):
        ai_message = messages[-1]
    else:
        raise ValueError(f"No messages found in input state to tool_edge: {state}")
    if hasattr(ai_message, "tool_calls") and len(ai_message.tool_calls) > 0:
        return "tools"
    return END


def tutorial_agent(model: Any, tool_node: Any, tools: list) -> Any:
    llm_with_tools = model.bind_tools(tools)

    def chatbot(state: State):
        return {"messages": [llm_with_tools.invoke(state["messages"])]}

    graph_builder = StateGraph(State)
    graph_builder.add_node("chatbot", chatbot)
    graph_builder.add_node("tools", tool_node)
    graph_builder.add_conditional_edges("chatbot", route_tools, {"tools": "tools", END: END})
    graph_builder.add_edge("tools", "chatbot")
    graph_builder.add_edge(START, "chatbot")
    return graph_builder.compile()


def test_tutorial_hand_written_tool_node() -> None:
    spy = Spy()
    tools = dict_tools()
    report = evaluate(tutorial_agent(make_model(spy), BasicToolNode(tools), tools), questions(), **EVAL_OPTIONS)
    check_valid_ablation(report, spy)


def helper_node(tools: list, call: Any) -> Any:
    """A node whose tool calls happen in a plain helper function, far from any graph node."""
    by_name = {t.name: t for t in tools}

    def node(state: State):
        message = state["messages"][-1]
        return {"messages": [ToolMessage(content=json.dumps(call(by_name[c["name"]], c["args"])), name=c["name"], tool_call_id=c["id"])
                             for c in message.tool_calls]}

    return node


def test_tool_invoked_from_plain_python_helper() -> None:
    spy = Spy()
    tools = dict_tools()
    agent = tutorial_agent(make_model(spy), helper_node(tools, lambda tool, args: tool.invoke(args)), tools)
    report = evaluate(agent, questions(), **EVAL_OPTIONS)
    check_valid_ablation(report, spy)


def test_legacy_tool_run_is_filtered_but_untraced_so_refused() -> None:
    """``tool.run(args)`` takes no config, so LangChain runs it outside the agent's trace.

    The filter still reaches it (the model saw no hidden id), but graphtrail saw
    none of the agent's graph access, so the conditions could not be built from it:
    they are marked invalid rather than reported as results.
    """
    spy = Spy()
    tools = dict_tools()
    agent = tutorial_agent(make_model(spy), helper_node(tools, lambda tool, args: tool.run(args)), tools)
    report = evaluate(agent, questions(), **EVAL_OPTIONS)
    assert spy.leaks() == []
    for name in ("cited_removal", "uncited_removal"):
        row = report.condition(name)
        assert not row.valid and "no tool output of the baseline runs revealed" in row.invalid_reason
    with pytest.raises(CoverageError):
        evaluate(agent, questions(), strict=True, **EVAL_OPTIONS)


def test_plain_python_agent_without_a_model_or_graph() -> None:
    """A decorated function that calls tools itself: ``tool.invoke`` from plain Python, no LangGraph."""
    search, crew = dict_tools()

    @graphtrail.trace_agent(name="scripted-pipeline")
    def answer(question: str) -> str:
        films = search.invoke({"query": question})
        if not films:
            return "I don't know."
        people = crew.invoke({"film_id": films[0]["id"]})["entities"]
        directors = [p for p in people if p["role"] == "director"]
        if not directors:
            return f"I don't know. [E:{films[0]['id']}]"
        return f"{directors[0]['name']} [E:{directors[0]['id']}] [E:{films[0]['id']}]"

    report = evaluate(answer, questions(), **EVAL_OPTIONS)
    assert report.condition("cited_removal").accuracy == 0.0 and report.condition("uncited_removal").accuracy == 1.0
    assert [q.answers for q in report.questions] == [
        {"baseline": "Director 1", "cited_removal": "I don't know.", "uncited_removal": "Director 1"}
    ]
    for name in ("cited_removal", "uncited_removal"):
        row = report.condition(name)
        assert row.valid and row.tool_calls_unfiltered == 0 and row.tool_calls_filtered


# ---------------------------------------------------------------- subgraph, parallel calls


def subgraph_agent(spy: Spy, data: Any = None) -> Any:
    """A ``create_agent`` research subgraph inside an outer graph; the model calls two tools at once."""
    research = create_agent(make_model(spy, parallel=True), dict_tools(with_awards=True, data=data), name="research")
    outer = StateGraph(MessagesState)
    outer.add_node("research", research)
    outer.add_edge(START, "research")
    outer.add_edge("research", END)
    return outer.compile()


def test_subgraph_with_parallel_tool_calls() -> None:
    spy = Spy()
    report = evaluate(subgraph_agent(spy), questions(), **EVAL_OPTIONS)
    check_valid_ablation(report, spy)
    # both parallel calls of each filtered run were filtered
    cited = report.condition("cited_removal")
    assert cited.tool_calls_filtered == 1  # search only: the film is gone, nothing else is called
    assert report.condition("uncited_removal").tool_calls_filtered == 3  # search, crew and awards


def test_async_hand_written_node_gathering_parallel_calls() -> None:
    """``await asyncio.gather(*(tool.ainvoke(args) ...))`` in an async node: each call in its own task."""
    spy = Spy()
    tools = dict_tools(with_awards=True)
    by_name = {t.name: t for t in tools}

    async def node(state: State):
        message = state["messages"][-1]
        results = await asyncio.gather(*(by_name[c["name"]].ainvoke(c["args"]) for c in message.tool_calls))
        return {"messages": [ToolMessage(content=json.dumps(r), name=c["name"], tool_call_id=c["id"])
                             for c, r in zip(message.tool_calls, results)]}

    report = evaluate(tutorial_agent(make_model(spy, parallel=True), node, tools), questions(), **EVAL_OPTIONS)
    check_valid_ablation(report, spy)
    assert report.condition("uncited_removal").tool_calls_filtered == 3


def test_subgraph_invoked_from_inside_a_node_function() -> None:
    """The research agent is not a node of the outer graph: a node function calls it."""
    spy = Spy()
    research = create_agent(make_model(spy), dict_tools(), name="research")

    def delegate(state: MessagesState):
        result = research.invoke({"messages": state["messages"]})
        return {"messages": result["messages"][len(state["messages"]):]}

    outer = StateGraph(MessagesState)
    outer.add_node("delegate", delegate)
    outer.add_edge(START, "delegate")
    outer.add_edge("delegate", END)
    report = evaluate(outer.compile(), questions(), **EVAL_OPTIONS)
    check_valid_ablation(report, spy)


def test_prebuilt_tool_node_in_hand_built_graph() -> None:
    spy = Spy()
    tools = dict_tools()
    model = make_model(spy)
    llm = model.bind_tools(tools)
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda s: {"messages": [llm.invoke(s["messages"])]})
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    report = evaluate(builder.compile(), questions(), **EVAL_OPTIONS)
    check_valid_ablation(report, spy)


# ---------------------------------------------------------------- async astream, 20 concurrent runs


async def test_async_astream_twenty_concurrent_runs() -> None:
    spy = Spy()
    agent = create_agent(make_model(spy), dict_tools(use_async=True), name="films-async")

    @graphtrail.trace_agent(name="streaming-films")
    async def ask(question: str) -> Any:
        final = None
        async for chunk in agent.astream({"messages": [("user", question)]}, stream_mode="values"):
            final = chunk
        return final

    qs = questions(20)
    report = await graphtrail.evaluators.aevaluate(ask, qs, concurrency=20, **EVAL_OPTIONS)
    check_valid_ablation(report, spy, n_questions=20)
    # each run saw its own condition: 20 questions x (baseline + 2 conditions)
    assert report.condition("cited_removal").n_questions == 20
    assert {q.question_id: q.citations for q in report.questions} == {f"q{i}": [f"d{i}", f"m{i}"] for i in range(1, 21)}


# ---------------------------------------------------------------- out of reach: refuse loudly


def bare_thread_node(tools: list) -> Any:
    """Runs the calls in a ThreadPoolExecutor, passing the node's config: traced, but the
    evaluation's context (the filter) does not follow a bare thread."""
    by_name = {t.name: t for t in tools}
    pool = ThreadPoolExecutor(max_workers=2)

    def node(state: State, config: RunnableConfig):
        message = state["messages"][-1]
        results = list(pool.map(lambda c: by_name[c["name"]].invoke(c["args"], config), message.tool_calls))
        return {"messages": [ToolMessage(content=json.dumps(r), name=c["name"], tool_call_id=c["id"])
                             for c, r in zip(message.tool_calls, results)]}

    return node


def test_tools_out_of_reach_mark_conditions_invalid(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    spy = Spy()
    tools = dict_tools()
    agent = tutorial_agent(make_model(spy), bare_thread_node(tools), tools)
    with caplog.at_level(logging.WARNING, logger="graphtrail"):
        report = evaluate(agent, questions(), out_dir=tmp_path, reuse=False, **EVAL_OPTIONS)
    assert spy.leaks(), "the bare thread was expected to escape the filter"
    for name in ("cited_removal", "uncited_removal"):
        row = report.condition(name)
        assert not row.valid and row.escaped_tools == ["crew", "search"]
        assert row.tool_calls_filtered == 0 and row.tool_calls_unfiltered == 2
    # the mark is in results.json, the banner in both reports, and a warning was logged
    saved = load_report(tmp_path / "results.json")
    assert [r.valid for r in saved.conditions] == [True, False, False]
    md = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    for text in (md, html):
        assert "Tools that escaped filtering: crew, search" in text and "wrap_tool" in text and "register_tool_filter" in text
    assert 'id="coverage-banner"' in html
    assert any("escaped filtering" in r.getMessage() for r in caplog.records)

    with pytest.raises(CoverageError, match="crew, search") as info:
        evaluate(agent, questions(), strict=True, **EVAL_OPTIONS)
    assert not info.value.report.condition("cited_removal").valid


def test_invalid_mark_survives_resume_from_cache(tmp_path: Any) -> None:
    """tool_coverage is part of the cached record, so a resumed evaluation is judged the same way."""
    spy = Spy()
    tools = dict_tools()
    agent = tutorial_agent(make_model(spy), bare_thread_node(tools), tools)
    evaluate(agent, questions(), out_dir=tmp_path, **EVAL_OPTIONS)
    calls = len(spy.seen)
    report = evaluate(agent, questions(), out_dir=tmp_path, resume=True, **EVAL_OPTIONS)
    assert len(spy.seen) == calls  # nothing ran again
    assert not report.condition("cited_removal").valid


# ---------------------------------------------------------------- the CLI


def escaping_agent(kg: Any = None) -> Any:
    """``graphtrail eval --agent tests.foreign.test_agents_filtered:escaping_agent`` (the KG is ignored)."""
    tools = dict_tools()
    return tutorial_agent(make_model(Spy()), bare_thread_node(tools), tools)


def test_cli_eval_strict_exits_2_with_one_line(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from graphtrail.cli import main

    qfile = tmp_path / "films.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in questions(1)), encoding="utf-8")
    base = ["eval", "-q", str(qfile), "--agent", "tests.foreign.test_agents_filtered:escaping_agent",
            "-c", "baseline,cited_removal", "--trials", "1", "--no-reuse"]
    code = main([*base, "--out", str(tmp_path / "lenient")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "Tools that escaped filtering" in (tmp_path / "lenient" / "report.md").read_text()

    code = main([*base, "--out", str(tmp_path / "strict"), "--strict"])
    err = capsys.readouterr().err.strip()
    # progress lines (stderr is not a TTY) may come first; the error itself is one line
    errors = [line for line in err.split("\n") if "error" in line]
    assert code == 2 and len(errors) == 1 and errors[0].startswith("graphtrail: error:") and "Traceback" not in err, err
    assert "escaped filtering: crew, search" in err and "wrap_tool" in err
    assert (tmp_path / "strict" / "results.json").exists()  # the report is still written, with the mark
