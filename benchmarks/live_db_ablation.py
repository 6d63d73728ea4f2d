"""What exact ablation at a user's own database costs: ablated_connection / ablated_driver at concurrency 8.

Not a test: a measurement you run by hand::

    python benchmarks/live_db_ablation.py                          # LadybugDB, 100k edges
    python benchmarks/live_db_ablation.py --edges 1000000 --think-ms 0 200
    python benchmarks/live_db_ablation.py --backend neo4j          # needs scripts/install_neo4j_harness.sh

The workload is an evaluation's: ``--concurrency`` runs at once, each under its
own condition (``--hidden`` random neighbours of its start entity hidden, two
masked), each run ``--queries`` tool queries (a two-hop pattern, the
neighbours, a lookup by id) with ``--think-ms`` of model time between them.
Mechanisms, interleaved round by round in one process:

- ``plain``: the unwrapped connection/driver, no ablation (the floor);
- ``rollback``: each query in a write transaction that applies the condition
  and is rolled back (the Neo4j wrapper; for LadybugDB, what its wrapper does
  for an in-memory database). LadybugDB has one writer, so these queue behind
  each other; Neo4j runs them side by side (row locks);
- ``copy`` (LadybugDB, the wrapper on a database file): a copy of the database
  per distinct condition (file copy, the condition committed in the copy, then
  queries that need no writer slot), shared by the condition's queries.

It prints each mechanism's wall time for the whole round and per-query
p50/p99, and the ratio to ``plain``.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUERIES = (
    "MATCH (:E {id: $q})-[:LINK]->()-[:LINK]->(c) RETURN c.id, c.name LIMIT 50",
    "MATCH (:E {id: $q})-[:LINK]-(c) RETURN c LIMIT 50",
    "MATCH (n:E {id: $q}) RETURN n",
)


def synthetic(n_edges: int, seed: int) -> tuple[list[dict[str, Any]], np.ndarray]:
    """``n_edges // 5`` entities with names and text, edges with Zipf-like degrees (a few hubs)."""
    rng = np.random.default_rng(seed)
    n = max(n_edges // 5, 10)
    nodes = [{"id": f"e{i}", "name": f"Entity {i}", "description": f"Entity {i} is entity number {i}."}
             for i in range(n)]
    weights = 1.0 / np.power(np.arange(n) + 10.0, 1.1)
    weights /= weights.sum()
    perm = rng.permutation(n)
    edges = np.stack([perm[rng.choice(n, size=n_edges, p=weights)], perm[rng.choice(n, size=n_edges, p=weights)]], 1)
    return nodes, edges


def conditions(nodes: list[dict[str, Any]], edges: np.ndarray, k: int, hidden: int, seed: int) -> list[tuple[str, Any]]:
    """``k`` (start, GraphFilter): neighbours of the start hidden and masked, as an uncited set would be."""
    from graphtrail.kg import GraphFilter

    rng = random.Random(seed)
    out = {}
    for s, t in edges[rng.sample(range(len(edges)), k * 4)]:
        out.setdefault(int(s), set()).add(int(t))
    picks = []
    for s in list(out)[:k]:
        near = sorted(out[s] - {s})
        extra = rng.sample(range(len(nodes)), hidden)
        hid = {f"e{i}" for i in (near + extra)[:hidden]}
        masked = {f"e{i}" for i in rng.sample(range(len(nodes)), 2)} - hid
        picks.append((f"e{s}", GraphFilter(hidden=frozenset(hid), masked=frozenset(masked))))
    return picks


# --------------------------------------------------------------------------- LadybugDB


def build_ladybug(path: Path, nodes: list[dict[str, Any]], edges: np.ndarray) -> None:
    import ladybug
    import pyarrow as pa

    db = ladybug.Database(str(path))
    conn = ladybug.Connection(db)
    conn.execute("CREATE NODE TABLE E(id STRING PRIMARY KEY, name STRING, description STRING, aliases STRING)")
    conn.execute("CREATE REL TABLE LINK(FROM E TO E)")
    conn.execute("COPY E FROM $rows", {"rows": pa.Table.from_pylist([{**n, "aliases": None} for n in nodes]).to_pandas()})
    ids = np.array([n["id"] for n in nodes])
    conn.execute("COPY LINK FROM $rows", {"rows": pa.table({"from": ids[edges[:, 0]], "to": ids[edges[:, 1]]}).to_pandas()})
    conn.close()
    db.close()


def ladybug_mechanisms(path: Path, scratch_root: Path) -> dict[str, Callable[[str, dict[str, Any]], Any]]:
    import ladybug

    from graphtrail.kg import ablated_connection, active_filter

    db = ladybug.Database(str(path))
    plain_conn = ladybug.Connection(db)
    plain_lock = threading.Lock()
    wrapped = ablated_connection(ladybug.Connection(db))

    def plain(query: str, params: dict[str, Any]) -> Any:
        with plain_lock:
            return plain_conn.execute(query, params).get_all()

    def copy(query: str, params: dict[str, Any]) -> Any:
        return wrapped.execute(query, params).get_all()

    def rollback(query: str, params: dict[str, Any]) -> Any:  # what the wrapper does for an in-memory database
        return wrapped._rolled_back(db, active_filter(), query, params).get_all()

    return {"plain": plain, "copy": copy, "rollback": rollback}


# --------------------------------------------------------------------------- Neo4j


def neo4j_mechanisms(uri: str, nodes: list[dict[str, Any]], edges: np.ndarray) -> dict[str, Callable[..., Any]]:
    import neo4j

    from graphtrail.kg import ablated_driver

    raw = neo4j.GraphDatabase.driver(uri, auth=None)
    raw.execute_query("CREATE INDEX e_id IF NOT EXISTS FOR (n:E) ON (n.id)")
    for i in range(0, len(nodes), 20_000):
        raw.execute_query("UNWIND $rows AS row CREATE (n:E) SET n = row", {"rows": nodes[i:i + 20_000]})
    raw.execute_query("CALL db.awaitIndexes(300)")
    pairs = [[f"e{s}", f"e{t}"] for s, t in edges.tolist()]
    for i in range(0, len(pairs), 20_000):
        raw.execute_query("UNWIND $rows AS row MATCH (a:E {id: row[0]}), (b:E {id: row[1]}) CREATE (a)-[:LINK]->(b)",
                          {"rows": pairs[i:i + 20_000]})
    wrapped = ablated_driver(raw)
    return {"plain": lambda q, p: raw.execute_query(q, p).records,
            "rollback": lambda q, p: wrapped.execute_query(q, p).records}


# --------------------------------------------------------------------------- the round


def run_round(fn: Callable[[str, dict[str, Any]], Any], picks: list[tuple[str, Any]], concurrency: int,
              queries: int, think_s: float, ablate: bool) -> tuple[float, list[float]]:
    from graphtrail.kg import use_filter

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    todo = list(picks)

    def worker() -> None:
        while True:
            with lock:
                if not todo:
                    return
                start, graph_filter = todo.pop()
            with use_filter(graph_filter if ablate else None):
                for i in range(queries):
                    if i:
                        time.sleep(think_s)
                    t = time.perf_counter()
                    try:
                        fn(QUERIES[i % len(QUERIES)], {"q": start})
                    except Exception as exc:  # counted and printed: a mechanism that fails is not a fast one
                        with lock:
                            errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                        continue
                    with lock:
                        latencies.append(time.perf_counter() - t)

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(worker,)) for _ in range(concurrency)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        print(f"  {len(errors)} queries failed, e.g. {errors[0]}", flush=True)
    return time.perf_counter() - t0, latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["lbug", "neo4j"], default="lbug")
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--runs", type=int, default=48, help="runs (distinct conditions) per round")
    parser.add_argument("--queries", type=int, default=3, help="tool queries per run")
    parser.add_argument("--hidden", type=int, default=5, help="entities hidden per condition")
    parser.add_argument("--think-ms", type=float, nargs="+", default=[0.0, 200.0], help="model time between queries")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    nodes, edges = synthetic(args.edges, args.seed)
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="graphtrail-live-db-")))
        t = time.perf_counter()
        if args.backend == "lbug":
            build_ladybug(root / "graph.lbug", nodes, edges)
            mechanisms = ladybug_mechanisms(root / "graph.lbug", root)
        else:
            from tests.neo4j_server import missing_requirement, run_neo4j

            if (reason := missing_requirement()) is not None:
                raise SystemExit(f"neo4j: not available here ({reason})")
            server = stack.enter_context(run_neo4j(root, pagecache="512m", heap="1g"))
            mechanisms = neo4j_mechanisms(server.bolt_uri, nodes, edges)
        print(f"{args.backend}: {len(nodes):,} entities, {len(edges):,} edges built in {time.perf_counter() - t:.1f} s; "
              f"concurrency {args.concurrency}, {args.runs} runs x {args.queries} queries, {args.hidden} hidden + 2 "
              f"masked per run; load average {os.getloadavg()[0]:.1f}", flush=True)
        for think in args.think_ms:
            walls: dict[str, list[float]] = {m: [] for m in mechanisms}
            lats: dict[str, list[float]] = {m: [] for m in mechanisms}
            for r in range(args.rounds):
                picks = conditions(nodes, edges, args.runs, args.hidden, args.seed + 1 + r)
                for name, fn in mechanisms.items():  # interleaved: every mechanism once per round
                    wall, latencies = run_round(fn, picks, args.concurrency, args.queries, think / 1000, name != "plain")
                    walls[name].append(wall)
                    lats[name] += latencies
            base = statistics.median(walls["plain"])
            print(f"\nthink time {think:g} ms between queries")
            print(f"{'mechanism':12}{'wall (median)':>16}{'x plain':>10}{'query p50':>12}{'query p99':>12}")
            for name in mechanisms:
                wall = statistics.median(walls[name])
                p50 = 1000 * statistics.median(lats[name])
                p99 = 1000 * float(np.percentile(lats[name], 99, method="higher"))
                print(f"{name:12}{wall:>14.2f} s{wall / base:>10.2f}{p50:>9.1f} ms{p99:>9.1f} ms")
        print(f"(load average {os.getloadavg()[0]:.1f} at the end; compare ratios, not single figures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
