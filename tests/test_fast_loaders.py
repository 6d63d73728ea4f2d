"""The vectorised readers (large files) build exactly the graph the exact readers build, and errors still name the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphtrail.agents import load_kg
from graphtrail.kg.errors import KGError
from graphtrail.kg.loaders import textcolumns
from graphtrail.kg.loaders import triples as triples_mod


def _snapshot(kg) -> tuple:
    return (list(kg.entities()), list(kg.relations()))


@pytest.fixture(scope="module")
def big_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("big")
    n = 30_000  # > 1 MB of entity table: the fast path
    rows = ["id\tname\ttype\tdescription\taliases\tweight"]
    for i in range(n):
        name = f"Place number {i}" if i % 97 else ""  # some empty names: the id stands in
        kind = "" if i % 13 == 0 else ("city" if i % 2 else "region")
        aliases = f"P{i}; Number {i} ;" if i % 5 == 0 else ""
        rows.append(f"E{i}\t{name}\t{kind}\tA description of place {i}, long enough to make the file large\t{aliases}\t{i}")
    (folder / "g.entities.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    edges = [f"E{i}\tnear\tE{(i * 7) % n}" for i in range(n)] + [f"Place number {i}\tnamed\tE{i + 1}" for i in range(1, 300)]
    (folder / "g.tsv").write_text("\n".join(edges) + "\n", encoding="utf-8")
    return folder / "g.tsv"


def test_fast_entity_table_builds_the_same_graph(big_table: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert (big_table.parent / "g.entities.tsv").stat().st_size >= triples_mod.FAST_PATH_BYTES
    calls = []
    real = triples_mod._entity_table_fast
    monkeypatch.setattr(triples_mod, "_entity_table_fast", lambda p: calls.append(p) or real(p))
    with pytest.warns(Warning, match="'weight' not loaded"):
        fast = _snapshot(load_kg(big_table, cache_communities=False))
    assert calls and real(calls[0]) is not None, "the fast reader answered"
    monkeypatch.setattr(triples_mod, "_entity_table_fast", lambda p: None)
    with pytest.warns(Warning, match="'weight' not loaded"):
        exact = _snapshot(load_kg(big_table, cache_communities=False))
    assert fast == exact
    entities = {e.id: e for e in fast[0]}
    assert entities["E0"].name == "E0" and entities["E0"].type == "entity" and entities["E0"].aliases == ("P0", "Number 0")
    assert entities["E3"].type == "city"
    assert any(r.source == "E1" and r.relation == "named" for r in fast[1]), "a tail written as a name resolves to the id"


def test_a_repeated_id_in_a_large_table_is_named_by_line(big_table: Path, tmp_path: Path) -> None:
    text = (big_table.parent / "g.entities.tsv").read_text(encoding="utf-8").splitlines()
    text.insert(20_001, text[5])  # E4 again, on line 20002
    (tmp_path / "g.entities.tsv").write_text("\n".join(text) + "\n", encoding="utf-8")
    (tmp_path / "g.tsv").write_text(big_table.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(KGError, match=r"g.entities.tsv line 20002: duplicate entity id 'E4' \(first on line 6\)"):
        load_kg(tmp_path / "g.tsv", cache_communities=False)
    # The fast table reader leaves repeats to the lookup of the triples' ends; small triples are read exactly, and still find it.
    (tmp_path / "g.tsv").write_text("E1\tknows\tE2\nE4\tknows\tE5\n", encoding="utf-8")
    with pytest.raises(KGError, match=r"g.entities.tsv line 20002: duplicate entity id 'E4' \(first on line 6\)"):
        load_kg(tmp_path / "g.tsv", cache_communities=False)


def test_node_link_and_graphml_build_what_add_relation_builds(tmp_path: Path) -> None:
    """Bulk-built graphs equal the one-call-per-row reference: order of first appearance, a repeated triple kept once with its last description."""
    import json

    import networkx as nx

    from graphtrail.agents import KnowledgeGraph

    edges = [("b", "r1", "c", "first"), ("x", "r2", "b", ""), ("b", "r1", "c", "second"), ("c", "r1", "y", ""), ("b", "r1", "c", "")]
    reference = KnowledgeGraph(name="g")
    reference.add_entity("c", "Cee", "letter", "", ["C"])
    reference.add_entity("b", "Bee")
    for s, r, t, d in edges:
        reference.add_relation(s, r, t, d)
    doc = {
        "nodes": [{"id": "c", "name": "Cee", "type": "letter", "aliases": ["C"]}, {"id": "b", "name": "Bee"}],
        "edges": [{"source": s, "relation": r, "target": t, "description": d} for s, r, t, d in edges],
    }
    (tmp_path / "g.json").write_text(json.dumps(doc), encoding="utf-8")
    assert _snapshot(load_kg(tmp_path / "g.json", cache_communities=False)) == _snapshot(reference)

    g = nx.MultiDiGraph()
    g.add_node("c", name="Cee", type="letter", aliases="C")
    g.add_node("b", name="Bee")
    for s, r, t, d in edges:
        g.add_edge(s, t, relation=r, description=d)
    nx.write_graphml(g, tmp_path / "g.graphml")
    assert _snapshot(load_kg(tmp_path / "g.graphml", cache_communities=False)) == _snapshot(reference)


def test_alias_cells_split_in_columns_as_the_exact_reader_splits_them() -> None:
    """Aliases split in Arrow equal ``[a.strip() for a in cell.split(';') if a.strip()]`` on every kind of white space and empty alias."""
    import random

    import pyarrow as pa

    cells = ["a;b", " x ; ; y ;", "", ";", ";;a;;", "\u00a0a\u2003;\u3000b\u00a0", "ß ;é", "one", "\x1c;\x1fq\x1e", "a\u2028;b"]
    pick = random.Random(7)
    alphabet = [" ", ";", "a", "b", "\u00a0", "\x1c", "\t", "é", "\u2009", "\x85"]
    cells += ["".join(pick.choice(alphabet) for _ in range(pick.randint(0, 9))) for _ in range(5_000)]
    expected = [tuple(a.strip() for a in cell.split(";") if a.strip()) for cell in cells]
    assert textcolumns.alias_tuples(pa.chunked_array([pa.array(cells)])) == expected


def test_names_casefold_in_columns_as_python_casefolds_them() -> None:
    import pyarrow as pa

    names = ["Straße", "STRASSE", "ǅemal", "ΣΊΣΥΦΟΣ", "ﬁne", "Ünïcode", "plain ASCII", "İstanbul", ""]
    assert textcolumns.casefold(pa.array(names)).to_pylist() == [n.casefold() for n in names]


def test_casefold_by_one_call_over_joined_strings_equals_each_strings_casefold() -> None:
    """The non-ASCII strings are folded joined by NUL and split again: every boundary must survive (slices, NULs, both string types)."""
    import random

    import pyarrow as pa

    pick = random.Random(31)
    alphabet = ["a", "Z", " ", "ß", "ẞ", "ﬃ", "Σ", "ς", "İ", "ı", "ǅ", "Ω", "\u0345", "\u1e9e", "é", "\U0001e900", "\x00", "\u2028",
                "Ł", "µ", "ſ", "ŉ", "ǰ", "Я", "ё", "ϐ", "ϑ", "ϰ", "ϵ", "Ꭰ", "\u052f", "\u0530"]
    names = ["".join(pick.choice(alphabet) for _ in range(pick.randint(0, 8))) for _ in range(3_000)]
    names += [chr(c) for c in range(0x600) if not 0xD800 <= c < 0xE000]  # each letter where Arrow may fold
    for kind in (pa.string(), pa.large_string()):
        column = pa.array(["x"] + names, type=kind).slice(1)  # an offset into the buffers
        assert textcolumns.casefold(column).to_pylist() == [n.casefold() for n in names]
        no_nul = [n.replace("\x00", "") for n in names]
        assert textcolumns.casefold(pa.array(["y"] + no_nul, type=kind).slice(1)).to_pylist() == [n.casefold() for n in no_nul]


def test_repeated_triples_found_by_columns_as_a_dict_finds_them() -> None:
    """Each key's first row kept, and its first and last row, even where distinct keys share a 32-bit hash or its low bits."""
    import numpy as np

    from graphtrail.kg.loaders.bulk import _repeats

    rng = np.random.default_rng(5)
    base = rng.integers(0, 1 << 40, 5_000)
    mix = np.uint64(0x9E3779B97F4A7C15)
    inverse = pow(0x9E3779B97F4A7C15, -1, 1 << 64)  # keys whose mixed hashes collide: same top 32 bits after mixing
    colliding = np.array([((((int(k) * 0x9E3779B97F4A7C15) % (1 << 64)) ^ 1) * inverse) % (1 << 64) for k in base[:200]], dtype=np.uint64)
    assert (((colliding * mix) >> np.uint64(32)) == ((base[:200].astype(np.uint64) * mix) >> np.uint64(32))).all()
    colliding = colliding.astype(np.int64)  # may be negative as int64: the hash reads the same bits
    for key in (base, np.concatenate([base, colliding]),
                np.concatenate([base, colliding, base[rng.integers(0, 5_000, 700)], (base[:300] & ((1 << 20) - 1)) + (7 << 20)])):
        key = key[rng.permutation(len(key))]
        firsts: dict[int, int] = {}
        lasts: dict[int, int] = {}
        for row, k in enumerate(key.tolist()):
            firsts.setdefault(k, row)
            lasts[k] = row
        found = _repeats(key)
        if len(firsts) == len(key):
            assert found is None
            continue
        assert found is not None
        keep, first, last = found
        assert keep.tolist() == sorted(firsts.values())
        repeated = sorted(k for k in firsts if firsts[k] != lasts[k])
        assert first.tolist() == [firsts[k] for k in repeated] and last.tolist() == [lasts[k] for k in repeated]


def test_index_in_finds_a_repeated_values_first_place() -> None:
    """GraphRAG ends name the first entity with a title: the columns reader relies on ``index_in`` answering a repeat's first place."""
    import pyarrow as pa
    import pyarrow.compute as pc

    titles = pa.array(["b", "a", "b", "c", "a", "a"], type=pa.large_string())
    found = pc.index_in(pa.array(["a", "b", "c", "d"], type=pa.large_string()), value_set=titles)
    assert found.to_pylist() == [1, 0, 3, None]
