"""A retriever over names-only passages through the filter route: plain text cut by its attribution unit.

Issue 28 item 5: "the passage or Document that belongs to a hidden entity goes
whole, not just the line naming it". The retriever tool (test_factory_route.py)
answers with per-entity passages joined by blank lines, each headed by its
entity's name. The oracle is the agent rebuilt on the Documents this test's data
module deleted itself: a withheld entity's Document gone whole, the other
Documents as they were (a kept passage still says "Colleague: Otto Hahn" when Otto
Hahn is hidden).

The filter route cannot know whether such a kept line is a stored text (as here)
or a rendering of the graph's edges (which the real ablation would drop), so the
model-input check refuses a condition where a kept passage names a hidden entity.
Every other condition must be valid, labelled ``estimated`` (cut from plain text),
and equal the oracle run for run.
"""

from __future__ import annotations

import json
from pathlib import Path

from graphtrail.evaluators import evaluate
from graphtrail.evaluators.replay.filtered.leaks import EntityNames
from graphtrail.evaluators.replay.filtered.passages import cut_passages
from graphtrail.kg.views import GraphFilter

from . import passages as world
from .oracle import load_records
from .test_factory_route import OPTIONS, oracle_answer, retriever_agent
from .test_factory_styles_filtered import _same

TEXT = "\n\n".join(d.page_content for d in world.documents() if d.metadata["id"] in ("p1", "p2", "i1"))


def test_a_withheld_entitys_passage_goes_whole_and_the_others_stay() -> None:
    known = EntityNames(world.knowledge_graph())
    hidden = cut_passages(TEXT, GraphFilter(hidden=frozenset({"p1"})), {}, known)
    assert hidden == ("Otto Hahn: German chemist who discovered fission\nColleague: Lise Meitner\n"
                      "Worked at: Kaiser Wilhelm Institute\n\nKaiser Wilhelm Institute: research institute in Berlin")
    blocked = cut_passages(TEXT, GraphFilter(text_blocked=frozenset({"p2", "i1"})), {}, known)
    assert blocked is not None and blocked.startswith("Lise Meitner:") and "Otto Hahn:" not in blocked
    assert "Berlin" not in blocked and "Colleague: Otto Hahn" in blocked  # Lise Meitner's own text names him
    masked = TEXT.replace("Otto Hahn", "[masked entity] p2")  # as the filter's masking left it
    assert "German chemist" not in cut_passages(masked, GraphFilter(masked=frozenset({"p2"})), {}, known)
    # text that is not passages each headed by one entity is left to the line cut
    assert cut_passages("Lise Meitner worked in Berlin.\n\nOtto Hahn too.", GraphFilter(hidden=frozenset({"p1"})),
                        {}, known) is None
    assert cut_passages(TEXT.split("\n\n")[0], GraphFilter(hidden=frozenset({"p1"})), {}, known) is None


def test_every_valid_condition_equals_the_oracle_and_is_estimated(tmp_path: Path) -> None:
    report = evaluate(retriever_agent(world.documents()), world.questions(), world.knowledge_graph(),
                      out_dir=tmp_path, **OPTIONS)
    assert report.condition("baseline").accuracy == 1.0
    results = {r["condition"]: r for r in json.loads((tmp_path / "results.json").read_text())["conditions"]}
    records = load_records(tmp_path)
    baseline = {r.key.question_id: r.answer for r in records if r.key.condition == "baseline"}
    wrong, checked, changed = [], set(), False
    for record in records:
        condition = record.key.condition
        if condition == "baseline" or not report.condition(condition).valid:
            continue
        assert record.route == "filter", record
        cut = (frozenset(record.hidden), frozenset(record.masked), frozenset(record.text_blocked))
        truth = oracle_answer(retriever_agent, world.documents(cut), record.question)
        checked.add(condition)
        changed |= record.answer != baseline[record.key.question_id]
        if _same(truth) != _same(record.answer):
            wrong.append((condition, cut, record.answer, truth))
    assert wrong == [], wrong
    assert changed, "no valid condition changed an answer: the test would pass with ablation doing nothing"
    # the measured cases: the orphaned "Colleague:" line and text-blocked passages
    assert checked >= {"uncited_removal", "uncited_mask", "full_isolation", "text_only_isolation"}, checked
    assert all(results[c]["method"] == "estimated" for c in checked), {c: results[c]["method"] for c in checked}
    refused = {r.condition: r.invalid_reason for r in report.conditions if not r.valid}
    assert set(refused) <= {"cited_removal", "leave_one_out"}, refused
    assert all(reason.startswith("the model was given hidden or masked entities") and "search_passages" in reason
               for reason in refused.values()), refused


def test_a_document_goes_whole_when_its_owner_is_hidden_masked_or_text_blocked() -> None:
    from graphtrail.evaluators.replay.filtered.filters import filter_tool_output

    docs = world.documents()
    for cut in (GraphFilter(hidden=frozenset({"p2"})), GraphFilter(masked=frozenset({"p2"})),
                GraphFilter(text_blocked=frozenset({"p2"}))):
        kept = filter_tool_output("search", list(docs), cut)
        expected = world.documents((cut.hidden, cut.masked, cut.text_blocked))  # the oracle's Documents
        assert [d.metadata["id"] for d in kept] == [d.metadata["id"] for d in expected], cut
        # a retriever returning (content, Documents): the content loses the owner's passage whole
        content = "\n\n".join(d.page_content for d in docs[:3])
        text, artifact = filter_tool_output("search", (content, docs[:3]), cut, content_and_artifact=True)
        assert [d.metadata["id"] for d in artifact] == ["p1", "p3"], cut
        assert "German chemist" not in text and "Worked at: Kaiser Wilhelm Institute" in text
        assert text.count("Worked at:") == 2, (cut, text)
