"""The search index's columnar build equals the straightforward one, on random labels and graphs.

The postings (character bigrams -> labels, exact label -> places) are built
with numpy over a dense alphabet; the oracles here are the plain Python
definitions of what those structures hold, and a search over an index built
with the oracle postings must rank exactly as one over the fast build.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from graphtrail.kg import postings, search
from graphtrail.kg.graph import KnowledgeGraph
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


def _random_graph(rng: random.Random, n: int) -> KnowledgeGraph:
    words = ["kenya", "congo", "republic", "of", "the", "saudi", "arabia", "peso", "lao", "river", "east", "north"]
    kg = KnowledgeGraph()
    for i in range(n):
        name = " ".join(rng.choice(words).capitalize() for _ in range(rng.randint(1, 4)))
        aliases = [rng.choice(["USA", "OM", "en", "is", name.upper(), name + " " + str(k), rng.choice(words)]) for k in range(rng.randint(0, 4))]
        kg.add_entity(f"e{i}", name, rng.choice(["place", "person", "Thing"]), "", aliases)
    return kg


@pytest.mark.parametrize("seed", range(3))
def test_search_over_the_fast_build_equals_search_over_the_oracle_build(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    kg = _random_graph(rng, 400)
    s = kg._store
    fast = search.EntityIndex(s.ids, s.names, s.types, s.aliases)

    class OracleExact:
        def __init__(self, labels: list[str]) -> None:
            self.places: dict[str, list[int]] = {}
            for j, label in enumerate(labels):
                self.places.setdefault(label, []).append(j)

        def get(self, label: str, default: object = ()) -> object:
            return self.places.get(label, default)

    monkeypatch.setattr(search, "gram_postings", _oracle_grams)
    monkeypatch.setattr(search, "ExactPostings", OracleExact)
    slow = search.EntityIndex(s.ids, s.names, s.types, s.aliases)
    monkeypatch.undo()
    queries = [*rng.sample(s.names, 20), "USA", "the Congo", "kenia", "Lao river", "is it en", "saudi"]
    for query in queries:
        for type_ in (None, "place"):
            got = fast.search(query, type=type_, record=kg.entity, limit=8)
            want = slow.search(query, type=type_, record=kg.entity, limit=8)
            assert [(r.id, score, label) for r, score, label in got] == [(r.id, score, label) for r, score, label in want]
    assert any(fast.search(q, record=kg.entity) for q in queries)
    assert postings.gram_postings is gram_postings  # the patch is gone
