"""Replayed runs whose spans nobody receives (tracer/unexported.py), and the reference agent's
tool hook without LangSmith's thread hops (agents/hookhop.py): the same results, less work."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import graphtrail
from graphtrail.agents import create_graphrag_agent
from graphtrail.tracer import capture, get_memory_exporter, run_annotations
from graphtrail.tracer.config import get_tracer_provider
from graphtrail.tracer.unexported import SpanlessTracer
from tests.scrub import without
from tests.test_tools import tiny_kg
from tests.test_tracer_kit import ask, build_create_agent

_VOLATILE = {"run_id", "trace_id", "span_id", "span_ids", "start_time", "end_time", "tool_call_id", "conversation_id"}


def _plain(value: Any) -> Any:
    return without(value, _VOLATILE)


def _replayed(agent: Any, n: int) -> Any:
    with capture() as cap, run_annotations(metadata={"condition": "c"}, replay=True):
        agent.invoke(ask(n))
    return cap.last


def _ids(traj: Any) -> list[str]:
    return [traj.span_id, *(s.span_id for s in traj.steps), *(m.span_id for m in traj.model_calls)]


def test_a_replay_nobody_receives_has_the_same_trajectory_with_valid_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = graphtrail.trace_agent(build_create_agent(), name="kg")
    started: list[str] = []
    real_start = SpanlessTracer.start_span
    monkeypatch.setattr(SpanlessTracer, "start_span", lambda self, name, *a, **k: started.append(name) or real_start(self, name, *a, **k))
    graphtrail.configure(exporter="memory")
    try:
        exported = _replayed(agent, 1)
        spans = get_memory_exporter().get_finished_spans()
        assert not started  # a processor receives the spans: real ones
        graphtrail.configure(exporter="none")
        unexported = _replayed(agent, 1)
    finally:
        graphtrail.configure(exporter="none")
    assert spans and exported.steps and exported.model_calls
    assert sorted(started) == sorted(s.name for s in spans)  # the same tree, none of it built
    assert _plain(unexported.model_dump(mode="json")) == _plain(exported.model_dump(mode="json"))
    ids = _ids(unexported)
    assert all(re.fullmatch("[0-9a-f]{16}", i) and int(i, 16) for i in ids) and len(set(ids)) == len(ids)
    assert re.fullmatch("[0-9a-f]{32}", unexported.trace_id) and unexported.trace_id != exported.trace_id


def test_a_processor_added_later_gets_the_next_replay_s_spans() -> None:
    agent = graphtrail.trace_agent(build_create_agent(), name="kg")
    graphtrail.configure(exporter="none")
    try:
        _replayed(agent, 1)  # nothing receives it
        exporter = InMemorySpanExporter()
        get_tracer_provider().add_span_processor(SimpleSpanProcessor(exporter))
        traj = _replayed(agent, 2)
    finally:
        graphtrail.configure(exporter="none")
    spans = exporter.get_finished_spans()
    assert {format(s.context.span_id, "016x") for s in spans} >= set(_ids(traj))
    assert {format(s.context.trace_id, "032x") for s in spans} == {traj.trace_id}


def test_the_reference_agent_s_tool_hook_makes_no_thread_hops() -> None:
    agent = create_graphrag_agent("offline", tiny_kg(), "evidence_first")
    hops = 0

    async def run() -> Any:
        nonlocal hops
        loop = asyncio.get_running_loop()
        original = loop.run_in_executor

        def counting(*args: Any, **kwargs: Any) -> Any:
            nonlocal hops
            hops += 1
            return original(*args, **kwargs)

        loop.run_in_executor = counting  # type: ignore[method-assign]
        with capture() as cap:
            await agent.ainvoke({"messages": [("user", "What is the capital of Kenya?")]})
        return cap.last

    traj = asyncio.run(run())
    assert traj is not None and len(traj.steps) >= 2  # tools ran, through the rules middleware's hook
    assert hops == 0


def test_a_replay_nobody_receives_is_built_once_at_its_end_even_when_long(monkeypatch: pytest.MonkeyPatch) -> None:
    # live_after=0 makes every run "long": a watched one builds its spans as calls finish; one nobody
    # receives has no one to watch it, builds once at the end, and gives the same trajectory.
    from graphtrail.tracer import handler

    agent = graphtrail.trace_agent(build_create_agent(), name="kg")
    live_builds: list[bool] = []
    real = handler.go_live
    monkeypatch.setattr(handler, "go_live", lambda root: live_builds.append(root.spanless) or real(root))
    try:
        graphtrail.configure(exporter="memory", live_after=0)
        watched = _replayed(agent, 2)
        assert live_builds and not any(live_builds)
        live_builds.clear()
        graphtrail.configure(exporter="none", live_after=0)
        unwatched = _replayed(agent, 2)
    finally:
        graphtrail.configure(exporter="none")
    assert live_builds == []
    assert unwatched.steps and _plain(unwatched.model_dump(mode="json")) == _plain(watched.model_dump(mode="json"))
