"""How graphtrail scales with the knowledge graph: import, load, search, tools and an agent run at 10k, 100k and 1M edges.

Not a test: a measurement you run by hand (or in CI for the log)::

    python benchmarks/kg_scale.py                         # 10k, 100k, 1M edges, in-memory backend
    python benchmarks/kg_scale.py --backend lbug          # imported into LadybugDB, then opened
    python benchmarks/kg_scale.py --backend neo4j         # the same into Neo4j (needs the test harness:
                                                          # scripts/install_neo4j_harness.sh)
    python benchmarks/kg_scale.py --sizes 10000 100000    # smaller
    python benchmarks/kg_scale.py --generators wide       # long names, many types and aliases only
    python benchmarks/kg_scale.py --backend neo4j --neo4j-pagecache 2g --neo4j-heap 2g
                                                          # Neo4j with production-like memory

The graph is synthetic and deterministic (``--seed``), by one or more
generators (``--generators``, default both of the first two):

- ``powerlaw``, this script's own: a triples TSV and no entity table, with
  power-law degrees (heads and tails drawn from a Zipf-like law, as in real KGs
  where a few hubs carry most edges), one entity per five edges, 40 relation
  labels, and pronounceable two-word names (the triple ends) so that search has
  something to match;
- ``wide`` (and ``plain``), :mod:`graph_files`' generators, the ones
  ``load_formats.py`` measures: triples plus an entity table; ``wide`` has long
  names with punctuation and non-ASCII letters, 300 types, several aliases per
  entity and 500 relation labels, so search has many more labels to index.

Each is written once per size under ``--workdir`` and reused. The yardstick
reads what the load reads: the triples file, and the entity table beside it.

Each size runs in a fresh child process (so peak RSS is that size's own) and
prints:

- the yardstick: the default ``pandas.read_csv(path, sep="\\t")`` of the same file (and of its
  entity table, when it has one) (CPU), its first call in the process and warm;
- for databases, ``kg import`` (load the file, write the database) and opening
  it; in memory, the load, first in the process and again warm, after the
  graph is released (targets at 1M edges: the first load <= 5 s CPU and <= 1 GB;
  warm, at 300k and 1M edges, <= 3x the warm read_csv, the issue's "same process, after a warm-up":
  ``--warm-rounds`` rounds (7) each run a load and a read_csv, in alternating
  order, and the target reads the median of the rounds' ratios; the first
  load over the first read_csv is printed too);
- the first search after open (in memory: it builds the search index), and
  search p50 and p99 over names and typo'd names: over the first 25 calls
  after the graph was opened (the cold figure), then over other names after
  500 more (the warm one). Targets: in memory p50 <= 20 ms CPU warm; in a
  database, what the first users after a start see: cold p50 <= 50 ms and
  p99 <= 150 ms (at 300k and 1M edges). graphtrail warms a database graph in
  the background from the moment it opens it (kg/backends/warmup.py; the open
  does not wait, the first search would stop it): the benchmark waits for it
  to end, as a deploy that opens the graph before taking traffic, and prints
  its time on its own row (``GRAPHTRAIL_DB_WARMUP=0``: no warm-up, the first
  25 searches are truly cold). For Neo4j the harness cannot restart on the same store, so
  the query caches are cleared before the open; its JVM has run the import,
  not the search queries, whose code is as cold as after a restart;
- communities: Leiden, computed (the cache beside the file is removed first;
  databases read the communities stored at import) (target <= 10 s CPU at 1M);
- each tool's p50 and p99 (``get_neighbors`` on the biggest hub and on a typical
  entity, ``get_entity`` and ``search_entities`` under full isolation);
- one offline agent run;
- the growth exponent of each figure between the smallest and largest size
  (time ~ edges^k: k = 1 is linear, k ~ 0 means flat).

CPU rows are process CPU time; for Neo4j they add the server JVM's CPU (read
from /proc), since a query's cost is mostly there. Wall-clock figures on a
shared machine include time spent waiting for a core; the CPU rows do not, and
the script warns when the two drift far apart. Rerun and compare ratios, not
single numbers.

Neo4j runs with the test harness's memory unless told otherwise: a 64 MB page
cache and a 768 MB heap, far below what a server for a 1M-edge graph gets, so
the store does not fit in the cache and queries read pages from disk.
``--neo4j-pagecache`` and ``--neo4j-heap`` set them; the output prints the page
cache the server itself reports, its heap, the store's size on disk and the
load average, so a figure always says which configuration it came from.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graph_files  # noqa: E402 - beside this script

SYLLABLES = ["ka", "lo", "mi", "ra", "ten", "vo", "sa", "del", "nu", "por", "qui", "zan", "be", "to", "rin", "ga",
             "shi", "mar", "fe", "lu", "dor", "ya", "win", "che", "om", "bra", "ix", "tal", "ne", "gor"]


def synthetic_triples(n_edges: int, seed: int = 0) -> str:
    """A deterministic triples TSV: ``n_edges // 5`` entities, power-law degrees, 40 relation labels."""
    rng = np.random.default_rng(seed)
    n_entities = max(n_edges // 5, 2)
    names: list[str] = []
    seen: set[str] = set()
    pick = random.Random(seed)
    while len(names) < n_entities:
        words = ["".join(pick.choice(SYLLABLES) for _ in range(pick.randint(2, 4))).capitalize() for _ in range(2)]
        name = " ".join(words)
        if name in seen:
            name = f"{name} {len(names)}"
        seen.add(name)
        names.append(name)
    # Zipf-like: rank r drawn with probability ~ 1 / (r + 10)^1.1, then shuffled so hubs are not the first ids.
    weights = 1.0 / np.power(np.arange(n_entities) + 10.0, 1.1)
    weights /= weights.sum()
    perm = rng.permutation(n_entities)
    heads = perm[rng.choice(n_entities, size=n_edges, p=weights)]
    heads[:n_entities] = np.arange(n_entities)  # every entity has at least one edge
    tails = perm[rng.choice(n_entities, size=n_edges, p=weights)]
    rel_weights = 1.0 / (np.arange(40) + 1.0)
    rels = rng.choice(40, size=n_edges, p=rel_weights / rel_weights.sum())
    labels = [f"relation {i:02d}" for i in range(40)]
    return "".join(f"{names[h]}\t{labels[r]}\t{names[t]}\n" for h, r, t in zip(heads.tolist(), rels.tolist(), tails.tolist()))


#: ``powerlaw``: :func:`synthetic_triples` (triples only); the others: :mod:`graph_files`' (triples + entity table).
GENERATORS = ("powerlaw", *graph_files.GENERATORS)


def graph_file(workdir: Path, n_edges: int, seed: int, generator: str = "powerlaw") -> Path:
    """The triples file of this generator, size and seed under ``workdir`` (written once; its entity table beside it)."""
    if generator != "powerlaw":
        folder = workdir / f"{generator}-{n_edges}-seed{seed}"
        return graph_files.write_graph_files(folder, generator, n_edges, seed, formats=("triples+table",))["triples+table"]
    path = workdir / f"synthetic-{n_edges}-seed{seed}.tsv"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(synthetic_triples(n_edges, seed), encoding="utf-8")
        tmp.replace(path)
    return path


def _tables(path: Path) -> list[Path]:
    """The files ``load_kg(path)`` reads: the triples file, and the entity table it finds beside it."""
    from graphtrail.kg.loaders.triples import find_entity_table

    table = find_entity_table(path)
    return [path] if table is None else [path, table]


def _read_all(path: Path) -> list[Any]:
    """The yardstick: the default ``pandas.read_csv(f, sep="\\t")`` of each file the load reads."""
    import pandas as pd

    return [pd.read_csv(f, sep="\t") for f in _tables(path)]


# --------------------------------------------------------------------------- backends


class _Timed:
    """Wall and process CPU time of a block (CPU shows what contention on a shared machine hides).

    ``server`` (a pid) adds that process's CPU time too: a Neo4j server works in
    its own JVM, and its CPU is part of what a query costs.
    """

    def __init__(self, server: int | None = None) -> None:
        self.server = server

    def __enter__(self) -> "_Timed":
        self.start, self.cpu_start = time.perf_counter(), time.process_time() + _proc_cpu(self.server)
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.start
        self.cpu = time.process_time() + _proc_cpu(self.server) - self.cpu_start


def _proc_cpu(pid: int | None) -> float:
    """User + system CPU seconds of process ``pid`` (0 for ``None`` or when /proc cannot say)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _child_pids() -> list[int]:
    found = []
    for task in Path("/proc/self/task").iterdir():
        try:
            found += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


class Opened:
    """A graph opened by a backend, and what opening it cost (``import_*`` for databases)."""

    def __init__(self, kg: Any, timings: dict[str, float], server: int | None = None) -> None:
        self.kg, self.timings, self.server = kg, timings, server


def _open_memory(path: Path, scratch: Path, stack: contextlib.ExitStack) -> Opened:
    from graphtrail.agents import load_kg
    from graphtrail.kg.communities import cache_path

    cache_path(path).unlink(missing_ok=True)  # communities are computed, not read back from the last run
    with _Timed() as t:
        kg = load_kg(path)
    return Opened(kg, {"load_s": t.wall, "load_cpu_s": t.cpu})


def _import_then_open(path: Path, target: str, server: int | None, before_open: Callable[[], None] = lambda: None) -> Opened:
    from graphtrail.kg import load_kg
    from graphtrail.kg.backends import import_graph

    out: dict[str, float] = {}
    with _Timed(server) as t:
        source = load_kg(path)
        import_graph(source, target)
    out["import_s"], out["import_cpu_s"] = t.wall, t.cpu
    del source
    before_open()
    with _Timed(server) as t:
        kg = load_kg(target)  # graphtrail starts warming the database here, in the background (kg/backends/warmup.py)
    out["load_s"], out["load_cpu_s"] = t.wall, t.cpu
    warming = getattr(getattr(kg, "_shared", None), "warming", None)
    if warming is not None:  # a deploy that opens the graph before it takes traffic: the first users come after it
        warming.wait()
    warmup = getattr(getattr(kg, "_shared", None), "warmup", None) or {}
    out["warmup_s"], out["warmup_queries"] = warmup.get("seconds", 0.0), warmup.get("queries", 0)
    return Opened(kg, out, server)


def _clear_query_caches(bolt_uri: str) -> None:
    """As after a restart: no cached query plans. (The harness cannot restart on the same store; its JVM has
    run the import, not the search queries, so their code is as cold as after a restart.)"""
    import neo4j

    with neo4j.GraphDatabase.driver(bolt_uri, auth=None) as driver:
        driver.execute_query("CALL db.clearQueryCaches()")


def _open_lbug(path: Path, scratch: Path, stack: contextlib.ExitStack) -> Opened:
    import shutil

    db = scratch / "graph.lbug"
    for old in scratch.glob("graph.lbug*"):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    opened = _import_then_open(path, str(db), None)
    stack.callback(opened.kg.close)
    return opened


#: Neo4j's memory for this run (``--neo4j-pagecache``/``--neo4j-heap``); ``None``: the test harness's.
NEO4J_MEMORY: dict[str, str | None] = {"pagecache": None, "heap": None}

_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2, "mib": 1024**2,
          "g": 1024**3, "gb": 1024**3, "gib": 1024**3}


def _bytes(text: str) -> float:
    """``64m``, ``2g`` or Neo4j's ``1.00GiB`` in bytes (NaN when unreadable)."""
    import re

    found = re.fullmatch(r"\s*([0-9.]+)\s*([a-z]*)\s*", text.lower())
    if not found or found.group(2) not in _UNITS:
        return float("nan")
    return float(found.group(1)) * _UNITS[found.group(2)]


def _du_mb(folder: Path) -> float:
    total = 0
    for f in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if f.is_file():
                total += f.stat().st_size
    return total / 1024**2


def _open_neo4j(path: Path, scratch: Path, stack: contextlib.ExitStack) -> Opened:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.neo4j_server import DEFAULT_PAGECACHE, effective_memory, home_folder, missing_requirement, run_neo4j

    reason = missing_requirement()
    if reason is not None:
        raise SystemExit(f"neo4j: not available here ({reason})")
    before = set(_child_pids())
    server = stack.enter_context(run_neo4j(scratch, **NEO4J_MEMORY))
    pid = next(iter(set(_child_pids()) - before), None)
    memory = effective_memory(server.bolt_uri)
    asked = NEO4J_MEMORY["pagecache"] or DEFAULT_PAGECACHE
    if abs(_bytes(memory["pagecache"]) - _bytes(asked)) > 0.01 * _bytes(asked):
        raise SystemExit(f"neo4j: asked for a {asked} page cache but the server runs with {memory['pagecache']} "
                         "(a launcher built before it was configurable? rerun scripts/install_neo4j_harness.sh)")
    opened = _import_then_open(path, server.bolt_uri, pid, lambda: _clear_query_caches(server.bolt_uri))
    stack.callback(opened.kg.close)
    opened.timings["neo4j_pagecache_mb"] = _bytes(memory["pagecache"]) / 1024**2
    opened.timings["neo4j_heap_mb"] = _bytes(memory["heap_max_bytes"]) / 1024**2
    # Community Neo4j has no db.checkpoint(): pages still dirty in the cache are not on disk yet, so the
    # store's size on disk is a lower bound (close to the truth when a small cache evicted most pages).
    home = home_folder(server)
    for name, key in (("databases", "neo4j_store_mb"), ("transactions", "neo4j_txlogs_mb")):
        folders = list(home.glob(f"*/data/{name}")) if home else []
        opened.timings[key] = sum(_du_mb(f) for f in folders) if folders else float("nan")
    return opened


#: name -> function(triples file, scratch folder, exit stack) -> :class:`Opened`.
BACKENDS: dict[str, Callable[[Path, Path, contextlib.ExitStack], Opened]] = {
    "memory": _open_memory,
    "lbug": _open_lbug,
    "neo4j": _open_neo4j,
}


# --------------------------------------------------------------------------- one size, in a child process


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


class _Calls:
    """Per-call wall and CPU times (client + server) of repeated calls: p50 and p99."""

    def __init__(self, server: int | None) -> None:
        self.server = server
        self.last: list[float] = []  # the wall times of the last run's calls, in s
        self.last_cpu: list[float] = []

    def run(self, fn: Callable[[], Any], n: int) -> tuple[float, float, float]:
        """Median wall, 99th-percentile wall, median CPU of ``n`` calls, in ms."""
        times, cpu = [], []
        for _ in range(n):
            c = time.process_time() + _proc_cpu(self.server)
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() + _proc_cpu(self.server) - c)
        self.last, self.last_cpu = times, cpu
        p99 = float(np.percentile(times, 99, method="higher"))
        return 1000 * statistics.median(times), 1000 * p99, 1000 * statistics.median(cpu)


def _typo(name: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(name) - 1)
    return name[:i] + name[i + 1 :]


def _read_csv_baseline(path: Path) -> dict[str, float]:
    """CPU seconds of the default ``pandas.read_csv(path, sep="\\t")`` of the same file (and its entity table): the yardstick for the load (target <= 3x).

    The call a user would make: its first call in the process (``read_csv_cold_cpu_s``, beside the
    load's first call) and, after it, the median of three (``read_csv_cpu_s``, beside the median of
    the warm loads, :func:`_warm_loads`). (It used to be ``dtype=str, quoting=3, keep_default_na=False``,
    which on pandas 3 is several times slower than the default call: see benchmarks/load_formats.py.)
    """
    start = time.process_time()
    _read_all(path)
    cold = time.process_time() - start
    times = []
    for _ in range(3):
        start = time.process_time()
        _read_all(path)
        times.append(time.process_time() - start)
    return {"read_csv_cold_cpu_s": cold, "read_csv_cpu_s": statistics.median(times)}


def _warm_rounds(path: Path, rounds: int) -> dict[str, float]:
    """CPU seconds of ``load_kg`` and of the default ``read_csv`` of the file, once the process has run both: interleaved.

    The first load in a process (``load_cpu_s``) also pays for what a process does once: Arrow's
    kernels and allocator on first use, lazy imports. The issue's yardstick rule is "same process,
    after a warm-up", so the ratio target reads these. Each round runs both, in alternating order, so
    both see the same state of the process's memory (on this VM a call that gets freshly mapped pages
    pays for zeroing them: the same call moves by a third depending on what ran before it). The
    target reads the median of each round's ratio; the medians of each are printed too. Run after the
    graph of the first load is released, so the peak RSS rows stay its own.
    """
    from graphtrail.agents import load_kg

    def timed(call: Callable[[], Any]) -> float:
        gc.collect()
        start = time.process_time()
        result = call()
        spent = time.process_time() - start
        del result
        return spent

    def load() -> Any:
        return load_kg(path, cache_communities=False)

    def read() -> Any:
        return _read_all(path)

    loads, reads = [], []
    for round_ in range(rounds):
        if round_ % 2:  # odd rounds: the load first
            loads.append(timed(load))
            reads.append(timed(read))
        else:
            reads.append(timed(read))
            loads.append(timed(load))
    return {"load_warm_cpu_s": statistics.median(loads), "read_csv_cpu_s": statistics.median(reads),
            "load_warm_ratio": statistics.median(a / b for a, b in zip(loads, reads)), "warm_rounds": rounds}


def measure(path: Path, backend: str, scratch: Path, repeats: int, communities: bool, warm_rounds: int = 7) -> dict[str, float]:
    import graphtrail.agents  # noqa: F401 - imports are not load time

    out: dict[str, float] = {"rss_start_mb": _rss_mb(), **_read_csv_baseline(path)}
    with contextlib.ExitStack() as stack:
        opened = BACKENDS[backend](path, scratch, stack)
        kg = opened.kg
        out.update(opened.timings)
        out["rss_load_mb"] = _rss_mb()
        out.update(_exercise(kg, repeats, communities, _Calls(opened.server)))
    out["rss_end_mb"] = _rss_mb()
    if backend == "memory":
        del kg, opened
        out.update(_warm_rounds(path, warm_rounds))
    return out


#: Searches between the first calls and the measured ones (see :func:`_exercise`).
WARMUP_CALLS = 500


def _exercise(kg: Any, repeats: int, communities: bool, calls: _Calls) -> dict[str, float]:
    from graphtrail.agents import GraphFilter, create_graphrag_agent, make_graph_tools, use_filter

    out: dict[str, float] = {"loadavg_start": os.getloadavg()[0]}
    rng = random.Random(0)
    ids = list(kg.entity_ids())
    sample = [ids[rng.randrange(len(ids))] for _ in range(repeats)]
    names = [kg.entity(e).name for e in sample]
    queries = [_typo(n, rng) if i % 2 else n for i, n in enumerate(names)]
    hub = max(ids[: min(len(ids), 2000)], key=kg.degree)

    tools = {t.name: t for t in make_graph_tools(kg)}

    def record(key: str, fn: Callable[[], Any]) -> None:
        p50, p99, cpu = calls.run(fn, repeats)
        out[f"{key}_p50_ms"], out[f"{key}_p99_ms"], out[f"{key}_p50_cpu_ms"] = p50, p99, cpu

    # The first users after a start: the first `repeats` searches after the graph was opened (the first
    # one included; it is also printed alone), which is what the targets read. graphtrail warms a
    # database in the background once it opens it (kg/backends/warmup.py; waited for above, its time
    # printed on its own row). Before that warm-up, a just-started Neo4j at 1M edges spent 86 ms of CPU per search over
    # its first 25, 30-54 ms over the next 300, and 21-24 ms from about the 500th on (its JIT compiling
    # the query code). After the first calls, WARMUP_CALLS more (not measured), then the p50 of a
    # long-running server. Other entities' names each time, so no measured query was asked before (the
    # client memoises label scores).
    others = [ids[rng.randrange(len(ids))] for _ in range(repeats + WARMUP_CALLS)]
    other_queries = [_typo(n, rng) if i % 2 else n for i, n in enumerate(kg.entity(e).name for e in others)]
    oi = iter([queries[0], *other_queries])
    record("search_cold", lambda: tools["search_entities"].invoke({"query": next(oi)}))
    out["search_first_s"], out["search_first_cpu_s"] = calls.last[0], calls.last_cpu[0]
    for q in oi:
        tools["search_entities"].invoke({"query": q})
    qi = iter(queries * 3)
    record("search", lambda: tools["search_entities"].invoke({"query": next(qi)}))
    si = iter(sample * 3)
    record("get_neighbors", lambda: tools["get_neighbors"].invoke({"entity_id": next(si), "direction": "both"}))
    record("get_neighbors_hub", lambda: tools["get_neighbors"].invoke({"entity_id": hub, "direction": "both"}))
    if communities:
        with _Timed(calls.server) as t:
            com_ids = list(kg.communities)
        out["communities_s"], out["communities_cpu_s"] = t.wall, t.cpu
        si = iter(sample * 3)
        record("get_entity", lambda: tools["get_entity"].invoke({"entity_id": next(si)}))
        words = iter([n.split()[0] for n in names] * 3)
        record("search_communities", lambda: tools["search_communities"].invoke({"query": next(words)}))
        ci = iter((com_ids * repeats)[: 3 * repeats])
        record("read_community", lambda: tools["read_community"].invoke({"community_id": next(ci)}))
        kept = sample[0]
        isolation = GraphFilter(hidden=frozenset(e for e in ids if e != kept), label="full_isolation")
        with use_filter(isolation):
            record("get_entity_full_isolation", lambda: tools["get_entity"].invoke({"entity_id": kept}))
            record("search_full_isolation", lambda: tools["search_entities"].invoke({"query": names[0]}))
    agent = create_graphrag_agent("offline", kg, "agentic")
    question = f"What is the relation 00 of {names[1]}?"
    with _Timed(calls.server) as t:
        agent.invoke({"messages": [("user", question)]})
    out["agent_run_s"], out["agent_run_cpu_s"] = t.wall, t.cpu
    out["loadavg_end"] = os.getloadavg()[0]
    return out


# --------------------------------------------------------------------------- driver


ROWS = [
    ("neo4j_pagecache_mb", "Neo4j page cache (server's setting)", "MB"),
    ("neo4j_heap_mb", "Neo4j max heap (JVM)", "MB"),
    ("neo4j_store_mb", "Neo4j store on disk, at least (no checkpoint)", "MB"),
    ("neo4j_txlogs_mb", "Neo4j transaction logs on disk", "MB"),
    ("loadavg_start", "load average (1 min) before the calls", ""),
    ("loadavg_end", "load average (1 min) after the calls", ""),
    ("read_csv_cold_cpu_s", "pandas.read_csv of the file, first (CPU)", "s"),
    ("read_csv_cpu_s", "pandas.read_csv of the file, warm (CPU)", "s"),
    ("import_s", "kg import (load + write)", "s"),
    ("import_cpu_s", "  (CPU)", "s"),
    ("load_s", "load (memory) / open (database)", "s"),
    ("load_cpu_s", "  (CPU)", "s"),
    ("load_warm_cpu_s", "load again, warm (CPU, median of the rounds)", "s"),
    ("load_warm_ratio", "  / read_csv in the same round (median)", "x"),
    ("rss_start_mb", "RSS before load (imports)", "MB"),
    ("rss_load_mb", "peak RSS after load", "MB"),
    ("warmup_s", "warm-up after open (background)", "s"),
    ("warmup_queries", "  (queries it asked)", ""),
    ("search_first_s", "first search after open", "s"),
    ("search_first_cpu_s", "  (CPU)", "s"),
    ("search_cold_p50_ms", "search_entities p50, first 25 after open", "ms"),
    ("search_cold_p99_ms", "search_entities p99, first 25 after open", "ms"),
    ("search_cold_p50_cpu_ms", "  (CPU p50)", "ms"),
    ("search_p50_ms", "search_entities p50 (warmed up)", "ms"),
    ("search_p99_ms", "search_entities p99 (warmed up)", "ms"),
    ("search_p50_cpu_ms", "  (CPU p50)", "ms"),
    ("get_entity_p50_ms", "get_entity p50", "ms"),
    ("get_neighbors_p50_ms", "get_neighbors p50", "ms"),
    ("get_neighbors_hub_p50_ms", "get_neighbors hub p50", "ms"),
    ("communities_s", "communities (Leiden or stored)", "s"),
    ("communities_cpu_s", "  (CPU)", "s"),
    ("search_communities_p50_ms", "search_communities p50", "ms"),
    ("read_community_p50_ms", "read_community p50", "ms"),
    ("get_entity_full_isolation_p50_ms", "get_entity p50, full isolation", "ms"),
    ("search_full_isolation_p50_ms", "search p50, full isolation", "ms"),
    ("agent_run_s", "one offline agent run", "s"),
    ("agent_run_cpu_s", "  (CPU)", "s"),
    ("rss_end_mb", "peak RSS at the end", "MB"),
]

#: (figure, edges) -> limit, per backend; "ratio:" figures are divided by the read_csv baseline.
TARGETS: dict[str, dict[tuple[str, int], float]] = {
    "memory": {("load_cpu_s", 1_000_000): 5.0, ("rss_load_mb", 1_000_000): 1024.0, ("search_p50_cpu_ms", 1_000_000): 20.0,
               ("communities_cpu_s", 1_000_000): 10.0,
               # issue 31: at 300k and 1M edges, <= 3x the default read_csv (300k: add it to --sizes)
               ("ratio:load_warm_cpu_s", 300_000): 3.0, ("ratio:load_warm_cpu_s", 1_000_000): 3.0},
    # Databases: the first users after a start see the cold figures (the first 25 searches after open).
    **{backend: {(key, size): limit for size in (300_000, 1_000_000)
                 for key, limit in (("search_cold_p50_ms", 50.0), ("search_cold_p99_ms", 150.0))}
       for backend in ("lbug", "neo4j")},
}


def _targets(backend: str, results: dict[int, dict[str, float]]) -> None:
    for (key, size), limit in TARGETS.get(backend, {}).items():
        if size not in results:
            print(f"target {key} at {size:,} edges <= {limit:g}: not measured (add {size} to --sizes)")
            continue
        row = results[size]
        if key.startswith("ratio:"):
            name = key[len("ratio:"):]
            value = row.get("load_warm_ratio", row.get(name, float("nan")) / row["read_csv_cpu_s"])
            label = f"{name} / read_csv CPU (both warm, median over {int(row.get('warm_rounds', 0))} interleaved rounds)"
            if "read_csv_cold_cpu_s" in row and "load_cpu_s" in row:
                print(f"cold: the first load_cpu_s / the first read_csv CPU at {size:,} edges: "
                      f"{row['load_cpu_s'] / row['read_csv_cold_cpu_s']:.2f} (printed, not a target)")
        else:
            value, label = row.get(key, float("nan")), key
        verdict = "not measured" if math.isnan(value) else ("MET" if value <= limit else "NOT met")
        print(f"target {label} at {size:,} edges <= {limit:g}: {value:.2f} -> {verdict}")
    for size in sorted(results):
        row = results[size]
        if "search_first_cpu_s" in row and "load_cpu_s" in row and backend == "memory":
            ok = row["search_first_cpu_s"] <= row["load_cpu_s"]
            print(f"target search index build CPU <= load CPU at {size:,} edges: "
                  f"{row['search_first_cpu_s']:.2f} s vs {row['load_cpu_s']:.2f} s -> {'MET' if ok else 'NOT met'}")


def _size_arg(text: str) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.neo4j_server import check_size

    try:
        return check_size(text, "memory")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000], help="edge counts")
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="memory")
    parser.add_argument("--generators", nargs="+", choices=GENERATORS, default=["powerlaw", "wide"],
                        help="which synthetic graphs (default: this script's power-law triples and graph_files' wide one)")
    parser.add_argument("--generator", choices=GENERATORS, default="powerlaw", help=argparse.SUPPRESS)  # the child's
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=25, help="calls per p50")
    parser.add_argument("--warm-rounds", type=int, default=7,
                        help="in memory: rounds of a warm load and a warm read_csv, interleaved (the ratio target reads their median)")
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "graphtrail-kg-scale")
    parser.add_argument("--no-communities", dest="communities", action="store_false",
                        help="skip community tools")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--neo4j-pagecache", type=_size_arg, metavar="SIZE",
                        help="Neo4j page cache, e.g. 2g (default: the test harness's 64m)")
    parser.add_argument("--neo4j-heap", type=_size_arg, metavar="SIZE",
                        help="Neo4j JVM max heap, e.g. 2g (default: the test harness's 768m)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--write", type=int, help=argparse.SUPPRESS)  # write the graph file of this size, then exit
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    NEO4J_MEMORY.update(pagecache=args.neo4j_pagecache, heap=args.neo4j_heap)
    memory_args = [f"--neo4j-{k}={v}" for k, v in NEO4J_MEMORY.items() if v]
    if memory_args and args.backend != "neo4j":
        parser.error("--neo4j-pagecache and --neo4j-heap apply to --backend neo4j only")
    if args.write is not None:
        graph_file(args.workdir, args.write, args.seed, args.generator)
        return 0
    if args.child is not None:
        path = graph_file(args.workdir, args.child, args.seed, args.generator)
        scratch = args.workdir / f"{args.backend}-{args.generator}-{args.child}"
        scratch.mkdir(exist_ok=True)
        print(json.dumps(measure(path, args.backend, scratch, args.repeats, args.communities, args.warm_rounds)))
        return 0

    by_generator: dict[str, dict[int, dict[str, float]]] = {}
    for generator in args.generators:
        results = by_generator[generator] = {}
        for size in args.sizes:
            # Written in a process of its own: a child started by a process that built a big graph in Python
            # would report that process's peak RSS as its own (Linux keeps ru_maxrss across fork and exec).
            subprocess.run([sys.executable, __file__, "--write", str(size), "--generator", generator, "--seed", str(args.seed),
                            "--workdir", str(args.workdir)], check=True)
            cmd = [sys.executable, __file__, "--child", str(size), "--generator", generator, "--backend", args.backend,
                   "--seed", str(args.seed), "--repeats", str(args.repeats), "--warm-rounds", str(args.warm_rounds),
                   "--workdir", str(args.workdir)] + ([] if args.communities else ["--no-communities"]) + memory_args
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{generator}, {size} edges: the measurement failed (exit {proc.returncode}); figures for this size are missing.\n"
                      f"{proc.stderr[-2000:]}")
                continue
            results[size] = json.loads(proc.stdout.strip().splitlines()[-1])
            if args.json:
                args.json.write_text(json.dumps({"backend": args.backend, "seed": args.seed, "generators": by_generator}, indent=1))
            print(f"measured {generator}, {size:,} edges", flush=True)

    measured = {g: r for g, r in by_generator.items() if r}
    for generator, results in measured.items():
        _report(args, generator, results, memory_args)
    return 0 if measured else 1


def _report(args: argparse.Namespace, generator: str, results: dict[int, dict[str, float]], memory_args: list[str]) -> None:
    """One generator's table of figures and its targets."""
    sizes = sorted(results)
    shape = {"powerlaw": "power-law triples, no entity table"}.get(generator, "triples + entity table, from graph_files")
    print(f"\nbackend {args.backend!r}, generator {generator!r} ({shape}), seed {args.seed}, {args.repeats} calls per p50")
    if args.backend == "neo4j":
        origin = "as asked" if memory_args else "the test harness's defaults, far below a production server's"
        print(f"Neo4j memory: page cache {args.neo4j_pagecache or '64m'}, heap {args.neo4j_heap or '768m'} ({origin})")
        for s in sizes:
            store, cache = results[s].get("neo4j_store_mb", float("nan")), results[s].get("neo4j_pagecache_mb", float("nan"))
            if not math.isnan(store):
                if store > cache:
                    print(f"  {s:,} edges: the store (at least {store:.0f} MB on disk) does NOT fit in the {cache:.0f} MB page cache")
                else:
                    print(f"  {s:,} edges: {store:.0f} MB of store on disk (pages not yet flushed are not counted), "
                          f"{cache:.0f} MB page cache")
    header = f"{'':40}" + "".join(f"{s:>14,}" for s in sizes) + f"{'exponent':>10}"
    print(header)
    for key, label, unit in ROWS:
        values = [results[s].get(key, float("nan")) for s in sizes]
        if all(math.isnan(v) for v in values):
            continue
        cells = "".join(f"{v:>11.3g} {unit:<2}" for v in values)
        exp = ""
        lo, hi = values[0], values[-1]
        growth = not key.startswith(("neo4j_", "loadavg_")) and unit != "x"  # settings, context and ratios, not costs
        if growth and len(sizes) > 1 and lo > 0 and hi > 0 and not (math.isnan(lo) or math.isnan(hi)):
            exp = f"{math.log(hi / lo) / math.log(sizes[-1] / sizes[0]):>10.2f}"
        print(f"{label:40}{cells}{exp}")
    _targets(args.backend, results)
    worst = max((results[s]["load_s"] / results[s]["load_cpu_s"] for s in sizes if results[s].get("load_cpu_s")), default=1.0)
    if worst > 1.5:
        print(f"WARNING: wall time ran up to {worst:.1f}x the CPU time: the machine was busy, so wall-clock figures "
              "are inflated by waiting for a core; the CPU rows are the graph's own cost.")
    print("(compare ratios between runs, not single figures)")


if __name__ == "__main__":
    sys.exit(main())
