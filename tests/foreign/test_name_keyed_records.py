"""A ``dict`` of records keyed by names: a masked entity's name is gone, so its key is too.

By the one definition (docs/ablations.md, "What an ablation does") a masked entity
keeps its edges, its name becomes the placeholder, its text is withheld, and a
lookup by its real name finds nothing. In ``{"Lise Meitner": {...}}`` the key *is*
the name: ``ablated`` must show such a record under a new key, and the other
records' references to it (by key) must follow, or ``data["Lise Meitner"]`` still
finds her. The oracle is the data rebuilt by hand with the entities really
ablated (this module's own code, never ``ablated``); placeholders are compared up
to their spelling (``"[masked entity] #0"`` here, a digest in graphtrail's view).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from graphtrail.evaluators import ablated, evaluate
from graphtrail.kg.views import GraphFilter

from .oracle import load_records
from .passages import INSTITUTES, PEOPLE, colleague_by_name_agent, questions
from .test_factory_route import OPTIONS, oracle_answer

NAMES = {eid: name for eid, (name, *_) in {**PEOPLE, **INSTITUTES}.items()}
PLACEHOLDER = re.compile(r"\[masked entity\] [^\s\"',)\]]+")


def name_keyed(hidden: frozenset[str] = frozenset(), masked: frozenset[str] = frozenset(),
               blocked: frozenset[str] = frozenset(), mentors: bool = False) -> dict[str, dict[str, Any]]:
    """The scientists keyed by name, referencing each other by key, ablated by hand (names here, not ids).

    ``mentors`` adds a one-string reference (``"mentor": <key>``) beside the lists.
    """
    renamed = {name: f"[masked entity] #{i}" for i, name in enumerate(sorted(masked))}
    key = lambda name: renamed.get(name, name)  # noqa: E731
    out: dict[str, dict[str, Any]] = {}
    for eid, (name, text, *links) in {**PEOPLE, **INSTITUTES}.items():
        if name in hidden:
            continue
        record: dict[str, Any] = {"type": "person" if eid in PEOPLE else "organization"}
        if name not in masked and name not in blocked:
            record["description"] = text
        if links:
            colleague, institute = (NAMES[x] for x in links)
            record["colleagues"] = [key(colleague)] if colleague not in hidden else []
            record["works_at"] = [key(institute)] if institute not in hidden else []
            if mentors:
                record["mentor"] = key(colleague)
        if name in masked:
            record["name"] = key(name)  # a record keyed by its name shows its name as its key
        out[key(name)] = record
    return out


def normalised(value: Any) -> Any:
    """``value`` with every placeholder spelled alike (the oracle numbers them; graphtrail digests the key)."""
    return json.loads(PLACEHOLDER.sub("[masked entity]", json.dumps(value, sort_keys=True)))


def test_a_masked_record_keyed_by_its_name_is_shown_under_a_new_key() -> None:
    data = name_keyed(mentors=True)
    before = copy.deepcopy(data)
    cut = GraphFilter(masked=frozenset({"Lise Meitner"}), text_blocked=frozenset({"Marie Curie"}))
    view = ablated(data, cut)
    assert "Lise Meitner" not in view and "Lise Meitner" not in list(view)
    with pytest.raises(KeyError):
        view["Lise Meitner"]
    assert view.get("Lise Meitner") is None
    assert "Lise" not in json.dumps(dict(view.items()))  # neither a key nor a reference spells her name
    (new,) = [k for k in view if k.startswith("[masked entity]")]
    assert new in view and view[new] == {"type": "person", "name": new, "colleagues": ["Otto Hahn"],
                                         "works_at": ["Kaiser Wilhelm Institute"], "mentor": "Otto Hahn"}
    # references to her follow her new key, in lists and in one-string fields
    assert view["Otto Hahn"]["colleagues"] == [new] and view["Otto Hahn"]["mentor"] == new
    assert "description" not in view["Marie Curie"] and "name" not in view["Marie Curie"]  # text-blocked keeps its key
    assert len(view) == len(data)
    assert data == before  # the user's dict is untouched
    oracle = name_keyed(masked=frozenset({"Lise Meitner"}), blocked=frozenset({"Marie Curie"}), mentors=True)
    assert normalised(dict(view.items())) == normalised(oracle)


@pytest.mark.parametrize(("hidden", "masked", "blocked"), [
    ({"Otto Hahn"}, {"Lise Meitner"}, set()),
    (set(), {"Otto Hahn", "Kaiser Wilhelm Institute"}, {"Pierre Curie"}),
    ({"Sorbonne"}, {"Marie Curie"}, {"Lise Meitner"}),
])
def test_the_view_reads_as_the_hand_made_oracle(hidden: set[str], masked: set[str], blocked: set[str]) -> None:
    cut = (frozenset(hidden), frozenset(masked), frozenset(blocked))
    view = ablated(name_keyed(), GraphFilter(hidden=cut[0], masked=cut[1], text_blocked=cut[2]))
    assert normalised(dict(view.items())) == normalised(name_keyed(*cut))
    assert not any(name in view for name in masked | hidden)


def test_a_record_with_its_own_id_keeps_its_key() -> None:
    data = {"p1": {"name": "Lise Meitner", "description": "physicist", "colleagues": ["Otto Hahn"]},
            "Otto Hahn": {"name": "otto  hahn", "colleagues": ["p1"]}}  # a name equal to the key, case and spaces aside
    view = ablated(data, GraphFilter(masked=frozenset({"p1", "Otto Hahn"})))
    assert view["p1"]["name"] == "[masked entity] p1"  # an id stays: the name is what goes
    assert "Otto Hahn" not in view and len(view) == 2
    (new,) = [k for k in view if k != "p1"]
    assert view["p1"]["colleagues"] == [new] and view[new]["colleagues"] == ["p1"]


def test_plain_dicts_of_names_to_text_and_to_neighbours() -> None:
    texts = {"Lise Meitner": "Austrian physicist", "Otto Hahn": "German chemist"}
    view = ablated(texts, GraphFilter(masked=frozenset({"Lise Meitner"})))
    assert "Lise Meitner" not in view and sorted(view.values()) == ["", "German chemist"]  # its text is withheld
    links = {"Lise Meitner": ["Otto Hahn"], "Otto Hahn": ["Lise Meitner", "Marie Curie"], "Marie Curie": []}
    view = ablated(links, GraphFilter(masked=frozenset({"Lise Meitner"}), hidden=frozenset({"Marie Curie"})))
    (new,) = [k for k in view if k != "Otto Hahn"]
    assert dict(view.items()) == {new: ["Otto Hahn"], "Otto Hahn": [new]}


# ---------------------------------------------------------------- an agent over the dict, through the factory route


def lookup_agent(data: dict[str, dict[str, Any]]) -> Any:
    @tool
    def lookup(name: str) -> str:
        """Look a scientist or an institute up by name: description, colleagues, institute."""
        record = data.get(name)  # the dict is keyed by name
        if record is None:
            return json.dumps({"error": f"nothing named {name}"})
        return json.dumps({"name": name, "description": record.get("description"),
                           "colleagues": record.get("colleagues", []), "works_at": record.get("works_at", [])})

    return colleague_by_name_agent(lookup, "scripted-name-keyed-dict", "name-keyed-dict")


def test_every_condition_reads_as_the_hand_made_oracle(tmp_path: Path) -> None:
    report = evaluate(lookup_agent, questions(), graph=name_keyed(), out_dir=tmp_path, **OPTIONS)
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
        assert set().union(*cut) <= set(NAMES.values()), cut  # the dict's ids are its keys: names
        truth = oracle_answer(lookup_agent, name_keyed(*cut), record.question)
        if normalised(truth) != normalised(record.answer):
            wrong.append((record.key.condition, cut, record.answer, truth))
        if record.key.condition == "uncited_mask":
            masked_runs.append((record, truth))
    assert wrong == [], f"runs that differ from the hand-made oracle: {wrong}"
    # the subject of q1 is visited and never cited: masking it loses the lookup by name, as in the oracle
    assert any(r.masked and truth != baseline[r.key.question_id] for r, truth in masked_runs), masked_runs
    row = report.condition("uncited_mask")
    assert row.valid and row.method == "exact", row.invalid_reason


# ---------------------------------------------------------------- pandas tables whose id column holds the names


def name_keyed_tables(*cut: frozenset[str]) -> Any:
    """The same data as entity and relation tables (ids are names), from the hand-ablated records."""
    import pandas as pd

    from graphtrail.evaluators import EntityTables

    records = name_keyed(*cut)
    entities = pd.DataFrame([{"id": k, "name": r.get("name", k), "description": r.get("description", ""),
                              "type": r["type"]} for k, r in records.items()])
    relations = pd.DataFrame([{"source": k, "relation": rel, "target": o} for k, r in records.items()
                              for rel in ("colleagues", "works_at") for o in r.get(rel, [])],
                             columns=["source", "relation", "target"])
    return EntityTables(entities, relations)


def test_pandas_tables_keyed_by_names_rename_a_masked_id_with_its_relations() -> None:
    tables = name_keyed_tables()
    before = (tables.entities.copy(), tables.relations.copy())
    cut = (frozenset({"Sorbonne"}), frozenset({"Lise Meitner"}), frozenset({"Marie Curie"}))
    out = ablated(tables, GraphFilter(hidden=cut[0], masked=cut[1], text_blocked=cut[2]))
    shown = json.dumps([out.entities.to_dict("records"), out.relations.to_dict("records")])
    assert "Lise" not in shown and "Meitner" not in shown  # neither an id, a name nor a relation end spells her
    oracle = name_keyed_tables(*cut)
    assert normalised(out.entities.to_dict("records")) == normalised(oracle.entities.to_dict("records"))
    assert normalised(sorted(map(list, out.relations.itertuples(index=False)))) == \
        normalised(sorted(map(list, oracle.relations.itertuples(index=False))))
    assert before[0].equals(tables.entities) and before[1].equals(tables.relations)  # the user's frames are untouched
