"""How fast each file format loads, against the default call of the parser a user would reach for.

Not a test: a measurement you run by hand::

    python benchmarks/load_formats.py                          # 300k and 1M edges, both generators
    python benchmarks/load_formats.py --edges 300000 --generators wide --repeats 7
    python benchmarks/load_formats.py --networkx               # also networkx.read_graphml, once

Writes one synthetic graph per generator and size (:mod:`graph_files`:
``plain``, the shape this script always wrote, and ``wide``: long names, many
types and aliases, names in the triples) in every format graphtrail reads,
then, in one fresh child process per graph, times ``load_kg`` of each format
beside its yardstick, the default call of the parser a user would pick for
that file, in the same process, after a warm-up round, interleaved
(the old yardstick, then yardstick and load format after format; ``--repeats`` rounds)
and reports medians:

- triples + entity table (TSV): ``pandas.read_csv(path, sep="\\t")`` of both files;
- node-link JSON: ``orjson.loads`` of the file's bytes (read included);
- GraphML: ``xml.etree.ElementTree.parse``: the stdlib's C parser, and the
  stricter of the two a user would pick (``networkx.read_graphml`` parses
  with it and then builds its graph in Python: ``--networkx`` prints it once);
- GraphRAG: ``pyarrow.parquet.read_table`` of entities and relationships.

Target: load <= 3x the yardstick, in CPU seconds (process time: all threads).
The old yardstick (``read_csv(dtype=str, quoting=3, keep_default_na=False)``
of the TSV pair, for every format) is printed beside it: on pandas 3 it is
itself several times slower than the default call, which flattered the ratio.
Wall ratios are printed too; on a shared machine they include waiting for a core.
Also times, on the last round's fresh graph, what the load left for later: the
first neighbour query (``out_relations`` and ``in_relations`` of one entity: the
id list and index, the CSR, the edge descriptions) and then the first
``search_entities`` (the names, types and aliases as Python lists, and the search index).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_files import GENERATORS, write_graph_files  # noqa: E402

FORMATS = ("triples+table", "node-link", "graphml", "graphrag")
YARDSTICKS = {
    "triples+table": 'pandas.read_csv(path, sep="\\t") x2',
    "node-link": "orjson.loads(bytes)",
    "graphml": "ElementTree.parse",
    "graphrag": "pyarrow.parquet.read_table x2",
}


def _yardstick(fmt: str, path: Path) -> Callable[[], Any]:
    if fmt == "triples+table":
        import pandas as pd

        return lambda: (pd.read_csv(path, sep="\t"), pd.read_csv(path.with_name("g.entities.tsv"), sep="\t"))
    if fmt == "node-link":
        import orjson

        def parse() -> Any:
            with open(path, "rb") as fh:
                return orjson.loads(fh.read())

        return parse
    if fmt == "graphml":
        import xml.etree.ElementTree as ET

        return lambda: ET.parse(path)
    import pyarrow.parquet as pq

    return lambda: (pq.read_table(path / "entities.parquet"), pq.read_table(path / "relationships.parquet"))


def _old_yardstick(folder: Path) -> Callable[[], Any]:
    import pandas as pd

    options = dict(sep="\t", dtype=str, quoting=3, keep_default_na=False)
    return lambda: (pd.read_csv(folder / "g.tsv", header=None, **options), pd.read_csv(folder / "g.entities.tsv", **options))


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def child(folder: Path, formats: list[str], repeats: int, with_networkx: bool) -> None:
    import graphtrail.kg  # noqa: F401 - imports are not load time
    from graphtrail.kg import load_kg

    paths = {"triples+table": folder / "g.tsv", "node-link": folder / "g.json", "graphml": folder / "g.graphml", "graphrag": folder / "graphrag"}
    arms: dict[str, dict[str, Callable[[], Any]]] = {
        fmt: {"yardstick": _yardstick(fmt, paths[fmt]), "load": (lambda p=paths[fmt]: load_kg(p, cache_communities=False))}
        for fmt in formats
    }
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {fmt: {arm: [] for arm in ("yardstick", "load", "old")} for fmt in formats}
    out: dict[str, Any] = {}
    old = _old_yardstick(folder)  # the same files for every format: timed once a round
    for round_no in range(repeats + 1):  # round 0 warms up (imports, caches, the page cache) and is not counted
        old_cpu, old_wall, result = _timed(old)
        del result
        for fmt in formats:
            if round_no:
                samples[fmt]["old"].append((old_cpu, old_wall))
            for arm, fn in arms[fmt].items():
                cpu, wall, result = _timed(fn)
                if arm == "load" and round_no == repeats:
                    # What the load left for later (the Python lists of names, aliases ..., the CSR, the search
                    # index) is paid by the first queries: timed here, on the fresh graph, so laziness shows.
                    start = time.process_time()
                    first = next(iter(result.entity_ids()))
                    result.out_relations(first), result.in_relations(first)
                    out.setdefault(fmt, {})["neighbour"] = time.process_time() - start
                    start = time.process_time()
                    result.search_entities("Entity 12 of kind 5")
                    out[fmt]["index"] = time.process_time() - start
                    out[fmt]["entities"] = len(result)
                del result
                if round_no:
                    samples[fmt][arm].append((cpu, wall))
    for fmt in formats:
        for arm, pairs in samples[fmt].items():
            out[fmt][arm] = statistics.median(c for c, _ in pairs)
            out[fmt][arm + "_wall"] = statistics.median(w for _, w in pairs)
    if with_networkx and "graphml" in formats:
        import networkx as nx

        out["graphml"]["networkx"] = _timed(lambda: nx.read_graphml(paths["graphml"]))[0]
    print(json.dumps(out))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, nargs="+", default=[300_000, 1_000_000])
    parser.add_argument("--generators", nargs="+", default=list(GENERATORS), choices=GENERATORS)
    parser.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS)
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds after the warm-up (medians)")
    parser.add_argument("--networkx", action="store_true", help="also time networkx.read_graphml (once)")
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "graphtrail-load-formats")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.formats, args.repeats, args.networkx)
        return 0
    print("CPU seconds (process time, all threads), medians of interleaved rounds after a warm-up; target: load <= 3x yardstick")
    print("1st nbr: CPU of the first neighbour query on a fresh load (out and in relations of one entity); "
          "1st search: then the first search_entities (builds the search index)")
    print(f"{'generator':10}{'edges':>10}  {'format':15}{'yardstick':>11}{'load':>9}{'ratio':>8}{'wall':>7}"
          f"{'old yardstick':>15}{'old ratio':>10}{'1st nbr':>9}{'1st search':>11}  verdict   (yardstick)")
    for n_edges in args.edges:
        for generator in args.generators:
            folder = args.workdir / f"{generator}-{n_edges}"
            write_graph_files(folder, generator, n_edges, formats=tuple(args.formats))
            command = [sys.executable, __file__, "--child", str(folder), "--repeats", str(args.repeats), "--formats", *args.formats]
            proc = subprocess.run(command + (["--networkx"] if args.networkx else []), capture_output=True, text=True)
            if proc.returncode:
                print(f"{generator:10}{n_edges:>10,}  failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
                continue
            results = json.loads(proc.stdout.strip().splitlines()[-1])
            for fmt in args.formats:
                r = results[fmt]
                ratio, wall = r["load"] / r["yardstick"], r["load_wall"] / r["yardstick_wall"]
                extra = f"; networkx.read_graphml {r['networkx']:.2f}s" if "networkx" in r else ""
                print(f"{generator:10}{n_edges:>10,}  {fmt:15}{r['yardstick']:>10.3f}s{r['load']:>8.3f}s{ratio:>7.2f}x{wall:>6.2f}x"
                      f"{r['old']:>14.3f}s{r['load'] / r['old']:>9.2f}x{r['neighbour']:>8.3f}s{r['index']:>10.2f}s  "
                      f"{'MET    ' if ratio <= 3 else 'NOT MET'}   "
                      f"({YARDSTICKS[fmt]}{extra})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
