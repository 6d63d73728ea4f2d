"""Agents whose tools answer with tables, written the way the LangChain docs write agents today.

``create_agent`` with ``@tool`` functions over the film world (world.py): one
tool finds the film (JSON rows), the other shows its crew as a table built from
the data, either a Markdown table with an id column (the model cites with
``[E:id]`` markers) or ``pandas.DataFrame.to_string(index=False)`` with names
and roles only (the model answers in prose; its citations are read by name,
which needs the KG's names: ``film_kg``). A third style adds a tool that answers
in prose about names no graph holds. The scripted models read the tables as a
model would: the row whose role is ``director``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool

from graphtrail.kg import KnowledgeGraph
from tests.fakes import ScriptedChatModel, tool_call

from .world import N_FILMS, crew_of, director, film, producer, search_rows


def table_tools(data: Any = None) -> dict[str, Any]:
    """The table styles' tools by name, over ``data`` (a dict of id -> record, world.film_records) if given,
    else over the world the oracle's ``REMOVED`` leaves."""

    @tool
    def find_film(query: str) -> str:
        """Find a film by title."""
        return json.dumps(search_rows(query, data))

    @tool
    def crew_table(film_id: str) -> str:
        """The people who made a film, as a Markdown table."""
        people = crew_of(film_id, data)["entities"]
        if not people:
            return "No crew found."
        lines = ["| id | name | role |", "|---|---|---|", *(f"| {p['id']} | {p['name']} | {p['role']} |" for p in people)]
        return f"Crew of {film_id}:\n" + "\n".join(lines)

    @tool
    def crew_frame(film_id: str) -> str:
        """The people who made a film, as a pandas table."""
        people = crew_of(film_id, data)["entities"]
        if not people:
            return "No crew found."
        return pd.DataFrame(people)[["name", "role"]].to_string(index=False)

    @tool
    def film_trivia(film_id: str) -> str:
        """Trivia about a film, in prose."""
        return f"Critics praised the score by Lena Ostrova and the sets by Marek Havel in {film_id}."

    @tool
    def film_table(query: str) -> str:
        """Films matching a title, one Markdown row per film with its director."""
        rows = []
        for row in search_rows(query, data):
            people = [p for p in crew_of(row["id"], data)["entities"] if p["role"] == "director"]
            rows.append(f"| {row['id']} | {row['name']} | {people[0]['name'] if people else ''} |")
        if not rows:
            return "No film found."
        return "\n".join(["| id | title | director |", "|---|---|---|", *rows])

    return {t.name: t for t in (find_film, crew_table, crew_frame, film_trivia, film_table)}


def _row_policy(messages: list[BaseMessage]) -> AIMessage:
    question = next(str(m.content) for m in messages if m.type == "human")
    results = [m for m in messages if isinstance(m, ToolMessage)]
    if not results:
        return AIMessage(content="", tool_calls=[tool_call("film_table", {"query": question}, "c1")])
    rows = [line.strip().strip("|").split("|") for line in str(results[0].content).splitlines()[2:]]
    if not rows:
        return AIMessage(content="I don't know.")
    title, who = rows[0][1].strip(), rows[0][2].strip()
    return AIMessage(content=f"{title} was directed by {who}." if who else f"I don't know who directed {title}.")


def film_row_agent(data: Any = None) -> Any:
    """One row holds two entities (a film and its director): hiding one cannot be cut out of the row."""
    return create_agent(ScriptedChatModel(policy=_row_policy), [table_tools(data)["film_table"]], name="film-rows")


def _director_from_table(text: str) -> str | None:
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if "|" in line else None
        if cells and len(cells) == 3 and cells[2] == "director":
            return f"{cells[1]} [E:{cells[0]}]"
        if cells is None and line.rstrip().endswith(" director"):
            return line.rstrip()[: -len(" director")].strip()
    return None


def _policy(crew_tool: str, *, trivia: bool = False) -> Any:
    def policy(messages: list[BaseMessage]) -> AIMessage:
        question = next(str(m.content) for m in messages if m.type == "human")
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            return AIMessage(content="", tool_calls=[tool_call("find_film", {"query": question}, "c1")])
        films = json.loads(str(results[0].content))
        if not films:
            return AIMessage(content="I don't know.")
        fid = films[0]["id"]
        markers = crew_tool == "crew_table"
        title = f"{films[0]['name']}" + (f" [E:{fid}]" if markers else "")
        if len(results) == 1:
            calls = [tool_call(crew_tool, {"film_id": fid}, "c2")]
            if trivia:
                calls.append(tool_call("film_trivia", {"film_id": fid}, "c3"))
            return AIMessage(content="", tool_calls=calls)
        crew = next(str(m.content) for m in results if m.name == crew_tool)
        who = _director_from_table(crew)
        if who is None:
            return AIMessage(content=f"I don't know who directed {title}.")
        return AIMessage(content=f"{title} was directed by {who}.")

    return policy


def _agent(policy: Any, name: str, tools: list[str], data: Any) -> Any:
    made = table_tools(data)
    return create_agent(ScriptedChatModel(policy=policy), [made[t] for t in tools], name=name)


def markdown_agent(data: Any = None) -> Any:
    return _agent(_policy("crew_table"), "markdown-films", ["find_film", "crew_table"], data)


def frame_agent(data: Any = None) -> Any:
    return _agent(_policy("crew_frame"), "frame-films", ["find_film", "crew_frame"], data)


def trivia_agent(data: Any = None) -> Any:
    return _agent(_policy("crew_table", trivia=True), "trivia-films", ["find_film", "crew_table", "film_trivia"], data)


def film_kg() -> KnowledgeGraph:
    """The film world as a KnowledgeGraph: the names the evaluation reads tables by."""
    kg = KnowledgeGraph(name="films")
    for i in range(1, N_FILMS + 1):
        for entity in (film(i), director(i), producer(i)):
            kg.add_entity(entity["id"], entity["name"], entity["type"])
        kg.add_relation(f"d{i}", "directed", f"m{i}")
        kg.add_relation(f"c{i}", "produced", f"m{i}")
    return kg


MARKDOWN_ROW = re.compile(r"^\| (\w+) \|", re.MULTILINE)
