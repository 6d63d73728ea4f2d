"""The factory route's agent styles, evaluated through the filter route: no valid condition differs from the oracle.

Issue 28 ("Done when"): every agent style in tests/foreign/ goes through both
routes. test_factory_route.py runs these five (a retriever over passages, facts
in a custom state channel, the functional API, a retrieval subgraph, a JSON-LD
tool) through ``evaluate(make_agent, questions, graph=data)``, and
test_name_keyed*.py two lookups by name (a networkx graph and a dict keyed by
names). Here the same
agents, built once on the full data, go through ``evaluate(agent, questions,
kg)``: the output filter, with the two checks. Every run of every valid
condition must equal the agent rebuilt on data this test deleted itself (the
oracle); a condition whose numbers come from a plain-text cut must say
``estimated``, and one from structured outputs filtered by id must not.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from graphtrail.evaluators import ablated, evaluate
from graphtrail.evaluators.replay.exact import catalogue

from . import passages as world
from . import test_name_keyed, test_name_keyed_records
from .oracle import load_records
from .test_factory_route import OPTIONS, STYLES, oracle_answer

#: style -> (make_agent, data(cut), the KG the filter route is given)
ALL = {name: (make, data, world.knowledge_graph) for name, (make, data) in STYLES.items()}
#: the lookup-by-name styles (test_name_keyed*.py): the data's ids are names; the KG is the data's catalogue
ALL["name_keyed_graph"] = (test_name_keyed.lookup_agent, lambda cut=world.NONE: test_name_keyed.name_keyed(*cut),
                           lambda: catalogue(test_name_keyed.name_keyed()))
ALL["name_keyed_dict"] = (test_name_keyed_records.lookup_agent,
                          lambda cut=world.NONE: test_name_keyed_records.name_keyed(*cut),
                          lambda: catalogue(test_name_keyed_records.name_keyed()))
PLACEHOLDER = re.compile(r"\[masked entity\] [^\s\"',)\]]+")


def _same(answer: str | None) -> str | None:
    """Placeholders spelled alike (the hand-made oracles number them)."""
    return PLACEHOLDER.sub("[masked entity]", answer) if answer else answer

#: How each style's tools answer: passages are plain text (cut by names: estimated); the others JSON (by id).
PLAIN_TEXT = {"retriever_tool"}

#: Conditions the filter route may refuse, and why. The state-channel tool lists a colleague only when there is
#: one; the filter empties the list instead (``"colleagues": []``), which this agent's model cannot read (an
#: IndexError): the runs fail, and failed runs make the condition invalid, never a wrong number.
MAY_REFUSE = {"custom_state_channel": {"cited_removal", "leave_one_out"}}

_REFUSED = ("names-only passages are cut by their attribution unit and every valid condition equals the oracle "
            "(test_passages_filtered.py), but cited_removal and leave_one_out stay refused: a kept passage names a "
            "hidden entity, and the filter route cannot tell a stored Document (the oracle keeps it) from a rendering "
            "of the graph's edges (the real ablation drops it), so the model-input check refuses rather than guess")


@pytest.mark.parametrize("style", [pytest.param(s, marks=pytest.mark.xfail(reason=_REFUSED, strict=True))
                                   if s in PLAIN_TEXT else s for s in ALL])
def test_no_valid_condition_differs_from_the_oracle(style: str, tmp_path: Path) -> None:
    make_agent, data, kg = ALL[style]
    report = evaluate(make_agent(data()), world.questions(), kg(), out_dir=tmp_path, **OPTIONS)
    assert report.condition("baseline").accuracy == 1.0
    results = {r["condition"]: r for r in json.loads((tmp_path / "results.json").read_text())["conditions"]}
    wrong, checked, changed = [], set(), False
    records = load_records(tmp_path)
    baseline = {r.key.question_id: r.answer for r in records if r.key.condition == "baseline"}
    for record in records:
        condition = record.key.condition
        if condition == "baseline":
            continue
        assert record.route == "filter", record
        if not report.condition(condition).valid:
            continue
        cut = (frozenset(record.hidden), frozenset(record.masked), frozenset(record.text_blocked))
        truth = oracle_answer(make_agent, data(cut), record.question)
        checked.add(condition)
        changed |= record.answer != baseline[record.key.question_id]
        if _same(truth) != _same(record.answer):
            wrong.append((condition, record.key.variant, cut, record.method, record.answer, truth))
    invalid = {r.condition: r.invalid_reason for r in report.conditions if not r.valid}
    assert wrong == [], f"valid conditions that differ from the oracle: {wrong}; invalid: {invalid}"
    assert checked, f"no valid condition to check: {invalid}"
    assert changed, "no valid condition changed an answer: the test would pass with ablation doing nothing"
    # a condition the filter cuts correctly is never refused (a name-keyed row is its KG entity, not a second one)
    assert set(invalid) <= MAY_REFUSE.get(style, set()), invalid
    assert all("failed with an error" in reason for reason in invalid.values()), invalid
    for condition in checked:
        method = results[condition]["method"]
        if style in PLAIN_TEXT:
            assert method == "estimated", (condition, method)
        else:
            assert method in ("filtered", "exact"), (condition, method)


def test_the_filter_never_spells_a_masked_name_that_is_also_its_id() -> None:
    # Where the data is keyed by names, "[masked entity] <id>" would be "[masked entity] Lise Meitner": the model
    # would read the name, and a lookup of what it read would find her. The placeholder is the factory route's
    # digest key instead (the same text the factory route's view shows); an id that is no name keeps its own.
    from graphtrail.evaluators.replay.filtered.filters import filter_tool_output
    from graphtrail.kg.views import GraphFilter

    cut = GraphFilter(masked=frozenset({"Lise Meitner", "i1"}))
    names = {"Lise Meitner": "Lise Meitner", "Otto Hahn": "Otto Hahn", "i1": "Kaiser Wilhelm Institute"}
    record = json.dumps({"name": "Otto Hahn", "colleagues": ["Lise Meitner"], "works_at": [{"id": "i1", "name": "Kaiser Wilhelm Institute"}]})
    prose = "Otto Hahn worked with Lise Meitner at the Kaiser Wilhelm Institute."
    shown = [filter_tool_output("lookup", out, cut, names=names) for out in (record, prose)]
    factory_key = next(n for n in ablated(test_name_keyed.name_keyed(), cut) if str(n).startswith("[masked entity]"))
    for out in shown:
        assert "Lise" not in out and "Meitner" not in out and "Kaiser" not in out, out
        assert factory_key in out and "[masked entity] i1" in out, out
    assert json.loads(shown[0])["colleagues"] == [factory_key]
    assert shown[1] == f"Otto Hahn worked with {factory_key} at the [masked entity] i1."
