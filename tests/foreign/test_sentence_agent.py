"""A LangGraph ``create_react_agent`` agent that answers in sentences and cites by name.

It is written as the LangGraph docs write one: ``@tool`` functions that return
JSON text, ``create_react_agent(model, tools)``, no ``submit_answer`` and no
``[E:id]`` markers. Its final message is "Inception was directed by
Christopher Nolan." The scripted model reads the tool results like a model
would: when the director is not in them, it says it does not know.

Under ``evaluate`` it must get the accuracy a reader would give it (cover exact
match: correct, although the sentence is no exact match), its citations must be
read from the names it wrote, and the provenance scores must be filled in; with
``citations="markers"`` it cites nothing and the report must say so instead of
printing numbers for the conditions built from citations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool

from graphtrail.evaluators import evaluate
from graphtrail.evaluators.records import NO_CITATIONS
from tests.fakes import ScriptedChatModel, tool_call

from .oracle import check_against_oracle
from .world import REMOVED

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")

MOVIES = {"m1": "Inception", "m2": "Titanic"}
PEOPLE = {"p1": "Christopher Nolan", "p2": "Leonardo DiCaprio", "p3": "James Cameron", "p4": "Kate Winslet"}
EDGES = [("p1", "DIRECTED", "m1"), ("p2", "ACTED_IN", "m1"), ("p3", "DIRECTED", "m2"), ("p2", "ACTED_IN", "m2"),
         ("p4", "ACTED_IN", "m2")]
QUESTIONS = [
    {"id": "q1", "question": "Who directed Inception?", "answers": ["Christopher Nolan"], "movie": "Inception"},
    {"id": "q2", "question": "Who directed Titanic?", "answers": ["James Cameron"], "movie": "Titanic"},
]


def movie_records(hidden: frozenset[str] = frozenset(), masked: frozenset[str] = frozenset(),
                  blocked: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """The movies as a ``dict`` of id -> record (a movie lists its people by relation), ``hidden`` deleted with
    every reference to them and ``masked`` renamed: the oracle's data, written by hand (no text: ``blocked``
    withholds nothing)."""
    out: dict[str, dict[str, Any]] = {mid: {"id": mid, "name": name, "type": "Movie"} for mid, name in MOVIES.items()}
    out.update({pid: {"id": pid, "name": name, "type": "Person"} for pid, name in PEOPLE.items()})
    for source, relation, target in EDGES:
        out[target].setdefault(relation, []).append(source)
    for eid in list(out):
        if eid in hidden:
            del out[eid]
            continue
        for relation in ("DIRECTED", "ACTED_IN"):
            if relation in out[eid]:
                out[eid][relation] = [x for x in out[eid][relation] if x not in hidden]
        if eid in masked:
            out[eid]["name"] = f"[masked entity] {eid}"
    return out


def movie_tools(data: Any = None) -> list[Any]:
    """The agent's tools over ``data`` (:func:`movie_records`), else over the movies the oracle's ``REMOVED`` leaves."""

    def records() -> Any:
        return movie_records(*REMOVED.get()) if data is None else data

    @tool
    def search_movies(title: str) -> str:
        """Find movies whose title contains the given text."""
        return json.dumps([{"id": r["id"], "name": r["name"], "type": "Movie"} for r in records().values()
                           if r.get("type") == "Movie" and title.lower() in r["name"].lower()])

    @tool
    def movie_people(movie_id: str) -> str:
        """People linked to a movie, with how they are linked."""
        found = records()
        movie = found.get(movie_id)
        if movie is None:
            return json.dumps({"movie": movie_id, "people": [], "edges": []})
        edges = [{"source": s, "relation": r, "target": movie_id} for r in ("DIRECTED", "ACTED_IN")
                 for s in movie.get(r, []) if s in found]
        people = [{"id": e["source"], "name": found[e["source"]]["name"], "type": "Person"} for e in edges]
        return json.dumps({"movie": movie_id, "people": people, "edges": edges})

    return [search_movies, movie_people]


def _last_tool_json(messages: list[BaseMessage], name: str) -> Any:
    for msg in reversed(messages):
        if isinstance(msg, ToolMessage) and msg.name == name:
            try:
                return json.loads(msg.content)
            except ValueError:
                return None
    return None


def policy(messages: list[BaseMessage]) -> AIMessage:
    """Search the movie, list its people, then answer in a sentence from what the tools said."""
    question = next(m.content for m in messages if m.type == "human")
    movie = next(q["movie"] for q in QUESTIONS if q["question"] == question)
    found = _last_tool_json(messages, "search_movies")
    if found is None:
        return AIMessage(content="", tool_calls=[tool_call("search_movies", {"title": movie}, "c1")])
    if not found:
        return AIMessage(content=f"I could not find {movie}.")
    people = _last_tool_json(messages, "movie_people")
    if people is None:
        return AIMessage(content="", tool_calls=[tool_call("movie_people", {"movie_id": found[0]["id"]}, "c2")])
    names = {p["id"]: p["name"] for p in people.get("people", [])}
    director = next((names.get(e["source"]) for e in people.get("edges", []) if e["relation"] == "DIRECTED"), None)
    if director is None:
        return AIMessage(content=f"I don't know who directed {found[0]['name']}.")
    return AIMessage(content=f"{found[0]['name']} was directed by {director}.")


def build_agent(data: Any = None) -> Any:
    from langgraph.prebuilt import create_react_agent  # as in the LangGraph quickstart

    return create_react_agent(ScriptedChatModel(policy=policy), movie_tools(data))


CONDITIONS = ["cited_removal", "random_removal", "uncited_removal", "leave_one_out"]


def test_sentence_answers_name_citations_accuracy_and_provenance(tmp_path: Path) -> None:
    report = evaluate(build_agent(), QUESTIONS, conditions=CONDITIONS, baseline_repeats=1, progress=False,
                      concurrency=2, out_dir=tmp_path)
    assert all(row.valid for row in report.conditions)
    assert set(check_against_oracle(report, tmp_path, build_agent)) == set(CONDITIONS)  # and each equals the oracle
    base = report.condition("baseline")
    assert base.accuracy == 1.0  # "Inception was directed by Christopher Nolan." covers the gold
    assert base.exact_match == 0.0 and 0.0 < base.f1 < 1.0  # ...and is no exact match
    assert report.correctness == "cover_exact_match" and not report.cited_nothing

    by_q = {q.question_id: q for q in report.questions}
    assert by_q["q1"].citations == ["m1", "p1"]  # named in the sentence, in the order written
    assert by_q["q2"].citations == ["m2", "p3"]
    assert by_q["q1"].visited_uncited == ["p2"]
    assert set(by_q["q2"].visited_uncited) == {"p2", "p4"}

    # removing the cited entities (the only path to the answer) changes every answer
    cited = report.condition("cited_removal")
    assert cited.not_applicable is None and cited.accuracy == 0.0 and cited.changed_rate == 1.0
    assert by_q["q1"].answers["cited_removal"] == "I could not find Inception."
    # removing what was visited but not cited changes nothing
    uncited = report.condition("uncited_removal")
    assert uncited.accuracy == 1.0 and uncited.changed_rate == 0.0

    s = report.scores
    assert s.source_support == 1.0 and s.support_how == {"cited": 2}
    assert s.grounded_citations == 1.0
    assert s.fidelity is not None and s.fidelity > 0
    assert s.faithfulness["score"] == 1.0
    assert s.coverage == 1.0  # leave-one-out: the influential entities (movie, director) are the cited ones
    influential = {(e.question_id, e.entity_id) for e in report.entities if e.influential}
    assert {("q1", "p1"), ("q1", "m1")} <= influential and ("q1", "p2") not in influential

    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["correctness"] == "cover_exact_match"
    assert "Correct means cover exact match" in (tmp_path / "report.md").read_text()


def test_an_agent_that_cites_nothing_is_said_so(tmp_path: Path) -> None:
    report = evaluate(build_agent(), QUESTIONS, conditions=CONDITIONS, baseline_repeats=1, progress=False,
                      citations="markers", out_dir=tmp_path)
    assert report.cited_nothing
    assert report.condition("baseline").accuracy == 1.0
    for name in ("cited_removal", "random_removal"):
        row = report.condition(name)
        assert row.not_applicable == NO_CITATIONS and row.accuracy is None and row.changed_rate is None
        assert row.n_runs == 0  # not run at all: nothing to remove
    # uncited removal hides everything visited, leave-one-out each entity: both still run
    assert report.condition("uncited_removal").accuracy == 0.0
    assert report.condition("leave_one_out").n_runs > 0

    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["cited_nothing"] is True
    assert {c["condition"]: c["not_applicable"] for c in saved["conditions"]}["cited_removal"] == NO_CITATIONS
    md = (tmp_path / "report.md").read_text()
    first_lines = md.split("## Accuracy per condition")[0]
    assert "The agent cited no entities" in first_lines
    assert f"| Cited removal | {NO_CITATIONS} |" in md
    assert "cited-nothing" in (tmp_path / "report.html").read_text()
    # scores of the citations are not applicable either; hidden influence still speaks
    assert report.scores.source_support is None and report.scores.fidelity is None
    assert f"| Source support | {NO_CITATIONS} |" in md
    assert report.scores.hidden_influence > 0
