"""Every condition ``evaluate`` marks valid equals the agent rerun on really-ablated data (the oracle).

For each agent style (those of test_agents_filtered.py, and styles the
LangChain docs write today: a caching ``@wrap_tool_call`` middleware, a
``@dynamic_prompt`` that writes graph facts into the system prompt, a tool that
answers with one line of prose beside an artifact), every run of every valid
condition is rerun by a fresh agent on data without the run's entities
(tests/foreign/oracle.py). Where graphtrail's filter cannot make the agent see
the ablated graph, the condition must be invalid, with the channel named.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, dynamic_prompt, wrap_tool_call
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition

from graphtrail.evaluators import evaluate
from tests.fakes import ScriptedChatModel, tool_call

from .oracle import check_against_oracle
from .test_agents_filtered import BasicToolNode, subgraph_agent, tutorial_agent
from .world import REMOVED, Spy, crew_of, dict_tools, make_model, questions, search_rows, string_tools

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")

CONDITIONS = ["cited_removal", "random_removal", "full_isolation", "uncited_removal", "uncited_mask", "leave_one_out"]
OPTIONS: dict[str, Any] = {"conditions": CONDITIONS, "baseline_repeats": 1, "progress": False, "n_boot": 50,
                           "paper_reference": False, "concurrency": 2}


def _evaluate(build: Any, out: Path, n: int = 2) -> Any:
    return evaluate(build(), questions(n), out_dir=out, **OPTIONS)


# ---------------------------------------------------------------- the styles test_agents_filtered.py covers


def _react() -> Any:
    return create_react_agent(make_model(Spy()), string_tools())


def _submit() -> Any:
    return create_agent(make_model(Spy(), style="submit"), dict_tools(with_submit=True), name="films")


def _tutorial() -> Any:
    tools = dict_tools()
    return tutorial_agent(make_model(Spy()), BasicToolNode(tools), tools)


def _prebuilt_node() -> Any:
    tools = dict_tools()
    llm = make_model(Spy()).bind_tools(tools)
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda s: {"messages": [llm.invoke(s["messages"])]})
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def _subgraph() -> Any:
    return subgraph_agent(Spy())


@pytest.mark.parametrize("build", [_react, _submit, _tutorial, _prebuilt_node, _subgraph],
                         ids=["create_react_agent", "create_agent+submit", "tutorial_node", "prebuilt_tool_node", "subgraph"])
def test_valid_conditions_equal_the_oracle(build: Any, tmp_path: Path) -> None:
    report = _evaluate(build, tmp_path)
    assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
    checked = check_against_oracle(report, tmp_path, build)
    assert set(checked) == set(CONDITIONS)  # every condition ran and was checked


# ---------------------------------------------------------------- a caching tool middleware


def _caching_agent() -> Any:
    """The docs' caching pattern: a @wrap_tool_call middleware answering repeated calls from a dict."""
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

    return create_agent(make_model(Spy()), dict_tools(), middleware=[cache_tool_results], name="cached-films")


def test_cached_tool_results_make_conditions_invalid(tmp_path: Path) -> None:
    report = _evaluate(_caching_agent, tmp_path)
    for name in ("cited_removal", "uncited_removal", "full_isolation"):
        row = report.condition(name)
        assert not row.valid and "cached tool result" in row.invalid_reason, (name, row.invalid_reason)
        assert row.tool_calls_unfiltered == 0  # nothing escaped the filter: the cache bypassed the tools
    check_against_oracle(report, tmp_path, _caching_agent)  # whatever stays valid is right


# ---------------------------------------------------------------- graph facts in a dynamic system prompt


def _prompting_agent() -> Any:
    """A @dynamic_prompt writes what the graph knows about the asked film into the system prompt."""

    @dynamic_prompt
    def graph_facts(request: ModelRequest) -> str:
        question = str(request.state["messages"][0].content)
        facts = []
        for row in search_rows(question):
            crew = crew_of(row["id"])
            facts += [f"{p['name']} ({p['id']}) is the {p['role']} of {row['name']} ({row['id']})." for p in crew["entities"]]
        return "You answer questions about films. Known facts: " + " ".join(facts)

    return create_agent(make_model(Spy()), dict_tools(), middleware=[graph_facts], name="prompted-films")


def test_graph_facts_in_the_system_prompt_make_conditions_invalid(tmp_path: Path) -> None:
    report = _evaluate(_prompting_agent, tmp_path)
    for name in ("cited_removal", "uncited_removal", "uncited_mask", "full_isolation"):
        row = report.condition(name)
        assert not row.valid and "system prompt" in row.invalid_reason, (name, row.invalid_reason)
    md = (tmp_path / "report.md").read_text()
    assert "system prompt" in md
    check_against_oracle(report, tmp_path, _prompting_agent)


# ---------------------------------------------------------------- one line of prose, and an artifact


@tool(response_format="content_and_artifact")
def film_crew(film_id: str) -> tuple[str, dict[str, Any]]:
    """The people who made a film, as one line of text."""
    data = crew_of(film_id)
    if not data["entities"]:
        return "No crew found.", data
    title = next((r["name"] for r in search_rows(f"Film {film_id[1:]}")), film_id)
    people = "; ".join(f"{p['name']} ({p['role']})" for p in data["entities"])
    return f"{title} crew: {people}.", data


@tool
def find_film(query: str) -> str:
    """Find a film by title."""
    return json.dumps(search_rows(query))


def _prose_policy(messages: list[BaseMessage]) -> AIMessage:
    question = next(str(m.content) for m in messages if m.type == "human")
    results = [m for m in messages if isinstance(m, ToolMessage)]
    if not results:
        return AIMessage(content="", tool_calls=[tool_call("find_film", {"query": question}, "c1")])
    films = json.loads(results[0].content)
    if not films:
        return AIMessage(content="I don't know.")
    if len(results) == 1:
        return AIMessage(content="", tool_calls=[tool_call("film_crew", {"film_id": films[0]["id"]}, "c2")])
    m = re.search(r"([^:;]+?) \(director\)", str(results[1].content))
    if m is None:
        return AIMessage(content=f"I don't know who directed {films[0]['name']}.")
    return AIMessage(content=f"{films[0]['name']} was directed by {m.group(1).strip()}.")


def _prose_agent() -> Any:
    return create_agent(ScriptedChatModel(policy=_prose_policy), [find_film, film_crew], name="prose-films")


def test_one_line_prose_reply_is_cut_at_the_item_and_equals_the_oracle(tmp_path: Path) -> None:
    report = _evaluate(_prose_agent, tmp_path)
    assert report.condition("baseline").accuracy == 1.0
    uncited = report.condition("uncited_removal")  # the producer goes, the director's item stays
    assert uncited.valid and uncited.accuracy == 1.0, uncited.invalid_reason
    assert report.condition("cited_removal").accuracy == 0.0
    checked = check_against_oracle(report, tmp_path, _prose_agent)
    assert checked.get("uncited_removal") == 2 and checked.get("leave_one_out")


def test_the_world_really_ablates() -> None:
    """The oracle's data: deleting the director takes him out of every tool, and nothing else."""
    token = REMOVED.set((frozenset({"d1"}), frozenset()))
    try:
        assert [e["id"] for e in crew_of("m1")["entities"]] == ["c1"]
        assert film_crew.invoke({"film_id": "m1"}) == "Film 1 crew: Producer 1 (producer)."
    finally:
        REMOVED.reset(token)


# ---------------------------------------------------------------- sync-only and failing agents


def _sync_middleware_agent() -> Any:
    """A sync @wrap_tool_call (no async version): ainvoke raises NotImplementedError, invoke works."""

    @wrap_tool_call
    def log_tool_calls(request: Any, handler: Any) -> Any:
        return handler(request)

    return create_agent(make_model(Spy()), dict_tools(), middleware=[log_tool_calls], name="sync-films")


def test_sync_only_agent_runs_through_invoke_and_equals_the_oracle(tmp_path: Path) -> None:
    report = _evaluate(_sync_middleware_agent, tmp_path)
    base = report.condition("baseline")
    assert base.accuracy == 1.0 and not base.error_rate and base.valid
    assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
    assert set(check_against_oracle(report, tmp_path, _sync_middleware_agent)) == set(CONDITIONS)


def _failing_policy(messages: list[BaseMessage]) -> AIMessage:
    if "Film 2" in str(messages[0].content):
        raise RuntimeError("the model provider is down")
    return make_model(Spy()).policy(messages)


def test_failed_runs_are_errors_and_invalidate_the_condition(tmp_path: Path) -> None:
    agent = create_agent(ScriptedChatModel(policy=_failing_policy), dict_tools(), name="flaky-films")
    report = evaluate(agent, questions(2), out_dir=tmp_path, **{**OPTIONS, "conditions": ["uncited_removal"]})
    base = report.condition("baseline")
    assert base.error_rate == 0.5 and "the model provider is down" in base.first_error
    assert not base.valid and "1 of 2 run(s) failed with an error" in base.invalid_reason
    assert base.accuracy == 1.0  # the failed run is an error, not a wrong answer
    md = (tmp_path / "report.md").read_text()
    assert "failed with an error" in md and "the model provider is down" in md
    assert any("Runs failed with an error (Baseline 50%" in f for f in report_findings(report))


def report_findings(report: Any) -> list[str]:
    from graphtrail.evaluators.scoring.findings import findings

    return findings(report)


# ---------------------------------------------------------------- the model is what was observed


def test_the_header_names_the_observed_model_and_resume_with_another_reruns(tmp_path: Path) -> None:
    first = Spy()
    report = evaluate(create_agent(make_model(first), dict_tools()), questions(1), out_dir=tmp_path, model_name="films",
                      **{**OPTIONS, "conditions": ["uncited_removal"]})
    assert report.meta["model"] == "scriptedchatmodel/scripted-films" and report.meta["model_name"] == "films"
    assert "| model | scriptedchatmodel/scripted-films |" in (tmp_path / "report.md").read_text()
    calls = len(first.seen)
    # the same model again: everything comes from the cache (the one probe run is answered by prefix reuse)
    evaluate(create_agent(make_model(first), dict_tools()), questions(1), out_dir=tmp_path, model_name="films", resume=True,
             **{**OPTIONS, "conditions": ["uncited_removal"]})
    assert len(first.seen) == calls
    # another model under the same name: every run is made again, by it
    other = Spy()
    model = make_model(other)
    model.model_name = "scripted-films-v2"
    report = evaluate(create_agent(model, dict_tools()), questions(1), out_dir=tmp_path, model_name="films", resume=True,
                      **{**OPTIONS, "conditions": ["uncited_removal"]})
    assert len(other.seen) == 4  # the baseline (3 calls) and uncited removal (1 call after its divergence; 2 reused)
    assert report.meta["model"] == "scriptedchatmodel/scripted-films-v2"


# ---------------------------------------------------------------- controls that are controls


def test_without_a_kg_random_removal_draws_from_what_other_runs_revealed(tmp_path: Path) -> None:
    from .oracle import load_records

    _evaluate(_react, tmp_path, n=3)
    for record in load_records(tmp_path):
        if record.key.condition == "random_removal":
            i = record.key.question_id[1:]
            assert len(record.hidden) == 2 and not set(record.hidden) & {f"m{i}", f"d{i}", f"c{i}"}  # never its own visited
            assert {h[0] for h in record.hidden} <= {"m", "d", "c"}  # a film for the film, a person for the person
            assert any(h.startswith("m") for h in record.hidden)


def test_too_small_a_pool_is_no_control(tmp_path: Path) -> None:
    from graphtrail.evaluators.replay.ablations import NO_RANDOM_CONTROL

    report = _evaluate(_react, tmp_path, n=1)  # one question: every revealed entity is its own visited one
    row = report.condition("random_removal")
    assert row.not_applicable == NO_RANDOM_CONTROL and row.accuracy is None and row.n_runs == 0
    assert "no random control possible" in (tmp_path / "report.md").read_text()


def test_a_kg_that_is_not_the_agents_graph_is_refused() -> None:
    from graphtrail.agents import load_kg
    from graphtrail.evaluators import EvaluationError

    with pytest.raises(EvaluationError, match=r"the KG 'countries' shares 0 of the \d+ entities the agent's tools revealed"):
        evaluate(_react(), questions(1), load_kg("countries"), **OPTIONS)


def cli_agent(kg: Any = None) -> Any:
    """``graphtrail eval --agent tests.foreign.test_oracle:cli_agent`` (no KG needed)."""
    return _react()


def test_cli_eval_of_an_own_agent_needs_no_kg_and_refuses_a_foreign_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphtrail.cli import main

    qfile = tmp_path / "films.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in questions(2)), encoding="utf-8")
    base = ["eval", "-q", str(qfile), "-c", "baseline,uncited_removal,random_removal", "--trials", "1"]
    assert main([*base, "--agent", "tests.foreign.test_oracle:cli_agent", "--out", str(tmp_path / "own")]) == 0, capsys.readouterr().err
    saved = json.loads((tmp_path / "own" / "results.json").read_text())
    assert {c["condition"]: c["valid"] for c in saved["conditions"]} == {"baseline": True, "uncited_removal": True, "random_removal": True}
    capsys.readouterr()

    assert main([*base, "--out", str(tmp_path / "nokg")]) == 2  # the reference agents need a graph
    err = capsys.readouterr().err.strip()
    assert "--kg is missing" in err and "Traceback" not in err

    code = main([*base, "--agent", "tests.foreign.test_oracle:cli_agent", "--kg", "countries", "--out", str(tmp_path / "wrong")])
    err = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert code == 2 and len(err) == 1 and "shares 0 of the" in err[0], err


# ---------------------------------------------------------------- name-keyed tools, nested records


@tool
def film_by_title(title: str) -> str:
    """Look a film up by its exact title; rows carry names, no ids (as a name-keyed Cypher query returns them)."""
    hidden, masked = REMOVED.get()
    i = re.fullmatch(r"Film (\d+)", title.strip())
    if i is None or title in hidden:
        return f"No film named {title}."
    director = f"Director {i.group(1)}"
    if director in hidden:
        return json.dumps([{"title": title, "relations": []}])
    shown = f"[masked entity] {director}" if director in masked else director
    return json.dumps([{"title": title, "relations": [["DIRECTED_BY", {"name": shown}]]}])  # record.data()-style nesting


def _name_policy(messages: list[BaseMessage]) -> AIMessage:
    question = next(str(m.content) for m in messages if m.type == "human")
    title = re.search(r"Film \d+", question).group(0)
    results = [m for m in messages if isinstance(m, ToolMessage)]
    if not results:
        return AIMessage(content="", tool_calls=[tool_call("film_by_title", {"title": title}, "c1")])
    try:
        rows = json.loads(str(results[0].content))
    except ValueError:
        return AIMessage(content=str(results[0].content))
    people = [rel[1]["name"] for row in rows for rel in row.get("relations", []) if rel[0] == "DIRECTED_BY"]
    if not people:
        return AIMessage(content=f"I don't know who directed {rows[0]['title']}.")
    return AIMessage(content=f"{rows[0]['title']} was directed by {people[0]}.")


def _name_keyed_agent() -> Any:
    return create_agent(ScriptedChatModel(policy=_name_policy), [film_by_title], name="named-films")


def test_name_keyed_tool_answers_as_if_the_entity_were_gone(tmp_path: Path) -> None:
    report = _evaluate(_name_keyed_agent, tmp_path)
    by_q = {q.question_id: q for q in report.questions}
    assert by_q["q1"].answers["cited_removal"] == "No film named Film 1."  # the tool's own answer, its echo kept
    cited = report.condition("cited_removal")
    assert cited.valid and cited.accuracy == 0.0, cited.invalid_reason
    checked = check_against_oracle(report, tmp_path, _name_keyed_agent)
    assert checked.get("cited_removal") == 2


# ---------------------------------------------------------------- a sync tool run in an executor


def _executor_agent() -> Any:
    """An async node running each sync tool with loop.run_in_executor: no context follows, so no filter either."""
    import asyncio

    tools = dict_tools()
    by_name = {t.name: t for t in tools}

    async def node(state: Any) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        message = state["messages"][-1]
        results = [await loop.run_in_executor(None, by_name[c["name"]].invoke, c["args"]) for c in message.tool_calls]
        return {"messages": [ToolMessage(content=json.dumps(r), name=c["name"], tool_call_id=c["id"])
                             for c, r in zip(message.tool_calls, results)]}

    return tutorial_agent(make_model(Spy()), node, tools)


def test_tools_run_in_an_executor_are_caught_by_what_the_model_saw(tmp_path: Path) -> None:
    report = _evaluate(_executor_agent, tmp_path)
    with_numbers = [r for r in report.conditions if r.condition != "baseline" and r.n_runs and r.not_applicable is None]
    assert with_numbers and not any(row.valid for row in with_numbers)
    assert report.condition("random_removal").not_applicable  # nothing revealed: nothing to draw a control from
    # the tools ran unseen (no trace, no filter): what the model was given names the channel
    assert "cached tool result 'crew'" in report.condition("cited_removal").invalid_reason


# ---------------------------------------------------------------- the exact route: a networkx graph read through a live view


def _film_graph() -> Any:
    import networkx as nx

    hidden = REMOVED.get()[0]  # the oracle's graph: the entities really deleted
    graph = nx.DiGraph()
    for i in (1, 2):
        for node, name, kind in ((f"m{i}", f"Film {i}", "film"), (f"d{i}", f"Director {i}", "person"),
                                 (f"c{i}", f"Producer {i}", "person")):
            if node not in hidden:
                graph.add_node(node, name=name, type=kind)
        for source, role in ((f"d{i}", "director"), (f"c{i}", "producer")):
            if source in graph and f"m{i}" in graph:
                graph.add_edge(source, f"m{i}", role=role)
    return graph


def _networkx_agent() -> Any:
    from graphtrail.kg import ablated_view

    view = ablated_view(_film_graph())  # the tools read the live view: ablated at the source in every replay run

    @tool
    def search(query: str) -> list[dict[str, Any]]:
        """Find films by title."""
        return [{"id": n, **d} for n, d in view.nodes(data=True) if d["type"] == "film" and d["name"] in query]

    @tool
    def crew(film_id: str) -> dict[str, Any]:
        """The people who made a film, with the edges linking them to it."""
        if film_id not in view:
            return {"entities": [], "edges": []}
        people = [{"id": s, **view.nodes[s], "role": view.edges[s, film_id]["role"]} for s in view.predecessors(film_id)]
        edges = [{"source": p["id"], "relation": "directed" if p["role"] == "director" else "produced", "target": film_id}
                 for p in people]
        return {"entities": people, "edges": edges}

    return create_agent(make_model(Spy()), [search, crew], name="networkx-films")


def test_a_networkx_graph_read_through_the_live_view_equals_the_oracle(tmp_path: Path) -> None:
    report = _evaluate(_networkx_agent, tmp_path)
    assert report.condition("baseline").accuracy == 1.0
    assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
    assert report.condition("cited_removal").accuracy == 0.0
    assert set(check_against_oracle(report, tmp_path, _networkx_agent)) == set(CONDITIONS)


# ---------------------------------------------------------------- an artifact the model never reads


def _document_agent() -> Any:
    """Content for the model, list[Document] beside it (a retriever's way): only the content is read by the model."""
    from langchain_core.documents import Document

    @tool
    def search(query: str) -> str:
        """Find films by title."""
        return json.dumps(search_rows(query))

    @tool(response_format="content_and_artifact")
    def crew(film_id: str) -> tuple[str, list[Any]]:
        """The people who made a film, with the edges linking them to it."""
        data = crew_of(film_id)
        docs = [Document(page_content=f"{p['name']} worked on {film_id}", metadata={"id": p["id"], "person": p["name"]}) for p in data["entities"]]
        return json.dumps(data), docs

    return create_agent(make_model(Spy()), [search, crew], name="document-films")


def test_an_artifact_the_model_never_reads_raises_no_false_alarm(tmp_path: Path) -> None:
    report = _evaluate(_document_agent, tmp_path)
    assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
    assert set(check_against_oracle(report, tmp_path, _document_agent)) == set(CONDITIONS)
