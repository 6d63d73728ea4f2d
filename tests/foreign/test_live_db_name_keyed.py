"""ablated_driver / ablated_connection on a database whose ids spell the names: a masked node is not found by name.

A masked entity keeps its id and edges; its name becomes the placeholder and a
lookup by its real name finds nothing (docs/ablations.md, "What an ablation does").
Here the ids are the names (``"Bravo"``) or hold them DBpedia-style
(``"dbr:Charlie_Brown"``): ``"[masked entity] <id>"`` would spell the name, and
``CONTAINS``/``STARTS WITH`` by the real name would still find the node. The oracle
is a database this test writes itself with the masked node renamed to a
placeholder that does not spell it (never through graphtrail), queried without
graphtrail. Placeholders are compared up to their spelling; the wrapper's must not
spell the name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphtrail.kg import GraphFilter, ablated_connection, ablated_driver, use_filter
from tests.neo4j_server import wipe

from .test_live_db_exact import plain

NODES = [
    {"id": "Quasar", "name": "Quasar", "description": "Quasar starts every path."},
    {"id": "Bravo", "name": "Bravo", "description": "Bravo sits in the middle.", "aliases": "BRV"},
    {"id": "dbr:Charlie_Brown", "name": "Charlie Brown", "description": "Charlie ends the path."},
    {"id": "d1", "name": "Delta", "description": "Delta has an id of its own."},
]
EDGES = [("Quasar", "Bravo"), ("Bravo", "dbr:Charlie_Brown"), ("Quasar", "d1")]

SHAPES = {
    "contains": "MATCH (n:E) WHERE n.name CONTAINS $q RETURN n.id AS id ORDER BY n.id",
    "starts_with": "MATCH (n:E) WHERE lower(n.name) STARTS WITH lower($q) RETURN n.id AS id ORDER BY n.id",
    "surname": "MATCH (n:E) WHERE n.name CONTAINS 'Brown' RETURN n.id AS id ORDER BY n.id",
    "two_hops": "MATCH (:E {id: 'Quasar'})-[:LINK]->(b)-[:LINK]->(c) RETURN b.name AS bn, c.name AS cn ORDER BY c.id",
    "scalars": "MATCH (n:E) RETURN n.id AS id, n.name AS name, n.description AS text ORDER BY n.id",
}
MASKED = GraphFilter(masked=frozenset({"Bravo", "dbr:Charlie_Brown", "d1"}))
LOOKUPS = ("Bravo", "Charlie", "Charlie Brown", "Delta")


def by_hand(masked: frozenset[str]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The database with ``masked`` renamed by hand: a placeholder that spells nothing, no text, no aliases."""
    nodes = []
    for n, node in enumerate(NODES):
        node = {"aliases": None, **node}
        if node["id"] in masked:
            node.update(name=f"[masked entity] #{n}", description="", aliases=None)
        nodes.append(node)
    return nodes, EDGES


def _aside(rows: Any) -> Any:
    """Rows with every placeholder spelled ``[masked entity]`` (its tail differs between the two databases)."""
    if isinstance(rows, str):
        return re.sub(r"^\[masked entity\] \S+$", "[masked entity]", rows)
    if isinstance(rows, list):
        return [_aside(r) for r in rows]
    if isinstance(rows, dict):
        return {k: _aside(v) for k, v in rows.items()}
    return rows


def _answers(run: Any) -> dict[tuple[str, str], Any]:
    return {(shape, q): _aside(run(query, q)) for shape, query in SHAPES.items() for q in LOOKUPS}


def _no_name_spelled(rows: list[list[Any]]) -> None:
    for _id, name, _text in rows:
        if name.startswith("[masked entity]"):
            assert not re.search(r"bravo|charlie|brown|delta", name, re.IGNORECASE), name


# ---------------------------------------------------------------- LadybugDB


def ladybug_db(path: Path | None, masked: frozenset[str] = frozenset()) -> tuple[Any, Any]:
    import ladybug

    db = ladybug.Database(str(path) if path else ":memory:")
    conn = ladybug.Connection(db)
    conn.execute("CREATE NODE TABLE E(id STRING PRIMARY KEY, name STRING, description STRING, aliases STRING)")
    conn.execute("CREATE REL TABLE LINK(FROM E TO E)")
    nodes, edges = by_hand(masked)
    for node in nodes:
        conn.execute("CREATE (:E {id: $id, name: $name, description: $description, aliases: $aliases})", node)
    for s, t in edges:
        conn.execute("MATCH (a:E {id: $s}), (b:E {id: $t}) CREATE (a)-[:LINK]->(b)", {"s": s, "t": t})
    return db, conn


def ladybug_rows(conn: Any, query: str, q: str = "") -> list[list[Any]]:
    params = {"q": q} if "$q" in query else {}
    return [plain(row) for row in conn.execute(query, params).get_all()]


@pytest.mark.parametrize("where", ["file", "memory"])
def test_ladybugdb_masked_nodes_whose_ids_spell_names_are_not_found_by_name(where: str, tmp_path: Path) -> None:
    pytest.importorskip("ladybug", reason="LadybugDB is not installed (pip install 'graphtrail[graphdb]')")
    opened = []
    try:
        source = ladybug_db(tmp_path / "full.lbug" if where == "file" else None)
        oracle = ladybug_db(tmp_path / "oracle.lbug", MASKED.masked)
        opened += [source[0], oracle[0]]
        full = ablated_connection(source[1])
        committed = _answers(lambda query, q: ladybug_rows(source[1], query, q))
        with use_filter(MASKED):
            got = _answers(lambda query, q: ladybug_rows(full, query, q))
            scalars = ladybug_rows(full, SHAPES["scalars"])
        assert got == _answers(lambda query, q: ladybug_rows(oracle[1], query, q))
        assert got[("contains", "Bravo")] == [] and got[("surname", "Bravo")] == []
        _no_name_spelled(scalars)
        assert [r[1] for r in scalars if r[0] == "d1"] == ["[masked entity] d1"]  # an id of its own stays readable
        assert _answers(lambda query, q: ladybug_rows(full, query, q)) == committed  # committed data untouched
    finally:
        for db in opened:
            db.close()


# ---------------------------------------------------------------- Neo4j


def neo4j_write(uri: str, masked: frozenset[str]) -> None:
    import neo4j

    wipe(uri)
    nodes, edges = by_hand(masked)
    with neo4j.GraphDatabase.driver(uri, auth=None) as driver:
        driver.execute_query("UNWIND $rows AS row CREATE (n:E) SET n = row", {"rows": nodes})
        driver.execute_query("UNWIND $rows AS row MATCH (a:E {id: row[0]}), (b:E {id: row[1]}) CREATE (a)-[:LINK]->(b)",
                             {"rows": [list(e) for e in edges]})


def neo4j_rows(driver: Any, query: str, q: str = "") -> list[list[Any]]:
    return [plain(list(r.values())) for r in driver.execute_query(query, {"q": q}).records]


@pytest.fixture
def neo4j_uri(neo4j_server: Any) -> Iterator[str]:
    yield neo4j_server.bolt_uri
    wipe(neo4j_server.bolt_uri)


@pytest.mark.neo4j
def test_neo4j_masked_nodes_whose_ids_spell_names_are_not_found_by_name(neo4j_uri: str) -> None:
    import neo4j

    with neo4j.GraphDatabase.driver(neo4j_uri, auth=None) as raw:
        neo4j_write(neo4j_uri, MASKED.masked)
        oracle = _answers(lambda query, q: neo4j_rows(raw, query, q))
        neo4j_write(neo4j_uri, frozenset())
        committed = _answers(lambda query, q: neo4j_rows(raw, query, q))
        driver = ablated_driver(raw)
        with use_filter(MASKED):
            got = _answers(lambda query, q: neo4j_rows(driver, query, q))
            scalars = neo4j_rows(driver, SHAPES["scalars"])
        assert got == oracle
        assert got[("contains", "Bravo")] == [] and got[("surname", "Bravo")] == []
        _no_name_spelled(scalars)
        assert _answers(lambda query, q: neo4j_rows(raw, query, q)) == committed
