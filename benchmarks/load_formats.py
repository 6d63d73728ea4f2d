"""How fast each file format loads, against pandas.read_csv of the same graph as TSV.

Not a test: a measurement you run by hand::

    python benchmarks/load_formats.py                    # 1M edges, 200k entities
    python benchmarks/load_formats.py --edges 100000

Writes one synthetic graph (ids ``Q<n>``, names, three types, a fifth of the
entities with aliases) in every format graphtrail reads: triples + entity table
(TSV), node-link JSON, GraphML and a GraphRAG parquet folder; then, each in a
fresh child process, times ``load_kg`` (process CPU, all threads) and divides
by the CPU of ``pandas.read_csv`` of the triples and entity table (the
yardstick; target <= 3x at 1M edges). Also times the entity search index build
(first ``search_entities``), which should cost no more than the load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np


def write_all(folder: Path, n_edges: int) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    n = max(n_edges // 5, 2)
    rng = np.random.default_rng(0)
    heads, tails, rels = rng.integers(0, n, n_edges), rng.integers(0, n, n_edges), rng.integers(0, 40, n_edges)
    names = [f"Entity {i} of kind {i % 7}" for i in range(n)]
    types = [("person", "place", "thing")[i % 3] for i in range(n)]
    aliases = [f"E{i};Alias {i}" if i % 5 == 0 else "" for i in range(n)]
    paths = {"triples+table": folder / "g.tsv", "node-link": folder / "g.json", "graphml": folder / "g.graphml", "graphrag": folder / "graphrag"}
    if all(p.exists() for p in paths.values()):
        return paths
    (folder / "g.entities.tsv").write_text(
        "id\tname\ttype\taliases\n" + "".join(f"Q{i}\t{names[i]}\t{types[i]}\t{aliases[i]}\n" for i in range(n)), encoding="utf-8")
    paths["triples+table"].write_text(
        "".join(f"Q{h}\trelation {r}\tQ{t}\n" for h, r, t in zip(heads.tolist(), rels.tolist(), tails.tolist())), encoding="utf-8")
    doc = {
        "nodes": [{"id": f"Q{i}", "name": names[i], "type": types[i], "aliases": aliases[i].split(";") if aliases[i] else []} for i in range(n)],
        "edges": [{"source": f"Q{h}", "relation": f"relation {r}", "target": f"Q{t}"} for h, r, t in zip(heads.tolist(), rels.tolist(), tails.tolist())],
    }
    paths["node-link"].write_text(json.dumps(doc), encoding="utf-8")
    with paths["graphml"].open("w", encoding="utf-8") as fh:
        fh.write('<?xml version="1.0" encoding="utf-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
                 '<key id="name" for="node" attr.name="name" attr.type="string"/>\n'
                 '<key id="type" for="node" attr.name="type" attr.type="string"/>\n'
                 '<key id="relation" for="edge" attr.name="relation" attr.type="string"/>\n'
                 '<graph edgedefault="directed">\n')
        fh.write("".join(f'<node id="Q{i}"><data key="name">{names[i]}</data><data key="type">{types[i]}</data></node>\n' for i in range(n)))
        fh.write("".join(f'<edge source="Q{h}" target="Q{t}"><data key="relation">relation {r}</data></edge>\n'
                         for h, r, t in zip(heads.tolist(), rels.tolist(), tails.tolist())))
        fh.write("</graph>\n</graphml>\n")
    import pandas as pd

    rag = paths["graphrag"]
    rag.mkdir(exist_ok=True)
    pd.DataFrame({"id": [f"Q{i}" for i in range(n)], "title": names, "type": types, "description": [""] * n}).to_parquet(rag / "entities.parquet")
    pd.DataFrame({"id": [f"R{k}" for k in range(n_edges)], "source": [names[h] for h in heads.tolist()],
                  "target": [names[t] for t in tails.tolist()], "description": [""] * n_edges}).to_parquet(rag / "relationships.parquet")
    return paths


def child(path: Path) -> None:
    import pandas as pd

    import graphtrail.kg  # noqa: F401 - imports are not load time
    from graphtrail.kg import load_kg

    folder = path.parent if path.is_file() else path.parent
    start = time.process_time()
    pd.read_csv(folder / "g.tsv", sep="\t", header=None, dtype=str, quoting=3, keep_default_na=False)
    pd.read_csv(folder / "g.entities.tsv", sep="\t", dtype=str, quoting=3, keep_default_na=False)
    baseline = time.process_time() - start
    start = time.process_time()
    kg = load_kg(path, cache_communities=False)
    load = time.process_time() - start
    start = time.process_time()
    kg.search_entities("Entity 12 of kind 5")
    index = time.process_time() - start
    print(json.dumps({"read_csv": baseline, "load": load, "index": index, "entities": len(kg)}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "graphtrail-load-formats")
    parser.add_argument("--formats", nargs="+", default=["triples+table", "node-link", "graphml", "graphrag"])
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0
    paths = write_all(args.workdir / str(args.edges), args.edges)
    print(f"{args.edges:,} edges; CPU seconds (all threads); yardstick: pandas.read_csv of g.tsv + g.entities.tsv")
    print(f"{'format':16}{'read_csv':>10}{'load':>10}{'ratio':>8}{'index':>10}  targets: load <= 3x read_csv, index <= load")
    for name in args.formats:
        proc = subprocess.run([sys.executable, __file__, "--child", str(paths[name])], capture_output=True, text=True)
        if proc.returncode:
            print(f"{name:16} failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        ratio = r["load"] / r["read_csv"]
        print(f"{name:16}{r['read_csv']:>9.2f}s{r['load']:>9.2f}s{ratio:>7.1f}x{r['index']:>9.2f}s  "
              f"load {'MET' if ratio <= 3 else 'NOT met'}, index {'MET' if r['index'] <= r['load'] else 'NOT met'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
