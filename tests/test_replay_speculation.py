"""Conditions that start before every baseline is in: the priority slots, and that early runs equal late ones.

The suite starts a question's conditions as soon as its own baselines are in
(evaluators/replay/speculate.py). The ground truth here is the suite with that
switched off (every condition built after the last baseline, as before): the
records must be the same, whether the early runs were kept or thrown away.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
from graphtrail.evaluators import EvaluationError, aevaluate_records, load_records
from graphtrail.evaluators.replay import speculate
from graphtrail.evaluators.replay.slots import Slots
from tests.scrub import without
from tests.wordings import KG_FILE

CONDITIONS = ["baseline", "cited_removal", "uncited_removal", "uncited_mask", "random_removal", "leave_one_out"]
_VOLATILE = {"wall_time_s", "trace_id", "baseline_trace_id", "run_id", "span_id", "parent_span_id", "start_time",
             "end_time", "span_ids", "duration_ms", "duration_s", "conversation_id", "tool_call_id", "id", "call_id"}
_COUNTERS = {"model_calls", "reused_calls", "input_tokens", "output_tokens", "divergence_step"}


def _content(records: list[Any]) -> list[str]:
    """Each record minus timings, ids and per-run cost counters (which sibling run pays is a race), sorted."""

    return sorted(json.dumps(without(r.model_dump(mode="json", exclude=_COUNTERS), _VOLATILE), sort_keys=True, default=str)
                  for r in records)


# ---------------------------------------------------------------- slots


async def test_slots_hand_a_freed_slot_to_the_lowest_priority_then_the_earliest() -> None:
    slots = Slots(1)
    order: list[str] = []
    release = asyncio.Event()

    async def take(name: str, priority: Any) -> None:
        async with slots.hold(priority):
            order.append(name)
            if name == "first":
                await release.wait()

    first = asyncio.ensure_future(take("first", 0))
    await asyncio.sleep(0)
    waiting = [asyncio.ensure_future(take(n, p)) for n, p in [("late-2", (1, 0)), ("base", (0, 1)), ("late-1", (1, -3)),
                                                               ("late-2b", (1, 0))]]
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, *waiting)
    assert order == ["first", "base", "late-1", "late-2", "late-2b"]


async def test_a_cancelled_waiter_does_not_keep_a_slot() -> None:
    slots = Slots(1)
    gate = asyncio.Event()
    ran: list[str] = []

    async def hold_until_gate() -> None:
        async with slots.hold():
            await gate.wait()

    async def take(name: str) -> None:
        async with slots.hold():
            ran.append(name)

    holder = asyncio.ensure_future(hold_until_gate())
    await asyncio.sleep(0)
    doomed, other = asyncio.ensure_future(take("doomed")), asyncio.ensure_future(take("other"))
    await asyncio.sleep(0)
    doomed.cancel()
    gate.set()
    await asyncio.gather(holder, other)
    assert doomed.cancelled() and ran == ["other"]
    async with slots.hold():  # the slot came back
        pass
    with pytest.raises(ValueError):
        Slots(0)


# ---------------------------------------------------------------- early conditions


@pytest.fixture(scope="module")
def kg() -> Any:
    return load_kg("countries")


@pytest.fixture(scope="module")
def questions() -> list[Any]:
    qs = load_questions("countries")
    return [qs[i] for i in (0, 11, 23, 37, 52, 70)]


def _evaluate(kg: Any, questions: list[Any], out: Path | None = None, *, graph: Any = None) -> Any:
    agent = create_graphrag_agent("offline", kg, "agentic")
    return asyncio.run(aevaluate_records(agent, questions, graph if graph is not None else kg, conditions=CONDITIONS,
                                         concurrency=4, progress=False, out_dir=out))


@pytest.fixture(scope="module")
def barrier(kg: Any, questions: list[Any]) -> Any:
    """The suite with nothing started early: every condition built after the last baseline."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(speculate.Speculation, "question_ready", lambda self, *a: None)
        return _evaluate(kg, questions)


def test_early_conditions_are_kept_and_equal_what_the_barrier_runs(kg: Any, questions: list[Any], barrier: Any) -> None:
    early = _evaluate(kg, questions)
    conditions = [r for r in early.records if r.key.condition != "baseline"]
    assert barrier.early_kept == 0 and len(conditions) > 20
    assert early.early_kept == len(conditions) and early.early_discarded == 0
    assert _content(early.records) == _content(barrier.records)
    assert [r.key for r in early.records] == [r.key for r in barrier.records]  # the same order too
    assert early.model_calls == barrier.model_calls


def test_early_runs_are_run_again_when_the_names_changed(kg: Any, questions: list[Any], barrier: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # every finished baseline looks like it revealed a name no earlier one did
    real = speculate.NamesLedger.fingerprint
    monkeypatch.setattr(speculate.NamesLedger, "fingerprint", lambda self: (real(self), len(self.records)))
    changed = _evaluate(kg, questions)
    assert changed.early_kept == 0 and changed.early_discarded > 0
    assert _content(changed.records) == _content(barrier.records)
    assert changed.model_calls >= barrier.model_calls  # the discarded runs' calls are counted, not hidden


def test_names_fingerprint_changes_only_with_what_reads_differently(kg: Any) -> None:
    from graphtrail.evaluators.records import RunKey, RunRecord
    from graphtrail.tracer.trajectory import Entity, Step, Trajectory

    entity = next(iter(kg.entities()))

    def record(i: int, entities: list[Entity]) -> RunRecord:
        trajectory = Trajectory(run_id=f"r{i}", steps=[Step(index=1, tool="t", entities=entities)])
        return RunRecord(key=RunKey(agent="a", model="m", question_id=f"q{i}", condition="baseline"), question="?",
                         trajectory=trajectory)

    from graphtrail.evaluators.replay.suite import known_names

    ledger = speculate.NamesLedger(kg, known_names)
    start = ledger.fingerprint()
    ledger.add(0, record(0, [Entity(id=entity.id, name=entity.name)]))  # the KG's own name: reads the same
    assert ledger.fingerprint() == start
    ledger.add(1, record(1, [Entity(id=entity.id, name=entity.name + " (renamed)")]))
    assert ledger.fingerprint() != start
    assert ledger.names().of(entity.id)[0] == entity.name  # job order: the KG's name came first
    outside = speculate.NamesLedger(kg, known_names)
    outside.add(0, record(0, [Entity(id="not-in-the-kg", name="Atlantis")]))
    assert outside.fingerprint() != start
    once = outside.fingerprint()
    outside.add(1, record(1, [Entity(id="not-in-the-kg", name="Atlantis")]))  # a repeat revealing it again
    assert outside.fingerprint() == once
    assert outside.names().of("not-in-the-kg") == ("Atlantis",)
    outside.add(2, record(2, [Entity(id="not-in-the-kg", name="Atlantis City")]))
    assert outside.fingerprint() != once


def test_a_refused_kg_leaves_no_early_condition_on_disk(tmp_path: Path, questions: list[Any],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    other = load_kg(KG_FILE, communities=False)  # not the agent's graph
    started: list[int] = []
    real = speculate.Speculation.question_ready

    def question_ready(self: Any, *args: Any) -> None:
        real(self, *args)
        started.append(len(self.early))

    monkeypatch.setattr(speculate.Speculation, "question_ready", question_ready)
    with pytest.raises(EvaluationError, match="not the graph the agent reads"):
        agent = create_graphrag_agent("offline", load_kg("countries"), "agentic")
        asyncio.run(aevaluate_records(agent, questions, other, conditions=CONDITIONS, concurrency=4, progress=False,
                                      out_dir=tmp_path))
    assert started and started[-1] > 0  # conditions did start early, against the wrong graph
    kept = load_records(tmp_path / "runs.jsonl")
    assert kept and {r.key.condition for r in kept} == {"baseline"}


# ---------------------------------------------------------------- what concurrency limits


class _Meter:
    """Peak of things at once."""

    def __init__(self) -> None:
        self.now = self.peak = 0
        self.lock = threading.Lock()

    def __enter__(self) -> "_Meter":
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        return self

    def __exit__(self, *exc: Any) -> None:
        with self.lock:
            self.now -= 1


def _slow_model(meter: _Meter, **fields: Any) -> Any:
    from graphtrail.agents.offline.model import OfflineChatModel

    class SlowOffline(OfflineChatModel):
        """The offline model behind some latency, counting the calls at it."""

        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            with meter:
                await asyncio.sleep(0.02)
                return await super()._agenerate(messages, stop, run_manager, **kwargs)

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            with meter:
                time.sleep(0.02)
                return super()._generate(messages, stop, run_manager, **kwargs)

    return SlowOffline(**fields)


def _count_runs(monkeypatch: pytest.MonkeyPatch) -> _Meter:
    from graphtrail.evaluators.replay import runner

    runs = _Meter()
    real = runner.run_job

    async def run_job(*args: Any, **kwargs: Any) -> Any:
        with runs:
            return await real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_job", run_job)
    return runs


@pytest.mark.parametrize("invoke", ["async", "sync"])
def test_concurrency_limits_calls_at_the_model_while_more_replays_run(kg: Any, questions: list[Any], invoke: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    calls, runs = _Meter(), _count_runs(monkeypatch)
    graph = create_graphrag_agent(_slow_model(calls), kg, "agentic")
    def ask(question: str) -> Any:  # a sync callable: its replays run on worker threads
        return graph.invoke({"messages": [("user", question)]})

    agent = graph if invoke == "async" else ask
    evaluation = asyncio.run(aevaluate_records(agent, questions, kg, conditions=CONDITIONS, concurrency=2, progress=False,
                                               agent_name="slow", model_name="slow-offline"))
    assert evaluation.model_calls > 20
    assert calls.peak == 2  # never more calls at the model than asked for, and the limit is used
    assert 2 < runs.peak <= 4  # replays whose calls are reused or at their tools go on meanwhile


def test_a_model_the_limit_cannot_see_falls_back_to_counting_replays(kg: Any, questions: list[Any],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    calls, runs = _Meter(), _count_runs(monkeypatch)
    seen: list[tuple[int, int]] = []  # (replays, calls) at once, at each call's start
    model = _slow_model(calls, cache=False)  # its calls never reach the reuse cache, so no model slot holds them
    real = type(model)._agenerate

    async def _agenerate(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((runs.now, calls.now + 1))
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(type(model), "_agenerate", _agenerate)
    evaluation = asyncio.run(aevaluate_records(create_graphrag_agent(model, kg, "agentic"), questions, kg,
                                               conditions=CONDITIONS, concurrency=2, progress=False))
    assert evaluation.model_calls > 40
    later = seen[len(seen) // 2:]  # once the replays started before the first such call are done
    assert max(r for r, _ in later) <= 2 and max(c for _, c in later) <= 2


def test_concurrency_one_is_one_replay_at_a_time(kg: Any, questions: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    calls, runs = _Meter(), _count_runs(monkeypatch)
    evaluation = asyncio.run(aevaluate_records(create_graphrag_agent(_slow_model(calls), kg, "agentic"), questions[:2], kg,
                                               conditions=CONDITIONS, concurrency=1, progress=False))
    assert evaluation.model_calls > 5
    assert runs.peak == 1 and calls.peak == 1  # sequential, so which sibling pays for a shared call is fixed


def test_with_a_deterministic_model_conditions_start_beside_a_trickle_of_repeats(kg: Any, questions: list[Any],
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # The offline model is deterministic: the repeats reuse trial 0's calls (CPU work only). A question's
    # conditions start once its trial 0 is in, and the repeats go a few at a time beside them; the records are
    # those of the suite that starts nothing early.
    from graphtrail.evaluators.replay import runner, suite

    def run(early: bool) -> tuple[Any, list[tuple[str, Any]]]:
        events: list[tuple[str, Any]] = []
        real = runner.run_job

        async def run_job(r: Any, job: Any, *args: Any, **kwargs: Any) -> Any:
            events.append(("start", job.key))
            try:
                return await real(r, job, *args, **kwargs)
            finally:
                events.append(("end", job.key))

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(runner, "run_job", run_job)
            if not early:
                mp.setattr(speculate.Speculation, "question_ready", lambda self, *a: None)
            agent = create_graphrag_agent("offline", kg, "agentic")
            evaluation = asyncio.run(aevaluate_records(agent, questions, kg, conditions=CONDITIONS, concurrency=4,
                                                       progress=False, baseline_repeats=3))
        return evaluation, events

    early, events = run(True)
    barrier, _ = run(False)
    assert _content(early.records) == _content(barrier.records)
    assert early.early_kept == len([r for r in early.records if r.key.condition != "baseline"]) > 20

    def is_repeat(key: Any) -> bool:
        return key.condition == "baseline" and key.trial > 0

    at_once, peak, overlapped = 0, 0, set()
    for i, (what, key) in enumerate(events):
        if is_repeat(key):
            at_once += 1 if what == "start" else -1
            peak = max(peak, at_once)
        elif what == "start" and key.condition != "baseline":
            last_repeat = max(j for j, (w, k) in enumerate(events)
                              if w == "end" and is_repeat(k) and k.question_id == key.question_id)
            if i < last_repeat:
                overlapped.add(key.question_id)
    assert peak == suite.REPEATS_AT_ONCE
    assert len(overlapped) >= len(questions) // 2  # conditions ran before their question's repeats were all in


def test_progress_says_how_many_ablation_runs_went_ahead(kg: Any, questions: list[Any], monkeypatch: pytest.MonkeyPatch,
                                                         capfd: pytest.CaptureFixture[str]) -> None:
    # Piped (not a terminal): plain lines. While baselines still run, the early condition runs are said beside them.
    monkeypatch.setenv("GRAPHTRAIL_PROGRESS_EVERY", "0.02")
    agent = create_graphrag_agent(_slow_model(_Meter()), kg, "agentic")
    asyncio.run(aevaluate_records(agent, questions, kg, conditions=CONDITIONS, concurrency=4, progress=True,
                                  baseline_repeats=3, agent_name="slow", model_name="slow-offline"))
    lines = capfd.readouterr().err.splitlines()
    ahead = [x for x in lines if x.startswith("graphtrail: baseline") and re.search(r" · \d+ ablation runs? done early, ", x)]
    assert ahead, lines
    assert not [x for x in lines if x.startswith("graphtrail: ablations") and "early" in x], lines  # counted in the phase, not said twice
