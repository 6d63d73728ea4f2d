"""The filter route on agents written fresh, one per hole of issue 28 (item 5): every valid condition equals the oracle.

Each agent reads the scientists' graph of people.py through a tool in a shape
graphtrail's filter did not know by its shape: a retriever over per-person
passages, a JSON-LD tool keyed by name, a Markdown table with a ``person_id``
column, a dynamic prompt that writes what an ablation-aware source shows. Each
is evaluated with ``kg=`` (the filter route, with the output filter), and every
run of every valid condition is rerun by a fresh agent on data with the run's
entities really deleted, masked or text-blocked (the oracle).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, dynamic_prompt
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import create_retriever_tool, tool
from langchain_core.vectorstores import InMemoryVectorStore

from graphtrail.agents import active_filter
from graphtrail.evaluators import evaluate

from .oracle import check_against_oracle
from .people import (
    ORDER, PEOPLE, answer_text, asked_name, call, colleagues, find, parse, people_kg, people_model, person, questions,
)

CONDITIONS = ["cited_removal", "full_isolation", "text_only_isolation", "uncited_removal", "uncited_mask", "leave_one_out"]
OPTIONS: dict[str, Any] = {"conditions": CONDITIONS, "baseline_repeats": 1, "progress": False, "n_boot": 50,
                           "paper_reference": False, "concurrency": 2}


def _evaluate(build: Any, out: Path) -> Any:
    report = evaluate(build(), questions(), people_kg(), out_dir=out, **OPTIONS)
    assert report.condition("baseline").accuracy == 1.0
    return report


def _all_valid_and_exact(report: Any, out: Path, build: Any) -> None:
    invalid = [(r.condition, r.invalid_reason) for r in report.conditions if not r.valid]
    try:
        checked = check_against_oracle(report, out, build)  # every valid run equals the oracle
    except AssertionError as exc:
        raise AssertionError(f"{exc}; invalid: {invalid}") from None
    assert invalid == [], invalid  # and nothing correctly filtered was marked invalid
    assert set(checked) == set(CONDITIONS)


# ---------------------------------------------------------------- a retriever over per-person passages


class WordEmbeddings(Embeddings):
    """A passage's heading (its first line) as a bag of words in 256 dimensions (and a constant one): offline, deterministic."""

    def _one(self, text: str) -> list[float]:
        vec = [0.0] * 256 + [0.1]
        for word in re.findall(r"\w+", text.splitlines()[0].lower() if text.strip() else ""):
            vec[sum(ord(c) * (i + 1) for i, c in enumerate(word)) % 256] += 1.0
        norm = math.sqrt(sum(v * v for v in vec))
        return [v / norm for v in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def passage(pid: str, data: Any = None) -> str | None:
    record = person(pid, data)
    if record is None:
        return None
    lines = [f"{record['name']} (id: {pid})"]
    if record["description"]:
        lines.append(record["description"])
    lines += [f"Colleague: {person(c, data)['name']} (id: {c})" for c in colleagues(pid, data)]
    return "\n".join(lines)


def _passage_policy(messages: list[BaseMessage], results: list[ToolMessage]) -> AIMessage:
    name = asked_name(messages)
    if not results:
        return call("search_people", {"query": name}, 0)
    blocks = [b for b in str(results[0].content).split("\n\n") if b.strip()]
    if not blocks:
        return AIMessage(content=answer_text(None, None))
    lines = blocks[0].splitlines()
    heading = re.fullmatch(r"(.+) \(id: \w+\)", lines[0])
    if heading is not None and heading.group(1) != name:
        return AIMessage(content=answer_text(None, None))  # the passage is about someone else
    body = lines[1:] if heading is not None else lines
    found = [line.removeprefix("Colleague: ").rpartition(" (id:")[0] for line in body if line.startswith("Colleague: ")]
    description = next((line for line in body if not line.startswith("Colleague: ")), None)
    return AIMessage(content=answer_text(found[0] if found else None, description))


def _retriever_agent(data: Any = None) -> Any:
    docs = [Document(page_content=text, metadata={"person_id": pid}) for pid in ORDER if (text := passage(pid, data))]
    store = InMemoryVectorStore.from_documents(docs, WordEmbeddings())
    search = create_retriever_tool(store.as_retriever(search_kwargs={"k": 1}), "search_people",
                                   "Search passages about scientists.")
    return create_agent(people_model(_passage_policy), [search], name="passages")


def test_retriever_over_passages_cuts_the_whole_passage_and_its_text(tmp_path: Path) -> None:
    report = _evaluate(_retriever_agent, tmp_path)
    assert report.questions[0].visited_uncited == ["p1"]  # the passage's heading names her by id
    assert report.condition("uncited_removal").accuracy == 0.0  # her passage was the only path to her colleague
    _all_valid_and_exact(report, tmp_path, _retriever_agent)


# ---------------------------------------------------------------- a JSON-LD tool keyed by name


def jsonld(query: str, data: Any = None) -> str:
    pid = find(query, data)
    record = person(pid, data) if pid is not None else None
    if record is None:
        return json.dumps({"@context": "https://schema.org", "@graph": []})
    node: dict[str, Any] = {"@id": pid, "@type": "Person", "name": record["name"]}
    if record["description"]:
        node["description"] = record["description"]
    node["colleague"] = [{"@id": c} for c in colleagues(pid, data)]  # references: the model asks for them in turn
    return json.dumps({"@context": "https://schema.org", "@graph": [node]})


def _jsonld_policy(messages: list[BaseMessage], results: list[ToolMessage]) -> AIMessage:
    if not results:
        return call("lookup", {"query": asked_name(messages)}, 0)
    first = (parse(results[0].content) or {}).get("@graph") or []
    if not first:
        return AIMessage(content=answer_text(None, None))
    refs = [c.get("@id") for c in first[0].get("colleague") or [] if isinstance(c, dict)]
    if len(results) == 1:
        return call("lookup", {"query": refs[0]}, 1) if refs else AIMessage(content=answer_text(None, None))
    second = (parse(results[1].content) or {}).get("@graph") or []
    colleague = second[0].get("name") if second else None
    return AIMessage(content=answer_text(colleague, first[0].get("description")))


def _jsonld_agent(data: Any = None) -> Any:
    @tool
    def lookup(query: str) -> str:
        """A scientist as schema.org JSON-LD, by name or id."""
        return jsonld(query, data)

    return create_agent(people_model(_jsonld_policy), [lookup], name="jsonld")


def test_jsonld_tool_by_id_value_short_descriptions_and_masked_names(tmp_path: Path) -> None:
    report = _evaluate(_jsonld_agent, tmp_path)
    assert report.questions[0].citations == ["p2"] and report.questions[0].visited_uncited == ["p1", "p3"]
    # a short description withheld is gone from what the model read: the answer no longer says "physicist"
    assert report.questions[1].answers["text_only_isolation"] == "Pierre Curie."
    # a masked person cannot be found by her real name any more
    assert report.questions[1].answers["uncited_mask"] == "I don't know."
    _all_valid_and_exact(report, tmp_path, _jsonld_agent)


# ---------------------------------------------------------------- a Markdown table with a person_id column


def table(query: str, data: Any = None) -> str:
    pid = find(query, data)
    if pid is None:
        return "No such scientist."
    rows = [(pid, person(pid, data), "subject")] + [(c, person(c, data), "colleague") for c in colleagues(pid, data)]
    lines = ["| person_id | name | about | role |", "|---|---|---|---|"]
    lines += [f"| {p} | {r['name']} | {r['description'] or ''} | {role} |" for p, r, role in rows]
    return "\n".join(lines)


def _table_policy(messages: list[BaseMessage], results: list[ToolMessage]) -> AIMessage:
    if not results:
        return call("scientist_table", {"query": asked_name(messages)}, 0)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in str(results[0].content).splitlines()[2:]]
    subject = next((r for r in rows if r[3] == "subject"), None)
    colleague = next((r[1] for r in rows if r[3] == "colleague"), None)
    return AIMessage(content=answer_text(colleague if subject else None, subject[2] if subject else None))


def _table_agent(data: Any = None) -> Any:
    @tool
    def scientist_table(query: str) -> str:
        """A scientist and their colleagues, as a Markdown table."""
        return table(query, data)

    return create_agent(people_model(_table_policy), [scientist_table], name="table")


def test_markdown_table_with_a_person_id_column(tmp_path: Path) -> None:
    report = _evaluate(_table_agent, tmp_path)
    assert report.questions[0].visited_uncited == ["p1", "p3"] or report.questions[0].visited_uncited == ["p1"]
    _all_valid_and_exact(report, tmp_path, _table_agent)


# ---------------------------------------------------------------- JSON rows keyed by "uid": recognised by value


def uid_rows(query: str, data: Any = None) -> str:
    pid = find(query, data)
    record = person(pid, data) if pid is not None else None
    if record is None:
        return "[]"
    return json.dumps([{"uid": pid, "full_name": record["name"], "knows": colleagues(pid, data)}])


def _uid_policy(messages: list[BaseMessage], results: list[ToolMessage]) -> AIMessage:
    if not results:
        return call("people", {"query": asked_name(messages)}, 0)
    first = parse(results[0].content) or []
    if not first or not first[0].get("knows"):
        return AIMessage(content=answer_text(None, None))
    if len(results) == 1:
        return call("people", {"query": first[0]["knows"][0]}, 1)
    second = parse(results[1].content) or []
    return AIMessage(content=answer_text(second[0]["full_name"] if second else None, None))


def _uid_agent(data: Any = None) -> Any:
    @tool
    def people(query: str) -> str:
        """Scientists as JSON rows, by name or uid."""
        return uid_rows(query, data)

    return create_agent(people_model(_uid_policy), [people], name="uid-rows")


def test_json_rows_keyed_by_uid_are_read_by_value_with_a_kg(tmp_path: Path) -> None:
    report = _evaluate(_uid_agent, tmp_path)
    assert report.questions[0].citations == ["p2"] and "p1" in report.questions[0].visited_uncited
    _all_valid_and_exact(report, tmp_path, _uid_agent)


# ---------------------------------------------------------------- human in the loop, streamed


def _hitl_agent() -> Any:
    """Every lookup waits for a human's approval (an interrupt); a function streams the run and approves each call."""
    import uuid

    import graphtrail
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    @tool
    def lookup(query: str) -> str:
        """A scientist as schema.org JSON-LD, by name or id."""
        return jsonld(query)

    agent = create_agent(people_model(_jsonld_policy), [lookup], checkpointer=InMemorySaver(), name="hitl",
                         middleware=[HumanInTheLoopMiddleware(interrupt_on={"lookup": True})])

    @graphtrail.trace_agent(name="hitl-people")
    def ask(question: str) -> Any:
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        payload: Any = {"messages": [("user", question)]}
        final = None
        while True:
            interrupted = False
            for mode, chunk in agent.stream(payload, config, stream_mode=["updates", "values"]):
                if mode == "updates" and "__interrupt__" in chunk:
                    interrupted = True
                elif mode == "values":
                    final = chunk
            if not interrupted:
                return final
            payload = Command(resume={"decisions": [{"type": "approve"}]})  # the human approves

    return ask


def test_human_in_the_loop_streamed_and_resumed(tmp_path: Path) -> None:
    report = _evaluate(_hitl_agent, tmp_path)
    assert report.questions[0].citations == ["p2"]
    assert report.questions[1].answers["uncited_mask"] == "I don't know."
    _all_valid_and_exact(report, tmp_path, _hitl_agent)


# ---------------------------------------------------------------- what an ablation-aware prompt shows is no leak


def _shown(pid: str) -> dict[str, Any] | None:
    """What an exact source shows in an evaluation run: the data, less what the run's filter withholds."""
    record = person(pid)
    f = active_filter()
    if record is None or f is None:
        return record
    if pid in f.hidden:
        return None
    if pid in f.masked or pid in f.text_blocked:
        return {**record, "description": None}
    return record


@dynamic_prompt
def background(request: ModelRequest) -> str:
    known = [r["description"] for pid in ORDER if (r := _shown(pid)) is not None and r["description"]]
    return "You answer questions about scientists. Background: " + " ".join(known)


def _prompted_agent() -> Any:
    @tool
    def lookup(query: str) -> str:
        """A scientist as schema.org JSON-LD, by name or id."""
        return jsonld(query)

    return create_agent(people_model(_jsonld_policy), [lookup], middleware=[background], name="prompted")


def test_a_visible_persons_own_description_in_the_prompt_is_no_leak(tmp_path: Path) -> None:
    """Lise Meitner's description names Otto Hahn: hiding him leaves it in the prompt, as the real data would."""
    report = _evaluate(_prompted_agent, tmp_path)
    assert "Otto Hahn" in PEOPLE["p1"][1]
    _all_valid_and_exact(report, tmp_path, _prompted_agent)


@pytest.mark.parametrize("pid", ["p1", "p4"])
def test_the_world_really_ablates(pid: str) -> None:
    from .world import REMOVED, WITHHELD

    token, withheld = REMOVED.set((frozenset(), frozenset({pid}))), WITHHELD.set(frozenset())
    try:
        assert find(PEOPLE[pid][0]) is None and person(pid)["description"] is None
    finally:
        REMOVED.reset(token)
        WITHHELD.reset(withheld)
