"""The Jaeger upload file (`graphtrail traces --format jaeger`) carries what Jaeger's own
OTLP translator gives a span: scope tags first, then the attributes, span.kind and
status tags; events as logs. tests/test_jaeger_integration.py compares it with a
live Jaeger's /api/traces; this one runs everywhere."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.trace import Status, StatusCode

import graphtrail
from graphtrail import __version__
from graphtrail.cli.tracefiles import otlp_to_jaeger
from graphtrail.tracer import get_memory_exporter, get_tracer_provider, spans_to_otlp_json
from tests.test_tracer_kit import ask, build_create_agent


def _jaeger(spans: Any) -> dict[str, Any]:
    return otlp_to_jaeger([json.loads(json.dumps(spans_to_otlp_json(spans)))])


def test_agent_spans_get_scope_tags_and_entity_logs() -> None:
    graphtrail.configure(exporter="memory", service_name="upload-test")
    try:
        graphtrail.trace_agent(build_create_agent(), name="kg").invoke(ask(2))
        spans = get_memory_exporter().get_finished_spans()
    finally:
        graphtrail.configure(exporter="none")
    (trace,) = _jaeger(spans)["data"]
    for span in trace["spans"]:
        assert span["tags"][:2] == [
            {"key": "otel.scope.name", "type": "string", "value": "graphtrail"},
            {"key": "otel.scope.version", "type": "string", "value": __version__},
        ]
    tool = next(s for s in trace["spans"] if s["operationName"] == "execute_tool search")
    (log,) = tool["logs"]
    fields = {f["key"]: f["value"] for f in log["fields"]}
    assert log["fields"][0] == {"key": "event", "type": "string", "value": "graphtrail.entities"}
    assert fields["graphtrail.entity.ids"] == '["N2-a","N2-b"]'  # arrays: compact JSON, as Jaeger renders them
    assert fields["graphtrail.entity.count"] == 2
    assert {p["serviceName"] for p in trace["processes"].values()} == {"upload-test"}


def test_status_tags_follow_the_translator() -> None:
    graphtrail.configure(exporter="memory")
    try:
        tracer = get_tracer_provider().get_tracer("app", "1.2")
        with tracer.start_as_current_span("ok") as ok:
            ok.set_status(Status(StatusCode.OK))
        with tracer.start_as_current_span("bad") as bad:
            bad.set_status(Status(StatusCode.ERROR, "boom"))
        with tracer.start_as_current_span("unset"):
            pass
        spans = get_memory_exporter().get_finished_spans()
    finally:
        graphtrail.configure(exporter="none")
    by_name = {s["operationName"]: s for t in _jaeger(spans)["data"] for s in t["spans"]}
    keys = {name: [t["key"] for t in span["tags"]] for name, span in by_name.items()}
    assert keys["ok"] == ["otel.scope.name", "otel.scope.version", "span.kind", "otel.status_code"]
    assert keys["bad"] == ["otel.scope.name", "otel.scope.version", "span.kind", "otel.status_code", "error",
                           "otel.status_description"]
    assert keys["unset"] == ["otel.scope.name", "otel.scope.version", "span.kind"]
    assert {t["key"]: t["value"] for t in by_name["bad"]["tags"]}["otel.status_description"] == "boom"
