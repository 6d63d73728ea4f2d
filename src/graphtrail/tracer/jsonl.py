"""OTLP/JSON lines: a file exporter Jaeger UI's upload accepts, and its reader.

Each line is one ``ExportTraceServiceRequest`` in the OTLP/JSON encoding. The
protobuf message comes from the OTLP exporters' own encoder and is rendered by
``google.protobuf.json_format``; OTLP/JSON differs from the canonical protobuf
JSON mapping in that trace and span ids are hex, not base64, which is patched
here. Enums are written as integers, as OTLP/JSON requires.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from .._lines import split_lines
from ._safety import warn_once

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _b64_to_hex(value: str) -> str:
    return base64.b64decode(value).hex()


def _hexify_ids(obj: dict[str, Any]) -> None:
    for key in _ID_FIELDS:
        if isinstance(obj.get(key), str) and obj[key]:
            obj[key] = _b64_to_hex(obj[key])


def spans_to_otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """One OTLP/JSON ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``) for ``spans``."""
    message = encode_spans(spans)
    data = MessageToDict(message, use_integers_for_enums=True)
    for resource_spans in data.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                _hexify_ids(span)
                for link in span.get("links", []):
                    _hexify_ids(link)
    return data


class JsonlSpanExporter(SpanExporter):
    """Append one OTLP/JSON line per export batch to ``path``.

    The file is opened in append mode: an existing trace file is never
    overwritten. Upload it in Jaeger UI (Search -> Upload), or read it back with
    :func:`graphtrail.tracer.trajectories_from_otlp_json`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: Any = None
        self._closed = False
        self.last_error: str | None = None  # why the last batch could not be written (one line, names the file)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._closed:
            return SpanExportResult.FAILURE
        try:
            line = json.dumps(spans_to_otlp_json(spans), separators=(",", ":"), ensure_ascii=False)
            with self._lock:
                if self._file is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open across batches
                self._file.write(line + "\n")
                self._file.flush()
            return SpanExportResult.SUCCESS
        except Exception as exc:  # noqa: BLE001
            reason = getattr(exc, "strerror", None) or f"{type(exc).__name__}: {exc}"
            self.last_error = f"cannot write {self.path}: {reason}"
            warn_once("jsonl-export", "graphtrail: could not write spans to %s (%r)", self.path, exc)
            return SpanExportResult.FAILURE

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with self._lock:
            if self._file is not None:
                self._file.flush()
        return True

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None


# ---------------------------------------------------------------- reading


def _any_value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return tuple(_any_value(v) for v in value["arrayValue"].get("values", []))
    if "kvlistValue" in value:
        return {kv["key"]: _any_value(kv.get("value", {})) for kv in value["kvlistValue"].get("values", [])}
    if "bytesValue" in value:
        return base64.b64decode(value["bytesValue"])
    return None


def _id_hex(value: str | None, nbytes: int) -> str | None:
    """OTLP/JSON ids are hex; tolerate base64 (the plain protobuf JSON mapping) too."""
    if not value:
        return None
    if len(value) == nbytes * 2:
        try:
            bytes.fromhex(value)
            return value.lower()
        except ValueError:
            pass
    try:
        return base64.b64decode(value).hex()
    except (binascii.Error, ValueError):
        return None


def iter_otlp_json_spans(source: str | os.PathLike[str] | Iterable[str]) -> Iterator[dict[str, Any]]:
    """Flat span records from OTLP/JSON lines (a path, or an iterable of lines)."""
    if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and source.lstrip().startswith("{")):
        with open(source, encoding="utf-8") as fh:
            lines: Iterable[str] = split_lines(fh.read())
    elif isinstance(source, str):
        lines = split_lines(source)
    else:
        lines = source
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"line {number} is not JSON: {exc}") from exc
        yield from spans_of_request(request)


def spans_of_request(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Flat span records of one parsed OTLP/JSON ``ExportTraceServiceRequest`` (a reader that parsed the line already)."""
    for resource_spans in request.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                yield {
                    "name": span.get("name", ""),
                    "trace_id": _id_hex(span.get("traceId"), 16),
                    "span_id": _id_hex(span.get("spanId"), 8),
                    "parent_id": _id_hex(span.get("parentSpanId"), 8),
                    "start_ns": int(span.get("startTimeUnixNano", 0)),
                    "end_ns": int(span.get("endTimeUnixNano", 0)),
                    "attributes": {a["key"]: _any_value(a.get("value", {})) for a in span.get("attributes", [])},
                }
