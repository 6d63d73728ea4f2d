"""The seven graph tools: content the model reads, artifacts in the tracer's shape, filtered views."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from langchain_core.messages import ToolMessage

from graphtrail.agents import GraphFilter, KnowledgeGraph, make_graph_tools, use_filter
from graphtrail.agents.tools import GRAPH_TOOL_NAMES
from graphtrail.tracer import Edge, Entity
from tests.graph_backends import BACKEND_PARAMS, on_backend


def tiny_kg() -> KnowledgeGraph:
    """Kenya and its neighbourhood, plus a name containing "of" and one containing "and"."""
    kg = KnowledgeGraph(name="tiny")
    for eid, name, etype, aliases in [
        ("E1", "Kenya", "country", ("Republic of Kenya",)),
        ("E2", "Nairobi", "city", ()),
        ("E3", "Kenyan shilling", "currency", ()),
        ("E4", "Tanzania", "country", ()),
        ("E5", "Dodoma", "city", ()),
        ("E6", "Africa", "region", ()),
        ("E7", "Swahili", "language", ()),
        ("E8", "Isle of Man", "country", ()),
        ("E9", "Douglas", "city", ()),
        ("E10", "Trinidad and Tobago", "country", ()),
        ("E11", "Venezuela", "country", ()),
    ]:
        kg.add_entity(eid, name, etype, description=f"{name} is a {etype}.", aliases=aliases)
    for s, r, t in [
        ("E1", "capital", "E2"), ("E1", "currency", "E3"), ("E1", "region", "E6"), ("E1", "language", "E7"),
        ("E4", "capital", "E5"), ("E4", "region", "E6"), ("E4", "language", "E7"),
        ("E1", "borders", "E4"), ("E4", "borders", "E1"),
        ("E8", "capital", "E9"), ("E10", "borders", "E11"), ("E11", "borders", "E10"),
    ]:
        kg.add_relation(s, r, t)
    kg.add_text_unit("T1", "Kenya is a country in Africa. Its capital is Nairobi and its currency is the Kenyan shilling.", ["E1", "E2", "E3", "E6"])
    kg.add_text_unit("T2", "Tanzania borders Kenya; its capital is Dodoma.", ["E4", "E1", "E5"])
    kg.add_community("C1", "East Africa: Kenya, Tanzania", ["E1", "E2", "E4", "E5"], summary="Kenya and Tanzania, neighbours in East Africa.")
    return kg


@pytest.fixture(params=BACKEND_PARAMS)
def tools(request, tmp_path):
    """The tools over tiny_kg(), served in memory, by LadybugDB and by Neo4j: each test runs on all three."""
    kg = on_backend(tiny_kg(), request.param, request, tmp_path)
    return {t.name: t for t in make_graph_tools(kg, top_k=3, neighbor_limit=2)}


def call(tool, **args) -> ToolMessage:
    return tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": args})


def lines(msg: ToolMessage) -> list[dict]:
    return [json.loads(line) for line in str(msg.content).splitlines() if line.startswith("{")]


def assert_tracer_shape(artifact: dict) -> None:
    # The tracer validates these keys into its own models: this is the contract (architecture.md section 2).
    assert set(artifact) >= {"entities", "edges", "text_units", "truncated"}
    for e in artifact["entities"]:
        assert set(e) == {"id", "name", "type"}
        Entity.model_validate(e)
    for e in artifact["edges"]:
        assert set(e) == {"source", "relation", "target"}
        Edge.model_validate(e)
    assert isinstance(artifact["truncated"], bool)


def test_tool_names_and_order():
    assert [t.name for t in make_graph_tools(tiny_kg())] == list(GRAPH_TOOL_NAMES)


def test_search_ranks_by_rapidfuzz_with_id_tiebreak_and_top_k(tools):
    msg = call(tools["search_entities"], query="Kenya")
    rows = lines(msg)
    assert rows[0]["id"] == "E1" and rows[0]["score"] == 100.0
    assert len(rows) <= 3
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert [e["id"] for e in msg.artifact["entities"]] == [r["id"] for r in rows]
    assert_tracer_shape(msg.artifact)
    # type filter and alias match (the alias is shown so the model knows why it matched)
    typed = lines(call(tools["search_entities"], query="Kenya", type="currency"))
    assert [r["id"] for r in typed] == ["E3"]
    alias = lines(call(tools["search_entities"], query="Republic of Kenya"))
    assert alias[0]["id"] == "E1" and alias[0]["alias"] == "Republic of Kenya"
    assert lines(call(tools["search_entities"], query="zzzzqqq")) == []


def lookalike_kg() -> KnowledgeGraph:
    """Names that share letters, words and two-letter codes, as in the bundled countries graph."""
    kg = KnowledgeGraph(name="lookalikes")
    for eid, name, etype, aliases in [
        ("C1", "Colombo", "city", ()),
        ("C2", "Colombia", "country", ("CO", "COL", "Republic of Colombia")),
        ("C3", "Oman", "country", ("OM", "OMN", "Sultanate of Oman")),
        ("C4", "Bolivia", "country", ("BO", "BOL")),
        ("C5", "United States", "country", ("US", "USA")),
        ("C6", "Icelandic", "language", ("is",)),
        ("C7", "Isle of Man", "country", ()),
        ("C8", "Lao", "language", ("lo",)),
    ]:
        kg.add_entity(eid, name, etype, aliases=aliases)
    return kg


def test_search_returns_plausible_matches_only():
    (search,) = [t for t in make_graph_tools(lookalike_kg(), top_k=8) if t.name == "search_entities"]

    def ids(query: str) -> list[str]:
        return [r["id"] for r in lines(call(search, query=query))]

    # an exact name is not padded with look-alikes: no "co"/"om"/"bo" codes inside "colombo", no "Colombia" at 80
    assert ids("Colombo") == ["C1"]
    assert ids("Colombia") == ["C2"]
    # a prefix finds every name it starts, a typo still finds its entity
    assert ids("Colomb") == ["C1", "C2"] and ids("Colmbia") == ["C2"]
    # codes match as a whole query in any case, or as a capitalised word of a longer one
    assert ids("om") == ["C3"] and ids("usa") == ["C5"]
    assert ids("What is the capital of the USA?") == ["C5"]  # "is" (an ISO 639 code) is just a word here
    assert ids("who speaks lao") == ["C8"] and ids("lo") == ["C8"] and ids("colombo lo") == ["C1"]  # a short name is a name
    # a shared word ("of", "Republic") is not a match; a full name inside a longer query is
    assert ids("Republic of Kenya") == [] and ids("the Sultanate of Oman") == ["C3"]
    assert ids("do colombia and bolivia share a border") == ["C2", "C4"]  # equal scores: by id


def test_get_entity_details(tools):
    msg = call(tools["get_entity"], entity_id="E1")
    (detail,) = lines(msg)
    assert detail["name"] == "Kenya" and detail["description"] == "Kenya is a country."
    assert {"relation": "capital", "direction": "out", "count": 1} in detail["relations"]
    assert {"relation": "borders", "direction": "in", "count": 1} in detail["relations"]
    assert detail["text_units"] == ["T1", "T2"] and detail["communities"] == ["C1"]
    assert msg.artifact["entities"] == [{"id": "E1", "name": "Kenya", "type": "country"}]
    assert msg.artifact["text_units"] == ["T1", "T2"]
    assert_tracer_shape(msg.artifact)


def test_get_neighbors_relation_direction_and_truncation(tools):
    msg = call(tools["get_neighbors"], entity_id="E1", relation="capital")
    assert msg.artifact["edges"] == [{"source": "E1", "relation": "capital", "target": "E2"}]
    assert [e["id"] for e in msg.artifact["entities"]] == ["E1", "E2"]
    assert_tracer_shape(msg.artifact)
    inbound = call(tools["get_neighbors"], entity_id="E6", direction="in")  # Kenya and Tanzania: exactly the limit
    assert inbound.artifact["truncated"] is False
    assert {(e["source"], e["target"]) for e in inbound.artifact["edges"]} == {("E1", "E6"), ("E4", "E6")}
    everything = call(tools["get_neighbors"], entity_id="E1", direction="both")
    assert everything.artifact["truncated"] is True and len(everything.artifact["edges"]) == 2
    assert "more not shown" in everything.content
    missing = call(tools["get_neighbors"], entity_id="E1", relation="capitol")
    assert missing.artifact["edges"] == [] and "capital (out, 1)" in missing.content


def test_unknown_ids_are_readable_errors_not_crashes(tools):
    for name, args in [
        ("get_entity", {"entity_id": "E999"}),
        ("get_neighbors", {"entity_id": "nope"}),
        ("read_text_unit", {"unit_id": "T999"}),
        ("read_community", {"community_id": "C999"}),
    ]:
        msg = call(tools[name], **args)
        assert msg.status == "error"
        assert "search" in msg.content or "listed" in msg.content
    # Schema violations are rejected by the tool's args schema; inside an agent, LangGraph's
    # ToolNode turns them into an error ToolMessage (see test_variants.py).
    with pytest.raises(ValidationError):
        call(tools["get_neighbors"], entity_id="E1", direction="sideways")


def test_text_units_and_communities(tools):
    msg = call(tools["read_text_unit"], unit_id="T2")
    (unit,) = lines(msg)
    assert unit["text"].startswith("Tanzania borders Kenya")
    assert {e["id"] for e in msg.artifact["entities"]} == {"E4", "E1", "E5"}
    assert msg.artifact["text_units"] == ["T2"]
    found = call(tools["search_communities"], query="East Africa")
    assert lines(found)[0]["community"] == "C1"
    com = call(tools["read_community"], community_id="C1")
    assert com.artifact["truncated"] is True and len(com.artifact["entities"]) == 2
    assert_tracer_shape(com.artifact)


def test_submit_answer_records_answer_without_visiting(tools):
    msg = call(tools["submit_answer"], answer="Nairobi", citations=["E1", "E2"])
    assert msg.status != "error" and "Nairobi" in msg.content
    assert msg.artifact["entities"] == [] and msg.artifact["citations"] == ["E1", "E2"]


def test_hidden_entities_vanish_everywhere(tools):
    with use_filter(GraphFilter(hidden=frozenset({"E2"}))):
        assert "E2" not in {r["id"] for r in lines(call(tools["search_entities"], query="Nairobi"))}
        assert call(tools["get_entity"], entity_id="E2").status == "error"
        nb = call(tools["get_neighbors"], entity_id="E1", direction="both")
        assert "E2" not in str(nb.content) and "Nairobi" not in str(nb.content)
        assert call(tools["read_text_unit"], unit_id="T1").status == "error"  # it mentions Nairobi
        assert "T1" not in lines(call(tools["get_entity"], entity_id="E1"))[0]["text_units"]
        com = call(tools["read_community"], community_id="C1")
        assert "E2" not in {e["id"] for e in com.artifact["entities"]}
        assert "Nairobi" not in com.content
    # the filter applies per call: outside the block the graph is whole again
    assert call(tools["get_entity"], entity_id="E2").status != "error"


def test_masked_and_text_blocked(tools):
    with use_filter(GraphFilter(masked=frozenset({"E2"}), text_blocked=frozenset({"E4"}))):
        nb = call(tools["get_neighbors"], entity_id="E1", relation="capital")
        assert nb.artifact["entities"][1] == {"id": "E2", "name": "[masked entity] E2", "type": "city"}
        assert "Nairobi" not in nb.content
        assert "Nairobi" not in call(tools["get_entity"], entity_id="E2").content
        assert "Nairobi" not in {r["name"] for r in lines(call(tools["search_entities"], query="Nairobi"))}
        tz = lines(call(tools["get_entity"], entity_id="E4"))[0]
        assert tz["name"] == "Tanzania" and tz["description"] == "" and tz["text_units"] == []
        assert call(tools["read_text_unit"], unit_id="T2").status == "error"
        com = lines(call(tools["read_community"], community_id="C1"))[0]
        assert "Kenya, Tanzania" not in com["title"] and com["summary"] == ""
