"""An agent you might already have: LangGraph over your own networkx graph and your own tools.

Nothing in this file knows about graphtrail. It stands for the code in your
project; the examples around it show what graphtrail adds *without changing it*:

- 01_decorate_existing_agent.py traces it with one decorator line;
- 03_replay_evaluation.py replays it under graph ablations;
- 04_openai.py runs the same agent with ChatOpenAI instead of the scripted model.

The tools return plain JSON strings (not graphtrail's artifact shape): entities
are objects with an ``"id"`` key, which graphtrail's tracer picks up on its own.
Answers cite entities with ``[E:<id>]`` markers, graphtrail's default citation
syntax (the system prompt asks a real LLM to do the same).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import networkx as nx
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool


# --------------------------------------------------------------------------- your graph
def build_graph() -> nx.DiGraph:
    """A small world graph: nodes carry ``name`` and ``kind``; edges carry ``relation``."""
    g = nx.DiGraph()
    nodes = {
        "kenya": ("Kenya", "country"),
        "tanzania": ("Tanzania", "country"),
        "uganda": ("Uganda", "country"),
        "nairobi": ("Nairobi", "city"),
        "nairobi_np": ("Nairobi National Park", "park"),
        "dodoma": ("Dodoma", "city"),
        "kampala": ("Kampala", "city"),
        "kes": ("Kenyan shilling", "currency"),
        "tzs": ("Tanzanian shilling", "currency"),
        "ugx": ("Ugandan shilling", "currency"),
        "swahili": ("Swahili", "language"),
        "english": ("English", "language"),
        "east_africa": ("East Africa", "region"),
    }
    for node_id, (name, kind) in nodes.items():
        g.add_node(node_id, name=name, kind=kind)
    edges = [
        ("nairobi", "capital_of", "kenya"),
        ("dodoma", "capital_of", "tanzania"),
        ("kampala", "capital_of", "uganda"),
        ("nairobi_np", "located_in", "kenya"),
        ("kenya", "currency", "kes"),
        ("tanzania", "currency", "tzs"),
        ("uganda", "currency", "ugx"),
        ("kenya", "language", "swahili"),
        ("kenya", "language", "english"),
        ("tanzania", "language", "swahili"),
        ("uganda", "language", "english"),
        ("kenya", "borders", "tanzania"),
        ("kenya", "borders", "uganda"),
        ("tanzania", "borders", "uganda"),
        ("kenya", "region", "east_africa"),
        ("tanzania", "region", "east_africa"),
        ("uganda", "region", "east_africa"),
    ]
    for source, relation, target in edges:
        g.add_edge(source, target, relation=relation)
    return g


GRAPH = build_graph()

QUESTIONS = [
    {"id": "q1", "question": "What is the currency of the country whose capital is Nairobi?", "answers": ["Kenyan shilling"]},
    {"id": "q2", "question": "What is the currency of the country whose capital is Kampala?", "answers": ["Ugandan shilling"]},
    {"id": "q3", "question": "What language is spoken in the country whose capital is Dodoma?", "answers": ["Swahili"]},
    {"id": "q4", "question": "What is the region of Uganda?", "answers": ["East Africa"]},
]


def _entity(node_id: str) -> dict[str, str]:
    data = GRAPH.nodes[node_id]
    return {"id": node_id, "name": data["name"], "kind": data["kind"]}


# --------------------------------------------------------------------------- your tools
@tool
def find_entity(name: str) -> str:
    """Find entities whose name contains `name` (case-insensitive). Returns a JSON list."""
    needle = name.strip().lower()
    hits = [_entity(n) for n, d in GRAPH.nodes(data=True) if needle and needle in d["name"].lower()]
    return json.dumps(hits)


@tool
def related(entity_id: str, relation: str) -> str:
    """Entities linked to `entity_id` by `relation`, in either direction. Returns JSON."""
    if entity_id not in GRAPH:
        return json.dumps({"error": f"no entity {entity_id}", "results": []})
    out = [_entity(t) for _, t, r in GRAPH.out_edges(entity_id, data="relation") if r == relation]
    inc = [_entity(s) for s, _, r in GRAPH.in_edges(entity_id, data="relation") if r == relation]
    return json.dumps({"entity": _entity(entity_id), "relation": relation, "results": out + inc})


TOOLS = [find_entity, related]

SYSTEM_PROMPT = (
    "Answer questions about countries using the tools. Use find_entity to locate the entity the "
    "question names, then related(entity_id, relation) with relations capital_of, currency, language, "
    "borders, region, located_in. End with a one-sentence answer and cite every entity id you used "
    "as [E:<id>], e.g. 'Kenyan shilling [E:nairobi] [E:kenya] [E:kes]'."
)


# --------------------------------------------------------------------------- a scripted model
class ScriptedCountriesModel(BaseChatModel):
    """A deterministic stand-in for an LLM, so this example runs offline with no key.

    It reads the question and the tool results like an LLM would: it looks up
    the entity the question ends with, follows the relations the question
    mentions (last mentioned first), and answers with citations - or says it
    does not know when a tool comes back empty.
    """

    keywords: dict[str, str] = {
        "capital": "capital_of",
        "currency": "currency",
        "language": "language",
        "border": "borders",
        "region": "region",
    }

    @property
    def _llm_type(self) -> str:
        return "scripted-countries"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "ScriptedCountriesModel":  # type: ignore[override]
        return self

    def _plan(self, question: str) -> tuple[str, list[str]]:
        names = re.findall(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*", question)
        hops = sorted((question.lower().find(k), rel) for k, rel in self.keywords.items() if k in question.lower())
        return (names[-1] if names else question), [rel for _, rel in reversed(hops)]

    def _respond(self, messages: list[BaseMessage]) -> AIMessage:
        question = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
        topic, hops = self._plan(question)
        results = [json.loads(str(m.content)) for m in messages if isinstance(m, ToolMessage)]
        call = len(results)
        if call == 0:
            return AIMessage(content="", tool_calls=[{"name": "find_entity", "args": {"name": topic}, "id": "call_0"}])
        path: list[dict[str, str]] = []
        matches = [e for e in results[0] if e["name"].lower() == topic.lower()] or results[0][:1]
        if matches:
            path.append(matches[0])
        for result in results[1:]:
            if result.get("results"):
                path.append(result["results"][0])
        done_hops = call - 1
        if not matches or (done_hops and len(path) < call):
            return AIMessage(content="I don't know: the graph did not return what I needed.")
        if done_hops < len(hops):
            args = {"entity_id": path[-1]["id"], "relation": hops[done_hops]}
            return AIMessage(content="", tool_calls=[{"name": "related", "args": args, "id": f"call_{call}"}])
        cites = " ".join(f"[E:{e['id']}]" for e in path)
        return AIMessage(content=f"{path[-1]['name']} {cites}")

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._respond(messages))])


# --------------------------------------------------------------------------- your agent
def build_agent(model: BaseChatModel | None = None) -> Any:
    """The agent, built the ordinary LangGraph way (``create_agent`` = model + tools loop)."""
    return create_agent(model or ScriptedCountriesModel(), TOOLS, system_prompt=SYSTEM_PROMPT, name="countries-agent")


def ask(agent: Any, question: str) -> str:
    result = agent.invoke({"messages": [("user", question)]})
    return str(result["messages"][-1].content)


if __name__ == "__main__":
    agent = build_agent()
    for q in QUESTIONS:
        print(q["question"], "->", ask(agent, q["question"]))
