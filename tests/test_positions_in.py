"""The loaders' column lookup (kg/loaders/lookup.py) answers exactly what a dict of first places answers.

``positions_in`` reads short strings as 8-byte words from Arrow's buffers and
matches them as integers; the oracle here is the plain algorithm it replaces:
each string of the set at its first place in a dict, each value looked up in it.
"""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from graphtrail.kg.loaders import lookup
from graphtrail.kg.loaders.lookup import positions_in

# NUL, multi-byte letters and spaces: the words and lengths must tell apart what bytes alone would not ("a" and "a\0").
_ALPHABET = ["a", "b", "Q", "1", "é", " ", "\x00", "日", "\t"]


def _oracle(values: list[str], value_set: list[str]) -> np.ndarray:
    first: dict[str, int] = {}
    for i, s in enumerate(value_set):
        first.setdefault(s, i)
    return np.array([first.get(v, -1) for v in values], dtype=np.int64)


def _text(rng: random.Random, longest: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, longest)))


def _column(strings: list[str], kind: pa.DataType, rng: random.Random) -> pa.ChunkedArray:
    """Several chunks, some of them slices (an offset into their buffers), as the readers hand them over."""
    cut = sorted(rng.randint(0, len(strings)) for _ in range(2))
    pieces = [strings[: cut[0]], strings[cut[0] : cut[1]], strings[cut[1] :]]
    chunks = []
    for piece in pieces:
        pad = rng.randint(0, 3)
        chunks.append(pa.array([_text(rng, 9) for _ in range(pad)] + piece, type=kind).slice(pad))
    return pa.chunked_array(chunks, type=kind)


@pytest.mark.parametrize("seed", range(60))
def test_positions_equal_a_dict_of_first_places(seed: int) -> None:
    rng = random.Random(seed)
    longest = rng.choice([1, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 40])  # each side of every word boundary, and past PACKED_WORDS
    pool = [_text(rng, longest) for _ in range(rng.choice([5, 200, 3000]))]
    value_set = [rng.choice(pool) for _ in range(rng.choice([1, 20, 2500]))]  # repeats: the first place counts
    values = [rng.choice(pool) if rng.random() < 0.7 else _text(rng, longest + 9) for _ in range(rng.choice([0, 1, 50, 4000]))]
    kind = rng.choice([pa.string(), pa.large_string()])
    set_column = _column(value_set, rng.choice([pa.string(), pa.large_string()]), rng)
    got = positions_in(_column(values, kind, rng), set_column if rng.random() < 0.5 else set_column.combine_chunks())
    assert got.tolist() == _oracle(values, value_set).tolist()
    assert got.dtype == np.int64  # the loaders code triples as (u * relations + r) * nodes + v: int32 would overflow


def test_the_integer_path_is_the_one_answering_short_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids of up to 24 bytes never reach ``index_in``, so the tests above test the integer matching."""
    ids = [f"Q{i}" for i in range(5000)] + [f"https://x.org/{i}" for i in range(100)]
    values = pa.array([f"Q{i}" for i in range(0, 9000, 3)] + ["https://x.org/7", "Q", ""])

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("index_in called")

    monkeypatch.setattr(pc, "index_in", refuse)
    assert positions_in(values, pa.array(ids)).tolist() == _oracle(values.to_pylist(), ids).tolist()


def test_a_hash_shared_by_two_set_strings_hands_the_lookup_to_index_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two different strings with one hash cannot share a slot: the answer then comes from ``index_in``, still exact."""
    monkeypatch.setattr(lookup, "_mix", lambda words, lengths: np.zeros(len(lengths), dtype=np.uint64))
    ids = ["a long identifier 1", "a long identifier 2", "a long identifier 1"]
    values = ["a long identifier 2", "a long identifier 1", "a long identifier 3"]
    assert positions_in(pa.array(values), pa.array(ids)).tolist() == [1, 0, -1]


def test_a_value_whose_hash_matches_another_string_is_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hash found is confirmed word by word: a value the set lacks is never taken for one it has."""
    monkeypatch.setattr(lookup, "_mix", lambda words, lengths: (lengths & 1).astype(np.uint64))  # two hashes: odd and even lengths
    ids = ["identifier 0001", "identifier 00002"]
    values = [*ids, "identifier 0003", "identifier 00004", "identifier 000005"]
    assert positions_in(pa.array(values), pa.array(ids)).tolist() == [0, 1, -1, -1, -1]


@pytest.mark.parametrize("prefix", ["https://kg.example.org/entity/", "urn:ü:Łódź/" * 3, "Q" * 20])
def test_long_ids_with_a_common_start_are_matched_by_what_follows_it(prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids too long for integers whole are matched by the rest after their shared start; a value with the rest but another start is absent."""
    ids = [f"{prefix}{i:08d}" for i in range(3000)] + [f"{prefix}x"]
    other = prefix[:-1] + ("X" if prefix[-1] != "X" else "Y")
    values = [f"{prefix}{i:08d}" for i in range(0, 6000, 7)] + [f"{other}{5:08d}", prefix, prefix[:-1], f"{5:08d}", "", f"{prefix}x"]

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("index_in called: the ids were not matched by their rests")

    monkeypatch.setattr(pc, "index_in", refuse)
    got = positions_in(pa.chunked_array([pa.array(values[:100]), pa.array(values[100:])]), pa.array(ids))
    assert got.tolist() == _oracle(values, ids).tolist()
    assert got[-6] == -1 and got[-1] == 3000
