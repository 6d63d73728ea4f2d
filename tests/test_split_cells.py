"""kg/loaders/splitcells.py: where it answers, its cells are pyarrow's (delimited.fast_columns), byte for byte.

Random small files mix what pyarrow reads alike (tabs, pipes, empty cells,
padding, non-ASCII text, a missing last newline, a byte-order mark) with what
only pyarrow may decide (carriage returns, blank lines, ragged rows, comment
lines, bytes that are not UTF-8): there ``split_cells`` must return ``None``.
Then the triples loader's results with and without it are compared.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from graphtrail.kg.loaders import splitcells
from graphtrail.kg.loaders.delimited import fast_columns
from graphtrail.kg.loaders.lookup import positions_in
from graphtrail.kg.loaders.splitcells import split_cells
from graphtrail.kg.loaders.triples import load_triples

_PIECES = ["a", "Q1", "Q12", "é", "日本", " pad ", "", "x y", "https://kg.example.org/entity/0001", "\u2028", '"q"', "#"]


def _file(rng: random.Random, delimiter: str) -> bytes:
    n_columns = rng.randint(1, 5)
    lines = []
    for _ in range(rng.randint(1, 30)):
        width = n_columns if rng.random() < 0.97 else rng.randint(1, 6)  # now and then a ragged row
        lines.append(delimiter.join("".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 3))) for _ in range(width)))
    text = "\n".join(lines) + ("\n" if rng.random() < 0.7 else "")
    if rng.random() < 0.05:
        text = text.replace("\n", "\r\n", 1)
    if rng.random() < 0.05:
        text = text.replace("\n", "\n\n", 1)  # a blank line
    raw = text.encode()
    if rng.random() < 0.05:
        raw = raw[: len(raw) // 2] + b"\xff" + raw[len(raw) // 2 :]
    if rng.random() < 0.1:
        raw = b"\xef\xbb\xbf" + raw
    return raw


@pytest.mark.parametrize("seed", range(1000))
def test_cells_are_pyarrows_where_split_cells_answers(seed: int) -> None:
    rng = random.Random(seed)
    delimiter = rng.choice(["\t", "|"])
    raw = _file(rng, delimiter)
    cells = split_cells(raw, delimiter)
    if cells is None:
        return
    expected = fast_columns(raw, delimiter, strip=False)
    assert expected is not None, raw
    assert [c.take().to_pylist() for c in cells] == [c.to_pylist() for c in expected]
    assert [c.first() for c in cells] == [c[0].as_py() for c in expected]
    rows = np.array(sorted(rng.sample(range(len(cells[0])), min(3, len(cells[0])))), dtype=np.int64)
    assert cells[0].take(rows).to_pylist() == [expected[0][int(r)].as_py() for r in rows]


def test_what_pyarrow_must_read_is_declined() -> None:
    assert split_cells(b"a\tb\r\nc\td\n", "\t") is None  # a carriage return
    assert split_cells(b"a\tb\n\nc\td\n", "\t") is None  # a blank line
    assert split_cells(b"a\tb\nc\n", "\t") is None  # a ragged row
    assert split_cells(b"a\tb\nc\td\te\n", "\t") is None
    assert split_cells(b"a,b\nc,d\n", ",") is None  # quotes: pyarrow's
    assert split_cells(b"a\tb\n#c\td\n", "\t") is None  # a comment line: the exact reader's
    assert split_cells(b"a\tb\nc\t\xff\n", "\t") is None  # not UTF-8
    assert split_cells(b"abc\ndef\n", "\t") is None  # one column
    assert [c.take().to_pylist() for c in split_cells(b"a\tb\nc\td", "\t")] == [["a", "c"], ["b", "d"]]  # no last newline


@pytest.mark.parametrize("seed", range(20))
def test_cells_are_looked_up_as_their_text(seed: int) -> None:
    """``positions_in`` of cells equals ``positions_in`` of the same strings in Arrow (short ids, ids with a common start, long text)."""
    rng = random.Random(seed)
    kind = rng.choice(["short", "prefix", "long"])
    make = {"short": lambda i: f"Q{i}", "prefix": lambda i: f"https://kg.example.org/entity/{i:08d}",
            "long": lambda i: f"a long entity name number {i} " * 2}[kind]
    ids = [make(i) for i in range(200)]
    values = [make(rng.randrange(300)) if rng.random() < 0.9 else rng.choice(["", "Q", "https://kg.example.org/entity/", "x" * 40])
              for _ in range(500)]
    raw = "".join(f"{v}\tr\t{ids[0]}\n" for v in values).encode()
    cells = split_cells(raw, "\t")
    assert cells is not None
    import pyarrow as pa

    assert positions_in(cells[0], pa.array(ids)).tolist() == positions_in(pa.array(values), pa.array(ids)).tolist()
    assert positions_in([pa.array(ids), cells[0]], pa.array(ids)).tolist() == positions_in(pa.array(ids + values), pa.array(ids)).tolist()


@pytest.mark.parametrize("with_table", [True, False], ids=["entity-table", "triples-only"])
def test_triples_load_alike_with_and_without_split_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_table: bool) -> None:
    """The same graph, entity by entity and edge by edge, whichever reader split the triples.

    Triples only: every end is a new entity, numbered in head, tail, head, tail ... order of first
    appearance, and a padded end (" Q5 ") is the same entity as the bare one."""
    ids = [f"Q{i}" for i in range(300)]
    table = "id\tname\ttype\n" + "".join(f"{e}\tName {i}\tthing\n" for i, e in enumerate(ids))
    rng = random.Random(1)
    ends = ids + [f"Name {i}" for i in range(0, 300, 7)] + ["unlisted", " Q5 ", "name 3"]
    triples = "head\trelation\ttail\tdescription\n" + "".join(
        f"{rng.choice(ends)}\t{rng.choice(['r1', 'r2 ', 'r3'])}\t{rng.choice(ends)}\t{rng.choice(['', 'said', ' x '])}\n" for _ in range(3000))
    (tmp_path / "g.tsv").write_text(triples)
    if with_table:
        (tmp_path / "g.entities.tsv").write_text(table)

    def snapshot(kg: object) -> tuple:
        s = kg._store  # type: ignore[attr-defined]
        s.commit()  # (the exact reader's last edges wait in a list)
        return (s.ids, s.names, s.types, s.descriptions, s.aliases, s.src.tolist(), s.dst.tolist(), s.rel.tolist(), s.rel_labels,
                [s.desc(e) for e in range(len(s.src))])

    split = snapshot(load_triples(tmp_path / "g.tsv", fast=True))
    monkeypatch.setattr("graphtrail.kg.loaders.triples.split_cells", lambda raw, delimiter: None)
    assert snapshot(load_triples(tmp_path / "g.tsv", fast=True)) == split
    assert snapshot(load_triples(tmp_path / "g.tsv", fast=False)) == split
    assert splitcells.split_cells(triples.encode(), "\t") is not None  # the first load did split it


@pytest.mark.parametrize("prefix", ["Q", "ab", "https://kg.example.org/entity/", "ü" * 9])
def test_a_start_is_found_in_cells_up_to_the_files_last_byte(prefix: str) -> None:
    """Short and long starts, cells of every length, the last ones ending the file without a newline."""
    import pyarrow as pa

    from graphtrail.kg.loaders.lookup import _starts_with

    texts = [prefix[:k] for k in range(len(prefix) + 1)] + [prefix + "x", "x" + prefix, prefix.upper() + "1", prefix, prefix + "1"]
    for size in range(1, len(texts) + 1):
        rows = texts[-size:]
        raw = ("".join(f"{t}\tr\n" for t in rows[:-1]) + f"x\tr\n{rows[-1]}\t{prefix}").encode()
        cells = split_cells(raw, "\t")
        assert cells is not None
        for column, strings in ((cells[0], rows[:-1] + ["x", rows[-1]]), (cells[1], ["r"] * len(rows) + [prefix])):
            expected = pa.compute.starts_with(pa.array(strings), prefix).to_pylist()
            assert _starts_with(column, prefix).tolist() == expected, (strings, prefix)


@pytest.mark.parametrize("first_read", ["entity", "add_relation", "add_entity", "names"])
def test_a_triples_only_graph_grows_like_one_read_row_by_row(tmp_path: Path, first_read: str) -> None:
    """Without an entity table, the new entities' columns are built when first read (bulk._add_bare_entities):
    whatever is read or changed first, the graph then is the exact reader's, changed the same way."""
    rng = random.Random(7)
    names = [f"Ent {i}" for i in range(60)] + ["é", "x" * 40]
    (tmp_path / "g.tsv").write_text("".join(f"{rng.choice(names)}\tr{rng.randint(1, 3)}\t{rng.choice(names)}\n" for _ in range(400)))
    lazy, exact = load_triples(tmp_path / "g.tsv", fast=True), load_triples(tmp_path / "g.tsv", fast=False)
    assert "ids" in lazy._store._builders  # (the fast load left them to be built)
    names_first = []
    for kg in (lazy, exact):
        if first_read == "names":  # the names before the ids they are built from
            names_first.append(list(kg._store.names))
        elif first_read == "entity":
            assert kg.entity("Ent 3") is not None and kg.entity("Ent 3").name == "Ent 3"
        elif first_read == "add_relation":
            kg.add_relation("Ent 3", "r9", "brand new")
        elif first_read == "add_entity":
            kg.add_entity("solo", name="Solo", type="person")
        kg.add_relation("é", "r1", "late")
    s, e = lazy._store, exact._store
    s.commit(), e.commit()
    assert (s.ids, s.names, s.types, s.descriptions, s.aliases, s.index) == (e.ids, e.names, e.types, e.descriptions, e.aliases, e.index)
    assert (s.src.tolist(), s.dst.tolist(), s.rel.tolist(), s.rel_labels) == (e.src.tolist(), e.dst.tolist(), e.rel.tolist(), e.rel_labels)
    assert s.names is not s.ids  # two lists: renaming an entity must not change its id
    if names_first:
        assert names_first[0] == names_first[1] == e.ids[: len(names_first[0])]


def test_codes_not_in_order_of_first_appearance_are_renumbered() -> None:
    """appearance_codes checks the encoder's order (in_appearance_order) and renumbers when it is not first appearance:
    a dictionary column keeps its own dictionary's order, and may hold values no row uses."""
    import pyarrow as pa

    from graphtrail.kg.loaders.bulk import appearance_codes, in_appearance_order

    column = pa.DictionaryArray.from_arrays(pa.array([2, 0, 2, 1, 0], type=pa.int32()), pa.array(["c", "a", "b"]))
    codes, values = appearance_codes(column)
    assert codes.tolist() == [0, 1, 0, 2, 1] and values.to_pylist() == ["b", "c", "a"]
    assert in_appearance_order(np.array([0, 0, 1, 2, 1]), 3)
    assert not in_appearance_order(np.array([0, 2, 1]), 3)
    assert not in_appearance_order(np.array([0, 1, 0]), 3)  # code 2 never occurs
    assert in_appearance_order(np.array([], dtype=np.int32), 0) and not in_appearance_order(np.array([], dtype=np.int32), 1)
