"""The film-world agent styles through the factory route: every condition equals the oracle.

test_oracle.py, test_tables.py and test_sentence_agent.py run these agents through
the filter route, their tools reading the module-level world. Here the same
agents are built from the data they are handed (a ``dict`` of id -> record,
world.film_records): ``evaluate(make_agent, questions, graph=data)`` rebuilds each
on ``ablated(data, condition)``; the oracle rebuilds it on records world.py
deleted and renamed by hand (never through graphtrail's ``ablated``) and asks
again. Every condition must be valid, exact, and equal the oracle run for run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition

from graphtrail.evaluators import evaluate

from .oracle import load_records
from .tables import film_row_agent, frame_agent, markdown_agent, trivia_agent
from .test_agents_filtered import BasicToolNode, subgraph_agent, tutorial_agent
from .test_factory_route import OPTIONS, oracle_answer
from .test_sentence_agent import QUESTIONS, build_agent, movie_records
from .world import Spy, dict_tools, film_records, make_model, questions, string_tools

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


# ---------------------------------------------------------------- test_oracle.py's five builds, over the data given


def react(data: Any) -> Any:
    return create_react_agent(make_model(Spy()), string_tools(data))


def submit(data: Any) -> Any:
    return create_agent(make_model(Spy(), style="submit"), dict_tools(with_submit=True, data=data), name="films")


def tutorial(data: Any) -> Any:
    tools = dict_tools(data=data)
    return tutorial_agent(make_model(Spy()), BasicToolNode(tools), tools)


def prebuilt_node(data: Any) -> Any:
    tools = dict_tools(data=data)
    llm = make_model(Spy()).bind_tools(tools)
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda s: {"messages": [llm.invoke(s["messages"])]})
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def subgraph(data: Any) -> Any:
    return subgraph_agent(Spy(), data)


STYLES = {"create_react_agent": react, "create_agent+submit": submit, "tutorial_node": tutorial,
          "prebuilt_tool_node": prebuilt_node, "subgraph": subgraph}


def check_factory_route(make_agent: Any, qs: list[dict[str, Any]], out: Path, data: Any = film_records) -> set[str]:
    """Evaluate through the factory route over ``data()``; every run is exact and equals the oracle (``make_agent``
    on ``data(hidden, masked)``), every condition is valid. Returns the conditions that ran."""
    report = evaluate(make_agent, qs, graph=data(), out_dir=out, **OPTIONS)
    records = load_records(out)
    baselines = {r.key.question_id: r for r in records if r.key.condition == "baseline"}
    assert report.condition("baseline").accuracy == 1.0, [r.answer for r in baselines.values()]
    wrong, checked = [], 0
    for record in records:
        if record.key.condition == "baseline":
            continue
        assert record.route == "factory" and record.method == "exact", record
        hidden, masked = frozenset(record.hidden), frozenset(record.masked)
        assert hidden | masked | set(record.text_blocked) <= set(data()), record
        truth = oracle_answer(make_agent, data(hidden, masked), record.question)
        checked += 1
        if truth != record.answer:
            wrong.append((record.key.condition, record.key.variant, sorted(hidden), sorted(masked), record.answer, truth))
    assert checked and wrong == [], f"conditions that differ from the oracle: {wrong}"
    ran = {r.key.condition for r in records} - {"baseline"}
    for condition in ran:
        row = report.condition(condition)
        assert row.valid and row.method == "exact", (condition, row.invalid_reason)
    assert {r.answer for r in records} - {r.answer for r in baselines.values()}, "no condition changed an answer"
    return ran


@pytest.mark.parametrize("style", list(STYLES))
def test_film_agents_through_the_factory_route_equal_the_oracle(style: str, tmp_path: Path) -> None:
    assert check_factory_route(STYLES[style], questions(2), tmp_path) == set(OPTIONS["conditions"])


# ---------------------------------------------------------------- test_tables.py's table agents, over the data given

TABLES = {"markdown_table": markdown_agent, "dataframe_to_string": frame_agent, "trivia_beside_a_table": trivia_agent,
          "one_row_two_entities": film_row_agent}


@pytest.mark.parametrize("style", list(TABLES))
def test_table_agents_through_the_factory_route_equal_the_oracle(style: str, tmp_path: Path) -> None:
    assert check_factory_route(TABLES[style], questions(2), tmp_path) == set(OPTIONS["conditions"])


# ---------------------------------------------------------------- test_sentence_agent.py's agent: sentences, cited by name


def test_sentence_agent_through_the_factory_route_equals_the_oracle(tmp_path: Path) -> None:
    assert check_factory_route(build_agent, QUESTIONS, tmp_path, movie_records) == set(OPTIONS["conditions"])
