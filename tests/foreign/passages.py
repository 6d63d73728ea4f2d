"""Scientists, their colleagues and institutes, in every shape users keep such data, and the data really ablated.

The factory-route tests (test_factory_route.py) build agents over this data the
way today's LangChain and LangGraph docs write them. The oracle deletes entities
with this module's own plain-Python code (:func:`records`, :func:`documents`),
never with graphtrail's ``ablated``: hidden entities and every reference to them
gone, masked ones renamed ``"[masked entity] <id>"`` with no text, text-blocked
ones without text (docs/ablations.md, "What an ablation does").
"""

from __future__ import annotations

import json
import math
import re
import zlib
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, ToolMessage

from tests.fakes import ScriptedChatModel, tool_call

PEOPLE = {
    "p1": ("Lise Meitner", "Austrian physicist who explained nuclear fission", "p2", "i1"),
    "p2": ("Otto Hahn", "German chemist who discovered fission", "p1", "i1"),
    "p3": ("Marie Curie", "Polish physicist who discovered polonium", "p4", "i2"),
    "p4": ("Pierre Curie", "French physicist who studied magnetism", "p3", "i2"),
}
INSTITUTES = {"i1": ("Kaiser Wilhelm Institute", "research institute in Berlin"), "i2": ("Sorbonne", "university in Paris")}


def questions() -> list[dict[str, Any]]:
    return [{"id": "q1", "question": "Who worked with Lise Meitner?", "answers": ["Otto Hahn"]},
            {"id": "q2", "question": "Who worked with Marie Curie?", "answers": ["Pierre Curie"]}]


Cut = tuple[frozenset[str], frozenset[str], frozenset[str]]
NONE: Cut = (frozenset(), frozenset(), frozenset())


def records(cut: Cut = NONE) -> dict[str, dict[str, Any]]:
    """``{id: record}`` with ``cut`` = (hidden, masked, text_blocked) really applied."""
    hidden, masked, blocked = cut
    out: dict[str, dict[str, Any]] = {}
    for eid, (name, text, colleague, inst) in PEOPLE.items():
        out[eid] = {"id": eid, "type": "person", "name": name, "description": text,
                    "colleagues": [colleague], "works_at": [inst]}
    for eid, (name, text) in INSTITUTES.items():
        out[eid] = {"id": eid, "type": "organization", "name": name, "description": text}
    for eid in list(out):
        if eid in hidden:
            del out[eid]
            continue
        record = out[eid]
        for key in ("colleagues", "works_at"):
            if key in record:
                record[key] = [x for x in record[key] if x not in hidden]
        if eid in masked or eid in blocked:
            del record["description"]
        if eid in masked:
            record["name"] = f"[masked entity] {eid}"
    return out


def passage(eid: str, record: dict[str, Any], everyone: dict[str, dict[str, Any]]) -> str:
    lines = [f"{record['name']}: {record.get('description', '')}".rstrip()]
    for key, label in (("colleagues", "Colleague"), ("works_at", "Worked at")):
        for other in record.get(key, []):
            lines.append(f"{label}: {everyone[other]['name']}")
    return "\n".join(lines)


def documents(cut: Cut = NONE) -> list[Document]:
    """One passage per entity, keyed by ``metadata["id"]``; an ablated entity's passage goes whole."""
    full = records()
    withheld = cut[0] | cut[1] | cut[2]
    return [Document(page_content=passage(eid, r, full), metadata={"id": eid, "name": r["name"]}, id=f"doc-{eid}")
            for eid, r in full.items() if eid not in withheld]


def graph(cut: Cut = NONE) -> Any:
    """A networkx DiGraph of the records: name and description attributes, ``relation`` on edges."""
    import networkx as nx

    g = nx.DiGraph()
    data = records(cut)
    for eid, r in data.items():
        g.add_node(eid, **{k: v for k, v in r.items() if k in ("name", "description", "type")})
    for eid, r in data.items():
        for key in ("colleagues", "works_at"):
            for other in r.get(key, []):
                g.add_edge(eid, other, relation=key)
    return g


def tables(cut: Cut = NONE) -> Any:
    import pandas as pd

    from graphtrail.evaluators import EntityTables

    data = records(cut)
    entities = pd.DataFrame([{"id": e, "name": r["name"], "description": r.get("description", ""), "type": r["type"]}
                             for e, r in data.items()])
    relations = pd.DataFrame([{"source": e, "relation": k, "target": o} for e, r in data.items()
                              for k in ("colleagues", "works_at") for o in r.get(k, [])],
                             columns=["source", "relation", "target"])
    return EntityTables(entities, relations)


def knowledge_graph(cut: Cut = NONE) -> Any:
    from graphtrail.kg import KnowledgeGraph

    kg = KnowledgeGraph(name="scientists")
    data = records(cut)
    for eid, r in data.items():
        kg.add_entity(eid, r["name"], r["type"], r.get("description", ""))
    for eid, r in data.items():
        for key in ("colleagues", "works_at"):
            for other in r.get(key, []):
                kg.add_relation(eid, key, other)
    return kg


class KeywordEmbeddings(Embeddings):
    """Deterministic bag-of-words vectors (crc32 buckets): passages that share words with the query come first."""

    size = 64

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.size
        for word in re.findall(r"\w+", text.lower()):
            v[zlib.crc32(word.encode()) % self.size] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


# ---------------------------------------------------------------- the model: reads what the tools showed it


def subject_of(question: str) -> str:
    m = re.search(r"with (.+?)\?", question)
    return m.group(1) if m else question


def answer_text(colleague: str | None, description: str | None, institute: str | None) -> str:
    if not colleague:
        return "I don't know."
    return f"{colleague} ({description or 'no description'}) at {institute or 'an unknown place'}"


def human(messages: list[Any]) -> str:
    return next((str(m.content) for m in messages if getattr(m, "type", None) == "human"), "")


def scripted(policy: Any, name: str) -> ScriptedChatModel:
    return ScriptedChatModel(policy=policy, model_name=name)


def calls(n: int, *pairs: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage(content="", tool_calls=[tool_call(name, args, f"call_{n}_{k}") for k, (name, args) in enumerate(pairs)])


def tool_outputs(messages: list[Any]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def rounds(messages: list[Any]) -> int:
    return sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)


def colleague_by_name_agent(lookup: Any, model_name: str, agent_name: str) -> Any:
    """An agent that looks its subject up by name, then the subject's first colleague, and answers with both.

    The lookup-by-name styles (a networkx graph, a dict and a KnowledgeGraph, each keyed or searched by
    name) differ only in ``lookup``, a tool answering ``{"description", "colleagues", "works_at"}`` JSON.
    """
    from langchain.agents import create_agent

    def policy(messages: list[Any]) -> AIMessage:
        n, subject = rounds(messages), subject_of(human(messages))
        if n == 0:
            return calls(0, ("lookup", {"name": subject}))
        first = json.loads(tool_outputs(messages)[0])
        colleague = (first.get("colleagues") or [None])[0]
        if colleague is None:
            return AIMessage(content="I don't know.")
        if n == 1:
            return calls(1, ("lookup", {"name": colleague}))
        theirs = json.loads(tool_outputs(messages)[1])
        return AIMessage(content=answer_text(colleague, theirs.get("description"), (first.get("works_at") or [None])[0]))

    return create_agent(scripted(policy, model_name), [lookup], name=agent_name)


def record_tools(data: Any) -> tuple[Any, Any]:
    """``find_person(name)`` and ``get_record(record_id)`` over a dict of id -> record: the records styles' two tools."""
    from langchain_core.tools import tool

    @tool
    def find_person(name: str) -> dict[str, Any]:
        """Find a person's record by name."""
        for eid, record in data.items():
            if record.get("name") == name:
                return {"person_id": eid, **{k: v for k, v in record.items() if k != "id"}}
        return {}

    @tool
    def get_record(record_id: str) -> dict[str, Any]:
        """Read a record by its id."""
        record = data.get(record_id)
        return {k: v for k, v in record.items() if k != "id"} if record else {}

    return find_person, get_record
