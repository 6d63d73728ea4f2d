"""How runs get traced: wrappers, decorators, instrument(), capture scopes, annotations, concurrency."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from langgraph.graph.state import CompiledStateGraph

import graphtrail
from graphtrail.tracer import run_annotations, trajectories_from_spans
from tests.test_tracer_kit import (
    ask,
    build_create_agent,
    build_custom_node_graph,
    build_toolnode_graph,
    memory,  # noqa: F401 - fixture
    LIVE_MODES,
    root_of,
)


def _check_no_cross_talk(spans, trajectories, numbers):
    roots = [s for s in spans if s.name.startswith("invoke_agent")]
    assert len(roots) == len(numbers) == len({s.context.trace_id for s in spans})
    by_trace = {s.context.trace_id: s for s in roots}
    for s in spans:
        assert root_of(s, spans) is by_trace[s.context.trace_id]  # no orphans, one root per trace
    for traj in trajectories:
        n = traj.question.split("Q-")[1].split()[0]
        assert traj.visited == [f"N{n}-a", f"N{n}-b", f"N{n}-c"], traj
        assert traj.citations == [f"N{n}-c"] and traj.answer == f"Answer {n}"
    for s in spans:
        if s.name.startswith("execute_tool"):
            root = by_trace[s.context.trace_id]
            n = root.attributes["graphtrail.question"].split("Q-")[1].split()[0]
            assert all(e.startswith(f"N{n}-") for e in json.loads(s.attributes["graphtrail.entities.visited"]))
    assert sorted(t.question for t in trajectories) == sorted(ask(n)["messages"][0][1] for n in numbers)


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
async def test_50_concurrent_async_runs_never_mix(memory, caplog):
    agent = graphtrail.trace_agent(build_create_agent(), name="conc")
    with caplog.at_level(logging.ERROR), graphtrail.capture() as cap:
        await asyncio.gather(*(agent.ainvoke(ask(n)) for n in range(50)))
    spans = memory.get_finished_spans()
    _check_no_cross_talk(spans, cap.trajectories, list(range(50)))
    assert not [r for r in caplog.records if "detach" in r.getMessage().lower()]
    assert sorted(trajectories_from_spans(spans), key=lambda t: t.run_id) == sorted(cap.trajectories, key=lambda t: t.run_id)


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
def test_threaded_runs_never_mix(memory):
    agent = graphtrail.trace_agent(build_toolnode_graph(), name="threads")
    with graphtrail.capture() as cap, ThreadPoolExecutor(8) as pool:
        # the capture ContextVar is not inherited by pool threads: each task opens its own
        def one(n):
            with graphtrail.capture() as inner:
                agent.invoke(ask(n))
            return inner.trajectories

        per_task = list(pool.map(one, range(100, 124)))
    assert cap.trajectories == []  # runs started in other threads belong to their own scopes
    assert all(len(t) == 1 for t in per_task)
    _check_no_cross_talk(memory.get_finished_spans(), [t[0] for t in per_task], list(range(100, 124)))


async def test_per_task_captures_and_nesting(memory):
    agent = graphtrail.trace_agent(build_create_agent())

    async def task(n):
        with graphtrail.capture() as cap:
            await agent.ainvoke(ask(n))
            await agent.ainvoke(ask(n + 1000))
        return cap

    with graphtrail.capture() as outer:
        caps = await asyncio.gather(*(task(n) for n in range(5)))
    for n, cap in enumerate(caps):
        assert [t.citations for t in cap.trajectories] == [[f"N{n}-c"], [f"N{n + 1000}-c"]]
    assert len(outer.trajectories) == 10


def test_wrapper_passes_everything_else_through(memory):
    graph = build_create_agent()
    traced = graphtrail.trace_agent(graph, name="w")
    assert isinstance(traced, CompiledStateGraph)
    assert traced.get_graph().nodes.keys() == graph.get_graph().nodes.keys()
    assert traced.name == graph.name and traced.__wrapped__ is graph
    assert graphtrail.trace_agent(traced, name="again").__wrapped__ is graph  # no double wrapping
    with graphtrail.capture() as cap:
        chunks = list(traced.stream(ask(1), stream_mode="updates"))
        results = traced.batch([ask(2), ask(3)])
    assert len(chunks) >= 6 and len(results) == 2
    assert [t.citations for t in cap.trajectories][0] == ["N1-c"]
    assert sorted(t.citations[0] for t in cap.trajectories) == ["N1-c", "N2-c", "N3-c"]
    assert {t.name for t in cap.trajectories} == {"w"}

    from langchain_core.runnables import RunnableLambda

    chain = traced | RunnableLambda(lambda state: state["messages"][-1].content)
    with graphtrail.capture() as cap:
        assert chain.invoke(ask(7)) == "Answer 7"
    assert [t.citations for t in cap.trajectories] == [["N7-c"]]


async def test_async_wrappers(memory):
    traced = graphtrail.trace_agent(build_custom_node_graph(), name="aw")
    with graphtrail.capture() as cap:
        chunks = [c async for c in traced.astream(ask(4))]
        await traced.abatch([ask(5), ask(6)])
    assert chunks
    assert sorted(t.citations[0] for t in cap.trajectories) == ["N4-c", "N5-c", "N6-c"]
    _check_no_cross_talk(memory.get_finished_spans(), cap.trajectories, [4, 5, 6])


def test_decorated_sync_function(memory):
    agent = build_toolnode_graph()

    @graphtrail.trace_agent(name="qa")
    def answer(question: str) -> str:
        # config is dropped on purpose: the run still joins this function's trace
        return agent.invoke({"messages": [("user", question)]})["messages"][-1].content

    with graphtrail.capture() as cap:
        assert answer("Which currency does Q-21 use?") == "Answer 21"
    (traj,) = cap.trajectories
    assert traj.name == "qa" and traj.question == "Which currency does Q-21 use?"
    # the function returned plain text; the answer comes from the inner run's final state
    assert traj.answer == "Answer 21" and traj.citations == ["N21-c"]
    spans = memory.get_finished_spans()
    (root,) = [s for s in spans if s.name == "invoke_agent qa"]
    assert all(root_of(s, spans) is root for s in spans)
    inner = [s for s in spans if s.parent is not None and s.parent.span_id == root.context.span_id]
    assert [s.name for s in inner] == ["LangGraph"]
    assert trajectories_from_spans(spans) == [traj]


async def test_decorated_async_function_and_app_spans_nest(memory):
    from opentelemetry import trace

    agent = build_create_agent()
    app_tracer = graphtrail.tracer.get_tracer_provider().get_tracer("app")

    @graphtrail.trace_agent(name="aqa")
    async def answer(question: str):
        with app_tracer.start_as_current_span("app-work"):
            pass
        return await agent.ainvoke({"messages": [("user", question)]})

    with graphtrail.capture() as cap:
        results = await asyncio.gather(answer("Q-31?"), answer("Q-32?"))
    assert [r["messages"][-1].content for r in results] == ["Answer 31", "Answer 32"]
    assert sorted(t.citations[0] for t in cap.trajectories) == ["N31-c", "N32-c"]
    spans = memory.get_finished_spans()
    roots = {s.context.span_id for s in spans if s.name == "invoke_agent aqa"}
    app = [s for s in spans if s.name == "app-work"]
    assert len(app) == 2 and {s.parent.span_id for s in app} == roots
    assert trace.get_current_span() is trace.INVALID_SPAN


def test_decorated_function_error_is_recorded_and_raised(memory):
    @graphtrail.trace_agent(name="boom")
    def fails(question: str):
        raise KeyError("nope")

    with graphtrail.capture() as cap, pytest.raises(KeyError):
        fails("Q-1")
    (traj,) = cap.trajectories
    assert traj.status == "error" and traj.error == "KeyError: 'nope'"
    assert trajectories_from_spans(memory.get_finished_spans()) == [traj]


def test_instrument_traces_undecorated_runs_once(memory):
    agent = build_create_agent()
    traced = graphtrail.trace_agent(agent, name="explicit")
    handler = graphtrail.instrument(name="global")
    try:
        assert graphtrail.tracer.is_instrumented()
        with graphtrail.capture() as cap:
            agent.invoke(ask(41))  # no config at all
            traced.invoke(ask(42))  # already traced: not twice
            threading_result = []
            t = threading.Thread(target=lambda: threading_result.append(agent.invoke(ask(43))))
            t.start()
            t.join()
    finally:
        graphtrail.uninstrument()
    assert [t.name for t in cap.trajectories] == ["global", "explicit"]
    assert len([s for s in memory.get_finished_spans() if s.name.startswith("invoke_agent")]) == 3
    assert handler._recs == {}
    memory.clear()
    agent.invoke(ask(44))
    assert memory.get_finished_spans() == ()


def test_run_annotations_tag_roots_and_link_baselines(memory):
    agent = graphtrail.trace_agent(build_create_agent(), name="replay")
    with graphtrail.capture() as cap:
        agent.invoke(ask(51))
    baseline = cap.trajectories[0]
    memory.clear()
    with graphtrail.capture() as cap, run_annotations(
        attributes={"graphtrail.condition": "hide-top1"},
        links=[(baseline.trace_id, baseline.span_id)],
        metadata={"condition": "hide-top1", "seed": 3},
    ):
        with run_annotations(metadata={"seed": 4}):
            agent.invoke(ask(51))
    (traj,) = cap.trajectories
    assert traj.metadata == {"condition": "hide-top1", "seed": 4}
    spans = memory.get_finished_spans()
    root = next(s for s in spans if s.name == "invoke_agent replay")
    assert root.attributes["graphtrail.condition"] == "hide-top1"
    (link,) = root.links
    assert format(link.context.trace_id, "032x") == baseline.trace_id
    assert format(link.context.span_id, "016x") == baseline.span_id
    assert [s for s in spans if s.links and s is not root] == []
    assert trajectories_from_spans(spans) == [traj]
    with pytest.raises(ValueError):
        with run_annotations(links=[("abc", "def")]):
            pass


def test_trace_agent_rejects_non_agents():
    with pytest.raises(TypeError):
        graphtrail.trace_agent(42)
    with pytest.raises(ValueError):
        graphtrail.trace_agent(content="everything")


def _cyclic_garbage_per_run(run, times=5):
    import gc

    run()  # warm: first-call caches are not garbage
    gc.collect()
    gc.disable()
    try:
        for _ in range(times):
            run()
        return gc.collect() / times
    finally:
        gc.enable()


@pytest.mark.parametrize("memory", LIVE_MODES, indirect=True)
def test_tracing_leaves_no_cyclic_garbage(memory):
    # Garbage in reference cycles is freed only by the cyclic GC, whose collections
    # then land on the traced app's requests: the tracer must leave none behind.
    plain = build_create_agent()
    traced = graphtrail.trace_agent(build_create_agent(), name="gc")

    def captured():
        with graphtrail.capture():
            traced.invoke(ask(1))

    baseline = _cyclic_garbage_per_run(lambda: plain.invoke(ask(1)))
    assert _cyclic_garbage_per_run(lambda: traced.invoke(ask(1))) <= baseline
    assert _cyclic_garbage_per_run(captured) <= baseline
