"""A small film graph, tools over it written the way tool authors write them, and a scripted model.

Nothing here uses graphtrail: the tools return plain JSON strings or dicts
with ``id`` keys, the model reads them like a real model would (it answers from
what the tools showed it, and says it does not know when the film or the
director is gone), and it cites with ``[E:id]`` markers or ``submit_answer``.

The model is also the spy of these tests: on every call it records the filter
in force (``active_filter()`` is readable in the run's context) and every tool
output in the conversation, so a test can assert that no hidden id ever reached
the model, whatever way the agent called its tools.
"""

from __future__ import annotations

import json
import re
import threading
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from graphtrail.agents import GraphFilter, active_filter
from tests.fakes import ScriptedChatModel, tool_call

N_FILMS = 20


def film(i: int) -> dict[str, Any]:
    return {"id": f"m{i}", "name": f"Film {i}", "type": "film"}


def director(i: int) -> dict[str, Any]:
    return {"id": f"d{i}", "name": f"Director {i}", "type": "person", "role": "director"}


def producer(i: int) -> dict[str, Any]:
    return {"id": f"c{i}", "name": f"Producer {i}", "type": "person", "role": "producer"}


def questions(n: int = 1) -> list[dict[str, Any]]:
    return [{"id": f"q{i}", "question": f"Who directed Film {i}?", "answers": [f"Director {i}"]} for i in range(1, n + 1)]


def _film_index(text: str) -> int | None:
    m = re.search(r"Film (\d+)", text)
    return int(m.group(1)) if m else None


def _film_id_index(film_id: str) -> int | None:
    m = re.fullmatch(r"m(\d+)", film_id.strip())
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------- the data, and the data really ablated

#: (hidden, masked) entity ids *deleted from the data itself*: the oracle of the tests
#: (tests/foreign/oracle.py) sets it and reruns the agent, no graphtrail filter involved.
REMOVED: ContextVar[tuple[frozenset[str], frozenset[str]]] = ContextVar("world_removed", default=(frozenset(), frozenset()))
#: entity ids whose text (description) is *deleted from the data itself*: the oracle's text-blocked set.
WITHHELD: ContextVar[frozenset[str]] = ContextVar("world_withheld", default=frozenset())


def award(i: int) -> dict[str, Any]:
    return {"id": f"a{i}", "name": f"Award {i}", "type": "award"}


#: the keys of a film's record that hold ids of other records (its edges)
LINKS = ("directed_by", "produced_by", "awards")
Records = dict[str, dict[str, Any]]


def film_records(hidden: frozenset[str] = frozenset(), masked: frozenset[str] = frozenset(),
                 blocked: frozenset[str] = frozenset()) -> Records:
    """The film world as a ``dict`` of id -> record (the data a factory-route agent is built from), with
    ``hidden`` really deleted (their records and every reference to them) and ``masked`` renamed to the
    placeholder: the oracle's data, written by hand, never through graphtrail's ``ablated``. (The records
    hold no text, so ``blocked``, the text-blocked ids, withholds nothing.)"""
    out: Records = {}
    for i in range(1, N_FILMS + 1):
        out[f"m{i}"] = {**film(i), "directed_by": [f"d{i}"], "produced_by": [f"c{i}"], "awards": [f"a{i}"]}
        out[f"d{i}"], out[f"c{i}"], out[f"a{i}"] = director(i), producer(i), award(i)
    for eid in list(out):
        if eid in hidden:
            del out[eid]
            continue
        record = out[eid]
        for key in LINKS:
            if key in record:
                record[key] = [x for x in record[key] if x not in hidden]
        if eid in masked:
            record["name"] = f"[masked entity] {eid}"
    return out


def _data(data: Any = None) -> Any:
    """``data``, or (the filter route's tools) the world as the oracle's ``REMOVED`` leaves it."""
    return film_records(*REMOVED.get()) if data is None else data


def _shown(record: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: record[k] for k in ("id", "name", "type", *keys) if k in record}


# ---------------------------------------------------------------- tool bodies (plain Python, over a dict of records)


def search_rows(query: str, data: Any = None) -> list[dict[str, Any]]:
    i = _film_index(query)
    record = _data(data).get(f"m{i}") if i is not None else None
    return [_shown(record)] if record is not None else []


def crew_of(film_id: str, data: Any = None) -> dict[str, Any]:
    data = _data(data)
    i = _film_id_index(film_id)
    record = data.get(f"m{i}") if i is not None else None
    if record is None:
        return {"entities": [], "edges": []}
    people = [(p, "directed") for p in record.get("directed_by", [])] + [(p, "produced") for p in record.get("produced_by", [])]
    return {
        "entities": [_shown(data[p], "role") for p, _ in people if p in data],
        "edges": [{"source": p, "relation": r, "target": f"m{i}"} for p, r in people if p in data],
    }


def awards_of(film_id: str, data: Any = None) -> list[dict[str, Any]]:
    data = _data(data)
    i = _film_id_index(film_id)
    record = data.get(f"m{i}") if i is not None else None
    if record is None:
        return []
    return [_shown(data[a]) for a in record.get("awards", []) if a in data]


# ---------------------------------------------------------------- tools as LangChain tools


def string_tools(data: Any = None) -> list[Any]:
    """Tools returning JSON text (the common ``return json.dumps(rows)`` style); over ``data`` if given (a dict of
    id -> record, :func:`film_records`), else over the world the oracle's ``REMOVED`` leaves."""

    @tool
    def search(query: str) -> str:
        """Find films by title."""
        return json.dumps(search_rows(query, data))

    @tool
    def crew(film_id: str) -> str:
        """The people who made a film, with the edges linking them to it."""
        return json.dumps(crew_of(film_id, data))

    return [search, crew]


def dict_tools(*, with_awards: bool = False, with_submit: bool = False, use_async: bool = False,
               data: Any = None) -> list[Any]:
    """Tools returning dicts/lists (LangChain serialises them for the model); ``data``: as for :func:`string_tools`."""
    tools: list[Any] = []
    if use_async:

        @tool
        async def search(query: str) -> list[dict[str, Any]]:
            """Find films by title."""
            return search_rows(query, data)

        @tool
        async def crew(film_id: str) -> dict[str, Any]:
            """The people who made a film, with the edges linking them to it."""
            return crew_of(film_id, data)

    else:

        @tool
        def search(query: str) -> list[dict[str, Any]]:
            """Find films by title."""
            return search_rows(query, data)

        @tool
        def crew(film_id: str) -> dict[str, Any]:
            """The people who made a film, with the edges linking them to it."""
            return crew_of(film_id, data)

    tools += [search, crew]
    if with_awards:

        @tool
        def awards(film_id: str) -> list[dict[str, Any]]:
            """Awards a film won."""
            return awards_of(film_id, data)

        tools.append(awards)
    if with_submit:

        @tool
        def submit_answer(answer: str, citations: list[str]) -> str:
            """Submit the final answer with the ids of the entities it relies on."""
            return "accepted"

        tools.append(submit_answer)
    return tools


# ---------------------------------------------------------------- the model


def _parse(content: Any) -> Any:
    value = content
    for _ in range(2):  # a hand-written tool node may json.dumps a JSON string again
        if not isinstance(value, str):
            break
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value


class Spy:
    """What the model saw: ``(filter, [tool outputs])`` per model call."""

    def __init__(self) -> None:
        self.seen: list[tuple[GraphFilter | None, list[str]]] = []
        self._lock = threading.Lock()

    def record(self, messages: list[Any]) -> None:
        outputs = [m.content if isinstance(m.content, str) else json.dumps(m.content) for m in messages if isinstance(m, ToolMessage)]
        with self._lock:
            self.seen.append((active_filter(), outputs))

    def leaks(self) -> list[tuple[str, str]]:
        """(hidden id, output) pairs where a hidden id reached the model."""
        found = []
        for f, outputs in self.seen:
            if f is None:
                continue
            for eid in f.hidden:
                pattern = re.compile(rf"(?<![\w-]){re.escape(eid)}(?![\w-])")
                found += [(eid, out) for out in outputs if pattern.search(out)]
        return found

    def filtered_calls(self) -> int:
        return sum(1 for f, _ in self.seen if f is not None and not f.is_empty)


def make_model(spy: Spy, *, style: str = "markers", parallel: bool = False) -> ScriptedChatModel:
    """search -> crew (and awards, in parallel) -> answer; ``style``: ``"markers"`` or ``"submit"``."""

    def policy(messages: list[Any]) -> AIMessage:
        spy.record(messages)
        question = next((m.content for m in messages if getattr(m, "type", None) == "human"), "")
        rounds = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
        results = [m for m in messages if isinstance(m, ToolMessage)]
        n = len(rounds)

        def calls(*pairs: tuple[str, dict[str, Any]]) -> AIMessage:
            return AIMessage(content="", tool_calls=[tool_call(name, args, f"call_{n}_{k}") for k, (name, args) in enumerate(pairs)])

        def answer(text: str, cites: list[str]) -> AIMessage:
            if style == "submit":
                return calls(("submit_answer", {"answer": text, "citations": cites}))
            return AIMessage(content=text + "".join(f" [E:{c}]" for c in cites))

        if results and results[-1].name == "submit_answer":
            return AIMessage(content="Submitted.")
        if n == 0:
            return calls(("search", {"query": question}))
        if n == 1:
            found = _parse(results[-1].content) or []
            films = [e for e in found if isinstance(e, dict) and e.get("type") == "film"] if isinstance(found, list) else []
            if not films:
                return answer("I don't know.", [])
            first = (("crew", {"film_id": films[0]["id"]}),)
            return calls(*first, ("awards", {"film_id": films[0]["id"]})) if parallel else calls(*first)
        crew_output = next((_parse(m.content) for m in results if m.name == "crew"), None)
        people = crew_output.get("entities", []) if isinstance(crew_output, dict) else []
        directors = [p for p in people if isinstance(p, dict) and p.get("role") == "director"]
        film_id = rounds[1].tool_calls[0]["args"]["film_id"]
        if not directors:
            return answer("I don't know.", [film_id])
        return answer(directors[0]["name"], [directors[0]["id"], film_id])

    return ScriptedChatModel(policy=policy, model_name="scripted-films")


EVAL_OPTIONS: dict[str, Any] = {
    "conditions": ["cited_removal", "uncited_removal"],
    "baseline_repeats": 1,
    "progress": False,
    "n_boot": 200,
    "paper_reference": False,
}
