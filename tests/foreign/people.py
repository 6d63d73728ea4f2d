"""A small graph of scientists, and tools over it written the way today's docs write them.

Each tool reads the data through :func:`person`, :func:`colleagues` and
:func:`find`, which honour ``world.REMOVED`` and ``world.WITHHELD``: the oracle
(tests/foreign/oracle.py) sets them to run an agent on data with the entities
really deleted, masked (renamed, text gone, unreachable by their real name) or
text-blocked (text gone). Nothing here uses graphtrail's filter.

The model (:func:`people_model`) answers "Who was X's colleague?" from what the
tools showed it: the colleague's name, and, when the asked person's description
was shown, what kind of scientist X was. So withheld text changes the answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from graphtrail.kg import KnowledgeGraph
from tests.fakes import ScriptedChatModel, tool_call

from .world import REMOVED, WITHHELD

PEOPLE: dict[str, tuple[str, str]] = {
    "p1": ("Lise Meitner", "Austrian physicist who explained fission with Otto Hahn."),
    "p2": ("Otto Hahn", "German chemist awarded the Nobel Prize."),
    "p3": ("Fritz Strassmann", "German chemist who identified barium."),
    "p4": ("Marie Curie", "Polish physicist who discovered polonium."),  # 5 words: under the 8-word spans
    "p5": ("Pierre Curie", "French physicist who studied magnetism."),
    "p6": ("Paul Langevin", "French physicist known for ultrasound."),
}
EDGES = [("p1", "p2"), ("p2", "p3"), ("p4", "p5"), ("p5", "p6")]
ORDER = list(PEOPLE)


def questions() -> list[dict[str, Any]]:
    return [{"id": "q1", "question": "Who was Lise Meitner's colleague?", "answers": ["Otto Hahn"]},
            {"id": "q2", "question": "Who was Marie Curie's colleague?", "answers": ["Pierre Curie"]}]


def people_kg() -> KnowledgeGraph:
    kg = KnowledgeGraph(name="people")
    for pid, (name, description) in PEOPLE.items():
        kg.add_entity(pid, name, "person", description)
    for a, b in EDGES:
        kg.add_relation(a, "colleague", b)
    return kg


# ---------------------------------------------------------------- the data, really ablated when the oracle says so


def people_records(hidden: frozenset[str] = frozenset(), masked: frozenset[str] = frozenset(),
                   blocked: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """The people as a ``dict`` of id -> record (the data a factory-route agent is built from), ``hidden`` deleted
    with every reference to them, ``masked`` renamed and without text, ``blocked`` without text: written by hand."""
    out: dict[str, dict[str, Any]] = {}
    for pid in ORDER:
        if pid in hidden:
            continue
        name, description = PEOPLE[pid]
        linked = [b for a, b in EDGES if a == pid] + [a for a, b in EDGES if b == pid]
        record = {"id": pid, "name": name, "type": "person", "description": description,
                  "colleagues": [c for c in ORDER if c in linked and c not in hidden]}
        if pid in masked:
            record["name"] = f"[masked entity] {pid}"
        if pid in masked or pid in blocked:
            del record["description"]
        out[pid] = record
    return out


def _data(data: Any) -> Any:
    """``data``, or (the filter route's tools) the people as the oracle's ``REMOVED`` and ``WITHHELD`` leave them."""
    return people_records(*REMOVED.get(), WITHHELD.get()) if data is None else data


def person(pid: str, data: Any = None) -> dict[str, Any] | None:
    """``{"id", "name", "description"}`` as the data holds it now (``description`` None when withheld)."""
    record = _data(data).get(pid)
    if record is None:
        return None
    return {"id": pid, "name": record["name"], "description": record.get("description") or None}


def colleagues(pid: str, data: Any = None) -> list[str]:
    data = _data(data)
    record = data.get(pid)
    return [c for c in record.get("colleagues", []) if c in data] if record is not None else []


def find(query: str, data: Any = None) -> str | None:
    """The person a name or an id names: a masked person's real name finds nothing (the data no longer holds it)."""
    text = query.strip()
    for pid, record in _data(data).items():
        if text in (pid, record["name"]):
            return pid
    return None


# ---------------------------------------------------------------- the model


def asked_name(messages: list[BaseMessage]) -> str:
    question = next(str(m.content) for m in messages if m.type == "human")
    return re.search(r"Who was (.+?)'s colleague", question).group(1)


def answer_text(colleague: str | None, description: str | None) -> str:
    if not colleague:
        return "I don't know."
    if description:
        return f"{colleague}, colleague of a {description.split()[1]}."
    return f"{colleague}."


def people_model(policy: Callable[[list[BaseMessage], list[ToolMessage]], AIMessage]) -> ScriptedChatModel:
    def run(messages: list[BaseMessage]) -> AIMessage:
        return policy(messages, [m for m in messages if isinstance(m, ToolMessage)])

    return ScriptedChatModel(policy=run, model_name="scripted-people")


def call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[tool_call(name, args, f"call_{n}")])


def parse(content: Any) -> Any:
    try:
        return json.loads(content) if isinstance(content, str) else content
    except ValueError:
        return None
