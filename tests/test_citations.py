"""Citations written in prose, resolved to entity ids (tracer/citations.py)."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

import graphtrail
from graphtrail.tracer.citations import check_citation_mode, resolve_citations
from tests.fakes import ScriptedChatModel, tool_call
from tests.test_tracer_kit import memory  # noqa: F401 - fixture

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")

VISITED = {
    "p1": ["Christopher Nolan", "Chris Nolan"],
    "m1": ["Inception"],
    "m2": ["The Dark Knight"],
    "m3": ["The Dark Knight Rises"],
    "n1": ["42"],  # a bare number: never matched in prose
    "x1": ["Al"],  # too short to match by accident
}


@pytest.mark.parametrize(
    "answer, text, cited",
    [
        ("The answer is Christopher Nolan.", "The answer is Christopher Nolan.", ["p1"]),
        ("the answer is CHRISTOPHER NOLAN", "the answer is CHRISTOPHER NOLAN", ["p1"]),
        ("Chris Nolan directed Inception.", "Chris Nolan directed Inception.", ["p1", "m1"]),
        ("It was [Christopher Nolan].", "It was Christopher Nolan.", ["p1"]),
        ("Nolan directed it [p1].", "Nolan directed it.", ["p1"]),
        ("Christopher Nolan (source: p1, m1).", "Christopher Nolan.", ["p1", "m1"]),
        ("Christopher Nolan.\n\nSources:\n- p1\n- Inception", "Christopher Nolan.", ["p1", "m1"]),
        ("Christopher Nolan. Sources: p1; p9", "Christopher Nolan.", ["p1", "p9"]),  # p9: cited, never revealed
        ("The Dark Knight Rises came later.", "The Dark Knight Rises came later.", ["m3"]),  # longest name wins
        ("Al said 42 times: Nolanism.", "Al said 42 times: Nolanism.", []),  # short names, numbers, parts of words
        ("[not an entity] is here", "[not an entity] is here", []),
        ("See [the docs](http://x) for Inception", "See [the docs](http://x) for Inception", ["m1"]),
    ],
)
def test_names_mode(answer, text, cited):
    assert resolve_citations(answer, VISITED, "names") == (text, cited)


def test_markers_mode_and_callable_and_bad_mode():
    assert resolve_citations("The answer is Christopher Nolan.", VISITED, "markers") == ("The answer is Christopher Nolan.", [])
    seen = {}

    def by_initial(answer, entities):
        seen.update(entities)
        return [eid for eid in entities if eid.startswith("m") and entities[eid][0] in answer]

    assert resolve_citations("Inception, then The Dark Knight", VISITED, by_initial)[1] == ["m1", "m2"]
    assert seen == VISITED

    def broken(answer, entities):
        raise RuntimeError("boom")

    assert resolve_citations("Inception", VISITED, broken) == ("Inception", [])
    with pytest.raises(ValueError, match="'markers', 'names' or a callable"):
        check_citation_mode("ids")
    with pytest.raises(ValueError):
        graphtrail.trace_agent(lambda q: q, citations="everything")


@tool
def find_person(name: str) -> str:
    """Find a person by name."""
    return json.dumps([{"id": "p1", "name": "Christopher Nolan", "aliases": ["Chris Nolan"]}])


@tool
def films_of(person_id: str) -> str:
    """Films a person directed."""
    return json.dumps({"edges": [{"source": person_id, "relation": "DIRECTED", "target": "m1"}],
                       "films": [{"id": "m1", "name": "Inception"}]})


def _agent(final_text: str, **trace_kwargs):
    from langgraph.prebuilt import create_react_agent  # as the LangGraph docs build it

    script = [
        AIMessage(content="", tool_calls=[tool_call("find_person", {"name": "Nolan"}, "c1")]),
        AIMessage(content="", tool_calls=[tool_call("films_of", {"person_id": "p1"}, "c2")]),
        AIMessage(content=final_text),
    ]
    return graphtrail.trace_agent(create_react_agent(ScriptedChatModel(script=script), [find_person, films_of]), **trace_kwargs)


def test_traced_sentence_answer_cites_by_name_with_sources():
    agent = _agent("Inception was directed by [Chris Nolan]. Sources: p1")
    with graphtrail.capture() as cap:
        agent.invoke({"messages": [("user", "Who directed Inception?")]})
    traj = cap.last
    assert traj.citations == ["p1", "m1"]
    assert traj.answer == "Inception was directed by Chris Nolan."
    assert traj.citation_sources["p1"].steps == [1] and traj.citation_sources["m1"].steps == [2]
    assert traj.visited_uncited == []


def test_markers_mode_keeps_the_old_rule_and_spans_agree(memory):
    agent = _agent("The answer is Christopher Nolan.", citations="markers")
    with graphtrail.capture() as cap:
        agent.invoke({"messages": [("user", "Who directed Inception?")]})
    assert cap.last.citations == [] and cap.last.answer == "The answer is Christopher Nolan."
    named = _agent("The answer is Christopher Nolan.")
    with graphtrail.capture() as cap:
        named.invoke({"messages": [("user", "Who directed Inception?")]})
    assert cap.last.citations == ["p1"]
    graphtrail.tracer.flush()
    rebuilt = graphtrail.tracer.trajectories_from_spans(memory.get_finished_spans())
    assert [t.citations for t in rebuilt] == [[], ["p1"]]


def test_callable_mode_in_the_tracer_sees_names_and_aliases():
    seen: dict = {}

    def resolver(answer, entities):
        seen.update(entities)
        return ["m1"] if "Inception" in answer else []

    agent = _agent("Inception, I think.", citations=resolver)
    with graphtrail.capture() as cap:
        agent.invoke({"messages": [("user", "Who directed Inception?")]})
    assert cap.last.citations == ["m1"]
    assert seen == {"p1": ["Christopher Nolan", "Chris Nolan"], "m1": ["Inception"]}


def test_explicit_or_marked_citations_are_never_overridden_by_names():
    agent = _agent("Christopher Nolan [E:m1]")
    with graphtrail.capture() as cap:
        agent.invoke({"messages": [("user", "Who directed Inception?")]})
    assert cap.last.citations == ["m1"]  # the marker wins; the name is not added
