"""A small, real ``create_agent`` agent over a toy knowledge graph.

Shared by the OTLP integration tests and ``benchmarks/tracer_overhead.py`` so
that what is exported to Phoenix, written as OTLP-JSON and timed is the same
run. Only the chat model is scripted (``tests.fakes.ScriptedChatModel``);
LangGraph, the tools and their artifacts are real.

The run answers "Which currency is used in the country whose capital is
Nairobi?" in four tool calls:

1. ``search_entities("Nairobi")``   artifact: Nairobi (E2)
2. ``get_neighbors("E2")``          artifact: Kenya (E1), edge E1 -capital-> E2
3. ``lookup_facts("E1")``           plain JSON: shilling (E3), Swahili (E4)
4. ``submit_answer("Kenyan shilling", ["E3", "E1"])``

so the trajectory visits E2, E1, E3, E4 and cites E3 and E1.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from tests.fakes import ScriptedChatModel, tool_call

QUESTION = "Which currency is used in the country whose capital is Nairobi?"
ANSWER = "Kenyan shilling"
CITATIONS = ["E3", "E1"]
#: Entities each tool call returns, in step order.
STEP_ENTITIES = [["E2"], ["E1", "E2"], ["E3", "E4"]]  # get_neighbors names E2 as the edge's end
STEP_EDGES = [[], [["E1", "capital", "E2"]], []]
VISITED = ["E2", "E1", "E3", "E4"]
VISITED_UNCITED = ["E2", "E4"]
TOOL_NAMES = ["search_entities", "get_neighbors", "lookup_facts", "submit_answer"]

ENTITIES = {
    "E1": {"id": "E1", "name": "Kenya", "type": "country"},
    "E2": {"id": "E2", "name": "Nairobi", "type": "city"},
    "E3": {"id": "E3", "name": "Kenyan shilling", "type": "currency"},
    "E4": {"id": "E4", "name": "Swahili", "type": "language"},
}
EDGES = [
    {"source": "E1", "relation": "capital", "target": "E2"},
    {"source": "E1", "relation": "currency", "target": "E3"},
    {"source": "E1", "relation": "language", "target": "E4"},
]


@tool(response_format="content_and_artifact")
def search_entities(query: str) -> tuple[str, dict[str, Any]]:
    """Find knowledge-graph entities whose name matches the query."""
    found = [e for e in ENTITIES.values() if query.lower() in e["name"].lower()]
    text = "; ".join(f"{e['name']} [{e['id']}] ({e['type']})" for e in found) or "no match"
    return text, {"entities": found, "edges": []}


@tool(response_format="content_and_artifact")
def get_neighbors(entity_id: str) -> tuple[str, dict[str, Any]]:
    """Entities linked to an entity by an incoming 'capital' edge."""
    edges = [e for e in EDGES if e["target"] == entity_id and e["relation"] == "capital"]
    entities = [ENTITIES[e["source"]] for e in edges]
    text = "; ".join(f"{ENTITIES[e['source']]['name']} -{e['relation']}-> {entity_id}" for e in edges)
    return text or "no neighbours", {"entities": entities, "edges": edges}


@tool
def lookup_facts(entity_id: str) -> str:
    """Facts about an entity, as JSON (no artifact: the tracer's generic fallback reads the ids)."""
    facts = [
        {"entity_id": e["target"], "relation": e["relation"], "name": ENTITIES[e["target"]]["name"]}
        for e in EDGES
        if e["source"] == entity_id and e["relation"] != "capital"
    ]
    return json.dumps(facts)


@tool
def submit_answer(answer: str, citations: list[str]) -> str:
    """Submit the final answer with the ids of the entities that support it."""
    return "accepted"


def script() -> list[AIMessage]:
    return [
        AIMessage(content="", tool_calls=[tool_call("search_entities", {"query": "Nairobi"}, "call_1")]),
        AIMessage(content="", tool_calls=[tool_call("get_neighbors", {"entity_id": "E2"}, "call_2")]),
        AIMessage(content="", tool_calls=[tool_call("lookup_facts", {"entity_id": "E1"}, "call_3")]),
        AIMessage(
            content="",
            tool_calls=[tool_call("submit_answer", {"answer": ANSWER, "citations": CITATIONS}, "call_4")],
        ),
        AIMessage(content=f"{ANSWER} [E:E3]"),
    ]


def build_agent(model_name: str = "scripted-kg-model") -> Any:
    """A compiled ``create_agent`` graph driven by the scripted model."""
    model = ScriptedChatModel(script=script(), model_name=model_name)
    return create_agent(model, [search_entities, get_neighbors, lookup_facts, submit_answer])


def agent_input() -> dict[str, Any]:
    return {"messages": [("user", QUESTION)]}
