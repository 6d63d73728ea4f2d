"""The exact route for database records: a Cypher tool over Neo4j and LadybugDB, read through graphtrail's wrapper.

The agents are written the way the LangChain docs write a database tool: a
``@tool`` that runs a parameterised Cypher query with the official driver
(``driver.execute_query`` / ``session.run``, ``record.data()``) or with
``ladybug.Connection.execute``. The only graphtrail line is the wrap,
``ablated_driver(driver)`` / ``ablated_connection(conn)``. The oracle
(tests/foreign/oracle.py) rebuilds the database with the run's hidden nodes
really deleted and its masked names really renamed, and reruns a fresh agent
on it: every valid condition must give, run for run, the same answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool

from graphtrail.evaluators import evaluate
from graphtrail.kg import GraphFilter, ablated_connection, ablated_driver, use_filter
from tests.neo4j_server import wipe

from .oracle import check_against_oracle
from .test_oracle import CONDITIONS, OPTIONS
from .world import REMOVED, Spy, director, film, make_model, producer, questions

N = 2  # films in the database (and questions asked)


@pytest.fixture(autouse=True)
def wrapper_only() -> Iterator[None]:
    """The tools declare their output exact (docs/ablations.md): graphtrail's output filter leaves it as it is,
    so the wrapper alone ablates what the model sees."""
    from graphtrail.evaluators import register_tool_filter, unregister_tool_filter

    for name in ("search", "crew"):
        register_tool_filter(name, lambda output, graph_filter: output)
    yield
    for name in ("search", "crew"):
        unregister_tool_filter(name)


def _present_rows() -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    """The world's nodes and edges as the oracle's database holds them: hidden ones deleted, masked names renamed."""
    hidden, masked = REMOVED.get()
    nodes = []
    for i in range(1, N + 1):
        for entity in (film(i), director(i), producer(i)):
            if entity["id"] in hidden:
                continue
            name = f"[masked entity] {entity['id']}" if entity["id"] in masked else entity["name"]
            nodes.append({"id": entity["id"], "name": name, "type": entity["type"],
                          "description": f"{entity['name']} is part of the film world."})
    ids = {n["id"] for n in nodes}
    edges = [(f"{p}{i}", role, f"m{i}") for i in range(1, N + 1) for p, role in (("d", "director"), ("c", "producer"))
             if f"{p}{i}" in ids and f"m{i}" in ids]
    return nodes, edges


def _tools(run_cypher: Callable[[str, dict[str, Any]], list[dict[str, Any]]]) -> list[Any]:
    """search and crew, over rows of ``{column: node or value}``: the shapes world.make_model reads."""

    @tool
    def search(query: str) -> str:
        """Find films by title."""
        rows = run_cypher("MATCH (f:Film) WHERE $query CONTAINS f.name RETURN f ORDER BY f.id", {"query": query})
        return json.dumps([row["f"] for row in rows])

    @tool
    def crew(film_id: str) -> str:
        """The people who made a film, with the edges linking them to it."""
        rows = run_cypher("MATCH (p:Person)-[r:MADE]->(f:Film {id: $id}) RETURN p, r.role AS role ORDER BY p.id",
                          {"id": film_id})
        people = [{**row["p"], "role": row["role"]} for row in rows]
        edges = [{"source": p["id"], "relation": "directed" if p["role"] == "director" else "produced", "target": film_id}
                 for p in people]
        return json.dumps({"entities": people, "edges": edges})

    return [search, crew]


# ---------------------------------------------------------------- LadybugDB


def _ladybug_db(path: Path) -> Any:
    import ladybug

    db = ladybug.Database(str(path))
    conn = ladybug.Connection(db)
    conn.execute("CREATE NODE TABLE Film(id STRING PRIMARY KEY, name STRING, type STRING, description STRING)")
    conn.execute("CREATE NODE TABLE Person(id STRING PRIMARY KEY, name STRING, type STRING, description STRING)")
    conn.execute("CREATE REL TABLE MADE(FROM Person TO Film, role STRING)")
    nodes, edges = _present_rows()
    for node in nodes:
        table = "Film" if node["type"] == "film" else "Person"
        conn.execute(f"CREATE (:{table} {{id: $id, name: $name, type: $type, description: $description}})", node)
    for source, role, target in edges:
        conn.execute("MATCH (p:Person {id: $s}), (f:Film {id: $t}) CREATE (p)-[:MADE {role: $role}]->(f)",
                     {"s": source, "t": target, "role": role})
    return db, conn


def _ladybug_builder(root: Path) -> Callable[[], Any]:
    count = iter(range(10_000))

    def build() -> Any:
        _, conn = _ladybug_db(root / f"films-{next(count)}.lbug")
        conn = ablated_connection(conn)  # the one graphtrail line
        lock = threading.Lock()  # one connection, tools run in threads

        def run_cypher(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
            with lock:
                result = conn.execute(query, params)
                rows = result.rows_as_dict().get_all()
            return [{k: ({p: v for p, v in val.items() if not p.startswith("_")} if isinstance(val, dict) else val)
                     for k, val in row.items()} for row in rows]

        return create_agent(make_model(Spy()), _tools(run_cypher), name="ladybug-films")

    return build


def test_a_cypher_tool_over_ladybugdb_equals_the_oracle(tmp_path: Path) -> None:
    pytest.importorskip("ladybug")
    build = _ladybug_builder(tmp_path)
    report = evaluate(build(), questions(N), out_dir=tmp_path / "eval", **OPTIONS)
    assert report.condition("baseline").accuracy == 1.0
    assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
    assert report.condition("cited_removal").accuracy == 0.0
    assert set(check_against_oracle(report, tmp_path / "eval", build)) == set(CONDITIONS)


def test_ladybug_relationships_paths_and_lists_read_the_ablated_data(tmp_path: Path) -> None:
    pytest.importorskip("ladybug")
    db, raw = _ladybug_db(tmp_path / "films.lbug")
    conn = ablated_connection(raw)
    rels = "MATCH (p:Person)-[r:MADE]->(f:Film {id: 'm1'}) RETURN r ORDER BY p.id"
    paths = "MATCH path = (p:Person)-[:MADE*1..1]->(f:Film {id: 'm1'}) RETURN path ORDER BY p.id"
    listed = "MATCH (p:Person)-[:MADE]->(f:Film {id: 'm1'}) RETURN f.id, collect(p) AS people"
    assert len(conn.execute(rels).get_all()) == 2 and type(conn.execute(rels)) is type(raw.execute(rels))  # outside: untouched
    with use_filter(GraphFilter(hidden=frozenset({"d1"}), masked=frozenset({"c1"}), text_blocked=frozenset({"m1"}))):
        assert [r["role"] for (r,) in conn.execute(rels).get_all()] == ["producer"]  # its endpoint is gone
        (path,), = conn.execute(paths).get_all()
        assert [n["id"] for n in path["_NODES"]] == ["c1", "m1"]
        assert path["_NODES"][0]["name"] == "[masked entity] c1" and path["_NODES"][1]["description"] == ""
        (film_id, people), = conn.execute(listed).get_all()
        assert [p["id"] for p in people] == ["c1"]
        assert conn.execute(rels).get_as_arrow().num_rows == 1  # every export reads the ablated data
    db.close()


def test_async_drivers_are_refused_not_passed_through_unfiltered(tmp_path: Path) -> None:
    ladybug = pytest.importorskip("ladybug")
    neo4j = pytest.importorskip("neo4j")

    from graphtrail.kg import KGError

    with pytest.raises(KGError, match="cannot filter neo4j's async driver"):
        ablated_driver(neo4j.AsyncGraphDatabase.driver("neo4j://127.0.0.1:1"))  # no connection is made
    db = ladybug.Database(str(tmp_path / "empty.lbug"))
    with pytest.raises(KGError, match="cannot filter LadybugDB's AsyncConnection"):
        ablated_connection(ladybug.AsyncConnection(db))
    db.close()


# ---------------------------------------------------------------- Neo4j


@pytest.fixture(scope="module")
def neo4j_uri(neo4j_server: Any) -> Iterator[str]:
    wipe(neo4j_server.bolt_uri)
    yield neo4j_server.bolt_uri
    wipe(neo4j_server.bolt_uri)


def _neo4j_write(uri: str) -> None:
    import neo4j

    wipe(uri)
    nodes, edges = _present_rows()
    with neo4j.GraphDatabase.driver(uri, auth=None) as driver:
        driver.execute_query("UNWIND $rows AS row CALL { WITH row WITH row WHERE row.type = 'film' "
                             "CREATE (:Film {id: row.id, name: row.name, type: row.type, description: row.description}) } "
                             "CALL { WITH row WITH row WHERE row.type <> 'film' "
                             "CREATE (:Person {id: row.id, name: row.name, type: row.type, description: row.description}) }",
                             {"rows": nodes})
        driver.execute_query("UNWIND $rows AS row MATCH (p:Person {id: row.s}), (f:Film {id: row.t}) "
                             "CREATE (p)-[:MADE {role: row.role}]->(f)",
                             {"rows": [{"s": s, "role": r, "t": t} for s, r, t in edges]})


def _neo4j_builder(uri: str, style: str) -> Callable[[], Any]:
    import neo4j

    def build() -> Any:
        _neo4j_write(uri)  # the oracle's database: what REMOVED leaves (everything, for the evaluated agent)
        driver = ablated_driver(neo4j.GraphDatabase.driver(uri, auth=None))  # the one graphtrail line

        def run_cypher(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
            if style == "execute_query":
                records, _, _ = driver.execute_query(query, params, routing_=neo4j.RoutingControl.READ)
                return [r.data() for r in records]
            with driver.session() as session:  # the older way: a session, a managed read transaction
                return session.execute_read(lambda tx: [r.data() for r in tx.run(query, params)])

        return create_agent(make_model(Spy()), _tools(run_cypher), name=f"neo4j-films-{style}")

    return build


@pytest.mark.neo4j
@pytest.mark.parametrize("style", ["execute_query", "session"])
def test_a_cypher_tool_over_neo4j_equals_the_oracle(style: str, neo4j_uri: str, tmp_path: Path) -> None:
    build = _neo4j_builder(neo4j_uri, style)
    report = evaluate(build(), questions(N), out_dir=tmp_path, **OPTIONS)
    assert report.condition("baseline").accuracy == 1.0
    assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
    assert report.condition("cited_removal").accuracy == 0.0
    assert set(check_against_oracle(report, tmp_path, build)) == set(CONDITIONS)


@pytest.mark.neo4j
def test_neo4j_relationships_paths_and_lists_read_the_ablated_data(neo4j_uri: str) -> None:
    import neo4j

    token = REMOVED.set((frozenset(), frozenset()))
    _neo4j_write(neo4j_uri)
    REMOVED.reset(token)
    driver = ablated_driver(neo4j.GraphDatabase.driver(neo4j_uri, auth=None))
    rels = "MATCH (p:Person)-[r:MADE]->(:Film {id: 'm1'}) RETURN r ORDER BY p.id"
    paths = "MATCH path = (:Person)-[:MADE]->(:Film {id: 'm1'}) RETURN path ORDER BY nodes(path)[0].id"
    listed = "MATCH (p:Person)-[:MADE]->(f:Film {id: 'm1'}) RETURN f.id AS film, collect(p) AS people"
    try:
        assert len(driver.execute_query(rels).records) == 2  # outside a run: untouched
        with use_filter(GraphFilter(hidden=frozenset({"d1"}), masked=frozenset({"c1"}), text_blocked=frozenset({"m1"}))):
            assert [r["r"]["role"] for r in driver.execute_query(rels).records] == ["producer"]  # its endpoint is gone
            (record,) = driver.execute_query(paths).records
            assert record.data()["path"] == [{"id": "c1", "name": "[masked entity] c1", "type": "person", "description": ""},
                                             "MADE", {"id": "m1", "name": "Film 1", "type": "film", "description": ""}]
            assert [p["id"] for p in driver.execute_query(listed).records[0]["people"]] == ["c1"]
            df = driver.execute_query(listed, result_transformer_=neo4j.Result.to_df)
            assert [p["id"] for p in df["people"][0]] == ["c1"]
            with driver.session() as session:
                assert session.run(rels).single()["r"]["role"] == "producer"
    finally:
        driver.close()
