"""ablated_driver / ablated_connection are exact: every query shape equals a database built without the entities.

The data: Quasar -> Bravo -> Charlie and Quasar -> Delta -> Echo (``:E`` nodes,
``:LINK`` edges). With Bravo hidden, a pattern passing *through* Bravo must
match nothing, as on a database where Bravo was never written; a masked entity
must not be found by its real name; a text-blocked one has no text. The oracle
is that database, built with the condition applied in Python, queried without
graphtrail. Then the guarantees that make the mechanism (a write transaction
rolled back) safe: concurrent runs see only their own condition, and a process
killed with SIGKILL inside the transaction leaves the committed data intact.
Last, ``evaluate`` with a node-returning tool declared exact: under
``uncited_removal`` (Bravo hidden) the agent answers "unknown", as on the oracle.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from graphtrail.kg import GraphFilter, ablated_connection, ablated_driver, use_filter
from tests.fakes import ScriptedChatModel, tool_call
from tests.neo4j_server import wipe

NODES = [
    {"id": "q", "name": "Quasar", "description": "Quasar starts every path.", "aliases": "QSR"},
    {"id": "b", "name": "Bravo", "description": "Bravo sits in the middle.", "aliases": "BRV"},
    {"id": "c", "name": "Charlie", "description": "Charlie ends the first path."},
    {"id": "d", "name": "Delta", "description": "Delta sits in the middle too."},
    {"id": "e", "name": "Echo", "description": "Echo ends the second path."},
]
EDGES = [("q", "b"), ("b", "c"), ("q", "d"), ("d", "e")]

SHAPES = {
    "two_hops": "MATCH (:E {id: $q})-[:LINK]->()-[:LINK]->(c) RETURN c ORDER BY c.id",
    "var_length": "MATCH (:E {id: $q})-[:LINK*2..2]->(c) RETURN c ORDER BY c.id",
    "exists": "MATCH (c:E) WHERE EXISTS { MATCH (:E {id: $q})-[:LINK]->()-[:LINK]->(c) } RETURN c ORDER BY c.id",
    "unwind_nodes": "MATCH p = (:E {id: $q})-[:LINK*2..2]->(c) UNWIND nodes(p) AS n RETURN n ORDER BY c.id, n.id",
    "return_nodes": "MATCH p = (:E {id: $q})-[:LINK*2..2]->(c) RETURN nodes(p) AS ns ORDER BY c.id",
    "by_name": "MATCH (n:E) WHERE n.name IN ['Bravo', 'Charlie'] RETURN n ORDER BY n.id",
    "by_alias": "MATCH (n:E) WHERE n.aliases = 'BRV' RETURN n.id AS id",
    "scalars": "MATCH (n:E) RETURN n.id AS id, n.name AS name, n.description AS text ORDER BY n.id",
    "count": "MATCH (:E)-[r:LINK]->(:E) RETURN count(r) AS edges",
}
FILTERS = {
    "hidden": GraphFilter(hidden=frozenset({"b"})),
    "masked": GraphFilter(masked=frozenset({"b"})),
    "text_blocked": GraphFilter(text_blocked=frozenset({"c"})),
    "mixed": GraphFilter(hidden=frozenset({"d"}), masked=frozenset({"b"}), text_blocked=frozenset({"c", "q"})),
}
#: The issue's case, Quasar -> Bravo -> Charlie alone: the data with Delta and Echo really gone.
CHAIN = GraphFilter(hidden=frozenset({"d", "e"}))


def really_ablated(graph_filter: GraphFilter | None) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The data a database without the condition's entities holds (the definition in docs/ablations.md)."""
    f = graph_filter or GraphFilter()
    nodes = []
    for node in NODES:
        if node["id"] in f.hidden:
            continue
        node = dict(node)
        if node["id"] in f.masked:
            node["name"] = f.masked_name(node["id"])
            node.pop("aliases", None)
        if node["id"] in f.masked or node["id"] in f.text_blocked:
            node["description"] = ""
        nodes.append(node)
    return nodes, [(s, t) for s, t in EDGES if s not in f.hidden and t not in f.hidden]


def plain(value: Any) -> Any:
    """A result value without database internals: nodes as their non-null properties, lists as lists."""
    props = getattr(value, "_properties", None)  # a neo4j Node
    if props is not None:
        return {k: v for k, v in props.items() if v is not None}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if not k.startswith("_") and v is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


# ---------------------------------------------------------------- LadybugDB


def ladybug_db(path: Path | None, graph_filter: GraphFilter | None = None) -> tuple[Any, Any]:
    import ladybug

    db = ladybug.Database(str(path) if path else ":memory:")
    conn = ladybug.Connection(db)
    conn.execute("CREATE NODE TABLE E(id STRING PRIMARY KEY, name STRING, description STRING, aliases STRING)")
    conn.execute("CREATE REL TABLE LINK(FROM E TO E)")
    nodes, edges = really_ablated(graph_filter)
    for node in nodes:
        conn.execute("CREATE (:E {id: $id, name: $name, description: $description, aliases: $aliases})",
                     {"aliases": None, **node})
    for s, t in edges:
        conn.execute("MATCH (a:E {id: $s}), (b:E {id: $t}) CREATE (a)-[:LINK]->(b)", {"s": s, "t": t})
    return db, conn


def ladybug_rows(conn: Any, query: str) -> list[list[Any]]:
    return [plain(row) for row in conn.execute(query, {"q": "q"}).get_all()]


@pytest.fixture
def ladybug_pair(tmp_path: Path) -> Iterator[Callable[[GraphFilter | None], Any]]:
    pytest.importorskip("ladybug", reason="LadybugDB is not installed (pip install 'graphtrail[graphdb]')")
    opened: list[Any] = []

    def oracle(graph_filter: GraphFilter | None) -> Any:
        db, conn = ladybug_db(tmp_path / f"oracle-{len(opened)}.lbug", graph_filter)
        opened.append(db)
        return conn

    yield oracle
    for db in opened:
        db.close()


@pytest.mark.parametrize("where", ["file", "memory"])  # a copy per condition; in memory, rolled-back transactions
@pytest.mark.parametrize("condition", list(FILTERS))
def test_every_query_shape_on_ladybugdb_equals_a_database_without_the_entities(
        condition: str, where: str, ladybug_pair: Any, tmp_path: Path) -> None:
    graph_filter = FILTERS[condition]
    full = ablated_connection(ladybug_pair(None) if where == "file" else ladybug_db(None)[1])
    oracle = ladybug_pair(graph_filter)
    for shape, query in SHAPES.items():
        with use_filter(graph_filter):
            got = ladybug_rows(full, query)
        assert got == ladybug_rows(oracle, query), (condition, shape)
        assert ladybug_rows(full, query) == ladybug_rows(ladybug_pair(None), query), shape  # committed data untouched
    with use_filter(FILTERS["hidden"]):
        assert ladybug_rows(full, SHAPES["two_hops"]) == [[{"id": "e", "name": "Echo",
                                                           "description": "Echo ends the second path."}]]
        assert full.execute(SHAPES["two_hops"], {"q": "q"}).get_as_arrow().num_rows == 1  # every export reads it


def test_a_query_that_would_commit_is_refused_inside_a_rolled_back_run(ladybug_pair: Any) -> None:
    from graphtrail.kg import KGError

    _, conn = ladybug_db(None)  # in memory: the rolled-back transaction, which a COMMIT would end
    conn = ablated_connection(conn)
    with use_filter(FILTERS["hidden"]), pytest.raises(KGError, match="may not begin, commit"):
        conn.execute("MATCH (n:E) RETURN n; COMMIT")
    assert len(ladybug_rows(conn, SHAPES["scalars"])) == len(NODES)


def _concurrent_runs(run_query: Callable[[str], list[Any]], oracle: dict[str, list[Any]]) -> None:
    """8 threads, each under its own condition (and one under none), 5 queries each: all equal their oracle."""
    import contextvars

    conditions = [*FILTERS, "baseline"] * 2
    wrong: list[Any] = []

    def worker(name: str) -> None:
        with use_filter(FILTERS.get(name)):
            for _ in range(5):
                got = run_query(SHAPES["return_nodes"])
                if got != oracle[name]:
                    wrong.append((name, got))

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(worker, name)) for name in conditions[:8]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_concurrent_runs_on_ladybugdb_never_see_each_others_ablation(ladybug_pair: Any) -> None:
    conn = ablated_connection(ladybug_pair(None))
    oracle = {name: ladybug_rows(ladybug_pair(FILTERS.get(name)), SHAPES["return_nodes"]) for name in [*FILTERS, "baseline"]}
    lock = threading.Lock()  # the user's own connection, shared by the tools as in tests/foreign/test_oracle_databases.py

    def run_query(query: str) -> list[Any]:
        with lock:
            result = conn.execute(query, {"q": "q"})
        return [plain(row) for row in result.get_all()]

    _concurrent_runs(run_query, oracle)


def _killed_inside_the_transaction(script: str, root: Path) -> str:
    """Run ``script`` (which prints ``inside <n>`` from within the ablation's transaction), SIGKILL it there."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert line.startswith("inside") and proc.returncode == -signal.SIGKILL, (line, proc.returncode, err[-2000:])
    return line


def test_ladybugdb_killed_inside_an_ablated_query_keeps_its_data(tmp_path: Path) -> None:
    pytest.importorskip("ladybug")
    db, conn = ladybug_db(tmp_path / "kill.lbug")
    conn.execute("UNWIND range(1, 3000) AS i CREATE (:E {id: concat('x', CAST(i AS STRING)), name: 'X', description: 'x'})")
    conn.execute("MATCH (a:E {id: 'q'}), (x:E) WHERE x.name = 'X' CREATE (a)-[:LINK]->(x)")
    before = ladybug_rows(conn, SHAPES["scalars"]), ladybug_rows(conn, SHAPES["count"])
    conn.close()
    db.close()  # the child opens it: one process at a time
    line = _killed_inside_the_transaction(f"""
        import time, ladybug
        from graphtrail.kg import GraphFilter, ablated_connection, use_filter
        original = ladybug.Connection.execute
        def execute(self, query, parameters=None):
            if query == "RETURN 'pause'":
                (n,), = original(self, "MATCH (n:E) RETURN count(n)").get_all()
                print("inside", n, flush=True)
                time.sleep(120)
            return original(self, query, parameters)
        ladybug.Connection.execute = execute
        conn = ablated_connection(ladybug.Connection(ladybug.Database({str(tmp_path / 'kill.lbug')!r})))
        hidden = frozenset(['b', 'd'] + ['x%d' % i for i in range(1, 2001)])
        with use_filter(GraphFilter(hidden=hidden, masked=frozenset({{'q'}}))):
            conn.execute("RETURN 'pause'")
    """, tmp_path)
    assert line.split() == ["inside", str(len(NODES) + 3000 - 2002)]  # the ablation was applied when it died
    import ladybug

    from graphtrail.kg.backends.scratch import PREFIX

    left = [p for p in tmp_path.iterdir() if p.name.startswith(PREFIX)]
    assert len(left) == 1  # the dead run's condition copy
    db = ladybug.Database(str(tmp_path / "kill.lbug"))
    conn = ladybug.Connection(db)
    assert (ladybug_rows(conn, SHAPES["scalars"]), ladybug_rows(conn, SHAPES["count"])) == before
    wrapped = ablated_connection(conn)
    with use_filter(FILTERS["hidden"]):
        assert len(ladybug_rows(wrapped, SHAPES["scalars"])) == len(NODES) + 3000 - 1
    assert not left[0].exists()  # swept by the next copy
    wrapped.close()
    assert [p for p in tmp_path.iterdir() if p.name.startswith(PREFIX)] == []
    db.close()


# ---------------------------------------------------------------- Neo4j


def neo4j_write(uri: str, graph_filter: GraphFilter | None) -> None:
    import neo4j

    wipe(uri)
    nodes, edges = really_ablated(graph_filter)
    with neo4j.GraphDatabase.driver(uri, auth=None) as driver:
        driver.execute_query("UNWIND $rows AS row CREATE (n:E) SET n = row", {"rows": nodes})
        driver.execute_query("UNWIND $rows AS row MATCH (a:E {id: row[0]}), (b:E {id: row[1]}) CREATE (a)-[:LINK]->(b)",
                             {"rows": [list(e) for e in edges]})


def neo4j_rows(driver: Any, query: str, style: str = "execute_query") -> list[list[Any]]:
    if style == "execute_query":
        records = driver.execute_query(query, {"q": "q"}).records
    elif style == "session_run":
        with driver.session() as session:
            records = list(session.run(query, {"q": "q"}))
    else:
        with driver.session() as session:
            records = session.execute_read(lambda tx: list(tx.run(query, {"q": "q"})))
    return [plain(list(r.values())) for r in records]


@pytest.fixture
def neo4j_uri(neo4j_server: Any) -> Iterator[str]:
    yield neo4j_server.bolt_uri
    wipe(neo4j_server.bolt_uri)


@pytest.mark.neo4j
def test_every_query_shape_on_neo4j_equals_a_database_without_the_entities(neo4j_uri: str) -> None:
    import neo4j

    with neo4j.GraphDatabase.driver(neo4j_uri, auth=None) as raw:
        oracle = {}
        for condition, graph_filter in FILTERS.items():
            neo4j_write(neo4j_uri, graph_filter)
            oracle[condition] = {shape: neo4j_rows(raw, query) for shape, query in SHAPES.items()}
        neo4j_write(neo4j_uri, None)
        committed = {shape: neo4j_rows(raw, query) for shape, query in SHAPES.items()}
        driver = ablated_driver(raw)
        for condition, graph_filter in FILTERS.items():
            for style in ("execute_query", "session_run", "execute_read"):
                for shape, query in SHAPES.items():
                    with use_filter(graph_filter):
                        got = neo4j_rows(driver, query, style)
                    assert got == oracle[condition][shape], (condition, style, shape)
        assert oracle["hidden"]["two_hops"] == [[{"id": "e", "name": "Echo", "description": "Echo ends the second path."}]]
        assert {shape: neo4j_rows(raw, query) for shape, query in SHAPES.items()} == committed
        with use_filter(FILTERS["hidden"]), driver.session() as session:
            tx = session.begin_transaction()  # an explicit transaction: the condition applied, commit rolls back
            assert tx.run(SHAPES["count"]).single()["edges"] == 2
            tx.run("MATCH (n:E {id: 'q'}) SET n.name = 'changed'").consume()
            tx.commit()
            with session.begin_transaction() as tx:  # leaving the block commits a driver's transaction: not this one
                assert tx.run(SHAPES["two_hops"], {"q": "q"}).single()["c"]["id"] == "e"
        assert {shape: neo4j_rows(raw, query) for shape, query in SHAPES.items()} == committed


@pytest.mark.neo4j
def test_concurrent_runs_on_neo4j_never_see_each_others_ablation(neo4j_uri: str) -> None:
    import neo4j

    with neo4j.GraphDatabase.driver(neo4j_uri, auth=None) as raw:
        oracle = {}
        for name in [*FILTERS, "baseline"]:
            neo4j_write(neo4j_uri, FILTERS.get(name))
            oracle[name] = neo4j_rows(raw, SHAPES["return_nodes"])
        neo4j_write(neo4j_uri, None)
        driver = ablated_driver(raw)
        _concurrent_runs(lambda query: neo4j_rows(driver, query), oracle)


@pytest.mark.neo4j
def test_neo4j_client_killed_inside_the_ablation_leaves_the_data_intact(neo4j_uri: str, tmp_path: Path) -> None:
    import neo4j

    neo4j_write(neo4j_uri, None)
    with neo4j.GraphDatabase.driver(neo4j_uri, auth=None) as raw:
        before = {shape: neo4j_rows(raw, query) for shape, query in SHAPES.items()}
        line = _killed_inside_the_transaction(f"""
            import time, neo4j
            import graphtrail.kg.live_neo4j as live
            from graphtrail.kg import GraphFilter, ablated_driver, use_filter
            apply = live._apply
            def paused(tx, graph_filter, fields):
                apply(tx, graph_filter, fields)
                print("inside", tx.run("MATCH (n) RETURN count(n) AS n").single()["n"], flush=True)
                time.sleep(120)
            live._apply = paused
            driver = ablated_driver(neo4j.GraphDatabase.driver({neo4j_uri!r}, auth=None))
            with use_filter(GraphFilter(hidden=frozenset({{'b', 'd'}}), masked=frozenset({{'q'}}))):
                driver.execute_query("RETURN 1")
        """, tmp_path)
        assert line.split() == ["inside", str(len(NODES) - 2)]
        assert {shape: neo4j_rows(raw, query) for shape, query in SHAPES.items()} == before
        with use_filter(FILTERS["mixed"]):  # the dead client's locks are gone: the same nodes can be ablated again
            assert neo4j_rows(ablated_driver(raw), SHAPES["two_hops"]) != before["two_hops"]


# ---------------------------------------------------------------- evaluate: the case


def _two_hop_agent(run_query: Callable[[str, str], list[dict[str, Any]]]) -> Any:
    @tool
    def links(entity_id: str) -> str:
        """The entities one link away."""
        return json.dumps(run_query("MATCH (:E {id: $q})-[:LINK]->(c) RETURN c ORDER BY c.id", entity_id))

    @tool
    def two_hops(entity_id: str) -> str:
        """The entities two links away."""
        return json.dumps(run_query(SHAPES["two_hops"].replace("ORDER BY c.id", "ORDER BY c.id DESC"), entity_id))

    def policy(messages: list[Any]) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            return AIMessage(content="", tool_calls=[tool_call("links", {"entity_id": "q"}, "call_0")])
        if len(results) == 1:
            return AIMessage(content="", tool_calls=[tool_call("two_hops", {"entity_id": "q"}, "call_1")])
        found = [n for n in json.loads(results[-1].content) if n.get("name") == "Charlie"]
        if not found:
            return AIMessage(content="unknown [E:q]")
        return AIMessage(content=f"{found[0]['name']} [E:{found[0]['id']}] [E:q]")

    return create_agent(ScriptedChatModel(policy=policy, model_name="scripted-links"), [links, two_hops])


@pytest.fixture
def exact_tools() -> Iterator[None]:
    from graphtrail.evaluators import register_tool_filter, unregister_tool_filter

    for name in ("links", "two_hops"):
        register_tool_filter(name, lambda output, graph_filter: output)  # declared exact, as the docs recommend
    yield
    for name in ("links", "two_hops"):
        unregister_tool_filter(name)


def _evaluate_two_hops(agent: Any, out: Path) -> dict[str, list[str]]:
    from graphtrail.evaluators import evaluate

    from .oracle import load_records

    question = [{"id": "q1", "question": "Who is two links from Quasar?", "answers": ["Charlie"]}]
    evaluate(agent, question, out_dir=out, conditions=["uncited_removal"], baseline_repeats=1, progress=False,
             n_boot=20, paper_reference=False)
    return {r.key.condition: [r.answer, *sorted(r.hidden)] for r in load_records(out)}


@pytest.mark.usefixtures("exact_tools")
def test_evaluate_on_ladybugdb_answers_unknown_with_bravo_hidden(ladybug_pair: Any, tmp_path: Path) -> None:
    conn = ablated_connection(ladybug_pair(CHAIN))
    oracle = ladybug_pair(GraphFilter(hidden=frozenset({"b", "d", "e"})))
    lock = threading.Lock()

    def on(connection: Any) -> Callable[[str, str], list[dict[str, Any]]]:
        def run_query(query: str, entity_id: str) -> list[dict[str, Any]]:
            with lock:
                rows = connection.execute(query, {"q": entity_id}).get_all()
            return [plain(row[0]) for row in rows]

        return run_query

    runs = _evaluate_two_hops(_two_hop_agent(on(conn)), tmp_path / "eval")
    assert runs == {"baseline": ["Charlie"], "uncited_removal": ["unknown", "b"]}
    assert runs["uncited_removal"][0] == _two_hop_agent(on(oracle)).invoke(
        {"messages": [("user", "Who is two links from Quasar?")]})["messages"][-1].content.split(" [")[0]


@pytest.mark.neo4j
@pytest.mark.usefixtures("exact_tools")
def test_evaluate_on_neo4j_answers_unknown_with_bravo_hidden(neo4j_uri: str, tmp_path: Path) -> None:
    import neo4j

    neo4j_write(neo4j_uri, CHAIN)
    with neo4j.GraphDatabase.driver(neo4j_uri, auth=None) as raw:
        driver = ablated_driver(raw)

        def run_query(query: str, entity_id: str) -> list[dict[str, Any]]:
            records, _, _ = driver.execute_query(query, {"q": entity_id}, routing_=neo4j.RoutingControl.READ)
            return [r.data()["c"] for r in records]

        runs = _evaluate_two_hops(_two_hop_agent(run_query), tmp_path / "eval")
    assert runs == {"baseline": ["Charlie"], "uncited_removal": ["unknown", "b"]}
