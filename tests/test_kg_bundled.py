"""The bundled "countries" graph and its questions hold together."""

from __future__ import annotations

import collections
import re

import pytest

from graphtrail.agents import load_kg, load_questions
from graphtrail.agents.answers import is_correct


@pytest.fixture(scope="module")
def kg():
    return load_kg("countries")


@pytest.fixture(scope="module")
def questions():
    return load_questions("countries")


def follow(kg, start: set[str], relation: str) -> set[str]:
    return {r.target for s in start for r in kg.out_relations(s) if r.relation == relation}


def test_sizes_and_types(kg, questions) -> None:
    info = kg.describe()
    assert info["entities"] > 700 and info["relations"] > 2500
    assert set(info["entity_types"]) == {"country", "city", "region", "subregion", "language", "currency"}
    assert info["entity_types"]["country"] > 200
    assert len(questions) >= 200
    kinds = collections.Counter(q.kind for q in questions)
    assert set(kinds) == {"1-hop", "2-hop", "3-hop", "comparison"} and min(kinds.values()) >= 50


def test_ids_are_opaque(kg) -> None:
    for entity in kg.entities():
        assert re.fullmatch(r"E\d{4}", entity.id)
    names = [e.name for e in sorted(kg.entities(), key=lambda e: e.id)]
    assert names != sorted(names), "id order must not follow name order"


def test_every_entity_has_a_text_unit_mentioning_it(kg) -> None:
    for entity in kg.entities():
        units = kg.text_units_for(entity.id)
        assert units, entity
        assert any(entity.name in u.text for u in units), entity


def test_text_units_link_every_entity_they_name(kg) -> None:
    kenya = next(e for e in kg.entities() if e.name == "Kenya")
    (own,) = [u for u in kg.text_units_for(kenya.id) if u.text.startswith("Kenya is a country")]
    linked = {kg.entity(e).name for e in own.entity_ids}
    assert {"Kenya", "Nairobi", "Africa", "Swahili", "Kenyan Shilling", "Uganda", "Tanzania"} <= linked
    for name in linked:
        assert name in own.text


def test_inverse_edges_mirror_forward_edges(kg) -> None:
    edges = {(r.source, r.relation, r.target) for r in kg.relations()}
    for forward, inverse in (("capital", "capital of"), ("currency", "currency of"), ("language", "language of"), ("borders", "borders")):
        for s, rel, t in edges:
            if rel == forward:
                assert (t, inverse, s) in edges


def test_question_ids_exist_and_answers_are_reachable(kg, questions) -> None:
    """Following the question's relation path from its topic reaches exactly the gold ids."""
    for q in questions:
        for eid in q.topic_ids + q.answer_ids:
            assert eid in kg, (q.id, eid)
        path = q.metadata["path"]
        assert q.hops == len(path)
        if q.kind == "comparison":
            a, b = q.topic_ids
            share = b in follow(kg, {a}, "borders")
            assert q.answers == (["yes"] if share else ["no"]), q
            continue
        frontier = set(q.topic_ids)
        for relation in path:
            frontier = follow(kg, frontier, relation)
        assert frontier == set(q.answer_ids), q
        # every intermediate "the country ..." step is unique, so the wording is well defined
        frontier = set(q.topic_ids)
        for relation in path[:-1]:
            frontier = follow(kg, frontier, relation)
            assert len(frontier) == 1, q


def test_questions_name_their_topics_and_word_their_relations(kg, questions) -> None:
    for q in questions:
        for tid in q.topic_ids:
            assert kg.entity(tid).name in q.question, q
        for relation in q.metadata["path"]:
            stem = relation.split()[0].rstrip("s")  # "borders" is worded "border(s)"
            assert stem in q.question.lower(), (q.question, relation)


def test_topic_names_are_unambiguous(kg, questions) -> None:
    labels = collections.Counter()
    for e in kg.entities():
        for label in {e.name.casefold(), *(a.casefold() for a in e.aliases)}:
            labels[label] += 1
    for q in questions:
        for tid in q.topic_ids:
            assert labels[kg.entity(tid).name.casefold()] == 1, q


def test_gold_answers_check_as_correct(kg, questions) -> None:
    for q in questions:
        assert is_correct(q.answers[0], q, kg)
        for aid in q.answer_ids:
            assert is_correct(kg.entity(aid).name, q)
            assert is_correct(aid, q)


def test_demo_subset_is_small_and_covers_every_kind(questions) -> None:
    demo = load_questions("countries-demo")
    assert 8 <= len(demo) <= 16
    assert {q.kind for q in demo} == {"1-hop", "2-hop", "3-hop", "comparison"}
    by_id = {q.id: q for q in questions}
    assert all(by_id[q.id] == q for q in demo), "the demo questions are a subset of the full set"
    assert {q.answers[0] for q in demo if q.kind == "comparison"} == {"yes", "no"}


def test_bundled_files_match_the_build_script() -> None:
    """The shipped files are exactly what scripts/build_bundled_kg.py builds from its sources."""
    pytest.importorskip("countryinfo")
    pytest.importorskip("babel")
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "build_bundled_kg.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
