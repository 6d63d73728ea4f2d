"""One synthetic graph written in every format graphtrail reads, by two generators (for benchmarks/load_formats.py and the loader tests).

- ``plain``: the shape load_formats.py always wrote: ids ``Q<n>``, short
  unique names, three types, a fifth of the entities with two aliases, 40
  relation labels, uniform ends, every triple written by id.
- ``wide``: what a real export looks like and a loader finds harder: long
  URI ids, long names with punctuation and non-ASCII letters (a few repeated,
  so a name may be ambiguous), 300 types, most entities with several aliases
  (spaces around the separators), long descriptions, 500 relation labels,
  power-law degrees, a tenth of the triple ends written by name, a few ends no
  entity table knows, and a description on some edges.

:func:`write_graph_files` writes ``g.tsv`` + ``g.entities.tsv`` (triples and
entity table), ``g.json`` (node-link), ``g.graphml`` and ``graphrag/`` (parquet;
needs pandas and pyarrow) into a folder, once: existing files are reused.
Deterministic for a given generator, size and seed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np

__all__ = ["GENERATORS", "SyntheticGraph", "make_graph", "write_graph_files"]

GENERATORS = ("plain", "wide")

_WORDS = ("northern", "royal", "old", "grand", "upper", "saint", "new", "little", "east", "crown", "Ærø", "Zürich",
          "Łódź", "São", "Kraków", "Île", "Mönch", "Dvořák", "Smith & Sons", "O'Brien", '"Quoted"', "<tagged>")
_NOUNS = ("society", "river", "company", "institute", "valley", "museum", "railway", "orchestra", "library", "bridge",
          "harbour", "council", "university", "observatory", "cathedral", "brewery")


@dataclass
class SyntheticGraph:
    """The columns every format is written from (one row per entity, one per edge)."""

    ids: list[str]
    names: list[str]
    types: list[str]
    descriptions: list[str]
    aliases: list[list[str]]
    heads: list[str]  # as written in the triples file (an id, or for some a name)
    tails: list[str]
    head_ids: list[str]  # the entity each end means (node-link, GraphML)
    tail_ids: list[str]
    relations: list[str]
    edge_descriptions: list[str]


def _plain(n_edges: int, seed: int) -> SyntheticGraph:
    n = max(n_edges // 5, 2)
    rng = np.random.default_rng(seed)
    heads, tails, rels = rng.integers(0, n, n_edges), rng.integers(0, n, n_edges), rng.integers(0, 40, n_edges)
    ids = [f"Q{i}" for i in range(n)]
    h, t = [ids[i] for i in heads.tolist()], [ids[i] for i in tails.tolist()]
    return SyntheticGraph(
        ids=ids,
        names=[f"Entity {i} of kind {i % 7}" for i in range(n)],
        types=[("person", "place", "thing")[i % 3] for i in range(n)],
        descriptions=[""] * n,
        aliases=[[f"E{i}", f"Alias {i}"] if i % 5 == 0 else [] for i in range(n)],
        heads=h, tails=t, head_ids=h, tail_ids=t,
        relations=[f"relation {r}" for r in rels.tolist()],
        edge_descriptions=[""] * n_edges,
    )


def _wide(n_edges: int, seed: int) -> SyntheticGraph:
    n = max(n_edges // 5, 4)
    rng = np.random.default_rng(seed + 1)
    words = rng.integers(0, len(_WORDS), (n, 3)).tolist()
    nouns = rng.integers(0, len(_NOUNS), n).tolist()
    names = [f"The {_WORDS[a].capitalize()} {_NOUNS[c]} of {_WORDS[b]} and {_WORDS[d]} district ({i:x})"
             for i, ((a, b, d), c) in enumerate(zip(words, nouns))]
    for i in range(49, n, 50):  # a repeated name: ambiguous where triples name an entity
        names[i] = names[i - 1]
    type_rank = np.minimum(rng.zipf(1.3, n), 300) - 1
    types = [f"ontology:Type_{k:03d}" if k % 17 else "" for k in type_rank.tolist()]  # some empty: "entity"
    n_aliases = rng.integers(0, 7, n).tolist()
    aliases = [[f"{names[i].split(' (')[0][4:30]} {k}" for k in range(m)] for i, m in enumerate(n_aliases)]
    descriptions = [f"A description of entity {i}, long enough to look like an abstract from an encyclopedia; see also {i * 7 % n}."
                    if i % 2 else "" for i in range(n)]
    ids = [f"https://kg.example.org/entity/{i:08d}" for i in range(n)]
    weights = 1.0 / np.power(np.arange(n) + 10.0, 1.1)
    weights /= weights.sum()
    perm = rng.permutation(n)
    heads = perm[rng.choice(n, size=n_edges, p=weights)]
    tails = perm[rng.choice(n, size=n_edges, p=weights)]
    label_weights = 1.0 / (np.arange(500) + 1.0)
    rels = rng.choice(500, size=n_edges, p=label_weights / label_weights.sum()).tolist()
    labels = [f"ontology:relation_{k:03d} ({_NOUNS[k % len(_NOUNS)]})" for k in range(500)]
    by_name = rng.random((2, n_edges)) < 0.1
    head_ids, tail_ids = [ids[i] for i in heads.tolist()], [ids[i] for i in tails.tolist()]
    written = []
    for ends, idx, named in ((head_ids, heads.tolist(), by_name[0].tolist()), (tail_ids, tails.tolist(), by_name[1].tolist())):
        written.append([names[i] if use_name else e for e, i, use_name in zip(ends, idx, named)])
    for k in range(0, n_edges, 97):  # an end no entity table knows: a bare entity
        written[1][k] = tail_ids[k] = f"Unlisted thing {k % 1009}"
    edge_descriptions = [f"Stated in source document {k % 4099}" if k % 11 == 0 else "" for k in range(n_edges)]
    return SyntheticGraph(ids, names, types, descriptions, aliases, written[0], written[1], head_ids, tail_ids,
                          [labels[r] for r in rels], edge_descriptions)


@contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A path beside ``path`` to write to, moved onto it once written whole.

    Files already there are reused, so a run stopped mid-write must not leave
    half a file under the final name for the next run to measure.
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def make_graph(generator: str, n_edges: int, seed: int = 0) -> SyntheticGraph:
    if generator not in GENERATORS:
        raise ValueError(f"unknown generator {generator!r}; expected one of {', '.join(GENERATORS)}")
    return (_plain if generator == "plain" else _wide)(n_edges, seed)


def write_graph_files(folder: Path, generator: str, n_edges: int, seed: int = 0, formats: tuple[str, ...] | None = None) -> dict[str, Path]:
    """Write the graph in every format (or ``formats``) under ``folder`` (reusing files already there); their paths by format."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"triples+table": folder / "g.tsv", "node-link": folder / "g.json", "graphml": folder / "g.graphml",
             "graphrag": folder / "graphrag"}
    wanted = [f for f in (formats or tuple(paths)) if not (paths[f] / "entities.parquet" if f == "graphrag" else paths[f]).exists()]
    if not wanted:
        return paths
    g = make_graph(generator, n_edges, seed)
    n, m = len(g.ids), len(g.heads)
    wide = generator == "wide"
    if "triples+table" in wanted:
        alias_cells = [" ; ".join(a) if wide else ";".join(a) for a in g.aliases]
        if wide:
            table = "id\tname\ttype\tdescription\taliases\n" + "".join(
                f"{g.ids[i]}\t{g.names[i]}\t{g.types[i]}\t{g.descriptions[i]}\t{alias_cells[i]}\n" for i in range(n))
            triples = "".join(f"{g.heads[k]}\t{g.relations[k]}\t{g.tails[k]}\t{g.edge_descriptions[k]}\n" for k in range(m))
        else:
            table = "id\tname\ttype\taliases\n" + "".join(f"{g.ids[i]}\t{g.names[i]}\t{g.types[i]}\t{alias_cells[i]}\n" for i in range(n))
            triples = "".join(f"{g.heads[k]}\t{g.relations[k]}\t{g.tails[k]}\n" for k in range(m))
        with _replacing(folder / "g.entities.tsv") as tmp:  # the table first: the triples file marks the pair done
            tmp.write_text(table, encoding="utf-8")
        with _replacing(paths["triples+table"]) as tmp:
            tmp.write_text(triples, encoding="utf-8")
    if "node-link" in wanted:
        nodes = []
        for i in range(n):
            node = {"id": g.ids[i], "name": g.names[i], "type": g.types[i] if wide else g.types[i] or "entity", "aliases": g.aliases[i]}
            if wide:
                node["description"] = g.descriptions[i]
            nodes.append(node)
        edges = []
        for k in range(m):
            edge = {"source": g.head_ids[k], "relation": g.relations[k], "target": g.tail_ids[k]}
            if wide:
                edge["description"] = g.edge_descriptions[k]
            edges.append(edge)
        with _replacing(paths["node-link"]) as tmp:
            tmp.write_text(json.dumps({"directed": True, "multigraph": True, "graph": {}, "nodes": nodes, "edges": edges},
                                      ensure_ascii=not wide), encoding="utf-8")
    if "graphml" in wanted:
        _write_graphml(paths["graphml"], g, wide)
    if "graphrag" in wanted:
        _write_graphrag(paths["graphrag"], g, wide)
    return paths


def _write_graphml(path: Path, g: SyntheticGraph, wide: bool) -> None:
    node_keys = ("name", "type", "description", "aliases") if wide else ("name", "type")
    edge_keys = ("relation", "description") if wide else ("relation",)
    with _replacing(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        fh.write('<?xml version="1.0" encoding="utf-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
        for k in node_keys:
            fh.write(f'<key id="{k}" for="node" attr.name="{k}" attr.type="string"/>\n')
        for k in edge_keys:
            fh.write(f'<key id="e_{k}" for="edge" attr.name="{k}" attr.type="string"/>\n')
        fh.write('<graph edgedefault="directed">\n')
        for i in range(len(g.ids)):
            values = (g.names[i], g.types[i], g.descriptions[i], ";".join(g.aliases[i]))
            data = "".join(f'<data key="{k}">{escape(v)}</data>' for k, v in zip(node_keys, values) if v)
            fh.write(f"<node id={quoteattr(g.ids[i])}>{data}</node>\n")
        for k in range(len(g.heads)):
            values = (g.relations[k], g.edge_descriptions[k])
            data = "".join(f'<data key="e_{key}">{escape(v)}</data>' for key, v in zip(edge_keys, values) if v)
            fh.write(f"<edge source={quoteattr(g.head_ids[k])} target={quoteattr(g.tail_ids[k])}>{data}</edge>\n")
        fh.write("</graph>\n</graphml>\n")


def _write_graphrag(folder: Path, g: SyntheticGraph, wide: bool) -> None:
    import pandas as pd

    folder.mkdir(exist_ok=True)
    n, m = len(g.ids), len(g.heads)
    index = {e: i for i, e in enumerate(g.ids)}
    # GraphRAG names relationship ends by entity title; an unlisted end keeps its text (not a title: it is dropped).
    known = [k for k in range(m) if g.head_ids[k] in index and g.tail_ids[k] in index]
    entities = {"id": g.ids, "title": g.names, "type": g.types, "description": g.descriptions}
    if wide:
        entities["text_unit_ids"] = [[f"unit-{i % 101}", f"unit-{i % 37}"] for i in range(n)]
        entities["human_readable_id"] = list(range(n))
    relationships = {"id": [f"R{k}" for k in known], "source": [g.names[index[g.head_ids[k]]] for k in known],
                     "target": [g.names[index[g.tail_ids[k]]] for k in known], "description": [g.edge_descriptions[k] for k in known]}
    if wide:
        relationships["weight"] = [1.0 + (k % 5) for k in known]
    with _replacing(folder / "relationships.parquet") as tmp:  # entities.parquet last: it marks the folder done
        pd.DataFrame(relationships).to_parquet(tmp)
    with _replacing(folder / "entities.parquet") as tmp:
        pd.DataFrame(entities).to_parquet(tmp)
