"""What the offline model knows: everything the conversation so far has shown it, re-read on every call.

The model keeps no state between calls, as an LLM keeps none: ``_read_conversation``
rebuilds a ``_Memory`` from the messages (the question, the system prompt, the
tool results and the calls already made) each time, so a reply is a pure
function of the conversation.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from ..._lines import split_lines
from ..limits import MAX_QUESTION_CHARS
from .text import _label_text, _norm


@functools.lru_cache(maxsize=4096)
def _json_lines(text: str) -> tuple[dict[str, Any], ...]:
    """The JSON objects among ``text``'s lines, parsed once per distinct text (read only: shared between calls).

    Every call re-reads the whole conversation, and a replay meets the same tool outputs in many runs.
    """
    objs = []
    for line in split_lines(text):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            objs.append(obj)
    return tuple(objs)


@dataclass
class _Memory:
    """What the conversation has shown so far."""

    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (name, type)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    labels: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # id -> [(label, direction)]
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    queried: set[tuple[str, str, str]] = field(default_factory=set)  # (id, label, direction) asked of get_neighbors
    read: set[str] = field(default_factory=set)
    calls: set[str] = field(default_factory=set)  # canonical "name(args)" already made
    searched: list[str] = field(default_factory=list)
    failed_ids: set[str] = field(default_factory=set)
    units: list[tuple[str, list[str]]] = field(default_factory=list)  # (text, mentioned ids)
    unit_ids: dict[str, list[str]] = field(default_factory=dict)  # entity id -> its text unit ids (get_entity)
    rejections: list[str] = field(default_factory=list)
    submissions: int = 0

    def see_entity(self, obj: dict[str, Any]) -> None:
        eid = str(obj["id"])
        self.names.setdefault(eid, (str(obj.get("name", eid)), str(obj.get("type", ""))))
        if obj.get("alias"):
            self.aliases.setdefault(eid, []).append(str(obj["alias"]))
        for alias in obj.get("aliases") or ():
            self.aliases.setdefault(eid, []).append(str(alias))
        if isinstance(obj.get("relations"), list):
            self.labels[eid] = [(str(r["relation"]), str(r.get("direction", "out"))) for r in obj["relations"]]
        if isinstance(obj.get("text_units"), list):
            self.unit_ids[eid] = [str(u) for u in obj["text_units"]]

    def see_edge(self, obj: dict[str, Any]) -> None:
        edge = (str(obj["source"]), str(obj["relation"]), str(obj["target"]))
        if edge not in self.edges:
            self.edges.append(edge)
        if isinstance(obj.get("neighbor"), dict) and "id" in obj["neighbor"]:
            self.see_entity(obj["neighbor"])

    def read_lines(self, text: str) -> list[dict[str, Any]]:
        objs = []
        for obj in _json_lines(text):
            objs.append(obj)
            if {"source", "relation", "target"} <= obj.keys():
                self.see_edge(obj)
            elif "unit" in obj and "text" in obj:
                mentions = [m for m in obj.get("mentions") or () if isinstance(m, dict) and "id" in m]
                for m in mentions:
                    self.see_entity(m)
                self.units.append((str(obj["text"]), [str(m["id"]) for m in mentions]))
            elif "id" in obj and "name" in obj:
                self.see_entity(obj)
        return objs

    def neighbors(self, eid: str, label: str, direction: str) -> list[str]:
        out = []
        for s, rel, t in self.edges:
            if _label_text(rel) != _label_text(label):
                continue
            if direction in ("out", "both") and s == eid:
                out.append(t)
            if direction in ("in", "both") and t == eid:
                out.append(s)
        return list(dict.fromkeys(out))

    def name(self, eid: str) -> str:
        return self.names.get(eid, (eid, ""))[0]



def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)



@functools.lru_cache(maxsize=4096)
def _word_count(text: str) -> int:
    """Whitespace-separated words (the offline model's token count), once per distinct text."""
    return len(text.split())


def _canonical(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps({k: v for k, v in args.items() if v is not None}, sort_keys=True)



def _read_conversation(messages: Sequence[BaseMessage]) -> tuple[str, str, _Memory, int]:
    memory = _Memory()
    system = "\n".join(_text(m.content) for m in messages if isinstance(m, SystemMessage))
    humans = [_text(m.content) for m in messages if isinstance(m, HumanMessage)]
    # Bounded cost: the policy reads at most the first MAX_QUESTION_CHARS characters of a
    # question (graphtrail refuses longer ones on input; a direct caller gets a truncated reading).
    question = humans[0][:MAX_QUESTION_CHARS] if humans else ""
    for line in split_lines(question):
        if line.lower().startswith("question:"):
            question = line.split(":", 1)[1]
            break
    else:
        question = split_lines(question.strip())[0] if question.strip() else ""
    for text in humans:
        memory.read_lines(text)
    calls: dict[str, dict[str, Any]] = {}
    turns = 0
    for msg in messages:
        if isinstance(msg, AIMessage):
            turns += 1
            for call in msg.tool_calls:
                calls[call.get("id") or ""] = call
                memory.calls.add(_canonical(call["name"], call.get("args") or {}))
        elif isinstance(msg, ToolMessage):
            call = calls.get(msg.tool_call_id, {"name": msg.name or "", "args": {}})
            name, args = call["name"], call.get("args") or {}
            text = _text(msg.content)
            if name == "submit_answer":
                memory.submissions += 1
                if msg.status == "error":
                    memory.rejections.append(text)
                continue
            if msg.status == "error":
                if "entity_id" in args:
                    memory.failed_ids.add(str(args["entity_id"]))
                continue
            objs = memory.read_lines(text)
            if name == "search_entities":
                memory.searched.append(_norm(str(args.get("query", ""))))
            elif name == "get_entity":
                memory.read.update(str(o["id"]) for o in objs if "relations" in o and "id" in o)
            elif name == "read_text_unit":
                for o in objs:
                    memory.read.update(str(m["id"]) for m in o.get("mentions") or () if isinstance(m, dict))
            elif name == "get_neighbors":
                memory.queried.add(
                    (str(args.get("entity_id")), _label_text(str(args.get("relation") or "*")), str(args.get("direction") or "out"))
                )
    return question.strip(), system, memory, turns
