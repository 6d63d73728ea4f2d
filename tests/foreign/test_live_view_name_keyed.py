"""``ablated_view`` over a graph keyed by names: in a run that masks an entity, its real name finds nothing.

By the one definition (docs/ablations.md, "What an ablation does") a masked entity
keeps its edges, its name becomes the placeholder, and a lookup by its real name
finds nothing. A node keyed by its name keeps that name in its key, so the live
view shows it under the placeholder key, in every public lookup: membership,
``view.nodes[name]``, a scan of the nodes by name, neighbour and edge listings.
The oracle is the graph rebuilt by hand (tests/foreign/test_name_keyed.py's
``name_keyed``), never through graphtrail; placeholders compare up to spelling.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from graphtrail.evaluators import ablated, evaluate
from graphtrail.evaluators.replay.exact import catalogue
from graphtrail.kg import ablated_view
from graphtrail.kg.views import GraphFilter, use_filter

from .oracle import load_records
from .passages import questions
from .test_factory_route import OPTIONS, oracle_answer
from .test_name_keyed import NAMES, lookup_agent, name_keyed

PLACEHOLDER = re.compile(r"\[masked entity\] [^\s\"',)\]]+")
MASK = GraphFilter(masked=frozenset({"Lise Meitner"}), text_blocked=frozenset({"Marie Curie"}))


def _same(a: Any) -> Any:
    """``a`` with every placeholder spelled alike (the oracle numbers them; graphtrail digests the key)."""
    return json.loads(PLACEHOLDER.sub("[masked entity]", json.dumps(a, sort_keys=True)))


def _shape(g: Any) -> dict[str, Any]:
    """Everything a tool can read of a graph: nodes with attributes, each node's neighbours both ways, edges."""
    return {"nodes": {str(n): {k: v for k, v in d.items() if not (k == "name" and v == n)}  # a name that is its key
                      for n, d in g.nodes(data=True)},
            "successors": {str(n): sorted(map(str, g.successors(n))) for n in g},
            "predecessors": {str(n): sorted(map(str, g.predecessors(n))) for n in g},
            "edges": sorted([str(u), str(v), d.get("relation")] for u, v, d in g.edges(data=True))}


def test_a_masked_name_finds_nothing_through_any_lookup_of_the_live_view() -> None:
    g = name_keyed()
    before = nx.node_link_data(g, edges="edges")
    view = ablated_view(g)
    assert "Lise Meitner" in view  # outside a run: the real graph
    with use_filter(MASK):
        assert "Lise Meitner" not in view and not view.has_node("Lise Meitner")
        with pytest.raises(KeyError):
            view.nodes["Lise Meitner"]
        with pytest.raises(KeyError):
            view.adj["Lise Meitner"]
        with pytest.raises(nx.NetworkXError):
            list(view.successors("Lise Meitner"))
        assert [n for n, d in view.nodes(data=True) if "Lise" in n or "Lise" in json.dumps(d)] == []  # a search
        assert "Lise" not in json.dumps(_shape(view))
        (new,) = [n for n in view if n.startswith("[masked entity]")]
        assert view.nodes[new] == {"type": "person", "name": new}  # the placeholder shown instead, no text
        assert new in set(view.successors("Otto Hahn")) and new in set(view.predecessors("Otto Hahn"))
        assert view.has_edge(new, "Kaiser Wilhelm Institute")
        assert view.nodes["Marie Curie"] == {"type": "person"}  # text-blocked: keeps its key
        assert view.number_of_nodes() == g.number_of_nodes() and view.number_of_edges() == g.number_of_edges()
        # as the graph built without her name, and as the factory route's view of the same condition
        assert _same(_shape(view)) == _same(_shape(name_keyed(masked=frozenset({"Lise Meitner"}),
                                                              blocked=frozenset({"Marie Curie"}))))
        assert _shape(view) == _shape(ablated(g, MASK)) and dict(view.nodes(data=True)) == dict(ablated(g, MASK).nodes(data=True))
    assert "Lise Meitner" in view and list(view.successors("Otto Hahn"))[0] == "Lise Meitner"  # after the run
    assert nx.node_link_data(g, edges="edges") == before  # the user's graph is untouched


@pytest.mark.parametrize("kind", [nx.Graph, nx.MultiGraph, nx.MultiDiGraph])
def test_every_kind_of_graph(kind: type) -> None:
    g = kind(name_keyed())
    view = ablated_view(g)
    with use_filter(GraphFilter(masked=frozenset({"Otto Hahn"}))):
        (new,) = [n for n in view if n.startswith("[masked entity]")]
        assert "Otto Hahn" not in view and new in set(view.neighbors("Lise Meitner"))
        assert view.degree(new) == g.degree("Otto Hahn")


def test_concurrent_runs_each_see_their_own_condition() -> None:
    view = ablated_view(name_keyed())
    seen: dict[str, list[str]] = {}
    barrier = threading.Barrier(2)

    def run(masked: str) -> None:
        with use_filter(GraphFilter(masked=frozenset({masked}))):
            barrier.wait()
            seen[masked] = sorted(n for n in view if n in NAMES.values())

    threads = [threading.Thread(target=run, args=(m,)) for m in ("Lise Meitner", "Otto Hahn")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everyone = sorted(NAMES.values())
    assert seen == {m: [n for n in everyone if n != m] for m in ("Lise Meitner", "Otto Hahn")}


def live_agent(g: nx.DiGraph) -> Any:
    """The name-keyed lookup agent, its tool reading the live view of ``g`` (the exact route without a factory)."""
    return lookup_agent(ablated_view(g))


def test_every_condition_through_the_live_view_reads_as_the_hand_made_oracle(tmp_path: Path) -> None:
    g = name_keyed()
    report = evaluate(live_agent(g), questions(), catalogue(g), out_dir=tmp_path, **OPTIONS)
    records = load_records(tmp_path)
    wrong, masked_runs = [], []
    for record in records:
        if record.key.condition == "baseline" or not report.condition(record.key.condition).valid:
            continue
        cut = (frozenset(record.hidden), frozenset(record.masked), frozenset(record.text_blocked))
        truth = oracle_answer(live_agent, name_keyed(*copy.deepcopy(cut)), record.question)
        if _same(truth) != _same(record.answer):
            wrong.append((record.key.condition, cut, record.answer, truth))
        if record.key.condition == "uncited_mask":
            masked_runs.append((record, truth))
    assert wrong == [], f"valid runs that differ from the hand-made oracle: {wrong}"
    row = report.condition("uncited_mask")
    assert row.valid and row.method == "exact", (row.invalid_reason, row.method)
    assert any(r.masked for r, _ in masked_runs), masked_runs
