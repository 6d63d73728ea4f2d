"""The filter-route test files' agent styles through the factory route: every condition equals the oracle.

Issue 28, first "Done when": on every agent style in tests/foreign/, through the
factory route, every condition equals the oracle. test_oracle.py,
test_agents_filtered.py, test_tables.py, test_sentence_agent.py and
test_people_filtered.py run their agents through the filter route, the tools
reading module-level data. Here the same agents are built from the data they are
handed, a ``dict`` of id -> record (world.film_records, movie_records,
people.people_records): ``evaluate(make_agent, questions, graph=data)`` rebuilds each
on ``ablated(data, condition)``; the oracle rebuilds it on records those modules
deleted, renamed and stripped of text by hand (never through graphtrail's
``ablated``) and asks again. Every default condition must run, be valid, exact, and
equal the oracle run for run. (test_factory_styles_filtered.py is the converse.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, dynamic_prompt, wrap_tool_call
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition

from graphtrail.evaluators import evaluate
from tests.fakes import ScriptedChatModel

from .oracle import load_records
from .people import people_model, people_records, person
from .people import questions as people_questions
from .tables import film_row_agent, frame_agent, markdown_agent, trivia_agent
from .test_agents_filtered import BasicToolNode, bare_thread_node, helper_node, subgraph_agent, tutorial_agent
from .test_factory_route import OPTIONS, oracle_answer
from .test_oracle import _name_policy, _prose_policy
from .test_people_filtered import _jsonld_agent, _jsonld_policy, _retriever_agent, _table_agent, _uid_agent, jsonld
from .test_sentence_agent import QUESTIONS, build_agent, movie_records
from .test_structured import STYLES as STRUCTURED
from .test_structured import _agent as structured_agent
from .world import Spy, crew_of, dict_tools, film_records, make_model, questions, search_rows, string_tools

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


# ---------------------------------------------------------------- test_oracle.py's five builds and test_agents_filtered.py's
# styles, over the data given


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


def plain_helper(data: Any) -> Any:
    tools = dict_tools(data=data)
    return tutorial_agent(make_model(Spy()), helper_node(tools, lambda tool, args: tool.invoke(args)), tools)


def legacy_run(data: Any) -> Any:
    """``tool.run(args)``: untraced, so the filter route refuses it; the factory route needs no trace to ablate."""
    tools = dict_tools(data=data)
    return tutorial_agent(make_model(Spy()), helper_node(tools, lambda tool, args: tool.run(args)), tools)


def bare_thread(data: Any) -> Any:
    """Tool calls in a bare thread: the filter's context does not follow, the data handed to the agent does."""
    tools = dict_tools(data=data)
    return tutorial_agent(make_model(Spy()), bare_thread_node(tools), tools)


def async_gather(data: Any) -> Any:
    tools = dict_tools(with_awards=True, data=data)
    by_name = {t.name: t for t in tools}

    async def node(state: Any) -> dict[str, Any]:
        message = state["messages"][-1]
        results = await asyncio.gather(*(by_name[c["name"]].ainvoke(c["args"]) for c in message.tool_calls))
        return {"messages": [ToolMessage(content=json.dumps(r), name=c["name"], tool_call_id=c["id"])
                             for c, r in zip(message.tool_calls, results)]}

    return tutorial_agent(make_model(Spy(), parallel=True), node, tools)


def delegating_node(data: Any) -> Any:
    research = create_agent(make_model(Spy()), dict_tools(data=data), name="research")

    def delegate(state: MessagesState) -> dict[str, Any]:
        result = research.invoke({"messages": state["messages"]})
        return {"messages": result["messages"][len(state["messages"]):]}

    outer = StateGraph(MessagesState)
    outer.add_node("delegate", delegate)
    outer.add_edge(START, "delegate")
    outer.add_edge("delegate", END)
    return outer.compile()


def async_astream(data: Any) -> Any:
    agent = create_agent(make_model(Spy()), dict_tools(use_async=True, data=data), name="films-async")

    async def ask(question: str) -> Any:
        final = None
        async for chunk in agent.astream({"messages": [("user", question)]}, stream_mode="values"):
            final = chunk
        return final

    return ask


def plain_python(data: Any) -> Any:
    """A function that calls the tools itself: no model, no graph."""
    search, crew = dict_tools(data=data)

    def answer(question: str) -> str:
        films = search.invoke({"query": question})
        if not films:
            return "I don't know."
        people = crew.invoke({"film_id": films[0]["id"]})["entities"]
        directors = [p for p in people if p["role"] == "director"]
        if not directors:
            return f"I don't know. [E:{films[0]['id']}]"
        return f"{directors[0]['name']} [E:{directors[0]['id']}] [E:{films[0]['id']}]"

    return answer


STYLES = {"create_react_agent": react, "create_agent+submit": submit, "tutorial_node": tutorial,
          "prebuilt_tool_node": prebuilt_node, "subgraph": subgraph, "plain_python_helper": plain_helper,
          "bare_thread": bare_thread, "async_gather": async_gather,
          "subgraph_in_a_node": delegating_node, "async_astream": async_astream, "plain_python": plain_python}


def check_factory_route(make_agent: Any, qs: list[dict[str, Any]], out: Path, data: Any = film_records,
                        valid: bool = True) -> tuple[Any, set[str]]:
    """Evaluate through the factory route over ``data()``; every run is exact and equals the oracle (``make_agent``
    on ``data(hidden, masked, text_blocked)``), every condition is valid (``valid=False``: none is). Returns the report and the conditions that ran."""
    report = evaluate(make_agent, qs, graph=data(), out_dir=out, **OPTIONS)
    records = load_records(out)
    baselines = {r.key.question_id: r for r in records if r.key.condition == "baseline"}
    assert report.condition("baseline").accuracy == 1.0, [r.answer for r in baselines.values()]
    wrong, checked = [], 0
    for record in records:
        if record.key.condition == "baseline":
            continue
        assert record.route == "factory" and record.method == "exact", record
        hidden, masked, blocked = frozenset(record.hidden), frozenset(record.masked), frozenset(record.text_blocked)
        assert hidden | masked | blocked <= set(data()), record
        truth = oracle_answer(make_agent, data(hidden, masked, blocked), record.question)
        checked += 1
        if truth != record.answer:
            wrong.append((record.key.condition, record.key.variant, sorted(hidden), sorted(masked), record.answer, truth))
    assert checked and wrong == [], f"conditions that differ from the oracle: {wrong}"
    ran = {r.key.condition for r in records} - {"baseline"}
    for condition in ran:
        row = report.condition(condition)
        assert row.method == "exact" and row.route == "factory", (condition, row.method, row.route)
        assert row.valid is valid, (condition, row.invalid_reason)
    assert {r.answer for r in records} - {r.answer for r in baselines.values()}, "no condition changed an answer"
    return report, ran


@pytest.mark.parametrize("style", list(STYLES))
def test_film_agents_through_the_factory_route_equal_the_oracle(style: str, tmp_path: Path) -> None:
    assert check_factory_route(STYLES[style], questions(2), tmp_path)[1] == set(OPTIONS["conditions"])


@pytest.mark.parametrize("style", ["legacy_tool_run", "run_in_executor"])
def test_untraced_tool_calls_equal_the_oracle_but_are_refused(style: str, tmp_path: Path) -> None:
    """``tool.run(args)``, or ``tool.invoke`` in ``loop.run_in_executor``, runs outside the trace: the agent is
    rebuilt on the ablated data, so every answer still equals the oracle, but graphtrail never saw what the agent
    visited (uncited removal would hide nothing), so it refuses every condition rather than report one."""
    from graphtrail.evaluators.scoring.coverage import NOTHING_REVEALED, banner_sentences

    make_agent = {"legacy_tool_run": legacy_run, "run_in_executor": executor}[style]
    report, ran = check_factory_route(make_agent, questions(2), tmp_path, valid=False)
    assert ran >= {"cited_removal", "uncited_removal"}, ran
    assert {r.invalid_reason for r in report.conditions if r.condition != "baseline" and r.n_runs} == {NOTHING_REVEALED}
    banner = " ".join(banner_sentences(report))  # the report's red banner and the log line
    assert "rebuilt on the ablated data" in banner and "did not reach" not in banner, banner


# ---------------------------------------------------------------- test_tables.py's table agents, over the data given

TABLES = {"markdown_table": markdown_agent, "dataframe_to_string": frame_agent, "trivia_beside_a_table": trivia_agent,
          "one_row_two_entities": film_row_agent}


@pytest.mark.parametrize("style", list(TABLES))
def test_table_agents_through_the_factory_route_equal_the_oracle(style: str, tmp_path: Path) -> None:
    assert check_factory_route(TABLES[style], questions(2), tmp_path)[1] == set(OPTIONS["conditions"])


# ---------------------------------------------------------------- test_sentence_agent.py's agent: sentences, cited by name


def test_sentence_agent_through_the_factory_route_equals_the_oracle(tmp_path: Path) -> None:
    assert check_factory_route(build_agent, QUESTIONS, tmp_path, movie_records)[1] == set(OPTIONS["conditions"])


# ---------------------------------------------------------------- test_oracle.py's other styles, over the data given


def caching(data: Any) -> Any:
    """The docs' caching @wrap_tool_call middleware: its cache lives in the agent, so a rebuilt agent starts empty."""
    cache: dict[str, ToolMessage] = {}

    @wrap_tool_call
    async def cache_tool_results(request: Any, handler: Any) -> Any:
        key = request.tool_call["name"] + json.dumps(request.tool_call["args"], sort_keys=True)
        if key in cache:
            hit = cache[key]
            return ToolMessage(content=hit.content, name=hit.name, tool_call_id=request.tool_call["id"])
        result = await handler(request)
        cache[key] = result
        return result

    return create_agent(make_model(Spy()), dict_tools(data=data), middleware=[cache_tool_results], name="cached-films")


def prompting(data: Any) -> Any:
    """A @dynamic_prompt writing what the data knows about the asked film into the system prompt."""

    @dynamic_prompt
    def graph_facts(request: ModelRequest) -> str:
        question = str(request.state["messages"][0].content)
        facts = []
        for row in search_rows(question, data):
            crew = crew_of(row["id"], data)
            facts += [f"{p['name']} ({p['id']}) is the {p['role']} of {row['name']} ({row['id']})." for p in crew["entities"]]
        return "You answer questions about films. Known facts: " + " ".join(facts)

    return create_agent(make_model(Spy()), dict_tools(data=data), middleware=[graph_facts], name="prompted-films")


def prose_artifact(data: Any) -> Any:
    """One line of prose for the model, the crew's data as the artifact."""

    @tool(response_format="content_and_artifact")
    def film_crew(film_id: str) -> tuple[str, dict[str, Any]]:
        """The people who made a film, as one line of text."""
        found = crew_of(film_id, data)
        if not found["entities"]:
            return "No crew found.", found
        title = next((r["name"] for r in search_rows(f"Film {film_id[1:]}", data)), film_id)
        return f"{title} crew: " + "; ".join(f"{p['name']} ({p['role']})" for p in found["entities"]) + ".", found

    @tool
    def find_film(query: str) -> str:
        """Find a film by title."""
        return json.dumps(search_rows(query, data))

    return create_agent(ScriptedChatModel(policy=_prose_policy), [find_film, film_crew], name="prose-films")


def sync_middleware(data: Any) -> Any:
    @wrap_tool_call
    def log_tool_calls(request: Any, handler: Any) -> Any:
        return handler(request)

    return create_agent(make_model(Spy()), dict_tools(data=data), middleware=[log_tool_calls], name="sync-films")


def name_keyed(data: Any) -> Any:
    """Looks a film up by its exact title; rows carry names, no ids (record.data()-style nesting)."""

    @tool
    def film_by_title(title: str) -> str:
        """Look a film up by its exact title."""
        found = next((r for r in data.values() if r.get("type") == "film" and r["name"] == title), None)
        if found is None:
            return f"No film named {title}."
        relations = [["DIRECTED_BY", {"name": data[p]["name"]}] for p in found.get("directed_by", []) if p in data]
        return json.dumps([{"title": title, "relations": relations}])

    return create_agent(ScriptedChatModel(policy=_name_policy), [film_by_title], name="named-films")


def executor(data: Any) -> Any:
    """Sync tools run with loop.run_in_executor: no context follows, the data handed to the agent does."""
    tools = dict_tools(data=data)
    by_name = {t.name: t for t in tools}

    async def node(state: Any) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        message = state["messages"][-1]
        results = [await loop.run_in_executor(None, by_name[c["name"]].invoke, c["args"]) for c in message.tool_calls]
        return {"messages": [ToolMessage(content=json.dumps(r), name=c["name"], tool_call_id=c["id"])
                             for c, r in zip(message.tool_calls, results)]}

    return tutorial_agent(make_model(Spy()), node, tools)


def document_artifact(data: Any) -> Any:
    """JSON content for the model, list[Document] beside it (a retriever's way)."""
    from langchain_core.documents import Document

    @tool
    def search(query: str) -> str:
        """Find films by title."""
        return json.dumps(search_rows(query, data))

    @tool(response_format="content_and_artifact")
    def crew(film_id: str) -> tuple[str, list[Any]]:
        """The people who made a film, with the edges linking them to it."""
        found = crew_of(film_id, data)
        docs = [Document(page_content=f"{p['name']} worked on {film_id}", metadata={"id": p["id"], "person": p["name"]})
                for p in found["entities"]]
        return json.dumps(found), docs

    return create_agent(make_model(Spy()), [search, crew], name="document-films")


OTHER_STYLES = {"caching_middleware": caching, "dynamic_prompt": prompting, "prose_and_artifact": prose_artifact,
                "sync_middleware": sync_middleware, "name_keyed_tool": name_keyed, "document_artifact": document_artifact}


@pytest.mark.parametrize("style", list(OTHER_STYLES))
def test_other_film_styles_through_the_factory_route_equal_the_oracle(style: str, tmp_path: Path) -> None:
    assert check_factory_route(OTHER_STYLES[style], questions(2), tmp_path)[1] == set(OPTIONS["conditions"])


# ---------------------------------------------------------------- test_people_filtered.py's agents: text, masks, lookups by name


PEOPLE_STYLES = {"retriever_over_passages": _retriever_agent, "jsonld_by_name": _jsonld_agent,
                 "markdown_person_id_table": _table_agent, "json_rows_keyed_by_uid": _uid_agent}


@pytest.mark.parametrize("style", list(PEOPLE_STYLES))
def test_people_agents_through_the_factory_route_equal_the_oracle(style: str, tmp_path: Path) -> None:
    ran = check_factory_route(PEOPLE_STYLES[style], people_questions(), tmp_path, people_records)[1]
    assert ran == set(OPTIONS["conditions"])


def prompted_people(data: Any) -> Any:
    """A @dynamic_prompt writing every description the data holds: Lise Meitner's names Otto Hahn, who may be hidden
    (her own description, kept as the real data would keep it: no leak)."""

    @dynamic_prompt
    def background(request: ModelRequest) -> str:
        known = [r["description"] for pid in data if (r := person(pid, data)) is not None and r["description"]]
        return "You answer questions about scientists. Background: " + " ".join(known)

    @tool
    def lookup(query: str) -> str:
        """A scientist as schema.org JSON-LD, by name or id."""
        return jsonld(query, data)

    return create_agent(people_model(_jsonld_policy), [lookup], middleware=[background], name="prompted")


def test_descriptions_in_a_dynamic_prompt_through_the_factory_route_equal_the_oracle(tmp_path: Path) -> None:
    assert "Otto Hahn" in people_records()["p1"]["description"]
    ran = check_factory_route(prompted_people, people_questions(), tmp_path, people_records)[1]
    assert ran == set(OPTIONS["conditions"])


# ---------------------------------------------------------------- test_structured.py's agents: the answer in structured_response


@pytest.mark.parametrize("style", list(STRUCTURED))
def test_structured_agents_through_the_factory_route_equal_the_oracle(style: str, tmp_path: Path) -> None:
    schema, fields = STRUCTURED[style]
    ran = check_factory_route(lambda data: structured_agent(schema, fields, data), questions(2), tmp_path)[1]
    assert ran == set(OPTIONS["conditions"])
