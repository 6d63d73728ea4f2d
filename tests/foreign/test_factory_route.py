"""The factory route: every condition equals the agent rebuilt on really-ablated data (the oracle).

Agents are written the way today's LangChain and LangGraph docs write them, over
the data users keep (tests/foreign/passages.py): a retriever tool over an
``InMemoryVectorStore`` of per-entity passages, facts in a custom state channel
(networkx), the functional API (``@entrypoint``/``@task``, a dict of records), a
retrieval subgraph (pandas tables, ``person_id`` keys), a JSON-LD tool
(graphtrail's KnowledgeGraph, ``@id`` keys). Each goes through
``evaluate(make_agent, questions, graph=data)``; the oracle rebuilds the same
agent on data this test deleted itself (never through graphtrail's ``ablated``)
and asks again. Every condition must be valid, exact, and equal the oracle run for run.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage, convert_to_messages
from langchain_core.tools import create_retriever_tool, tool
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

import graphtrail
from graphtrail.evaluators import evaluate
from graphtrail.evaluators.records import DEFAULT_CONDITIONS
from graphtrail.evaluators.replay.runner import AgentRunner, answer_from_output

from . import passages as world
from .oracle import load_records
from .passages import answer_text, calls, human, record_tools, rounds, scripted, subject_of, tool_outputs

OPTIONS: dict[str, Any] = {"conditions": [c for c in DEFAULT_CONDITIONS if c != "baseline"], "baseline_repeats": 1,
                           "progress": False, "n_boot": 50, "paper_reference": False, "concurrency": 2}


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


# ---------------------------------------------------------------- a retriever tool over per-entity passages


def _retriever_policy(messages: list[Any]) -> AIMessage:
    n, subject = rounds(messages), subject_of(human(messages))
    if n == 0:
        return calls(0, ("search_passages", {"query": subject}))
    found = [p for out in tool_outputs(messages) for p in out.split("\n\n")]
    own = next((p for p in found if p.startswith(subject + ":")), None)
    colleague = re.search(r"^Colleague: (.+)$", own or "", re.M)
    if colleague is None:
        return AIMessage(content="I don't know.")
    name = colleague.group(1)
    if n == 1:
        return calls(1, ("search_passages", {"query": name}))
    theirs = next((p for p in found if p.startswith(name + ":")), None)
    description = theirs.split("\n")[0].split(":", 1)[1].strip() if theirs else None
    institute = re.search(r"^Worked at: (.+)$", own or "", re.M)
    return AIMessage(content=answer_text(name, description, institute.group(1) if institute else None))


def retriever_agent(docs: list[Any]) -> Any:
    store = InMemoryVectorStore(world.KeywordEmbeddings())
    if docs:
        store.add_documents(list(docs))
    search = create_retriever_tool(store.as_retriever(search_kwargs={"k": 3}), "search_passages",
                                   "Search passages about scientists, their colleagues and institutes.")
    return create_agent(scripted(_retriever_policy, "scripted-retriever"), [search], name="retriever")


# ---------------------------------------------------------------- facts kept in a custom state channel (networkx)


class FactsState(MessagesState):
    facts: list[dict[str, Any]]


def _facts_policy(messages: list[Any]) -> AIMessage:
    n, subject = rounds(messages), subject_of(human(messages))
    if n == 0:
        return calls(0, ("lookup", {"name": subject}))
    system = next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "Known facts:\n[]")
    facts = _json(system.split("\n", 1)[1]) or []
    person = next((f for f in facts if f.get("name") == subject), None)
    colleague = (person or {}).get("colleagues", [None])[0]
    if colleague is None:
        return AIMessage(content="I don't know.")
    institute = (person.get("works_at") or [{}])[0].get("name")
    return AIMessage(content=answer_text(colleague.get("name"), colleague.get("description"), institute))


def state_channel_agent(g: Any) -> Any:
    @tool
    def lookup(name: str) -> str:
        """Look a scientist up by name: description, colleagues and institute."""
        node = next((n for n, d in g.nodes(data=True) if d.get("name") == name), None)
        if node is None:
            return json.dumps({"error": f"no scientist named {name}"})
        data = g.nodes[node]
        out: dict[str, Any] = {"id": node, "name": data.get("name"), "description": data.get("description")}
        for _, other, relation in g.out_edges(node, data="relation"):
            od = g.nodes[other]
            out.setdefault(relation, []).append({"id": other, "name": od.get("name"), "description": od.get("description")})
        return json.dumps(out)

    llm = scripted(_facts_policy, "scripted-facts").bind_tools([lookup])

    def agent(state: FactsState) -> dict[str, Any]:
        prompt = SystemMessage(content="Known facts:\n" + json.dumps(state.get("facts") or []))
        conversation = [m for m in state["messages"] if not isinstance(m, ToolMessage)]
        return {"messages": [llm.invoke([prompt, *conversation])]}

    def remember(state: FactsState) -> dict[str, Any]:
        last = state["messages"][-1]
        fact = _json(str(last.content)) if isinstance(last, ToolMessage) else None
        return {"facts": [*(state.get("facts") or []), *([fact] if isinstance(fact, dict) and "error" not in fact else [])]}

    builder = StateGraph(FactsState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([lookup]))
    builder.add_node("remember", remember)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "remember")
    builder.add_edge("remember", "agent")
    return builder.compile(name="facts")


# ---------------------------------------------------------------- the functional API over a dict of records


def _functional_policy(messages: list[Any]) -> AIMessage:
    n, subject = rounds(messages), subject_of(human(messages))
    if n == 0:
        return calls(0, ("find_person", {"name": subject}))
    outs = [m for m in messages if isinstance(m, ToolMessage)]
    person = _json(str(outs[0].content)) or {}
    if n == 1:
        colleague = (person.get("colleagues") or [None])[0]
        if colleague is None:
            return AIMessage(content="I don't know.")
        wanted = [("get_record", {"record_id": colleague})]
        wanted += [("get_record", {"record_id": i}) for i in (person.get("works_at") or [])[:1]]
        return calls(1, *wanted)
    read = [_json(str(m.content)) or {} for m in outs[1:]]
    colleague = read[0] if read else {}
    institute = read[1].get("name") if len(read) > 1 else None
    return AIMessage(content=answer_text(colleague.get("name"), colleague.get("description"), institute))


def functional_agent(data: Any) -> Any:
    find_person, get_record = record_tools(data)

    tools = {t.name: t for t in (find_person, get_record)}
    model = scripted(_functional_policy, "scripted-functional").bind_tools(list(tools.values()))

    @task
    def call_model(messages: list[Any]) -> Any:
        return model.invoke(messages)

    @task
    def call_tool(tool_call: dict[str, Any]) -> Any:
        return tools[tool_call["name"]].invoke(tool_call)

    @entrypoint()
    def agent(inputs: dict[str, Any]) -> dict[str, Any]:
        messages = convert_to_messages(inputs["messages"])
        response = call_model(messages).result()
        while response.tool_calls:
            results = [call_tool(c) for c in response.tool_calls]
            messages = add_messages(messages, [response, *(r.result() for r in results)])
            response = call_model(messages).result()
        return {"messages": add_messages(messages, [response])}

    return agent


# ---------------------------------------------------------------- a retrieval subgraph over pandas tables


def _subgraph_policy(messages: list[Any]) -> AIMessage:
    n, subject = rounds(messages), subject_of(human(messages))
    if n == 0:
        return calls(0, ("search_people", {"name": subject}))
    outs = tool_outputs(messages)
    people = _json(outs[0]) or []
    if not people:
        return AIMessage(content="I don't know.")
    if n == 1:
        return calls(1, ("links", {"person_id": people[0]["person_id"]}))
    links = _json(outs[1]) or []
    colleague = next((x for x in links if x["relation"] == "colleagues"), None)
    institute = next((x["target_name"] for x in links if x["relation"] == "works_at"), None)
    if colleague is None:
        return AIMessage(content="I don't know.")
    return AIMessage(content=answer_text(colleague["target_name"], colleague["target_bio"], institute))


def subgraph_agent(tables: Any) -> Any:
    entities, relations = tables.entities, tables.relations
    by_id = {row["id"]: row for row in entities.to_dict("records")}

    @tool
    def search_people(name: str) -> str:
        """People whose name matches exactly."""
        rows = entities[entities["name"] == name]
        return json.dumps([{"person_id": r["id"], "full_name": r["name"], "bio": r["description"]} for r in rows.to_dict("records")])

    @tool
    def links(person_id: str) -> str:
        """What a person is linked to."""
        rows = relations[relations["source"] == person_id]
        return json.dumps([{"relation": r["relation"], "target_id": r["target"], "target_name": by_id[r["target"]]["name"],
                            "target_bio": by_id[r["target"]]["description"]} for r in rows.to_dict("records")])

    retrieval = StateGraph(MessagesState)
    retrieval.add_node("run_tools", ToolNode([search_people, links]))
    retrieval.add_edge(START, "run_tools")
    retrieval.add_edge("run_tools", END)
    llm = scripted(_subgraph_policy, "scripted-subgraph").bind_tools([search_people, links])

    parent = StateGraph(MessagesState)
    parent.add_node("agent", lambda state: {"messages": [llm.invoke(state["messages"])]})
    parent.add_node("tools", retrieval.compile(name="retrieval"))
    parent.add_edge(START, "agent")
    parent.add_conditional_edges("agent", tools_condition)
    parent.add_edge("tools", "agent")
    return parent.compile(name="with_subgraph")


# ---------------------------------------------------------------- a JSON-LD tool over graphtrail's KnowledgeGraph


def _jsonld_policy(messages: list[Any]) -> AIMessage:
    n, subject = rounds(messages), subject_of(human(messages))
    if n == 0:
        return calls(0, ("describe", {"name": subject}))
    node = _json(tool_outputs(messages)[0]) or {}
    colleague = (node.get("colleague") or [None])[0]
    if colleague is None:
        return AIMessage(content="I don't know.")
    institute = (node.get("worksFor") or {}).get("name")
    return AIMessage(content=answer_text(colleague.get("name"), colleague.get("description") or None, institute))


def jsonld_agent(kg: Any, system_prompt: str | None = None) -> Any:
    def node(record: Any) -> dict[str, Any]:
        kind = "Person" if record.type == "person" else "Organization"
        return {"@id": record.id, "@type": kind, "name": record.name, "description": record.description}

    @tool
    def describe(name: str) -> str:
        """A scientist as schema.org JSON-LD, with colleagues and employer."""
        found = next((r for r in kg.entities() if r.name == name), None)
        if found is None:
            return json.dumps({"@context": "https://schema.org", "error": "not found"})
        doc = {"@context": "https://schema.org", **node(found)}
        for rel in kg.out_relations(found.id):
            other = kg.entity(rel.target)
            if rel.relation == "colleagues":
                doc.setdefault("colleague", []).append(node(other))
            elif rel.relation == "works_at":
                doc["worksFor"] = node(other)
        return json.dumps(doc)

    return create_agent(scripted(_jsonld_policy, "scripted-jsonld"), [describe], name="jsonld", system_prompt=system_prompt)


# ---------------------------------------------------------------- the oracle and the test


def oracle_answer(make_agent: Any, data: Any, question: str) -> str | None:
    agent = graphtrail.trace_agent(make_agent(data))
    with graphtrail.capture() as cap:
        output = asyncio.run(AgentRunner(agent)(question))
    return cap.last.answer if cap.last is not None else answer_from_output(output)[0]


STYLES = {
    "retriever_tool": (retriever_agent, world.documents),
    "custom_state_channel": (state_channel_agent, world.graph),
    "functional_api": (functional_agent, world.records),
    "retrieval_subgraph": (subgraph_agent, world.tables),
    "jsonld_tool": (jsonld_agent, world.knowledge_graph),
}


@pytest.mark.parametrize("style", list(STYLES))
def test_every_condition_equals_the_oracle(style: str, tmp_path: Path) -> None:
    make_agent, data = STYLES[style]
    report = evaluate(make_agent, world.questions(), graph=data(), out_dir=tmp_path, **OPTIONS)
    records = load_records(tmp_path)
    baselines = [r for r in records if r.key.condition == "baseline"]
    assert [r.answer for r in sorted(baselines, key=lambda r: r.key.question_id)] == [
        "Otto Hahn (German chemist who discovered fission) at Kaiser Wilhelm Institute",
        "Pierre Curie (French physicist who studied magnetism) at Sorbonne",
    ]
    wrong, checked = [], 0
    ids = set(world.records())
    for record in records:
        if record.key.condition == "baseline":
            continue
        assert record.route == "factory" and record.method == "exact", record
        cut = (frozenset(record.hidden), frozenset(record.masked), frozenset(record.text_blocked))
        assert set().union(*cut) <= ids, f"ablated something the data does not hold: {cut}"
        truth = oracle_answer(make_agent, data(cut), record.question)
        checked += 1
        if truth != record.answer:
            wrong.append((record.key.condition, record.key.variant, cut, record.answer, truth))
    assert wrong == [], f"conditions that differ from the oracle: {wrong}"
    ran = {r.key.condition for r in records} - {"baseline"}
    assert ran >= {"uncited_removal", "uncited_mask", "leave_one_out", "cited_removal", "text_only_isolation"}, ran
    for condition in ran:
        row = report.condition(condition)
        assert row.valid, (condition, row.invalid_reason)
    changed = {r.answer for r in records} - {r.answer for r in baselines}
    assert changed, "no condition changed an answer: the test would pass with ablation doing nothing"
