"""Where spans go: configure(), jsonl OTLP/JSON files, OTLP to a dead endpoint, an app's own provider,
and Trajectory round trips (JSON, in-memory spans, jsonl file)."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import pytest

import graphtrail
from graphtrail.tracer import Trajectory, flush, trajectories_from_otlp_json, trajectories_from_spans
from graphtrail.tracer._safety import reset_warnings
from tests.test_tracer_kit import ask, build_create_agent, memory  # noqa: F401 - fixture


def test_trajectory_json_round_trip(memory):
    with graphtrail.capture() as cap:
        graphtrail.trace_agent(build_create_agent()).invoke(ask(1), {"configurable": {"thread_id": "c1"}})
    (traj,) = cap.trajectories
    text = traj.to_json()
    assert Trajectory.from_json(text) == traj
    data = json.loads(text)
    assert data["visited_uncited"] == ["N1-a", "N1-b"] and data["citation_sources"]["N1-c"]["steps"] == [2]


def test_jsonl_lines_are_otlp_json_and_rebuild_equal_trajectories(tmp_path: Path):
    path = tmp_path / "traces.jsonl"
    path.write_text("")  # an existing file is appended to, never overwritten
    graphtrail.configure(exporter="jsonl", path=path, content="ids-only")
    try:
        agent = graphtrail.trace_agent(build_create_agent(), name="file")
        with graphtrail.capture() as cap:
            for n in range(3):
                agent.invoke(ask(n), {"configurable": {"thread_id": f"t{n}"}})
        assert flush()
        first = path.read_text()
        with graphtrail.capture() as cap2:
            agent.invoke(ask(9))
        assert flush()
    finally:
        graphtrail.configure(exporter="none")
    text = path.read_text()
    assert text.startswith(first) and len(text) > len(first)
    lines = [line for line in text.splitlines() if line]
    span_count = 0
    for line in lines:
        data = json.loads(line)
        ParseDict(data, ExportTraceServiceRequest())  # the official proto mapping accepts the shape
        for rs in data["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    span_count += 1
                    int(span["traceId"], 16), int(span["spanId"], 16)  # hex ids, as OTLP/JSON requires
                    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16
                    assert isinstance(span["kind"], int)
    assert span_count > 0
    rebuilt = trajectories_from_otlp_json(path)
    assert rebuilt == cap.trajectories + cap2.trajectories
    assert trajectories_from_otlp_json(text.splitlines()) == rebuilt


def test_exporter_down_does_not_break_the_agent(caplog):
    reset_warnings()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the with-block ends: nothing listens there
    graphtrail.configure(exporter="otlp", endpoint=f"http://127.0.0.1:{port}")
    try:
        agent = graphtrail.trace_agent(build_create_agent())
        with caplog.at_level(logging.WARNING, logger="graphtrail"), graphtrail.capture() as cap:
            results = [agent.invoke(ask(n)) for n in range(3)]
            flush(10_000)
            agent.invoke(ask(4))
            flush(10_000)
    finally:
        graphtrail.configure(exporter="none")
    assert [r["messages"][-1].content for r in results] == ["Answer 0", "Answer 1", "Answer 2"]
    assert len(cap.trajectories) == 4
    ours = [r for r in caplog.records if r.name == "graphtrail" and r.levelno >= logging.WARNING]
    assert len(ours) == 1 and f"127.0.0.1:{port}" in ours[0].getMessage()


@pytest.mark.parametrize("hook", ["on_start", "on_end"])
def test_a_span_processor_that_raises_does_not_break_the_agent(caplog, hook):
    from opentelemetry.sdk.trace import SpanProcessor

    def fail(*args, **kwargs):
        raise RuntimeError("processor bug")

    Broken = type("Broken", (SpanProcessor,), {hook: fail})

    reset_warnings()
    graphtrail.configure(span_processor=Broken())
    try:
        agent = graphtrail.trace_agent(build_create_agent())
        with caplog.at_level(logging.WARNING, logger="graphtrail"), graphtrail.capture() as cap:
            results = [agent.invoke(ask(n)) for n in range(3)]
    finally:
        graphtrail.configure(exporter="none")
    assert [r["messages"][-1].content for r in results] == ["Answer 0", "Answer 1", "Answer 2"]
    assert [t.citations for t in cap.trajectories] == [["N0-c"], ["N1-c"], ["N2-c"]]
    span_ids = [step.span_id for t in cap.trajectories for step in t.steps]
    if hook == "on_end":  # the spans were made, only their export failed: trajectories still point at them
        assert all(span_ids)
    else:  # no span could start: the trajectories are whole, without span ids
        assert span_ids and not any(span_ids)
    ours = [r for r in caplog.records if r.name == "graphtrail" and r.levelno >= logging.WARNING]
    assert len(ours) == 1 and "processor bug" in ours[0].getMessage()  # said once, not once per span


def test_several_exporters_at_once_each_get_every_span(tmp_path):
    path = tmp_path / "both.jsonl"
    graphtrail.configure(exporter=["jsonl", "memory"], path=path)
    try:
        with graphtrail.capture() as cap:
            graphtrail.trace_agent(build_create_agent()).invoke(ask(7))
        flush(10_000)
        in_memory = graphtrail.tracer.get_memory_exporter().get_finished_spans()
    finally:
        graphtrail.configure(exporter="none")
    assert trajectories_from_spans(in_memory) == cap.trajectories
    assert trajectories_from_otlp_json(path) == cap.trajectories


def test_configure_is_recallable_and_plugs_in_own_exporters(memory):
    agent = graphtrail.trace_agent(build_create_agent())
    agent.invoke(ask(1))
    assert memory.get_finished_spans()
    mine = InMemorySpanExporter()
    graphtrail.configure(span_processor=SimpleSpanProcessor(mine))
    agent.invoke(ask(2))
    assert memory.get_finished_spans()[-1].attributes.get("graphtrail.question") != ask(2)["messages"][0][1]
    roots = [s for s in mine.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert len(roots) == 1 and roots[0].resource.attributes["service.name"] == "graphtrail"
    assert graphtrail.tracer.get_memory_exporter() is None


def test_configure_rejects_bad_arguments():
    import pytest

    with pytest.raises(ValueError):
        graphtrail.configure(exporter="zipkin")
    with pytest.raises(ValueError):
        graphtrail.configure(content="some")
    with pytest.raises(ValueError):
        graphtrail.configure(exporter=["jsonl", "jsonl"])


def test_an_applications_global_provider_is_used_not_replaced():
    # A global TracerProvider is one-shot per process, so this runs in its own interpreter.
    script = textwrap.dedent(
        """
        import json
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import graphtrail
        from tests.test_tracer_kit import ask, build_create_agent

        app = InMemorySpanExporter()
        provider = TracerProvider(resource=Resource.create({"service.name": "the-app"}))
        provider.add_span_processor(SimpleSpanProcessor(app))
        trace.set_tracer_provider(provider)
        processors_before = len(provider._active_span_processor._span_processors)

        returned = graphtrail.configure()  # nothing asked: use the app's provider, add nothing
        agent = graphtrail.trace_agent(build_create_agent(), name="in-app")
        with trace.get_tracer("app").start_as_current_span("request"):
            agent.invoke(ask(1))
        spans = app.get_finished_spans()
        root = next(s for s in spans if s.name == "invoke_agent in-app")
        request = next(s for s in spans if s.name == "request")

        graphtrail.configure(exporter="memory")  # asked: one switchable processor is added
        graphtrail.configure(exporter="memory")  # re-configured: still one
        agent.invoke(ask(2))
        mem = graphtrail.tracer.get_memory_exporter().get_finished_spans()
        print(json.dumps({
            "same_provider": returned is provider and trace.get_tracer_provider() is provider,
            "processors_added_unasked": len(provider._active_span_processor._span_processors) - processors_before - 1,
            "service": root.resource.attributes["service.name"],
            "root_under_request": root.parent.span_id == request.context.span_id,
            "memory_roots": [s.name for s in mem if s.name.startswith("invoke_agent")],
        }))
        """
    )
    root_dir = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", script], cwd=root_dir, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {
        "same_provider": True,
        "processors_added_unasked": 0,
        "service": "the-app",
        "root_under_request": True,
        "memory_roots": ["invoke_agent in-app"],
    }


def test_in_memory_spans_rebuild_many_runs(memory):
    agent = graphtrail.trace_agent(build_create_agent())
    with graphtrail.capture() as cap:
        agent.batch([ask(n) for n in range(6)])
    rebuilt = trajectories_from_spans(memory.get_finished_spans())
    assert sorted(rebuilt, key=lambda t: t.run_id) == sorted(cap.trajectories, key=lambda t: t.run_id)
