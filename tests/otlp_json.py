"""Reading OTLP/JSON (what graphtrail's ``jsonl`` exporter writes) with the official proto mapping.

OTLP/JSON is the protobuf JSON mapping with one documented deviation
(https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): trace and
span ids are hex strings, not base64 bytes. :func:`parse_line` undoes that and
then lets ``google.protobuf.json_format`` parse strictly (unknown fields fail)
into ``ExportTraceServiceRequest``.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

HEX_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
HEX_SPAN_ID = re.compile(r"^[0-9a-f]{16}$")


def _hex_to_b64(value: str) -> str:
    return base64.b64encode(bytes.fromhex(value)).decode("ascii")


def to_proto_json(line_obj: dict[str, Any]) -> dict[str, Any]:
    """OTLP/JSON -> protobuf JSON mapping: hex ids become base64 bytes (spec section 'JSON Protobuf Encoding')."""
    obj = copy.deepcopy(line_obj)
    for resource_spans in obj.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = _hex_to_b64(span[key])
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        if link.get(key):
                            link[key] = _hex_to_b64(link[key])
    return obj


def parse_line(line: str) -> ExportTraceServiceRequest:
    return json_format.Parse(json.dumps(to_proto_json(json.loads(line))), ExportTraceServiceRequest())


def any_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def attrs(kvs: list[KeyValue]) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in kvs}
