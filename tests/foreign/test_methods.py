"""Each condition says how its numbers were obtained: exact, filtered (by id) or estimated (plain text cut by names).

The filter route's label follows what the tools returned: JSON is filtered by id,
a Markdown table is cut by the plain-text filter (estimated), graphtrail's own
tools and tools over ``ablated_view`` read the ablated data itself (exact). An
estimated condition is labelled in the table, hedged in the findings, and the
report says which route would make it exact.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import networkx as nx
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
from graphtrail.evaluators import evaluate
from graphtrail.kg import ablated_view
from tests.fakes import ScriptedChatModel, tool_call

from .world import crew_of, questions, search_rows

OPTIONS: dict[str, Any] = {"conditions": ["cited_removal", "uncited_removal", "uncited_mask"], "baseline_repeats": 1,
                           "progress": False, "n_boot": 50, "paper_reference": False}


def _policy(messages: list[Any]) -> AIMessage:
    rounds = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
    outs = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
    question = next(str(m.content) for m in messages if m.type == "human")
    if not rounds:
        return AIMessage(content="", tool_calls=[tool_call("search", {"query": question}, "c0")])
    films = json.loads(outs[0]) if outs[0].startswith("[") else []
    if not films:
        return AIMessage(content="I don't know.")
    if len(rounds) == 1:
        return AIMessage(content="", tool_calls=[tool_call("crew", {"film_id": films[0]["id"]}, "c1")])
    rows = re.findall(r"^\| (\w+) \| ([^|]+) \| director \|$", outs[1], re.M)
    if not rows:
        return AIMessage(content="I don't know.")
    return AIMessage(content=f"{rows[0][1].strip()} [E:{rows[0][0]}] [E:{films[0]['id']}]")


def _table_agent() -> Any:
    @tool
    def search(query: str) -> str:
        """Find films by title."""
        return json.dumps(search_rows(query))

    @tool
    def crew(film_id: str) -> str:
        """The people who made a film, as a table."""
        people = crew_of(film_id)["entities"]
        return "\n".join(["| id | name | role |", "|---|---|---|", *(f"| {p['id']} | {p['name']} | {p['role']} |" for p in people)])

    return create_agent(ScriptedChatModel(policy=_policy, model_name="scripted-table"), [search, crew])


def test_plain_text_conditions_are_estimated_and_say_so(tmp_path: Path) -> None:
    report = evaluate(_table_agent(), questions(2), out_dir=tmp_path, **OPTIONS)
    assert report.condition("cited_removal").method == "filtered"  # the film gone: only the JSON search ran
    assert report.condition("uncited_removal").method == "estimated"  # the Markdown table was cut by the filter
    md = (tmp_path / "report.md").read_text()
    assert "| Visited-but-uncited removal (estimated) |" in md
    assert "Estimated, not measured: Visited-but-uncited removal" in md
    assert "- (Estimated) Hiding the" in md
    assert "evaluate(make_agent, questions, graph=data)" in md
    results = json.loads((tmp_path / "results.json").read_text())
    assert {r["condition"]: r["method"] for r in results["conditions"]}["uncited_removal"] == "estimated"


def _view_agent(graph: Any) -> Any:
    view = ablated_view(graph)

    @tool
    def search(query: str) -> str:
        """Find films by title."""
        return json.dumps([{"id": n, "name": d["name"], "type": "film"} for n, d in view.nodes(data=True)
                           if d.get("type") == "film" and d.get("name") and d["name"] in query])

    @tool
    def crew(film_id: str) -> str:
        """The people who made a film, as a table."""
        people = [view.nodes[p] | {"id": p} for p in (view.pred[film_id] if film_id in view else ())]
        return "\n".join(["| id | name | role |", "|---|---|---|", *(f"| {p['id']} | {p['name']} | {p.get('role', '')} |" for p in people)])

    return create_agent(ScriptedChatModel(policy=_policy, model_name="scripted-view"), [search, crew])


def test_tools_over_ablated_view_are_exact_and_masked_names_find_nothing(tmp_path: Path) -> None:
    g = nx.DiGraph()
    for i in (1, 2):
        g.add_node(f"m{i}", name=f"Film {i}", type="film")
        g.add_node(f"d{i}", name=f"Director {i}", role="director", description="a director")
        g.add_node(f"c{i}", name=f"Producer {i}", role="producer")
        g.add_edge(f"d{i}", f"m{i}")
        g.add_edge(f"c{i}", f"m{i}")
    report = evaluate(_view_agent(g), questions(2), out_dir=tmp_path, **OPTIONS)
    for condition in ("cited_removal", "uncited_removal", "uncited_mask"):
        assert report.condition(condition).method == "exact", condition
    from graphtrail.agents import GraphFilter, use_filter

    with use_filter(GraphFilter(masked=frozenset({"d1"}))):
        view = ablated_view(g)
        assert [n for n, d in view.nodes(data=True) if d.get("name") == "Director 1"] == []
        assert view.nodes["d1"] == {"name": "[masked entity] d1", "role": "director"}


def test_graphtrails_own_agent_is_exact(tmp_path: Path) -> None:
    kg = load_kg("countries")
    report = evaluate(create_graphrag_agent("offline", kg), load_questions("countries-demo")[:1], kg, out_dir=tmp_path,
                      **{**OPTIONS, "conditions": ["uncited_removal"]})
    assert report.condition("uncited_removal").method == "exact"
