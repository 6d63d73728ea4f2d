"""Graph database backends: import/read round trips, filtered views, errors, secrets, other schemas.

The tools themselves run on every backend in tests/test_tools.py, and the whole
evaluation in tests/test_backend_equivalence.py; this file covers what those
do not: careless data surviving the trip, every read method under random
ablation filters, the import's refusals, a graph that was not written by
graphtrail (other labels), and that a Neo4j password never leaks.
"""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from graphtrail.agents import GraphFilter, KGError, KnowledgeGraph, load_kg, make_graph_tools, use_filter
from graphtrail.kg.backends import import_graph, is_graph_database
from tests.graph_backends import on_backend
from tests.neo4j_server import wipe

DB_BACKENDS = ("ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j))


def careless_kg() -> KnowledgeGraph:
    """Names and labels a CSV writer, a Cypher string or a list encoding could trip over."""
    kg = KnowledgeGraph(name="careless")
    kg.add_entity("q\"1", 'He said "hi", then left', "quote", 'line one\nline two\ttab \\ backslash', ["a;b", "c, d", "[x]"])
    kg.add_entity("ü-2", "Zürich — 東京", "city", "", [])
    kg.add_entity("`3`", "back`tick", "odd type with spaces", "it's", ["'"])
    kg.add_entity("4", "", "entity")  # empty name: the id stands in, as in memory
    kg.add_relation("q\"1", "related to", "ü-2", 'a "quoted" description')
    kg.add_relation("ü-2", "weird `label`'s", "`3`")
    kg.add_relation("`3`", "self", "`3`")  # a self-loop counts twice in the degree
    kg.add_relation("4", "related to", "q\"1")
    kg.add_text_unit("T,1", "Zürich and \"q\"", ["ü-2", "q\"1", "not-in-graph"])
    kg.add_text_unit("T2", "", [])
    kg.add_community("C 1", "Odd, ones", ["q\"1", "`3`"], summary="sum\nmary", level=2)
    return kg


def snapshot(kg: Any) -> dict[str, Any]:
    """Everything the read API shows, in a comparable shape."""
    ids = sorted(kg.entity_ids())
    return {
        "len": len(kg),
        "entities": sorted(kg.entities(), key=lambda e: e.id),
        "relations": sorted(kg.relations(), key=repr),
        "out": {e: sorted(kg.out_relations(e), key=repr) for e in ids},
        "in": {e: sorted(kg.in_relations(e), key=repr) for e in ids},
        "degree": {e: kg.degree(e) for e in ids},
        "units_for": {e: kg.text_units_for(e) for e in ids},
        "communities_of": {e: kg.communities_of(e) for e in ids},
        "units": {u: kg.text_unit(u) for u in kg.text_units},
        "raw_units": sorted(kg.text_units.values(), key=lambda u: u.id),
        "communities": {c: kg.community(c) for c in kg.communities},
        "contains": {e: e in kg for e in [*ids, "missing"]},
    }


@pytest.mark.parametrize("backend", DB_BACKENDS)
def test_careless_graph_round_trips_unchanged(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    kg = careless_kg()
    served = on_backend(kg, backend, request, tmp_path)
    assert snapshot(served) == snapshot(kg)
    f = GraphFilter(hidden=frozenset({"`3`"}), masked=frozenset({"q\"1"}), text_blocked=frozenset({"ü-2"}))
    assert snapshot(served.filtered(f)) == snapshot(kg.filtered(f))
    assert served.entity("q\"1").aliases == ("a;b", "c, d", "[x]")


@pytest.mark.neo4j
def test_neo4j_view_hiding_most_entities_sends_the_visible_ids_and_reads_the_same(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Full isolation on Neo4j: the query scope is the visible ids, and every read still matches memory.

    The unit "T,1" mentions an id that is no entity ("not-in-graph"): hidden, it withholds the unit,
    as in memory, although the visible list cannot say so.
    """
    kg = careless_kg()
    kg.add_entity("5", "five", "entity")
    kg.add_entity("6", "six", "entity")
    served = on_backend(kg, "neo4j", request, tmp_path)
    most = frozenset({"`3`", "4", "5", "6"})  # 4 of 6: T,1's entities stay visible
    filters = [
        GraphFilter(hidden=most | {"not-in-graph"}),
        GraphFilter(hidden=most, masked=frozenset({'q"1'})),
        GraphFilter(hidden=most | {'q"1'}, text_blocked=frozenset({"ü-2"})),
        GraphFilter(hidden=most | {"ü-2", 'q"1'}),
    ]
    for f in filters:
        db, mem = served.filtered(f), kg.filtered(f)
        assert db._params.get("by_visible") is True and "hidden" not in db._params
        assert snapshot(db) == snapshot(mem), f
        for query in ("Zürich", "hi", "back"):
            assert db.search_entities(query) == mem.search_entities(query), (f, query)
    assert served.filtered(filters[0]).text_unit("T,1") is None
    assert served.filtered(GraphFilter(hidden=most)).text_unit("T,1") is not None
    half = served.filtered(GraphFilter(hidden=frozenset({"`3`", "4", "5"})))  # not most: the hidden ids are sent
    assert "by_visible" not in half._params and snapshot(half) == snapshot(kg.filtered(half.graph_filter))


def test_every_read_matches_memory_under_random_filters(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    kg = load_kg("countries")
    served = on_backend(kg, "ladybug", request, tmp_path)
    ids = sorted(kg.entity_ids())
    rng = random.Random(7)
    for _ in range(3):
        picks = rng.sample(ids, 90)
        f = GraphFilter(hidden=frozenset(picks[:30]), masked=frozenset(picks[30:60]), text_blocked=frozenset(picks[60:]))
        mem, db = kg.filtered(f), served.filtered(f)
        sample = rng.sample(ids, 60) + picks[::10]
        for eid in sample:
            assert db.entity(eid) == mem.entity(eid)
            assert sorted(db.out_relations(eid), key=repr) == sorted(mem.out_relations(eid), key=repr)
            assert sorted(db.in_relations(eid), key=repr) == sorted(mem.in_relations(eid), key=repr)
            assert db.degree(eid) == mem.degree(eid)
            assert db.text_units_for(eid) == mem.text_units_for(eid)
            assert db.communities_of(eid) == mem.communities_of(eid)
        assert sorted(db.entities(), key=lambda e: e.id) == sorted(mem.entities(), key=lambda e: e.id)
        assert {u: db.text_unit(u) for u in kg.text_units} == {u: mem.text_unit(u) for u in kg.text_units}
        assert len(db) == len(mem) and set(db.entity_ids()) == set(mem.entity_ids())


def test_tool_lookups_are_primary_key_seeks_not_scans(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    served = on_backend(load_kg("countries"), "ladybug", request, tmp_path)
    queries = served._shared.queries
    params = {"id": "E0001", "hidden": ["E0002"], "masked": [], "blocked": [], "mask_prefix": "x ", "withheld": ["E0002"], "sep": "\x1f"}
    for name in ("entity", "out", "into", "out_degree", "in_degree", "units_for", "unit"):
        text = getattr(queries, name)
        plan = str(served.store.rows("EXPLAIN " + text, {k: params[k] for k in queries.params[text]}))
        assert "PRIMARY_KEY_SCAN" in plan, name
        assert "SCAN_NODE_TABLE" not in plan.replace("PRIMARY_KEY_SCAN_NODE_TABLE", ""), name


def test_import_never_overwrites_and_bad_sources_are_typed_errors(tmp_path: Path) -> None:
    pytest.importorskip("ladybug")
    target = tmp_path / "g.lbug"
    import_graph(load_kg("countries"), target)
    size = target.stat().st_size
    with pytest.raises(KGError, match="already exists"):
        import_graph(load_kg("countries"), target)
    assert target.stat().st_size == size
    assert [p.name for p in tmp_path.iterdir()] == ["g.lbug"]  # no leftovers from the import
    with pytest.raises(KGError, match="no such LadybugDB graph"):
        load_kg(tmp_path / "missing.lbug")
    junk = tmp_path / "junk.lbug"
    junk.write_bytes(b"not a database")
    with pytest.raises(KGError, match="junk.lbug"):
        load_kg(str(junk))
    assert junk.read_bytes() == b"not a database"
    kg = load_kg(f"lbug:{target}")
    try:
        assert kg.name == "countries" and len(kg) == 759
    finally:
        kg.close()
    assert is_graph_database("bolt://h:7687") and is_graph_database("x.lbug") and not is_graph_database("countries")


def test_cli_imports_triples_and_reads_the_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ladybug")
    from graphtrail.cli import main

    triples = tmp_path / "kb.tsv"
    triples.write_text("Kenya\tcapital\tNairobi\nKenya\tborders\tTanzania\nTanzania\tcapital\tDodoma\n")
    out = tmp_path / "kb.lbug"
    assert main(["kg", "import", str(triples), "--to", str(out)]) == 0
    assert "imported 4 entities, 3 relations" in capsys.readouterr().out
    assert main(["kg", "info", f"lbug:{out}"]) == 0
    assert "Kenya" in capsys.readouterr().out
    assert main(["kg", "import", str(triples), "--to", str(out)]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["kg", "import", str(triples), "--to", str(tmp_path / "x.json")]) == 2
    assert "not a graph database" in capsys.readouterr().err


@pytest.mark.neo4j
def test_neo4j_password_never_leaves_the_connection(neo4j_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from graphtrail.cli import main

    secret = "S3cret-pw-do-not-print"
    wipe(neo4j_server.bolt_uri)
    uri = neo4j_server.bolt_uri.replace("bolt://", f"bolt://neo4j:{secret}@")
    where = import_graph(careless_kg(), uri)
    kg = load_kg(uri)
    try:
        shown = [where, repr(kg), kg.name, str(kg.describe()), repr(kg.store.target)]
        assert all(secret not in s for s in shown) and "neo4j@127.0.0.1" in where
    finally:
        kg.close()
    dead = f"bolt://neo4j:{secret}@127.0.0.1:1"
    with pytest.raises(KGError) as info:
        load_kg(dead)
    assert secret not in str(info.value) and "cannot connect" in str(info.value)
    assert main(["kg", "info", dead]) == 2
    captured = capsys.readouterr()
    assert secret not in captured.out + captured.err and "127.0.0.1:1" in captured.err


@pytest.mark.neo4j
def test_neo4j_graph_with_its_own_schema_is_read_through_the_mapping(neo4j_server: Any) -> None:
    """A graph someone else wrote: Person nodes keyed by uuid, typed relationships, GraphRAG-style communities."""
    import neo4j

    wipe(neo4j_server.bolt_uri)
    with neo4j.GraphDatabase.driver(neo4j_server.bolt_uri, auth=None) as driver:
        driver.execute_query(
            "CREATE (a:Person {uuid: 'p1', title: 'Ada Lovelace', kind: 'person', aka: ['Ada']}), "
            "(b:Person {uuid: 'p2', title: 'Charles Babbage', kind: 'person'}), "
            "(e:Machine {uuid: 'm1', title: 'Analytical Engine'}), "
            "(a)-[:WORKED_WITH {description: 'letters'}]->(b), (b)-[:DESIGNED]->(e), "
            "(a)-[:IN_COMMUNITY]->(:Community {uuid: 'c1', title: 'Computing pioneers', summary: 'Ada and Charles', level: 0}), "
            "(:Chunk {uuid: 'u1', body: 'Ada wrote to Babbage.'})-[:HAS_ENTITY]->(a)"
        )
    uri = f"{neo4j_server.bolt_uri}?label=Person&id=uuid&name=title&type=kind&aliases=aka&text_unit=Chunk&text=body&mentions=HAS_ENTITY"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kg = load_kg(uri)
    try:
        assert any("no index on :Person(uuid)" in str(w.message) for w in caught)
        assert sorted(kg.entity_ids()) == ["p1", "p2"]  # the Machine is not an entity under this mapping
        assert kg.entity("p1").name == "Ada Lovelace" and kg.entity("p1").aliases == ("Ada",)
        assert kg.out_relations("p1")[0].relation == "WORKED_WITH" and kg.out_relations("p2") == []
        assert kg.communities["c1"].entity_ids == ("p1",) and [c.id for c in kg.communities_of("p1")] == ["c1"]
        assert [u.id for u in kg.text_units_for("p1")] == ["u1"]
        tools = {t.name: t for t in make_graph_tools(kg)}
        found = tools["search_entities"].invoke({"query": "Ada"})
        assert "p1" in found and "p2" not in found
        with use_filter(GraphFilter(masked=frozenset({"p1"}))):
            shown = tools["get_neighbors"].invoke({"entity_id": "p2", "direction": "in"})
        assert "[masked entity] p1" in shown and "Ada" not in shown
        with use_filter(GraphFilter(hidden=frozenset({"p1"}))):
            assert "Unknown entity id" in tools["get_entity"].invoke({"entity_id": "p1"})
    finally:
        kg.close()
    with pytest.raises(KGError, match="no :Nobody nodes"):
        load_kg(f"{neo4j_server.bolt_uri}?label=Nobody")
    with pytest.raises(KGError, match="unknown graph mapping option 'colour'"):
        load_kg(f"{neo4j_server.bolt_uri}?colour=red")


@pytest.mark.neo4j
def test_neo4j_import_refuses_a_database_that_holds_a_graph(neo4j_server: Any) -> None:
    wipe(neo4j_server.bolt_uri)
    import_graph(careless_kg(), neo4j_server.bolt_uri)
    with pytest.raises(KGError, match="never overwrites"):
        import_graph(careless_kg(), neo4j_server.bolt_uri)


def test_a_database_without_communities_gets_the_same_louvain_as_memory(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    kg = load_kg("countries")
    kg.communities.clear()  # as a graph imported from triples, before anything computed them
    served = on_backend(kg, "ladybug", request, tmp_path)
    assert served.describe()["communities"] == 0  # counted as stored, not computed by kg info
    kg.compute_communities(seed=0)
    assert served.communities == kg.communities and len(kg.communities) > 1
    some = next(iter(kg.communities.values())).entity_ids[0]
    assert served.communities_of(some) == kg.communities_of(some)
