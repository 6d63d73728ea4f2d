"""A networkx graph keyed by names: a masked entity's name is gone, so its key is too.

By the one definition (docs/ablations.md, "What an ablation does") a masked entity
keeps its edges, its name becomes the placeholder, and a lookup by its real name
finds nothing. In a graph whose nodes are keyed by their names the key *is* the
name: the factory route's view must relabel such a node (and its edges), or a
lookup-by-name tool still finds it. The oracle here is computed by hand: the graph
rebuilt by this test with the masked nodes renamed, never through ``ablated``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from langchain_core.tools import tool

from graphtrail.evaluators import ablated, evaluate
from graphtrail.kg.views import GraphFilter

from .oracle import load_records
from .passages import INSTITUTES, PEOPLE, colleague_by_name_agent, questions
from .test_factory_route import OPTIONS, oracle_answer

NAMES = {eid: name for eid, (name, *_) in {**PEOPLE, **INSTITUTES}.items()}


def name_keyed(hidden: frozenset[str] = frozenset(), masked: frozenset[str] = frozenset(),
               blocked: frozenset[str] = frozenset()) -> nx.DiGraph:
    """The scientists keyed by name, ablated by hand when asked: the oracle's data (names here, not ids)."""
    renamed = {name: f"[masked entity] #{i}" for i, name in enumerate(sorted(masked))}
    key = lambda name: renamed.get(name, name)  # noqa: E731
    g = nx.DiGraph()
    for eid, (name, text, *links) in {**PEOPLE, **INSTITUTES}.items():
        if name in hidden:
            continue
        attrs = {"type": "person" if eid in PEOPLE else "organization"}
        if name not in masked and name not in blocked:
            attrs["description"] = text
        g.add_node(key(name), **attrs)
    for eid, (name, _text, colleague, institute) in PEOPLE.items():
        for relation, other in (("colleagues", NAMES[colleague]), ("works_at", NAMES[institute])):
            if name not in hidden and other not in hidden:
                g.add_edge(key(name), key(other), relation=relation)
    return g


def lookup_agent(g: nx.DiGraph) -> Any:
    @tool
    def lookup(name: str) -> str:
        """Look a scientist or an institute up by name: description, colleagues, institute."""
        if name not in g:  # the graph is keyed by name
            return json.dumps({"error": f"nothing named {name}"})
        out: dict[str, Any] = {"name": name, "description": g.nodes[name].get("description")}
        for _, other, relation in g.out_edges(name, data="relation"):
            out.setdefault(relation, []).append(other)
        return json.dumps(out)

    return colleague_by_name_agent(lookup, "scripted-name-keyed", "name-keyed")


def test_a_masked_node_keyed_by_its_name_is_relabelled_with_its_edges() -> None:
    g = name_keyed()
    before = nx.node_link_data(g, edges="edges")
    view = ablated(g, GraphFilter(masked=frozenset({"Lise Meitner"}), text_blocked=frozenset({"Marie Curie"})))
    assert "Lise Meitner" not in view and not view.has_node("Lise Meitner")
    with pytest.raises(KeyError):
        view.nodes["Lise Meitner"]
    assert not any("Lise Meitner" in (u, v) for u, v in view.edges)
    assert all("Lise Meitner" not in json.dumps(attrs) for _, attrs in view.nodes(data=True))
    (new,) = [n for n in view if str(n).startswith("[masked entity]")]
    assert "Lise" not in new and "Meitner" not in new
    assert view.nodes[new] == {"type": "person", "name": new}  # no text; its name is its new key
    # its edges follow it, both ways, with their attributes
    assert view.edges[new, "Otto Hahn"] == {"relation": "colleagues"}
    assert view.has_edge("Otto Hahn", new) and view.has_edge(new, "Kaiser Wilhelm Institute")
    assert set(view.predecessors(new)) == {"Otto Hahn"} and list(view.successors("Otto Hahn"))[0] == new
    assert nx.shortest_path(view, "Otto Hahn", "Kaiser Wilhelm Institute") in (
        ["Otto Hahn", "Kaiser Wilhelm Institute"], ["Otto Hahn", new, "Kaiser Wilhelm Institute"])
    assert view.number_of_nodes() == g.number_of_nodes() and view.number_of_edges() == g.number_of_edges()
    # a text-blocked node keeps its key and name
    assert view.nodes["Marie Curie"] == {"type": "person"}
    assert nx.node_link_data(g, edges="edges") == before  # the user's graph is untouched
    # the view reads as the hand-made oracle, up to the placeholder's spelling
    oracle = name_keyed(masked=frozenset({"Lise Meitner"}), blocked=frozenset({"Marie Curie"}))
    relabel = {new: "[masked entity] #0"}
    assert sorted((relabel.get(u, u), relabel.get(v, v), d["relation"]) for u, v, d in view.edges(data=True)) == \
        sorted((u, v, d["relation"]) for u, v, d in oracle.edges(data=True))


@pytest.mark.parametrize("kind", [nx.Graph, nx.MultiGraph, nx.MultiDiGraph])
def test_every_kind_of_graph_relabels_its_name_keyed_masked_nodes(kind: type) -> None:
    g = kind(name_keyed())
    view = ablated(g, GraphFilter(masked=frozenset({"Otto Hahn"})))
    (new,) = [n for n in view if str(n).startswith("[masked entity]")]
    assert "Otto Hahn" not in view and "Lise Meitner" in view
    assert new in set(view.neighbors("Lise Meitner")) and view.degree(new) == g.degree("Otto Hahn")


def test_a_node_with_its_own_id_keeps_it() -> None:
    g = nx.Graph()
    g.add_node("p1", name="Lise Meitner", description="physicist")
    g.add_node("Otto Hahn", name="otto  hahn")  # a name attribute equal to the key (case and spaces aside)
    g.add_edge("p1", "Otto Hahn")
    view = ablated(g, GraphFilter(masked=frozenset({"p1", "Otto Hahn"})))
    assert view.nodes["p1"] == {"name": "[masked entity] p1"}  # an id stays: the name is what goes
    assert "Otto Hahn" not in view and len(view) == 2


def test_uncited_mask_reads_as_the_hand_made_oracle(tmp_path: Path) -> None:
    report = evaluate(lookup_agent, questions(), graph=name_keyed(), out_dir=tmp_path, **OPTIONS)
    records = load_records(tmp_path)
    baseline = {r.key.question_id: r.answer for r in records if r.key.condition == "baseline"}
    assert baseline == {"q1": "Otto Hahn (German chemist who discovered fission) at Kaiser Wilhelm Institute",
                        "q2": "Pierre Curie (French physicist who studied magnetism) at Sorbonne"}
    gold = {q["id"]: q["answers"][0] for q in questions()}
    wrong, masked_runs = [], []
    for record in records:
        if record.key.condition == "baseline":
            continue
        assert record.route == "factory" and record.method == "exact", record
        cut = [frozenset(record.hidden), frozenset(record.masked), frozenset(record.text_blocked)]
        assert set().union(*cut) <= set(NAMES.values()), cut  # the graph's ids are its names
        truth = oracle_answer(lookup_agent, name_keyed(*copy.deepcopy(cut)), record.question)
        if truth != record.answer:
            wrong.append((record.key.condition, cut, record.answer, truth))
        if record.key.condition == "uncited_mask":
            masked_runs.append((record, truth))
    assert wrong == [], f"runs that differ from the hand-made oracle: {wrong}"
    # the subject of q1 is visited and never cited: masking it loses the lookup by name, as in the oracle
    assert any(r.masked and truth != baseline[r.key.question_id] for r, truth in masked_runs), masked_runs
    row = report.condition("uncited_mask")
    assert row.valid and row.method == "exact", row.invalid_reason
    oracle_accuracy = sum(gold[r.key.question_id] in truth for r, truth in masked_runs) / len(masked_runs)
    assert row.accuracy == pytest.approx(oracle_accuracy)


def test_the_new_key_of_a_masked_node_is_recognised_as_that_entity() -> None:
    from graphtrail.evaluators.replay.exact import catalogue
    from graphtrail.evaluators.replay.exact.recognise import ValueIndex, recognise
    from graphtrail.tracer.trajectory import Step, Trajectory

    g = name_keyed()
    cut = GraphFilter(masked=frozenset({"Otto Hahn"}))
    colleagues = [n for n in ablated(g, cut).successors("Lise Meitner") if n != "Kaiser Wilhelm Institute"]
    output = json.dumps({"name": "Lise Meitner", "colleagues": colleagues})  # what the lookup tool shows
    assert "Otto Hahn" not in output
    trajectory = Trajectory(run_id="r", trace_id="t", span_id="s", name="a", question="q", answer="a",
                            steps=[Step(index=1, tool="lookup", args={"name": "Lise Meitner"}, output=output)])
    seen = recognise(trajectory, ValueIndex(catalogue(g)), cut)
    entities = {e.id: e.name for e in seen.steps[0].entities}
    assert set(entities) == {"Lise Meitner", "Otto Hahn"}
    assert "Otto" not in entities["Otto Hahn"] and entities["Otto Hahn"].startswith("[masked entity]")
    # outside the condition, the placeholder is nobody
    assert {e.id for e in recognise(trajectory, ValueIndex(catalogue(g)), None).steps[0].entities} == {"Lise Meitner"}
