"""Hostile names and ids through import, every tool and every ablation, on every backend.

The corpus holds what breaks a statement built from strings: quotes,
backticks, ``\\u0060`` (Neo4j decodes it inside backtick-quoted names), Cypher
comments, NUL, list separators (``\\x1f`` joined LadybugDB id lists), newlines,
parameter syntax and a 1 MB relation label and name. Each string is an entity
id, name, type, description and alias, a relation label, a text unit and a
community. The graph is imported into LadybugDB and Neo4j, where a
``:Customer`` node (Neo4j) or another database (LadybugDB) is planted first;
after every tool has run under every ablation kind the planted data is
untouched, the counts are what was imported, and every answer equals what
the in-memory graph gives: the original text round-trips.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphtrail.agents import GraphFilter, KGError, KnowledgeGraph, load_kg, make_graph_tools, use_filter
from graphtrail.kg.backends import import_graph
from tests.neo4j_server import wipe

BACKENDS = ("memory", "ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j))
DB_BACKENDS = ("ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j))

INJECTION = "capital\\u0060]->(b) WITH 1 AS x MATCH (n) DETACH DELETE n //"
CORPUS = {
    "unicode_escape": INJECTION,
    "backtick": "x`]->(b) MATCH (n) DETACH DELETE n //",
    "quote": "it's' }) MATCH (n) DETACH DELETE n //",
    "double_quote": 'say "hi" \\" "',
    "comment": "/* open -- // #",
    "nul": "nul\x00byte",
    "separators": "a\x1fb,c;d|e\tf",
    "newlines": "one\ntwo\r\nthree\u2028four",
    "parameter": "$id {id: 1} ${x} $sep",
    "backslash": "C:\\dir\\'x'\\",
    "unicode": "Zürich — 東京 \U0001f600",
}
BIG = "é" * 500_000  # 1 MB of UTF-8
SEPARATED = ("a", "b", "a\x1fb")  # an id holding the old list separator, and the ids it would split into


def corpus_kg() -> KnowledgeGraph:
    kg = KnowledgeGraph(name="corpus")
    values = list(CORPUS.values())
    for v in values:
        kg.add_entity(v, v, v, v, [v, ","])
    for eid in SEPARATED:
        kg.add_entity(eid, f"sep {eid!r}", "plain")
    kg.add_entity("big", BIG, "plain", BIG)
    for i, v in enumerate(values):
        kg.add_relation(v, v, values[(i + 1) % len(values)], v)
    kg.add_relation("big", BIG, values[0], BIG)
    kg.add_relation("a", "links", "a\x1fb")
    for i, v in enumerate(values):
        kg.add_text_unit(v, v, [v, values[(i + 1) % len(values)], "not-in-graph"])
        kg.add_community(v, v, [v, values[(i + 1) % len(values)]], summary=v, level=1)
    kg.add_text_unit("mentions-separated", "mentions a\x1fb only", ["a\x1fb"])
    kg.add_text_unit("big-unit", BIG, ["big"])
    return kg


def _plant_neo4j(bolt_uri: str) -> None:
    import neo4j

    with neo4j.GraphDatabase.driver(bolt_uri, auth=None) as driver:
        driver.execute_query("CREATE (:Customer {name: $n})-[:ORDERED]->(:Order {no: 1})", {"n": "Ada"})


def _neo4j_counts(bolt_uri: str) -> dict[str, int]:
    import neo4j

    with neo4j.GraphDatabase.driver(bolt_uri, auth=None) as driver:
        records = driver.execute_query(
            "CALL () { MATCH (c:Customer {name: 'Ada'})-[:ORDERED]->(:Order) RETURN count(*) AS customers } "
            "CALL () { MATCH (n) RETURN count(n) AS nodes } CALL () { MATCH ()-[r]->() RETURN count(r) AS rels } "
            "RETURN customers, nodes, rels"
        ).records
    return dict(records[0])


def _plant_ladybug(folder: Path) -> Path:
    import ladybug

    other = folder / "customers.lbug"
    db = ladybug.Database(str(other))
    conn = ladybug.Connection(db)
    conn.execute("CREATE NODE TABLE Customer(name STRING PRIMARY KEY)")
    conn.execute("CREATE (:Customer {name: $n})", {"n": "Ada"})
    conn.close()
    db.close()
    return other


def _ladybug_customers(other: Path) -> list[list[Any]]:
    import ladybug

    db = ladybug.Database(str(other), read_only=True)
    conn = ladybug.Connection(db)
    try:
        return conn.execute("MATCH (c:Customer) RETURN c.name").get_all()
    finally:
        conn.close()
        db.close()


def _expected_counts(kg: KnowledgeGraph) -> tuple[int, int]:
    nodes = len(kg) + len(kg.text_units) + len(kg.communities)
    mentions = sum(len({e for e in u.entity_ids if e in kg}) for u in kg.text_units.values())
    members = sum(len(set(c.entity_ids)) for c in kg.communities.values())
    return nodes, len(list(kg.relations())) + mentions + members


@pytest.fixture(scope="module")
def reference() -> KnowledgeGraph:
    return corpus_kg()


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest, reference: KnowledgeGraph, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The corpus graph as the backend serves it, with what was planted beside it and a check of it."""
    backend = request.param
    if backend == "memory":
        yield backend, reference, lambda: None
        return
    if backend == "ladybug":
        pytest.importorskip("ladybug")
        folder = tmp_path_factory.mktemp("corpus")
        other = _plant_ladybug(folder)
        target = str(folder / "corpus.lbug")

        def untouched() -> None:
            assert _ladybug_customers(other) == [["Ada"]]
            assert sorted(p.name for p in folder.iterdir()) == ["corpus.lbug", "customers.lbug"]
    else:
        server = request.getfixturevalue("neo4j_server")
        wipe(server.bolt_uri)
        _plant_neo4j(server.bolt_uri)
        target = server.bolt_uri
        nodes, rels = _expected_counts(reference)

        def untouched() -> None:
            assert _neo4j_counts(server.bolt_uri) == {"customers": 1, "nodes": nodes + 2, "rels": rels + 1}

    import_graph(reference, target)
    kg = load_kg(target, name="corpus")
    untouched()
    yield backend, kg, untouched
    kg.close()


def _filters(reference: KnowledgeGraph) -> list[GraphFilter | None]:
    """No filter, then each ablation kind on each half of the hostile entities (the separated id and BIG included)."""
    ids = [*CORPUS.values(), "a\x1fb", "big"]
    found: list[GraphFilter | None] = [None]
    for half in (frozenset(ids[0::2]), frozenset(ids[1::2])):
        found += [GraphFilter(hidden=half), GraphFilter(masked=half), GraphFilter(text_blocked=half)]
    return found


def _tool_calls(reference: KnowledgeGraph) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    for v in [*CORPUS.values(), "big", "a", "a\x1fb"]:
        calls += [
            ("search_entities", {"query": v[:30]}),
            ("get_entity", {"entity_id": v}),
            ("get_neighbors", {"entity_id": v, "direction": "both"}),
            ("get_neighbors", {"entity_id": v, "relation": v[:2000]}),
            ("read_text_unit", {"unit_id": v}),
            ("search_communities", {"query": v[:30]}),
            ("read_community", {"community_id": v}),
        ]
    calls += [("read_text_unit", {"unit_id": "mentions-separated"}), ("read_text_unit", {"unit_id": "big-unit"})]
    calls.append(("submit_answer", {"answer": INJECTION, "citations": list(CORPUS.values())}))
    return calls


def _answers(kg: Any, graph_filter: GraphFilter | None, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    tools = {t.name: t for t in make_graph_tools(kg)}
    with use_filter(graph_filter):
        return [str(tools[name].invoke(args)) for name, args in calls]


def _reads(kg: Any) -> dict[str, Any]:
    ids = sorted(kg.entity_ids())
    return {
        "entities": sorted(kg.entities(), key=lambda e: e.id),
        "relations": sorted(kg.relations(), key=repr),
        "out": {e: sorted(kg.out_relations(e), key=repr) for e in ids},
        "in": {e: sorted(kg.in_relations(e), key=repr) for e in ids},
        "degree": {e: kg.degree(e) for e in ids},
        "units_for": {e: kg.text_units_for(e) for e in ids},
        "units": {u: kg.text_unit(u) for u in sorted(kg.text_units)},
        "communities": {c: kg.community(c) for c in sorted(kg.communities)},
    }


def test_every_tool_under_every_ablation_answers_as_in_memory(served: Any, reference: KnowledgeGraph) -> None:
    backend, kg, untouched = served
    calls = _tool_calls(reference)
    for graph_filter in _filters(reference):
        view = kg.filtered(graph_filter)
        if graph_filter is not None:
            _removed_means_removed(view, graph_filter)
        if backend != "memory":  # the in-memory graph is the reference
            assert _answers(kg, graph_filter, calls) == _answers(reference, graph_filter, calls), (backend, graph_filter)
            assert _reads(view) == _reads(reference.filtered(graph_filter)), (backend, graph_filter)
    untouched()


def _removed_means_removed(view: Any, f: GraphFilter) -> None:
    """What each ablation kind promises, checked on the view itself (so the reference is checked too)."""
    visible = set(view.entity_ids())
    assert not visible & f.hidden
    assert all(not {r.source, r.target} & f.hidden for r in view.relations())
    for uid in view.text_units:
        unit = view.text_unit(uid)
        assert unit is None or not set(unit.entity_ids) & (f.hidden | f.masked | f.text_blocked), uid
    for eid in f.masked & visible:
        rec = view.entity(eid)
        assert rec.name != eid and rec.description == "" and rec.aliases == ()
    for eid in f.text_blocked & visible:
        assert view.entity(eid).description == "" and view.text_units_for(eid) == []


def test_original_text_round_trips(served: Any) -> None:
    backend, kg, untouched = served
    for key, v in CORPUS.items():
        rec = kg.entity(v)
        assert rec is not None and (rec.id, rec.name, rec.type, rec.description, rec.aliases) == (v, v, v, v, (v, ",")), key
        assert [r.relation for r in kg.out_relations(v)] == [v], key
        assert kg.text_unit(v).text == v and kg.communities[v].title == v, key
    assert [r.relation for r in kg.out_relations("big")] == [BIG] and kg.entity("big").name == BIG
    tools = {t.name: t for t in make_graph_tools(kg)}
    shown = str(tools["get_neighbors"].invoke({"entity_id": INJECTION, "relation": INJECTION}))
    assert '"relation": "capital\\\\u0060]->(b) WITH 1 AS x MATCH (n) DETACH DELETE n //"' in shown
    untouched()


def test_text_unit_mentioning_a_hidden_separated_id_is_withheld(served: Any) -> None:
    """``a\\x1fb`` is one id: hiding it withholds the unit that mentions it, hiding ``a`` and ``b`` does not."""
    backend, kg, untouched = served
    assert kg.text_unit("mentions-separated").entity_ids == ("a\x1fb",)
    assert kg.filtered(GraphFilter(hidden=frozenset({"a\x1fb"}))).text_unit("mentions-separated") is None
    assert kg.filtered(GraphFilter(masked=frozenset({"a\x1fb"}))).text_unit("mentions-separated") is None
    assert kg.filtered(GraphFilter(hidden=frozenset({"a", "b"}))).text_unit("mentions-separated") is not None
    assert [c.id for c in kg.communities_of("a\x1fb")] == []
    untouched()


@pytest.mark.parametrize("backend", DB_BACKENDS)
def test_an_id_too_long_to_index_is_refused_before_anything_is_written(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    kg = KnowledgeGraph(name="long")
    kg.add_entity("ok", "fine")
    kg.add_entity("x" * 1_000_000, "too long")
    if backend == "ladybug":
        pytest.importorskip("ladybug")
        target = tmp_path / "long.lbug"
        with pytest.raises(KGError, match="1000000 bytes"):
            import_graph(kg, target)
        assert list(tmp_path.iterdir()) == []
    else:
        server = request.getfixturevalue("neo4j_server")
        wipe(server.bolt_uri)
        _plant_neo4j(server.bolt_uri)
        with pytest.raises(KGError, match="1000000 bytes"):
            import_graph(kg, server.bolt_uri)
        assert _neo4j_counts(server.bolt_uri) == {"customers": 1, "nodes": 2, "rels": 1}


@pytest.mark.neo4j
def test_cli_import_of_the_measured_injection_leaves_other_data_alone(neo4j_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The measured case: ``kg import triples.tsv --to bolt://...?label=KG`` with the \\u0060 relation label."""
    from graphtrail.cli import main

    wipe(neo4j_server.bolt_uri)
    _plant_neo4j(neo4j_server.bolt_uri)
    triples = tmp_path / "triples.tsv"
    triples.write_text(f"France\t{INJECTION}\tParis\nGermany\tcapital\tBerlin\n", encoding="utf-8")
    uri = f"{neo4j_server.bolt_uri}?label=KG"
    assert main(["kg", "import", str(triples), "--to", uri]) == 0
    assert "imported 4 entities, 2 relations" in capsys.readouterr().out
    nodes, rels = _expected_counts(load_kg(triples))  # with the communities the import computes
    after = {"customers": 1, "nodes": nodes + 2, "rels": rels + 1}
    assert _neo4j_counts(neo4j_server.bolt_uri) == after
    kg = load_kg(uri)
    try:
        assert {r.relation for r in kg.relations()} == {INJECTION, "capital"}
        assert kg.describe()["relation_types"] == {INJECTION: 1, "capital": 1}
    finally:
        kg.close()
    # A hostile mapping option is refused before anything is built: one line, exit 2.
    for option in ("label=KG%60%5D%20MATCH%20(n)%20DETACH%20DELETE%20n", "id=id%5Cu0060", "relation_text=a%20b", "mentions=M%00"):
        assert main(["kg", "import", str(triples), "--to", f"{neo4j_server.bolt_uri}?{option}"]) == 2
        err = capsys.readouterr().err
        assert "not a plain identifier" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert _neo4j_counts(neo4j_server.bolt_uri) == after
