"""Every loader builds, entity by entity and relation by relation, the graph the loaders built before they worked in columns.

The expected graphs in ``tests/data/loader_snapshots`` were written by the
loaders of graphtrail before issue 31 (``python -m tests.test_loader_snapshots``
writes them again, from the current code: run it only to add a case, and check
the diff). Each case is loaded several ways: as ``load_kg`` chooses, with the
fast (pyarrow) readers forced on small files, with the exact readers only, and
without pyarrow, which is optional. A snapshot holds the store itself (the
order of entities, relation labels and edges, every attribute and edge
description), text units, loaded communities and the warnings the load gave.

Inputs: the tricky files in ``tests/data/loader_tricky`` (quoting, comments,
names resolved by casefold, ambiguous names, repeated triples and nodes,
integer ids, GraphML escapes and both GraphML readers, GraphRAG titles that
repeat or equal an id), ``tests/data/wikidata_style.tsv``, the bundled
countries graph written in every format, and both generators of
``benchmarks/graph_files.py`` at a few thousand edges.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphtrail.kg import KnowledgeGraph, load_kg
from graphtrail.kg.errors import KGWarning
from graphtrail.kg.loaders import delimited as delimited_mod
from graphtrail.kg.loaders import triples as triples_mod

DATA = Path(__file__).parent / "data"
SNAPSHOTS = DATA / "loader_snapshots"
TRICKY = DATA / "loader_tricky"
GENERATED = {"plain": 2_000, "wide": 3_000}
FORMAT_FILES = {"triples+table": "g.tsv", "node-link": "g.json", "graphml": "g.graphml", "graphrag": "graphrag"}


def snapshot(kg: KnowledgeGraph, caught: list[str]) -> dict[str, Any]:
    """What the graph holds, in the store's own order (which the read API and content hashes follow)."""
    s = kg._store
    s.commit()
    return {
        "name": kg.name,
        "ids": list(s.ids),
        "names": list(s.names),
        "types": list(s.types),
        "descriptions": list(s.descriptions),
        "aliases": [list(a) for a in s.aliases],
        "relation_labels": list(s.rel_labels),
        "edges": [[int(a), int(b), int(c), s.desc(e)] for e, (a, b, c) in enumerate(zip(s.src.tolist(), s.dst.tolist(), s.rel.tolist()))],
        "text_units": [[u.id, u.text, list(u.entity_ids)] for u in s.text_units.values()],
        "communities": [[c.id, c.title, list(c.entity_ids), c.summary, c.level] for c in s.communities.values()],
        "warnings": caught,
    }


def _load(path: Path) -> dict[str, Any]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kg = load_kg(path, communities=False)
    s = kg._store
    assert s.index == {e: i for i, e in enumerate(s.ids)}, "the id index matches the id list"
    assert all(type(v) is str for column in (s.ids, s.names, s.types, s.descriptions) for v in column)
    assert all(type(a) is tuple and all(type(x) is str for x in a) for a in s.aliases)
    assert s.src.dtype.kind == "i" and s.dst.dtype.kind == "i" and s.rel.dtype.kind == "i"
    return snapshot(kg, [str(w.message) for w in caught if issubclass(w.category, KGWarning)])


def _countries(folder: Path, fmt: str) -> Path:
    """The bundled countries graph, written in ``fmt`` by hand (triples, GraphRAG) or by graphtrail's writers."""
    from graphtrail.kg.loaders import save_kg

    kg = load_kg("countries", communities=False)
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "node-link":
        return save_kg(kg, folder / "countries.json")
    if fmt == "graphml":
        return save_kg(kg, folder / "countries.graphml")
    if fmt == "triples+table":
        rows = ["id\tname\ttype\tdescription\taliases"] + [
            "\t".join((e.id, e.name, e.type, e.description.replace("\t", " ").replace("\n", " "), ";".join(e.aliases))) for e in kg.entities()
        ]
        (folder / "countries.entities.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        (folder / "countries.tsv").write_text("".join(f"{r.source}\t{r.relation}\t{r.target}\n" for r in kg.relations()), encoding="utf-8")
        return folder / "countries.tsv"
    pd = pytest.importorskip("pandas")
    entities = list(kg.entities())
    rag = folder / "countries-graphrag"
    rag.mkdir(exist_ok=True)
    pd.DataFrame({"id": [e.id for e in entities], "title": [e.name for e in entities], "type": [e.type for e in entities],
                  "description": [e.description for e in entities]}).to_parquet(rag / "entities.parquet")
    name = {e.id: e.name for e in entities}
    relations = list(kg.relations())
    pd.DataFrame({"id": [f"r{k}" for k in range(len(relations))], "source": [name[r.source] for r in relations],
                  "target": [name[r.target] for r in relations], "description": [r.relation for r in relations]}).to_parquet(rag / "relationships.parquet")
    return rag


def _generated(folder: Path, generator: str, fmt: str) -> Path:
    if fmt == "graphrag":
        pytest.importorskip("pandas")
        pytest.importorskip("pyarrow")
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    try:
        from graph_files import write_graph_files
    finally:
        sys.path.pop(0)
    return write_graph_files(folder / f"{generator}", generator, GENERATED[generator], formats=(fmt,))[fmt]


def _copied(name: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        source = TRICKY / name if (TRICKY / name).exists() else DATA / name
        if source.is_dir():
            return Path(shutil.copytree(source, folder / name))
        for sibling in source.parent.glob(source.name.split(".")[0] + ".*"):  # the entity table beside triples
            shutil.copy(sibling, folder / sibling.name)
        return folder / name

    return make


CASES: dict[str, Callable[[Path], Path]] = {
    **{f"tricky-{name.replace('.', '-')}": _copied(name) for name in
       ("tsv.tsv", "quoted.csv", "metaqa.txt", "nodelink.json", "graphml.graphml", "graphml_stream.graphml", "graphrag")},
    "wikidata-style": _copied("wikidata_style.tsv"),
    **{f"countries-{fmt}": (lambda folder, fmt=fmt: _countries(folder, fmt)) for fmt in FORMAT_FILES},
    **{f"{gen}-{fmt}": (lambda folder, gen=gen, fmt=fmt: _generated(folder, gen, fmt)) for gen in GENERATED for fmt in FORMAT_FILES},
}
MODES = ("default", "fast", "exact", "no-pyarrow")


def _mode(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if mode == "fast":  # the pyarrow readers even on small files, reading them through a memory map
        monkeypatch.setattr(triples_mod, "FAST_PATH_BYTES", 0)
        monkeypatch.setattr(delimited_mod, "MAP_FROM_BYTES", 1)
    elif mode == "exact":
        monkeypatch.setattr(triples_mod, "FAST_PATH_BYTES", 1 << 62)
    elif mode == "no-pyarrow":
        for name in ("pyarrow", "pyarrow.compute", "pyarrow.csv", "pyarrow.parquet"):
            monkeypatch.setitem(sys.modules, name, None)  # ``import pyarrow`` raises ImportError


def _first_difference(got: dict[str, Any], expected: dict[str, Any]) -> str:
    for key in expected:
        a, b = got.get(key), expected[key]
        if a != b:
            if isinstance(a, list) and isinstance(b, list):
                at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                return f"{key}: {len(a)} items, expected {len(b)}; first difference at {at}: {a[at:at + 1]} != {b[at:at + 1]}"
            return f"{key}: {a!r} != {b!r}"
    return "equal"


# GraphRAG folders are parquet: without pyarrow they cannot load at all (tests/test_loaders.py checks
# the error names the extra), so that pair is not a case here rather than a skip.
CASE_MODES = [(case, mode) for case in sorted(CASES) for mode in MODES
              if not (mode == "no-pyarrow" and case.endswith("graphrag"))]


@pytest.mark.parametrize(("case", "mode"), CASE_MODES)
def test_loaders_build_the_graph_they_built_before(case: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected_file = SNAPSHOTS / f"{case}.json.gz"
    assert expected_file.is_file(), f"no expected graph for {case}: python -m tests.test_loader_snapshots"
    path = CASES[case](tmp_path)
    expected = json.loads(gzip.decompress(expected_file.read_bytes()))
    _mode(mode, monkeypatch)
    got = _load(path)
    assert got == expected, _first_difference(got, expected)


def _write_all() -> None:  # pragma: no cover - run by hand, from the loaders the snapshots pin
    import tempfile

    SNAPSHOTS.mkdir(exist_ok=True)
    for case, make in sorted(CASES.items()):
        with tempfile.TemporaryDirectory() as folder:
            got = _load(make(Path(folder)))
        (SNAPSHOTS / f"{case}.json.gz").write_bytes(gzip.compress(json.dumps(got, ensure_ascii=False, sort_keys=True).encode(), mtime=0))
        print(f"{case}: {len(got['ids'])} entities, {len(got['edges'])} edges, {len(got['warnings'])} warnings")


if __name__ == "__main__":  # pragma: no cover
    _write_all()
