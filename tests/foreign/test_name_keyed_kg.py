"""A KnowledgeGraph whose ids spell the names: a masked entity cannot be found by its real name.

By the one definition (docs/ablations.md, "What an ablation does") a masked entity
keeps its id and its edges, its name becomes the placeholder, and a lookup by its
real name finds nothing. ``"[masked entity] <id>"`` spells the name when the id is
the name (``"Lise Meitner"``) or holds it (``"dbr:Lise_Meitner"``), and a search
for the name would still find the placeholder. The oracle here is a KnowledgeGraph
this test builds itself with the masked entities renamed to a placeholder that does
not spell them, never through ``ablated``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from graphtrail.evaluators import ablated, evaluate
from graphtrail.kg import KnowledgeGraph
from graphtrail.kg.views import GraphFilter, id_spells_name

from tests.graph_backends import BACKEND_PARAMS, on_backend

from .oracle import load_records
from .passages import INSTITUTES, PEOPLE, colleague_by_name_agent, questions
from .test_factory_route import OPTIONS, oracle_answer

STYLES = {"plain": lambda name: name, "dbpedia": lambda name: "dbr:" + name.replace(" ", "_")}


def name_keyed_kg(style: str, hidden: frozenset[str] = frozenset(), masked: frozenset[str] = frozenset(),
                  blocked: frozenset[str] = frozenset()) -> KnowledgeGraph:
    """The scientists with ids that spell their names, ablated by hand when asked (the cut is in those ids)."""
    to_id = STYLES[style]
    ids = {eid: to_id(name) for eid, (name, *_) in {**PEOPLE, **INSTITUTES}.items()}
    renamed = {i: f"[masked entity] #{n}" for n, i in enumerate(sorted(masked))}
    kg = KnowledgeGraph(name="scientists")
    for eid, (name, text, *_) in {**PEOPLE, **INSTITUTES}.items():
        i = ids[eid]
        if i in hidden:
            continue
        kind = "person" if eid in PEOPLE else "organization"
        kg.add_entity(i, renamed.get(i, name), kind, "" if i in masked or i in blocked else text)
    for eid, (_name, _text, colleague, institute) in PEOPLE.items():
        for relation, other in (("colleagues", colleague), ("works_at", institute)):
            if ids[eid] not in hidden and ids[other] not in hidden:
                kg.add_relation(ids[eid], relation, ids[other])
    return kg


def search_agent(kg: KnowledgeGraph) -> Any:
    @tool
    def lookup(name: str) -> str:
        """Find a scientist or an institute by name: description, colleagues, institute."""
        hits = kg.search_entities(name, limit=1)
        if not hits:
            return json.dumps({"error": f"nothing named {name}"})
        record = hits[0][0]
        out: dict[str, Any] = {"name": record.name, "description": record.description}
        for rel in kg.out_relations(record.id):
            other = kg.entity(rel.target)
            if other is not None:
                out.setdefault(rel.relation, []).append(other.name)
        return json.dumps(out)

    return colleague_by_name_agent(lookup, "scripted-kg-name-ids", "kg-name-ids")


def _placeholders_aside(text: str | None) -> str | None:
    return re.sub(r"\[masked entity\] \S+", "[masked entity]", text) if text else text


@pytest.mark.parametrize(("entity_id", "name", "spells"), [
    ("Lise Meitner", "Lise Meitner", True), ("lise  MEITNER", "Lise Meitner", True),
    ("Lise_Meitner", "Lise Meitner", True), ("dbr:Lise_Meitner", "Lise Meitner", True),
    ("http://dbpedia.org/resource/Lise-Meitner", "Lise Meitner", True), ("Sorbonne", "Sorbonne", True),
    ("p1", "Lise Meitner", False), ("Q42", "Douglas Adams", False), ("Lisette_Meitner", "Lise Meitner", False),
    ("Meitner", "Lise Meitner", False), ("x", "", False), ("x", None, False),
])
def test_an_id_spells_a_name_when_it_holds_its_words(entity_id: str, name: Any, spells: bool) -> None:
    assert id_spells_name(entity_id, name) is spells


@pytest.mark.parametrize("style", list(STYLES))
def test_a_masked_entity_is_not_found_by_its_real_name(style: str) -> None:
    kg = name_keyed_kg(style)
    meitner = STYLES[style]("Lise Meitner")
    assert [r.id for r, *_ in kg.search_entities("Lise Meitner")][:1] == [meitner]
    view = ablated(kg, GraphFilter(masked=frozenset({meitner})))
    assert [r.id for r, *_ in view.search_entities("Lise Meitner")] == []
    assert [r.id for r, *_ in view.search_entities("Meitner")] == []
    shown = view.entity(meitner)  # she keeps her id and her edges; the name and text go
    assert shown is not None and shown.description == "" and "Meitner" not in shown.name
    assert shown.name.startswith("[masked entity] ")
    assert [r.target for r in view.out_relations(meitner)] == [r.target for r in kg.out_relations(meitner)]
    # the placeholder finds her, as the oracle's placeholder finds its entity
    assert [r.id for r, *_ in view.search_entities(shown.name)][:1] == [meitner]
    # an id that does not spell the name keeps the readable placeholder
    other = ablated(name_keyed_kg(style), GraphFilter(masked=frozenset({"p-none"})))
    assert other.search_entities("Lise Meitner")


@pytest.mark.parametrize("style", list(STYLES))
def test_every_condition_equals_the_hand_built_oracle(style: str, tmp_path: Path) -> None:
    data = name_keyed_kg(style)
    report = evaluate(search_agent, questions(), graph=data, out_dir=tmp_path, **OPTIONS)
    records = load_records(tmp_path)
    baseline = {r.key.question_id: r.answer for r in records if r.key.condition == "baseline"}
    assert baseline == {"q1": "Otto Hahn (German chemist who discovered fission) at Kaiser Wilhelm Institute",
                        "q2": "Pierre Curie (French physicist who studied magnetism) at Sorbonne"}
    wrong, masked_runs = [], []
    for record in records:
        if record.key.condition == "baseline":
            continue
        assert record.route == "factory" and record.method == "exact", record
        cut = (frozenset(record.hidden), frozenset(record.masked), frozenset(record.text_blocked))
        truth = oracle_answer(search_agent, name_keyed_kg(style, *cut), record.question)
        if _placeholders_aside(truth) != _placeholders_aside(record.answer):
            wrong.append((record.key.condition, cut, record.answer, truth))
        if record.masked:
            masked_runs.append((record, truth))
    assert wrong == [], f"runs that differ from the hand-built oracle: {wrong}"
    # a masked subject is not found by its name, in the oracle and in the run
    assert any(truth != baseline[r.key.question_id] for r, truth in masked_runs), masked_runs
    row = report.condition("uncited_mask")
    assert row.valid and row.method == "exact", row.invalid_reason


@pytest.mark.parametrize("backend", BACKEND_PARAMS)
def test_a_database_graph_shows_the_same_placeholder_as_memory(backend: str, request: pytest.FixtureRequest,
                                                                tmp_path: Path) -> None:
    memory = name_keyed_kg("dbpedia")
    served = on_backend(memory, backend, request, tmp_path)
    cut = GraphFilter(masked=frozenset({"dbr:Lise_Meitner", "dbr:Otto_Hahn"}))
    view, expected = served.filtered(cut), memory.filtered(cut)
    assert [r.id for r, *_ in view.search_entities("Lise Meitner")] == []
    for eid in ("dbr:Lise_Meitner", "dbr:Otto_Hahn", "dbr:Marie_Curie"):
        assert view.entity(eid) == expected.entity(eid)
    placeholder = expected.entity("dbr:Otto_Hahn").name
    assert "Hahn" not in placeholder
    assert [r.id for r, *_ in view.search_entities(placeholder)][:1] == ["dbr:Otto_Hahn"]
    assert sorted(r.name for r in view.entities()) == sorted(r.name for r in expected.entities())
