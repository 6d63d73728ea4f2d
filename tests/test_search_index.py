"""The indexed entity search ranks exactly as the full scan did on the bundled graph.

tests/data/bundled_search_rankings.json.gz was written with the full-scan search
before the index existed (``python -m tests.search_cases --write``): every name,
alias, typos of them, every question, with a type filter and under hide/mask/
text-block filters.
"""

from __future__ import annotations

import gzip
import json

import pytest

from graphtrail.agents import GraphFilter, KnowledgeGraph, load_kg
from graphtrail.kg.search import scan_entities
from graphtrail.agents.tools import search_entity_records

from .search_cases import RANKINGS, filters


@pytest.fixture(scope="module")
def pinned() -> list:
    return json.loads(gzip.decompress(RANKINGS.read_bytes()))


def test_indexed_search_reproduces_the_pinned_rankings(pinned: list) -> None:
    kg = load_kg("countries")
    views = {name: kg.filtered(f) for name, f in filters().items()}
    differ = []
    for query, type_, fname, expected in pinned:
        got = [[r.id, r.name, score, label] for r, score, label in search_entity_records(views[fname], query, type=type_, limit=8)]
        if got != expected:
            differ.append((query, type_, fname, expected, got))
    assert len(pinned) > 7000
    assert not differ, f"{len(differ)} queries rank differently, e.g. {differ[:3]}"


def test_index_scores_only_candidates_not_every_label() -> None:
    kg = KnowledgeGraph()
    for i in range(3000):
        kg.add_entity(f"E{i}", f"Place number {i} of region {i % 17}", "place")
    kg.add_entity("K", "Kenya", "country", aliases=["KE", "Republic of Kenya"])
    index = kg.entity_index()
    scored: list[int] = []
    original = index.search.__func__  # type: ignore[attr-defined]

    import graphtrail.kg.search as search_mod

    real = search_mod.label_scores

    def counting(query: str, labels: list[str]) -> list[float]:
        scored.append(len(labels))
        return real(query, labels)

    search_mod.label_scores = counting
    search_mod._memo.clear()  # scores remembered from an earlier search would not be counted
    try:
        hits = original(index, "Kenia", record=kg.entity, limit=5)
    finally:
        search_mod.label_scores = real
    assert [r.id for r, _, _ in hits] == ["K"]
    assert scored and scored[0] < 500 < index.n_labels


def test_index_follows_changes_and_filters() -> None:
    kg = KnowledgeGraph()
    kg.add_entity("A", "Nairobi", "city")
    assert [r.id for r, _, _ in kg.search_entities("Nairobi")] == ["A"]
    kg.add_entity("B", "Nairobi County", "county")  # the index built for the first query must not be reused
    for query in ("Nairobi", "Nairobi County"):
        assert kg.search_entities(query) == scan_entities(kg.entities(), query)
    assert [r.id for r, _, _ in kg.search_entities("Nairobi County")][0] == "B"
    assert [r.id for r, _, _ in kg.search_entities("Nairobi", type="county")] == ["B"]
    hidden = kg.filtered(GraphFilter(hidden=frozenset({"A"})))
    assert [r.id for r, _, _ in hidden.search_entities("Nairobi")] == ["B"]
    masked = kg.filtered(GraphFilter(masked=frozenset({"A"})))
    assert "A" not in [r.id for r, _, _ in masked.search_entities("Nairobi")]
    assert [r.name for r, _, _ in masked.search_entities("masked entity")] == ["[masked entity] A"]


@pytest.mark.parametrize("query", ["Nairobi", "Kenia", "KE", "republic of kenya", "what is the capital of Kenya", "x"])
def test_index_agrees_with_the_scan_on_another_graph(query: str) -> None:
    kg = KnowledgeGraph()
    for eid, name, aliases in [("1", "Kenya", ["KE", "Republic of Kenya"]), ("2", "Nairobi", []), ("3", "Kenyan shilling", ["KES"]),
                               ("4", "Republic of the Congo", ["CG"]), ("5", "x", [])]:
        kg.add_entity(eid, name, "thing", aliases=aliases)
    assert kg.search_entities(query) == scan_entities(kg.entities(), query)


def test_memoised_label_scores_equal_fresh_ones_for_any_subset_and_order() -> None:
    import graphtrail.kg.search as search_mod

    search_mod._memo.clear()
    labels = ["kenya", "republic of kenya", "kenyan shilling", "tanzania", "om", "usa", "nairobi", "kenia"]
    for query in ("kenia", "kenya shilling", "om"):
        for subset in (labels[:3], labels[2:], labels[::-1], labels + labels[:2], [], labels[4:6]):
            assert search_mod._label_scores_memo(query, subset) == search_mod.label_scores(query, subset)
    assert set(search_mod._memo) == {"kenia", "kenya shilling", "om"}
