"""The search index against a label-by-label reference, on random graphs with tricky names.

The index builds its postings over the distinct processed labels and in
columns; :class:`ReferenceIndex` picks candidates by the plain definitions
(each label's own bigram set and words, an equality test per label). The
candidate sets must be equal, and so must every search result (ids, order,
scores, labels), with and without a type, a hidden set and masked placeholders.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from rapidfuzz import utils

from graphtrail.kg import search
from graphtrail.kg.graph import KnowledgeGraph

WORDS = ["kenya", "Congo", "republic", "of", "the", "São", "Tomé", "Zürich", "STRASSE", "straße", "Łódź", "İstanbul",
         "ΟΔΟΣ", "οδός", "東京", "O'Brien", "Smith & Sons", "<tagged>", '"Quoted"', "co-op", "river", "east", "ǅemal", "ﬁle"]
CODES = ["USA", "OM", "en", "is", "Lao", "ß", "東", "A.B", "e"]


class ReferenceIndex(search.EntityIndex):
    """:class:`~graphtrail.kg.search.EntityIndex` with its candidates picked label by label, by their definitions."""

    def __init__(self, ids: list, names: list, types: list, aliases: list) -> None:
        super().__init__(ids, names, types, aliases)
        self.ref_labels = [utils.default_process(label) for name, more in zip(names, aliases) for label in (name, *more)]
        self.ref_grams = [set(zip(" " + label, label + " ")) for label in self.ref_labels]
        self.ref_words = [set(label.split()) for label in self.ref_labels]

    def _gram_candidates(self, processed: str, allowed: np.ndarray) -> np.ndarray:
        query = set(zip(" " + processed, processed + " "))
        counts = np.array([len(grams & query) if allowed[j] and len(self.ref_labels[j]) > search.CODE_MAX_LEN else 0
                           for j, grams in enumerate(self.ref_grams)], dtype=np.int64)
        hit = np.flatnonzero(counts).tolist()
        dice = {j: counts[j] / (len(self.ref_grams[j]) + len(query)) for j in hit}
        return np.array(sorted(hit, key=lambda j: (-dice[j], j))[: search.TRIGRAM_CANDIDATES], dtype=np.int64)

    def _word_candidates(self, query_words: list[str]) -> set[int]:
        wanted = set(query_words)
        found = {j for j, words in enumerate(self.ref_words) if words and words <= wanted}  # made only of query words
        if query_words:
            def pairs(q: str) -> int:  # (label word, label) pairs whose word q starts
                return sum(w.startswith(q) for words in self.ref_words for w in words)

            best = min(wanted, key=pairs)
            found |= {j for j, words in enumerate(self.ref_words) if any(w.startswith(best) for w in words)}
        return found

    def _exact_candidates(self, processed: str) -> list[int]:
        return [j for j, label in enumerate(self.ref_labels) if label == processed]


def _name(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
    name = rng.choice([" ", "  ", " - ", ", "]).join(w.capitalize() if rng.random() < 0.5 else w for w in words)
    return rng.choice(["", "  ", "The "]) + name + rng.choice(["", " ", " (2)", "!"])


def _graph(rng: random.Random, n: int) -> KnowledgeGraph:
    kg = KnowledgeGraph()
    names: list[str] = []
    for i in range(n):
        name = rng.choice(names) if names and rng.random() < 0.15 else rng.choice(CODES) if rng.random() < 0.05 else _name(rng)
        names.append(name)
        aliases = [rng.choice([rng.choice(CODES), name.upper(), name.casefold(), f"{name} {k}", rng.choice(WORDS), _name(rng),
                               rng.choice(names)]) for k in range(rng.choice([0, 0, 1, 2, 5]))]
        kg.add_entity(f"e{i:04d}", name, rng.choice(["place", "Person", "thing", ""]), "", aliases)
    return kg


def _typo(rng: random.Random, text: str) -> str:
    if len(text) < 3:
        return text
    k = rng.randrange(len(text) - 1)
    return rng.choice([text[:k] + text[k + 1 :], text[:k] + text[k + 1] + text[k] + text[k + 2 :], text[:k] + "x" + text[k:]])


def _queries(rng: random.Random, kg: KnowledgeGraph) -> list[str]:
    s = kg._store
    labels = [label for name, aliases in zip(s.names, s.aliases) for label in (name, *aliases)]
    picked = rng.sample(labels, 25)
    return [*picked, *(_typo(rng, q) for q in picked[:15]), *(q.upper() for q in picked[:5]),
            *(f"is {rng.choice(WORDS)} in the {rng.choice(CODES)}?" for _ in range(5)),
            "the", "e", "straße", "STRASSE", "οδος", "kenya republic", "Congo river east", "!!", "東京"]


@pytest.mark.parametrize("seed", range(3))
def test_index_candidates_and_results_equal_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    kg = _graph(rng, 700)
    s = kg._store
    fast = search.EntityIndex(s.ids, s.names, s.types, s.aliases)
    slow = ReferenceIndex(s.ids, s.names, s.types, s.aliases)
    assert len(fast.texts) < fast.n_labels  # repeated labels: the distinct texts are what is indexed
    assert fast.tri_negated.any()  # a bigram in more than half the texts: the texts without it are stored
    visible = np.array([rng.random() < 0.8 for _ in s.ids])
    extra = [(i, f"[masked] {s.ids[i]}") for i in rng.sample(range(len(s.ids)), 5)]
    reached_many = False
    for query in _queries(rng, kg):
        processed = utils.default_process(query.strip())
        if not processed:
            continue
        for allowed in (np.ones(fast.n_labels, dtype=bool), visible[fast.label_entity]):
            got = fast._gram_candidates(processed, allowed)
            reached_many |= len(got) == search.TRIGRAM_CANDIDATES
            assert set(got.tolist()) == set(slow._gram_candidates(processed, allowed).tolist()), query
        assert fast._word_candidates(processed.split()) == slow._word_candidates(processed.split()), query
        assert fast._exact_candidates(processed) == slow._exact_candidates(processed), query
        for options in ({}, {"type": "place"}, {"visible": visible, "extra": extra}):
            want = slow.search(query, record=kg.entity, limit=8, **options)
            assert fast.search(query, record=kg.entity, limit=8, **options) == want, (query, options)
    assert reached_many  # the Dice cut (more bigram hits than candidates) was taken


def test_default_process_maps_each_code_point_to_one() -> None:
    """What the index relies on to find short raw labels (codes) among the short processed ones: processing never lengthens."""
    for c in range(0x110000):
        assert len(utils.default_process("a" + chr(c) + "a")) == 3
