"""``evaluate`` end to end: a user's agent and graphtrail's offline agent, resume, tracing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent

import graphtrail
from graphtrail.agents import create_graphrag_agent
from graphtrail.evaluators import DEFAULT_CONDITIONS, EvaluationError, aevaluate_records, evaluate, load_records
from graphtrail.evaluators.api import normalize_questions
from tests.fakes import ScriptedChatModel
from tests.test_ablations import tiny_kg
from tests.test_replay import QUESTION, make_tools, policy

Q = {"id": "q1", "question": QUESTION, "answers": ["Kenyan shilling"]}
CONDS = ["baseline", "cited_removal", "random_removal", "uncited_removal", "uncited_mask", "leave_one_out"]


class Interrupted(BaseException):
    """Stands in for Ctrl-C / a kill in the middle of an evaluation."""


def user_agent() -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(policy=policy)
    return create_agent(model, make_tools(), name="user-agent"), model


def function_agent(interrupt_on: int | None = None) -> tuple[Any, ScriptedChatModel]:
    """A plain async function around the graph (the ``question -> answer`` agent kind).

    On its ``interrupt_on``-th call it raises :class:`Interrupted`, like a kill
    in the middle of an evaluation (LangChain turns a BaseException raised
    inside a model call into an AttributeError, so it is raised here instead).
    """
    graph, model = user_agent()
    calls = 0

    async def ask(question: str) -> Any:
        nonlocal calls
        calls += 1
        if calls == interrupt_on:
            raise Interrupted
        return await graph.ainvoke({"messages": [("user", question)]})

    return ask, model


def outcome(records: list[Any]) -> list[tuple]:
    return sorted(
        (r.key.as_str(), r.answer, tuple(r.citations), r.status, tuple(r.hidden), tuple(r.masked), r.correct, r.changed)
        for r in records
    )


def test_evaluate_a_user_agent_writes_records_and_report(tmp_path: Path) -> None:
    agent, model = user_agent()
    report = evaluate(agent, [Q], None, conditions=CONDS, out_dir=tmp_path, progress=False)
    assert {"results.json", "report.md", "report.html", "runs.jsonl"} <= {p.name for p in tmp_path.iterdir()}
    records = load_records(tmp_path / "runs.jsonl")
    by = {(r.key.condition, r.key.variant, r.key.trial): r for r in records}
    # 3 baseline repeats, one run per condition, one leave-one-out run per visited entity (N, X, K, S, W)
    assert sorted(k for k in by if k[0] == "baseline") == [("baseline", "", t) for t in range(3)]
    assert sorted(v for c, v, _ in by if c == "leave_one_out") == ["K", "N", "S", "W", "X"]
    # one question and no KG: no entity outside its visited set to draw a random control from
    assert len(records) == 3 + 3 + 5 and report.condition("random_removal").not_applicable
    assert by[("cited_removal", "", 0)].hidden == ["K", "S"] and by[("cited_removal", "", 0)].correct is False
    assert by[("cited_removal", "", 0)].changed is True
    assert by[("uncited_mask", "", 0)].masked == ["N", "W", "X"] and by[("uncited_mask", "", 0)].correct is True
    assert all(r.key.agent == "user-agent" and r.key.model == "scripted-model" for r in records)
    assert by[("baseline", "", 0)].changed is False and by[("baseline", "", 0)].f1 == 1.0
    assert len(model.calls) == sum(r.model_calls for r in records)
    assert sum(r.reused_calls for r in records) > 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results  # the scorer's document; its schema is tested with the report
    assert report is not None


def test_resume_after_an_interruption_recomputes_nothing(tmp_path: Path) -> None:
    reference_agent, _ = function_agent()
    reference = evaluate(reference_agent, [Q], None, conditions=CONDS, out_dir=tmp_path / "ref", progress=False)
    assert reference is not None
    expected = outcome(load_records(tmp_path / "ref" / "runs.jsonl"))

    out = tmp_path / "run"
    agent, _ = function_agent(interrupt_on=7)
    with pytest.raises(Interrupted):
        evaluate(agent, [Q], None, conditions=CONDS, out_dir=out, concurrency=2, progress=False)
    done_before = {r.key: r for r in load_records(out / "runs.jsonl")}
    assert 0 < len(done_before) < len(expected)

    agent2, model2 = function_agent()
    evaluate(agent2, [Q], None, conditions=CONDS, out_dir=out, resume=True, progress=False)
    final = load_records(out / "runs.jsonl")
    assert outcome(final) == expected
    for record in final:  # finished runs were not run again
        if record.key in done_before:
            assert record.model_dump() == done_before[record.key].model_dump()
    new = [r for r in final if r.key not in done_before]
    assert len(model2.calls) == sum(r.model_calls for r in new)
    lines = (out / "runs.jsonl").read_text().splitlines()
    assert len(lines) == len(expected)  # each key written once


def test_replays_are_traced_tagged_and_linked_to_the_baseline() -> None:
    graphtrail.configure(exporter="memory")
    try:
        exporter = graphtrail.tracer.get_memory_exporter()
        agent, _ = user_agent()
        evaluate(agent, [Q], None, conditions=["baseline", "cited_removal", "uncited_mask"], progress=False, baseline_repeats=1)
        graphtrail.tracer.flush()
        roots = [s for s in exporter.get_finished_spans() if s.parent is None]
        by_condition = {s.attributes.get("graphtrail.condition"): s for s in roots}
        assert set(by_condition) == {"baseline", "cited_removal", "uncited_mask"}
        base = by_condition["baseline"]
        assert not base.links
        for name in ("cited_removal", "uncited_mask"):
            span = by_condition[name]
            assert span.attributes["graphtrail.trial"] == 0
            (link,) = span.links
            assert link.context.trace_id == base.context.trace_id and link.context.span_id == base.context.span_id
            assert span.context.trace_id != base.context.trace_id
    finally:
        graphtrail.configure(exporter="none")


async def test_offline_graphrag_agent_same_results_with_and_without_reuse() -> None:
    kg = tiny_kg()
    questions = [
        {"id": "cur", "question": "What is the currency of Kenya?", "answers": ["Kenyan shilling"], "topic_ids": ["K"]},
        "What is the capital of Kenya?",
    ]
    runs = {}
    for reuse in (True, False):
        agent = create_graphrag_agent("offline", kg)
        runs[reuse] = await aevaluate_records(agent, questions, kg, reuse=reuse, progress=False, seed=1)
    assert outcome(runs[True].records) == outcome(runs[False].records)
    assert {r.key.condition for r in runs[True].records} == set(DEFAULT_CONDITIONS)
    assert runs[True].model_calls < runs[False].model_calls
    assert runs[True].model_calls + runs[True].reused_calls == runs[False].model_calls
    cur = {r.key.condition: r for r in runs[True].records if r.key.question_id == "cur" and r.key.trial == 0}
    assert cur["baseline"].correct is True
    assert cur["cited_removal"].hidden == sorted(cur["baseline"].citations)


async def test_a_deterministic_model_reuses_repeated_trials_instead_of_repeating_them() -> None:
    from graphtrail.agents import OfflineChatModel

    kg = tiny_kg()
    questions = [{"id": "cur", "question": "What is the currency of Kenya?", "answers": ["Kenyan shilling"]}]
    conditions = ["baseline", "cited_removal"]

    async def run(model: OfflineChatModel, **kw: Any) -> Any:
        agent = create_graphrag_agent(model, kg)
        return await aevaluate_records(agent, questions, kg, conditions=conditions, trials=2, progress=False, **kw)

    declared = await run(OfflineChatModel())  # noise=0: the model says it is deterministic
    repeats = [r for r in declared.records if r.key.condition == "baseline" and r.key.trial > 0]
    assert repeats and all(r.model_calls == 0 and r.reused_calls > 0 for r in repeats)
    ablated = [r for r in declared.records if r.key.condition == "cited_removal"]
    # the two trials of an ablation share one set of model calls: the second reuses the first
    assert sum(r.model_calls for r in ablated) < sum(r.model_calls + r.reused_calls for r in ablated)
    # the user can overrule it, and reuse=False repeats everything: same outcomes either way
    repeated = await run(OfflineChatModel(), deterministic=False)
    naive = await run(OfflineChatModel(), reuse=False)
    assert all(r.model_calls > 0 for r in repeated.records if r.key.condition == "baseline")
    assert outcome(declared.records) == outcome(repeated.records) == outcome(naive.records)
    assert declared.model_calls < repeated.model_calls < naive.model_calls
    # a sampled model is never treated as deterministic
    sampled = await run(OfflineChatModel(noise=0.3, seed=1))
    assert all(r.model_calls > 0 for r in sampled.records if r.key.condition == "baseline")


def test_questions_and_arguments_are_checked() -> None:
    qs = normalize_questions(["What is X?", {"question": "What is Y?", "answers": ["y"]}])
    assert [q["id"][:2] for q in qs] == ["q-", "q-"] and qs[0]["id"] != qs[1]["id"]
    assert normalize_questions(["What is X?"])[0]["id"] == qs[0]["id"]  # stable ids key the cache
    with pytest.raises(EvaluationError):
        normalize_questions([{"answers": ["no text"]}])
    with pytest.raises(EvaluationError):
        normalize_questions(["Same?", "Same?"])
    agent, _ = user_agent()
    with pytest.raises(EvaluationError):
        evaluate(agent, [Q], conditions=["baseline", "nonsense"], progress=False)
    with pytest.raises(EvaluationError):
        evaluate(agent, [Q], trials=0, progress=False)
    with pytest.raises(EvaluationError):
        evaluate(42, [Q], progress=False)
