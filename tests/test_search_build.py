"""The search index's columnar build equals the straightforward one, on random labels and graphs.

The postings (character bigrams -> labels, exact label -> places) are built
with numpy over a dense alphabet; the oracles here are the plain Python
definitions of what those structures hold (the whole index against a
label-by-label reference: tests/test_search_oracle.py).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from graphtrail.kg import postings
from graphtrail.kg.postings import ExactPostings, gram_postings

ALPHABETS = {
    "ascii": "abcdefghij klmno 0123456789",
    "accented": "aeiou éèüñçø ßæ",
    "cjk": "".join(chr(0x4E00 + k) for k in range(300)) + " ",
    "wide": "".join(chr(0x3400 + k) for k in range(5000)) + " ab",  # more code points than the dense table takes
    "surrogates": "ab \ud800\udfff",
}


def _oracle_grams(labels: list[str]) -> tuple[np.ndarray, ...]:
    grams: dict[int, set[int]] = {}
    for j, label in enumerate(labels):
        text = " " + label + " "
        for a, b in zip(text, text[1:]):
            grams.setdefault((ord(a) << 21) | ord(b), set()).add(j)
    keys = sorted(grams)
    post = [j for k in keys for j in sorted(grams[k])]
    ptr = np.cumsum([0] + [len(grams[k]) for k in keys])
    count = np.bincount(np.asarray(post, dtype=np.int64), minlength=len(labels)).astype(np.float64)
    return count, np.asarray(keys, dtype=np.int64), ptr, np.asarray(post, dtype=np.int64)


def _random_labels(rng: random.Random, alphabet: str, n: int) -> list[str]:
    labels = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(n)]
    for _ in range(n // 4):  # repeats, as shared names and aliases give
        labels[rng.randrange(n)] = labels[rng.randrange(n)]
    return labels


@pytest.mark.parametrize("chunk", [7, postings._CHUNK])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("alphabet", sorted(ALPHABETS))
def test_gram_and_exact_postings_equal_their_definitions(alphabet: str, seed: int, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postings, "_CHUNK", chunk)  # 7: many chunks, so chunk edges are crossed
    rng = random.Random(f"{alphabet}-{seed}")
    labels = _random_labels(rng, ALPHABETS[alphabet], rng.choice([1, 7, 300, 2000]))
    got, want = gram_postings(labels), _oracle_grams(labels)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    exact = ExactPostings(labels)
    places: dict[str, list[int]] = {}
    for j, label in enumerate(labels):
        places.setdefault(label, []).append(j)
    for label in {*labels, "absent", ""}:
        assert list(exact.get(label, ())) == places.get(label, [])
    # Given in another order, each placed at its label number (names first, then aliases, as the index does).
    perm = np.asarray(rng.sample(range(len(labels)), len(labels)), dtype=np.int64)
    placed = ExactPostings([labels[j] for j in perm.tolist()], perm)
    assert [placed.texts[t] for t in placed.label_text.tolist()] == labels
    for label in {*labels, "absent", ""}:
        assert list(placed.get(label, ())) == places.get(label, [])
    some = np.asarray(rng.sample(range(len(placed.texts)), min(5, len(placed.texts))), dtype=np.int64)
    assert placed.labels_of(some).tolist() == [j for t in some.tolist() for j in places[placed.texts[t]]]


@pytest.mark.parametrize("hashing", ["python", "colliding", "equal within a group"])
@pytest.mark.parametrize("alphabet", ["ascii", "surrogates"])
def test_exact_postings_whatever_the_hashes(hashing: str, alphabet: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Labels grouped by hash: distinct labels sharing a hash (a collision) go through a dict; the result is the same."""
    if hashing == "colliding":
        monkeypatch.setattr(postings, "_hash", lambda label: len(label) % 3)
    elif hashing == "equal within a group":  # only equal labels share a hash, but few hashes differ
        monkeypatch.setattr(postings, "_hash", lambda label: hash(label) % 5 if len(set(label)) < 2 else hash(label))
    rng = random.Random(f"{hashing}-{alphabet}")
    for n in (0, 1, 50, 400):
        labels = _random_labels(rng, ALPHABETS[alphabet], n)
        exact = ExactPostings(labels)
        places: dict[str, list[int]] = {}
        for j, label in enumerate(labels):
            places.setdefault(label, []).append(j)
        assert sorted(exact.texts) == sorted(places) and len(exact.texts) == len(set(exact.texts))
        assert [exact.texts[t] for t in exact.label_text.tolist()] == labels
        for label in {*labels, "absent", ""}:
            assert list(exact.get(label, ())) == places.get(label, [])


def test_every_route_of_the_gram_build_is_exercised(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunked (Latin text), dense alphabet (hundreds of code points), hashing (thousands), sorting (too many bigrams)."""
    rng = random.Random(5)
    monkeypatch.setattr(postings, "_CHUNK", 64)
    routes: list[tuple[str, bool]] = []
    for name in ("_chunked_postings", "_alphabet_postings", "_radix_postings"):
        real = getattr(postings, name)
        monkeypatch.setattr(postings, name, lambda *a, real=real, name=name: routes.append((name, (r := real(*a)) is not None)) or r)
    cases = {
        "latin": (_random_labels(rng, ALPHABETS["accented"] + ALPHABETS["ascii"], 500), [("_chunked_postings", True)]),
        "hundreds of code points": (_random_labels(rng, ALPHABETS["cjk"], 500), [("_chunked_postings", False), ("_alphabet_postings", True)]),
        "many code points": (["".join(chr(0x3400 + rng.randrange(6000)) for _ in range(20)) for _ in range(1000)],
                             [("_chunked_postings", False), ("_alphabet_postings", False), ("_radix_postings", True)]),
        "many bigrams": (["".join(chr(0x4E00 + rng.randrange(400)) for _ in range(40)) for _ in range(3000)],
                         [("_chunked_postings", False), ("_alphabet_postings", False), ("_radix_postings", False)]),
    }
    for case, (labels, expected) in cases.items():
        routes.clear()
        for g, w in zip(gram_postings(labels), _oracle_grams(labels)):
            assert g.dtype == w.dtype and np.array_equal(g, w), case
        assert routes == expected, case
