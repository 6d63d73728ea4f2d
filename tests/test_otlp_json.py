"""The ``jsonl`` exporter writes OTLP-JSON that the official proto mapping accepts.

Each line must be one ``ExportTraceServiceRequest`` in the OTLP/JSON encoding
(https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): that is what
Jaeger UI's "JSON File" upload and any OTLP/HTTP receiver with
``Content-Type: application/json`` read. The check uses
``google.protobuf.json_format`` over the ``opentelemetry-proto`` messages, in
strict mode (unknown fields fail), after undoing the one documented deviation
of OTLP/JSON from the protobuf JSON mapping: trace and span ids are hex, not
base64.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphtrail
from graphtrail.tracer import trajectories_from_otlp_json
from tests import kg_agent
from tests.otlp_json import HEX_SPAN_ID, HEX_TRACE_ID, attrs, parse_line

SERVICE = "graphtrail-otlp-json-test"


@pytest.fixture(autouse=True)
def _restore_graphtrail_defaults() -> Iterator[None]:
    """These tests re-point graphtrail's exporter; leave the default behind for other modules."""
    yield
    graphtrail.configure()


@pytest.fixture
def jsonl_run(tmp_path: Path) -> tuple[Path, list[graphtrail.Trajectory]]:
    """Two traced runs of the KG agent written through ``configure(exporter="jsonl")``."""
    path = tmp_path / "traces.jsonl"
    provider = graphtrail.configure(exporter="jsonl", path=str(path), service_name=SERVICE)
    agent = graphtrail.trace_agent(kg_agent.build_agent(), name="kg-agent")
    with graphtrail.capture() as cap:
        agent.invoke(kg_agent.agent_input())
        agent.invoke(kg_agent.agent_input())
    provider.force_flush()
    return path, list(cap.trajectories)


def test_every_line_is_an_export_request_in_otlp_json(jsonl_run: tuple[Path, list[graphtrail.Trajectory]]) -> None:
    path, trajectories = jsonl_run
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert lines, "the jsonl exporter wrote nothing"

    spans = []
    for line in lines:
        raw = json.loads(line)
        assert set(raw) == {"resourceSpans"}, "each line is one ExportTraceServiceRequest"
        # The OTLP/JSON specifics Jaeger's upload relies on: lowerCamelCase keys and hex ids.
        for rs in raw["resourceSpans"]:
            assert rs["scopeSpans"], "resourceSpans without scopeSpans"
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    assert HEX_TRACE_ID.match(span["traceId"]), span["traceId"]
                    assert HEX_SPAN_ID.match(span["spanId"]), span["spanId"]
                    assert span.get("parentSpanId", "") == "" or HEX_SPAN_ID.match(span["parentSpanId"])
                    assert span["startTimeUnixNano"].isdigit() and span["endTimeUnixNano"].isdigit()
        request = parse_line(line)  # strict: an unknown or misspelt field raises ParseError
        for rs in request.resource_spans:
            assert attrs(rs.resource.attributes)["service.name"] == SERVICE
            for ss in rs.scope_spans:
                assert ss.scope.name, "instrumentation scope is named"
                spans.extend(ss.spans)

    # Ids have the sizes the proto requires once decoded, and times are ordered.
    for span in spans:
        assert len(span.trace_id) == 16 and any(span.trace_id)
        assert len(span.span_id) == 8 and any(span.span_id)
        assert len(span.parent_span_id) in (0, 8)
        assert span.end_time_unix_nano >= span.start_time_unix_nano > 0

    # One trace per run, each a single tree: one root and no orphan parents.
    by_trace: dict[bytes, list[Any]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    assert len(by_trace) == len(trajectories) == 2
    assert {t.trace_id for t in trajectories} == {tid.hex() for tid in by_trace}
    for trace_spans in by_trace.values():
        ids = {s.span_id for s in trace_spans}
        roots = [s for s in trace_spans if not s.parent_span_id]
        assert [r.name for r in roots] == ["invoke_agent kg-agent"]
        assert all(s.parent_span_id in ids for s in trace_spans if s.parent_span_id)
        names = sorted(s.name for s in trace_spans)
        for tool in kg_agent.TOOL_NAMES:
            assert names.count(f"execute_tool {tool}") == 1
        assert "chat scripted-kg-model" in names

        root_attrs = attrs(roots[0].attributes)
        assert root_attrs["graphtrail.answer"] == kg_agent.ANSWER
        assert json.loads(root_attrs["graphtrail.citations"]) == kg_agent.CITATIONS
        assert json.loads(root_attrs["graphtrail.visited"]) == kg_agent.VISITED
        assert json.loads(root_attrs["graphtrail.visited_uncited"]) == kg_agent.VISITED_UNCITED
        tool_attrs = {
            s.name.removeprefix("execute_tool "): attrs(s.attributes)
            for s in trace_spans
            if s.name.startswith("execute_tool ")
        }
        for i, tool in enumerate(kg_agent.TOOL_NAMES[:3]):
            assert json.loads(tool_attrs[tool]["graphtrail.entities.visited"]) == kg_agent.STEP_ENTITIES[i]
        assert json.loads(tool_attrs["get_neighbors"]["graphtrail.edges.traversed"]) == kg_agent.STEP_EDGES[1]
        assert sorted(a["graphtrail.step"] for a in tool_attrs.values()) == [1, 2, 3, 4]


def test_trajectories_rebuilt_from_the_file_equal_the_captured_ones(
    jsonl_run: tuple[Path, list[graphtrail.Trajectory]],
) -> None:
    path, captured = jsonl_run
    rebuilt = trajectories_from_otlp_json(path)
    assert len(rebuilt) == len(captured) == 2
    by_run = {t.run_id: t for t in rebuilt}
    for original in captured:
        assert by_run[original.run_id] == original
    # and they carry the content, not just equal empties
    assert all(t.answer == kg_agent.ANSWER and t.visited == kg_agent.VISITED for t in rebuilt)
