"""How graphtrail scales with the knowledge graph: load, search, tools and an agent run at 10k, 100k and 1M edges.

Not a test: a measurement you run by hand (or in CI for the log)::

    python benchmarks/kg_scale.py                         # 10k, 100k, 1M edges, in-memory backend
    python benchmarks/kg_scale.py --sizes 10000 100000    # smaller
    python benchmarks/kg_scale.py --backend memory --no-communities

The graph is synthetic and deterministic (``--seed``): a triples TSV with
power-law degrees (heads and tails drawn from a Zipf-like law, as in real KGs
where a few hubs carry most edges), one entity per five edges, 40 relation
labels, and pronounceable two-word names so that search has something to
match. It is written once per size under ``--workdir`` and reused.

Each size runs in a fresh child process (so peak RSS is that size's own) and
prints:

- load time (wall and CPU) and peak RSS after loading (target at 1M edges: <= 5 s, <= 1 GB);
- the search index build (first query) and search p50 over typo'd names (target p50 <= 20 ms);
- communities: Louvain once (or read from the cache beside the graph);
- each tool's p50 (``get_neighbors`` on the biggest hub and on a typical entity),
  and ``get_entity`` under full isolation (everything hidden but one entity);
- one offline agent run;
- the growth exponent of each figure between the smallest and largest size
  (time ~ edges^k: k = 1 is linear, k ~ 0 means flat).

Backends: ``--backend`` picks how the graph is opened. ``memory`` (default)
is graphtrail's in-memory graph; other backends register a function in
:data:`BACKENDS` that takes the triples file and a scratch folder and returns
an object with the :class:`graphtrail.kg.backends.base.GraphBackend` methods.
Wall-clock figures on a shared machine include time spent waiting for a core;
the CPU rows (process CPU time) do not, and the script warns when the two
drift far apart. Rerun and compare ratios, not single numbers.
"""

from __future__ import annotations

import argparse
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


def graph_file(workdir: Path, n_edges: int, seed: int) -> Path:
    path = workdir / f"synthetic-{n_edges}-seed{seed}.tsv"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(synthetic_triples(n_edges, seed), encoding="utf-8")
        tmp.replace(path)
    return path


# --------------------------------------------------------------------------- backends


def _open_memory(path: Path, scratch: Path) -> Any:
    from graphtrail.agents import load_kg

    return load_kg(path)


#: name -> function(triples file, scratch folder) -> graph. Other backends add themselves here.
BACKENDS: dict[str, Callable[[Path, Path], Any]] = {"memory": _open_memory}


# --------------------------------------------------------------------------- one size, in a child process


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


_CPU: dict[str, float] = {}


def _p50(fn: Callable[[], Any], n: int) -> float:
    """Median wall time of ``n`` calls; the median CPU time goes to ``_CPU["last"]``."""
    times, cpu = [], []
    for _ in range(n):
        start, c = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - c)
    _CPU["last"] = statistics.median(cpu)
    return statistics.median(times)


class _Timed:
    """Wall and process CPU time of a block (CPU shows what contention on a shared machine hides)."""

    def __enter__(self) -> "_Timed":
        self.start, self.cpu_start = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.start, time.process_time() - self.cpu_start


def _typo(name: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(name) - 1)
    return name[:i] + name[i + 1 :]


def measure(path: Path, backend: str, scratch: Path, repeats: int, communities: bool) -> dict[str, float]:
    import graphtrail.agents  # noqa: F401 - imports are not load time

    out: dict[str, float] = {"rss_start_mb": _rss_mb()}
    with _Timed() as t:
        kg = BACKENDS[backend](path, scratch)
    out["load_s"], out["load_cpu_s"] = t.wall, t.cpu
    out["rss_load_mb"] = _rss_mb()

    from graphtrail.agents import GraphFilter, create_graphrag_agent, make_graph_tools, use_filter

    rng = random.Random(0)
    ids = list(kg.entity_ids())
    sample = [ids[rng.randrange(len(ids))] for _ in range(repeats)]
    names = [kg.entity(e).name for e in sample]
    queries = [_typo(n, rng) if i % 2 else n for i, n in enumerate(names)]
    hub = max(ids[: min(len(ids), 20000)], key=kg.degree)

    with _Timed() as t:
        kg.search_entities(queries[0]) if hasattr(kg, "search_entities") else None
    out["search_first_s"], out["search_first_cpu_s"] = t.wall, t.cpu
    tools = {t.name: t for t in make_graph_tools(kg)}
    qi = iter(queries * 3)
    out["search_p50_ms"] = 1000 * _p50(lambda: tools["search_entities"].invoke({"query": next(qi)}), repeats)
    out["search_p50_cpu_ms"] = 1000 * _CPU["last"]
    if communities:
        with _Timed() as t:
            com_ids = list(kg.communities)
        out["communities_s"], out["communities_cpu_s"] = t.wall, t.cpu
        si = iter(sample * 3)
        out["get_entity_p50_ms"] = 1000 * _p50(lambda: tools["get_entity"].invoke({"entity_id": next(si)}), repeats)
    out["get_neighbors_hub_p50_ms"] = 1000 * _p50(lambda: tools["get_neighbors"].invoke({"entity_id": hub, "direction": "both"}), repeats)
    si = iter(sample * 3)
    out["get_neighbors_p50_ms"] = 1000 * _p50(lambda: tools["get_neighbors"].invoke({"entity_id": next(si), "direction": "both"}), repeats)
    if communities:
        words = iter([n.split()[0] for n in names] * 3)
        out["search_communities_p50_ms"] = 1000 * _p50(lambda: tools["search_communities"].invoke({"query": next(words)}), repeats)
        ci = iter((com_ids * repeats)[: 3 * repeats])
        out["read_community_p50_ms"] = 1000 * _p50(lambda: tools["read_community"].invoke({"community_id": next(ci)}), repeats)
        kept = sample[0]
        isolation = GraphFilter(hidden=frozenset(e for e in ids if e != kept), label="full_isolation")
        with use_filter(isolation):
            out["get_entity_full_isolation_p50_ms"] = 1000 * _p50(lambda: tools["get_entity"].invoke({"entity_id": kept}), repeats)
            out["search_full_isolation_p50_ms"] = 1000 * _p50(lambda: tools["search_entities"].invoke({"query": names[0]}), repeats)
    agent = create_graphrag_agent("offline", kg, "agentic")
    question = f"What is the relation 00 of {names[1]}?"
    with _Timed() as t:
        agent.invoke({"messages": [("user", question)]})
    out["agent_run_s"], out["agent_run_cpu_s"] = t.wall, t.cpu
    out["rss_end_mb"] = _rss_mb()
    return out


# --------------------------------------------------------------------------- driver


ROWS = [
    ("load_s", "load", "s"),
    ("load_cpu_s", "  (CPU)", "s"),
    ("rss_start_mb", "RSS before load (imports)", "MB"),
    ("rss_load_mb", "peak RSS after load", "MB"),
    ("search_first_s", "search index build (first query)", "s"),
    ("search_first_cpu_s", "  (CPU)", "s"),
    ("search_p50_ms", "search_entities p50", "ms"),
    ("search_p50_cpu_ms", "  (CPU p50)", "ms"),
    ("get_entity_p50_ms", "get_entity p50", "ms"),
    ("get_neighbors_p50_ms", "get_neighbors p50", "ms"),
    ("get_neighbors_hub_p50_ms", "get_neighbors hub p50", "ms"),
    ("communities_s", "communities (Louvain or cache)", "s"),
    ("communities_cpu_s", "  (CPU)", "s"),
    ("search_communities_p50_ms", "search_communities p50", "ms"),
    ("read_community_p50_ms", "read_community p50", "ms"),
    ("get_entity_full_isolation_p50_ms", "get_entity p50, full isolation", "ms"),
    ("search_full_isolation_p50_ms", "search p50, full isolation", "ms"),
    ("agent_run_s", "one offline agent run", "s"),
    ("agent_run_cpu_s", "  (CPU)", "s"),
    ("rss_end_mb", "peak RSS at the end", "MB"),
]

TARGETS = {("load_s", 1_000_000): 5.0, ("load_cpu_s", 1_000_000): 5.0, ("rss_load_mb", 1_000_000): 1024.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000], help="edge counts")
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="memory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=25, help="calls per p50")
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "graphtrail-kg-scale")
    parser.add_argument("--no-communities", dest="communities", action="store_false",
                        help="skip community tools (Louvain takes minutes at 1M edges the first time; then it is cached)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    if args.child is not None:
        path = graph_file(args.workdir, args.child, args.seed)
        scratch = args.workdir / f"{args.backend}-{args.child}"
        scratch.mkdir(exist_ok=True)
        print(json.dumps(measure(path, args.backend, scratch, args.repeats, args.communities)))
        return 0

    results: dict[int, dict[str, float]] = {}
    for size in args.sizes:
        graph_file(args.workdir, size, args.seed)
        cmd = [sys.executable, __file__, "--child", str(size), "--backend", args.backend, "--seed", str(args.seed),
               "--repeats", str(args.repeats), "--workdir", str(args.workdir)] + ([] if args.communities else ["--no-communities"])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{size} edges: the measurement failed (exit {proc.returncode}); figures for this size are missing.\n{proc.stderr[-2000:]}")
            continue
        results[size] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"measured {size:,} edges", flush=True)

    sizes = sorted(results)
    if not sizes:
        return 1
    print(f"\nbackend {args.backend!r}, synthetic power-law graph (seed {args.seed}), {args.repeats} calls per p50")
    header = f"{'':40}" + "".join(f"{s:>14,}" for s in sizes) + f"{'exponent':>10}"
    print(header)
    for key, label, unit in ROWS:
        values = [results[s].get(key, float("nan")) for s in sizes]
        if all(math.isnan(v) for v in values):
            continue
        cells = "".join(f"{v:>11.3g} {unit:<2}" for v in values)
        exp = ""
        lo, hi = values[0], values[-1]
        if len(sizes) > 1 and lo > 0 and hi > 0 and not (math.isnan(lo) or math.isnan(hi)):
            exp = f"{math.log(hi / lo) / math.log(sizes[-1] / sizes[0]):>10.2f}"
        print(f"{label:40}{cells}{exp}")
    for (key, size), limit in TARGETS.items():
        if size in results:
            value = results[size][key]
            print(f"target {key} at {size:,} edges <= {limit:g}: {value:.2f} -> {'MET' if value <= limit else 'NOT met'}")
    if 1_000_000 in results or sizes[-1] >= 200_000:
        for key in ("search_p50_ms", "search_p50_cpu_ms"):
            p50 = results[sizes[-1]][key]
            print(f"target {key} <= 20 ms at {sizes[-1] // 5:,} entities: {p50:.1f} ms -> {'MET' if p50 <= 20 else 'NOT met'}")
    worst = max((results[s]["load_s"] / results[s]["load_cpu_s"] for s in sizes if results[s].get("load_cpu_s")), default=1.0)
    if worst > 1.5:
        print(f"WARNING: wall time ran up to {worst:.1f}x the CPU time: the machine was busy, so wall-clock figures "
              "are inflated by waiting for a core; the CPU rows are the graph's own cost.")
    print("(compare ratios between runs, not single figures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
