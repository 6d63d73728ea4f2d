"""Answer/citation parsing and entity extraction on their own (plain functions, edge cases)."""

from __future__ import annotations

import re

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from graphtrail.tracer import Edge, Entity
from graphtrail.tracer._content import clean_args, truncate
from graphtrail.tracer.extract import (
    compile_pattern,
    extract_answer,
    extract_entities,
    generic_extract,
    text_citations,
)

DEFAULT = compile_pattern(None)


def submit(answer, citations, call_id):
    return AIMessage("", tool_calls=[{"name": "submit_answer", "args": {"answer": answer, "citations": citations}, "id": call_id}])


def test_last_accepted_submission_wins():
    msgs = [
        HumanMessage("q"),
        submit("first", ["E1"], "a"),
        ToolMessage("ok", tool_call_id="a"),
        submit("second", ["E2", "E2", " E3 "], "b"),
        ToolMessage("accepted", tool_call_id="b"),
        submit("third", ["E4"], "c"),
        ToolMessage("rejected: uncited", tool_call_id="c", status="error"),
        AIMessage("I give up [E:E9]"),
    ]
    r = extract_answer({"messages": msgs}, DEFAULT)
    assert (r.answer, r.citations, r.status) == ("second", ["E2", "E3"], "ok")


def test_submission_without_tool_message_is_accepted_and_string_citations_split():
    r = extract_answer({"messages": [submit("x", "E1, E2;E3", "z")]}, DEFAULT)
    assert r.citations == ["E1", "E2", "E3"] and r.status == "ok"


def test_all_rejected_is_no_answer_even_with_text_markers():
    msgs = [submit("x", [], "a"), ToolMessage("no", tool_call_id="a", status="error"), AIMessage("stop [E:E1]")]
    r = extract_answer({"messages": msgs}, DEFAULT)
    assert (r.answer, r.citations, r.status) == (None, [], "no_answer")


@pytest.mark.parametrize(
    ("text", "answer", "ids"),
    [
        ("Nairobi uses KES [E:E1][E:E2].", "Nairobi uses KES.", ["E1", "E2"]),
        ("KES [E: E1 , E2] and [E:E1]", "KES and", ["E1", "E2"]),
        ("no markers here", "no markers here", []),
        ("[E:] empty then [E:Q42]", "empty then", ["Q42"]),
        ("[e:E1] wrong case", "[e:E1] wrong case", []),
    ],
)
def test_text_markers(text, answer, ids):
    r = extract_answer({"messages": [HumanMessage("q"), AIMessage(text)]}, DEFAULT)
    assert r.answer == answer and r.citations == ids and r.status == "ok"


def test_custom_pattern_and_list_content():
    pattern = compile_pattern(r"\{\{(\w+)\}\}")
    msg = AIMessage([{"type": "text", "text": "Paris {{P1}}"}, {"type": "text", "text": " and {{P2}}"}])
    r = extract_answer({"messages": [msg]}, pattern)
    assert r.citations == ["P1", "P2"] and r.answer == "Paris and"
    whole = re.compile(r"Q\d+")  # no group: the whole match is the id
    assert text_citations("see Q1 and Q22", whole) == ("see and", ["Q1", "Q22"])


def test_user_parser_is_the_fallback_after_markers():
    def parser(output):
        return {"answer": "parsed", "citations": ["U1"]}

    plain = {"messages": [AIMessage("Sources: U1")]}
    assert extract_answer(plain, DEFAULT, parser).citations == ["U1"]
    marked = {"messages": [AIMessage("x [E:M1]")]}
    assert extract_answer(marked, DEFAULT, parser).citations == ["M1"]
    assert extract_answer(plain, DEFAULT, lambda o: ("tuple", "A, B")).citations == ["A", "B"]
    # a parser that raises is ignored
    assert extract_answer(plain, DEFAULT, lambda o: 1 / 0).answer == "Sources: U1"


def test_outputs_without_an_answer():
    assert extract_answer({"messages": [HumanMessage("q")]}, DEFAULT).status == "no_answer"
    assert extract_answer({"foo": 1}, DEFAULT) is None
    assert extract_answer(None, DEFAULT) is None
    assert extract_answer("plain [E:X1]", DEFAULT).citations == ["X1"]


def test_generic_fallback_shapes():
    found = generic_extract('{"a": {"b": [{"id": 7, "name": "Seven", "type": "num"}, {"entity_id": "E2"}]}, "id": "TOP"}')
    assert [e.id for e in found.entities] == ["TOP", "7", "E2"]
    assert found.entities[1].to_model() == Entity(id="7", name="Seven", type="num")
    found = generic_extract([{"node_id": "N1"}, {"subject": "N1", "predicate": "p", "object": "N2"}, ["x"]])
    assert [e.id for e in found.entities] == ["N1"] and [e.to_model() for e in found.edges] == [Edge(source="N1", relation="p", target="N2")]
    for junk in ("", "not json", "{broken", "[1, 2", 42, None, b"\x00", {"id": None}, {"id": True}, [[[[]]]]):
        assert generic_extract(junk).entities == []
    deep = {"id": "D0"}
    for i in range(1, 50):
        deep = {"child": deep, "id": f"D{i}"}
    assert len(generic_extract(deep).entities) < 50  # depth-bounded, never recursion errors


def test_artifact_beats_extractor_beats_fallback():
    artifact = {"entities": [{"id": "A1"}], "edges": [{"source": "A1", "relation": "r", "target": "A2"}]}
    ext = {"t": lambda out, args: {"entities": [Entity(id="X1")], "edges": [("X1", "r", "X2")]}}
    # an edge names both its ends: A2 / X2 were revealed by the call too
    assert [e.id for e in extract_entities("t", '{"id": "F1"}', {}, artifact, ext).entities] == ["A1", "A2"]
    assert [e.id for e in extract_entities("t", '{"id": "F1"}', {}, None, ext).entities] == ["X1", "X2"]
    assert [e.id for e in extract_entities("t", '{"id": "F1"}', {}, "not-an-artifact", None).entities] == ["F1"]
    tuple_form = {"t": lambda out, args: (["T1", {"id": "T2", "name": 5}], [])}
    found = extract_entities("t", "", {}, None, tuple_form)
    assert [e.to_model() for e in found.entities] == [Entity(id="T1"), Entity(id="T2", name="5")]


def test_clean_args_modes_and_secrets():
    args = {"query": "who is the president", "entity_id": "Q42", "k": 3, "api_key": "sk-1", "nested": {"password": "p"}}
    assert clean_args(args, "full", 10) == {
        "query": truncate("who is the president", 10),
        "entity_id": "Q42",
        "k": 3,
        "api_key": "<redacted>",
        "nested": {"password": "<redacted>"},
    }
    assert clean_args(args, "ids-only", 100)["query"] == "<redacted>"
    assert clean_args(args, "ids-only", 100)["entity_id"] == "Q42"
    assert clean_args(args, "none", 100) == {}
    assert clean_args("raw", "full", 100) == {"input": "raw"}
