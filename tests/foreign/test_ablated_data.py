"""``ablated(data, filter)`` follows the one definition (docs/ablations.md) for every type, and never changes the data.

Hidden: gone, with its edges and its text. Masked: id and edges kept, name the
placeholder, text withheld, and a lookup by its real name finds nothing.
Text-blocked: id, name and edges kept, text withheld.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd
import pytest
from langchain_core.documents import Document

from graphtrail.evaluators import EntityTables, EvaluationError, Keys, ablated, evaluate, register_ablation
from graphtrail.kg.views import GraphFilter

from . import passages as world
from .test_factory_route import OPTIONS, functional_agent, jsonld_agent, retriever_agent

CUT = GraphFilter(hidden=frozenset({"p2"}), masked=frozenset({"p1"}), text_blocked=frozenset({"p3"}))


def _by_name(nodes: Any, name: str) -> list[str]:
    return [n for n, d in nodes if d.get("name") == name]


@pytest.mark.parametrize("kind", [nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph])
def test_networkx_graphs_of_every_kind(kind: type) -> None:
    g = kind(world.graph())
    before = nx.node_link_data(g, edges="edges")
    view = ablated(g, CUT)
    assert "p2" not in view and not any("p2" in (u, v) for u, v, *_ in view.edges)
    assert view.nodes["p1"] == {"name": "[masked entity] p1", "type": "person"}
    assert _by_name(view.nodes(data=True), "Lise Meitner") == []  # a lookup by the real name finds nothing
    assert view.has_edge("p1", "i1")  # a masked entity keeps its edges
    assert view.nodes["p3"] == {"name": "Marie Curie", "type": "person"}
    assert view.nodes["p4"]["description"] == world.PEOPLE["p4"][1]
    assert nx.node_link_data(g, edges="edges") == before  # the user's graph is untouched


def test_networkx_attribute_names_are_configurable() -> None:
    g = nx.Graph()
    g.add_node("a", title="Alpha", summary="first letter")
    g.add_node("b", title="Beta", summary="second letter")
    view = ablated(g, GraphFilter(masked=frozenset({"a"}), text_blocked=frozenset({"b"})), Keys(name="title", text=("summary",)))
    assert view.nodes["a"] == {"title": "[masked entity] a"}
    assert view.nodes["b"] == {"title": "Beta"}


def test_documents_of_an_ablated_entity_go_whole() -> None:
    docs = world.documents() + [Document(page_content="Lise and Marie met.", metadata={"id": ["p1", "p3"]})]
    kept = ablated(docs, GraphFilter(hidden=frozenset({"p2"})))
    assert [d.metadata["id"] for d in kept] == ["p1", "p3", "p4", "i1", "i2", ["p1", "p3"]]
    assert [d.metadata["id"] for d in ablated(docs, CUT)] == ["p4", "i1", "i2"]
    assert len(docs) == 7 and all(isinstance(d, Document) for d in kept)


def test_a_dict_of_records_is_an_overlay() -> None:
    data = world.records()
    before = copy.deepcopy(data)
    view = ablated(data, CUT)
    assert "p2" not in view and "p2" not in list(view)
    with pytest.raises(KeyError):
        view["p2"]
    assert view["p1"]["name"] == "[masked entity] p1" and "description" not in view["p1"]
    assert view["p1"]["colleagues"] == []  # the reference to the hidden p2 is gone
    assert "description" not in view["p3"] and view["p3"]["name"] == "Marie Curie"
    assert [e for e, r in view.items() if r["name"] == "Lise Meitner"] == []
    assert data == before


def test_pandas_tables() -> None:
    tables = world.tables()
    before = (tables.entities.copy(), tables.relations.copy())
    out = ablated(tables, CUT)
    assert list(out.entities["id"]) == ["p1", "p3", "p4", "i1", "i2"]
    row = out.entities.set_index("id").loc["p1"]
    assert row["name"] == "[masked entity] p1" and row["description"] == ""
    assert out.entities.set_index("id").loc["p3", "description"] == ""
    assert "p2" not in set(out.relations["source"]) | set(out.relations["target"])
    assert (out.entities["name"] == "Lise Meitner").sum() == 0
    pd.testing.assert_frame_equal(tables.entities, before[0])
    pd.testing.assert_frame_equal(tables.relations, before[1])
    alone = ablated(tables.entities, CUT)
    assert list(alone["id"]) == ["p1", "p3", "p4", "i1", "i2"]


def test_knowledge_graph_masked_name_finds_nothing() -> None:
    kg = world.knowledge_graph()
    view = ablated(kg, CUT)
    assert "p2" not in view and view.entity("p1").name == "[masked entity] p1"
    assert [r.id for r, *_ in view.search_entities("Lise Meitner")] == []
    assert [r.id for r, *_ in kg.search_entities("Lise Meitner")][:1] == ["p1"]
    assert view.entity("p3").description == "" and view.entity("p3").name == "Marie Curie"


class TinyStore:
    """A vector store of its own kind: texts by entity id."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts


def test_register_ablation_plugs_in_any_type() -> None:
    with pytest.raises(EvaluationError, match="register_ablation"):
        ablated(TinyStore({}), CUT)
    register_ablation(TinyStore, lambda store, f: TinyStore({k: v for k, v in store.texts.items()
                                                              if k not in f.hidden | f.masked | f.text_blocked}))
    store = TinyStore({"p1": "a", "p2": "b", "p4": "c"})
    assert ablated(store, CUT).texts == {"p4": "c"}
    assert ablated(store, GraphFilter()) is store


def test_the_agent_is_built_once_per_distinct_ablation(tmp_path: Path) -> None:
    built: list[frozenset[str]] = []

    def make_agent(data: dict[str, Any]) -> Any:
        built.append(frozenset(world.records()) - frozenset(data))
        return functional_agent(data)

    evaluate(make_agent, world.questions(), graph=world.records(), out_dir=tmp_path, **{**OPTIONS, "trials": 2})
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines() if line.strip()]
    distinct = {(tuple(r["hidden"]), tuple(r["masked"]), tuple(r["text_blocked"])) for r in runs}
    assert len(built) == len(distinct)  # the baseline's included; trials and repeats share their agent
    assert len(runs) > len(distinct)


def test_a_second_path_to_the_data_makes_the_condition_invalid(tmp_path: Path) -> None:
    """The agent reads its graph through graph= but also pastes a module-level copy into its prompt."""
    everything = world.knowledge_graph()

    def make_agent(kg: Any) -> Any:
        prompt = "Scientists: " + "; ".join(f"{r.name} ({r.description})" for r in everything.entities())
        return jsonld_agent(kg, system_prompt=prompt)

    report = evaluate(make_agent, world.questions(), graph=everything, out_dir=tmp_path, **OPTIONS)
    row = report.condition("uncited_removal")
    assert not row.valid and "path other than graph=" in row.invalid_reason
    assert report.condition("baseline").valid


def test_retriever_documents_are_recognised_by_value(tmp_path: Path) -> None:
    report = evaluate(retriever_agent, world.questions(), graph=world.documents(), out_dir=tmp_path, **OPTIONS)
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines() if line.strip()]
    base = next(r for r in runs if r["key"]["condition"] == "baseline" and r["key"]["question_id"] == "q1")
    visited = {e["id"] for s in base["trajectory"]["steps"] for e in s["entities"]}
    assert {"p1", "p2"} <= visited and base["citations"] == ["p2", "i1"]
    assert report.condition("uncited_removal").method == "exact"
