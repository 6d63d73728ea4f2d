"""Read trace files and convert them: OTLP JSON (lines or one document) -> Jaeger JSON.

graphtrail's ``jsonl`` exporter writes one OTLP/JSON ``ExportTraceServiceRequest``
per line. ``graphtrail traces`` shows such a file as trajectories, or rewrites
it as one OTLP/JSON document or as the Jaeger JSON that every Jaeger UI's
"Upload JSON" accepts (including the 1.x UIs that predate OTLP upload).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._jsonread import JSONInputError
from .._jsonread import loads as json_loads
from .errors import InputError

__all__ = ["read_json_records", "iter_json_records", "check_trace_file", "MAX_LINE_BYTES", "MAX_DOCUMENT_BYTES", "otlp_documents", "merge_otlp", "otlp_to_jaeger", "is_otlp", "is_trajectory"]


#: The longest line of a JSON-lines trace file, and the largest trace file that is one JSON document
#: (an indented export, a JSON array): each is held in memory whole, so each has a bound. graphtrail's
#: own exporter writes one batch of spans per line, far below it.
MAX_LINE_BYTES = 64 << 20
MAX_DOCUMENT_BYTES = 64 << 20


def check_trace_file(path: Path) -> None:
    """Refuse at once what cannot be streamed: a missing path, a folder, a FIFO or a device."""
    import stat

    if not path.exists():
        raise InputError(f"trace file not found: {path}", "pass the traces.jsonl written by `graphtrail run`/`demo` or by configure(exporter='jsonl')")
    if path.is_dir():
        raise InputError(f"{path} is a directory", "pass a trace file, e.g. OUT/traces.jsonl")
    if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block, /dev/zero never end
        raise InputError(f"{path} is not a regular file (a pipe or a device)", "save the traces to a file first and pass its path")


def read_json_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects in ``path``: one whole document, or one object per line (all held in memory)."""
    return list(iter_json_records(path))


def iter_json_records(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects in ``path``, read as a stream: one per line, or those of one whole document.

    A JSON-lines file is read line by line (memory: one line, at most ``MAX_LINE_BYTES``); a file
    that is one JSON document (an object or an array of objects, possibly indented) is read whole,
    up to ``MAX_DOCUMENT_BYTES``. Errors name the line, as before. The path itself is checked
    at once (:func:`check_trace_file`), before the first record is asked for.
    """
    check_trace_file(path)
    return _records(path)


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as fh:
        lineno, first = 0, None
        while first is None:  # the first line that holds something decides the layout
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                raise InputError(f"trace file {path} is empty", "run an agent with tracing to a jsonl file first (graphtrail run ... --out DIR)")
            lineno += 1
            text = _decode(raw, path, lineno, first_line=lineno == 1)
            if text.strip():
                first = text
        obj = _parse_line(first, path, lineno, strict=False)
        head = first.strip()
        opens_document = obj is None and head.startswith(("{", "[")) and not head.endswith(("}", "]"))
        if opens_document or isinstance(obj, list):  # one document: indented, or an array
            yield from _whole_document(path)
            return
        if not isinstance(obj, dict):
            _parse_line(first, path, lineno, strict=True)  # not JSON: says why
            raise InputError(f"{path} line {lineno} is not a JSON object", "expected OTLP/JSON lines or Trajectory JSON lines")
        check_record(obj, f"{path} line {lineno}")
        yield obj
        for raw in iter(lambda: fh.readline(MAX_LINE_BYTES + 1), b""):
            lineno += 1
            text = _decode(raw, path, lineno)
            if not text.strip():
                continue
            obj = _parse_line(text, path, lineno, strict=True)
            if not isinstance(obj, dict):
                raise InputError(f"{path} line {lineno} is not a JSON object", "expected OTLP/JSON lines or Trajectory JSON lines")
            check_record(obj, f"{path} line {lineno}")
            yield obj


def _decode(raw: bytes, path: Path, lineno: int, first_line: bool = False) -> str:
    if len(raw) > MAX_LINE_BYTES:
        raise InputError(f"{path} line {lineno} is longer than {MAX_LINE_BYTES >> 20} MB",
                         "expected OTLP/JSON lines (one batch of spans per line) or Trajectory JSON lines")
    try:
        text = raw.decode("utf-8-sig" if first_line else "utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} line {lineno} is not UTF-8 text", "pass a trace file written by graphtrail (OTLP/JSON lines or trajectories)") from None
    return text[:-1] if text.endswith("\n") else text


def _parse_line(text: str, path: Path, lineno: int, *, strict: bool) -> Any:
    try:
        return json_loads(text, first_line=lineno)
    except JSONInputError as exc:
        if not strict:
            return None
        raise InputError(
            f"{path} line {lineno} is not JSON ({exc.reason})",
            "expected OTLP/JSON lines (graphtrail's jsonl exporter) or one JSON document",
        ) from None


def _whole_document(path: Path) -> Iterator[dict[str, Any]]:
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise InputError(f"{path} is one JSON document of {size >> 20} MB, over the {MAX_DOCUMENT_BYTES >> 20} MB read whole",
                         "write the traces as JSON lines (configure(exporter='jsonl') does), which are read as a stream at any size")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path} line {line} is not UTF-8 text", "pass a trace file written by graphtrail (OTLP/JSON lines or trajectories)") from None
    try:
        whole = json_loads(text)
    except JSONInputError as exc:
        line = f" line {exc.line}" if getattr(exc, "line", None) else ""
        raise InputError(f"{path}{line} is not JSON ({exc.reason})",
                         "expected OTLP/JSON lines (graphtrail's jsonl exporter) or one JSON document") from None
    if isinstance(whole, dict):
        check_record(whole, str(path))
        yield whole
        return
    if isinstance(whole, list) and all(isinstance(x, dict) for x in whole):
        for i, item in enumerate(whole):
            check_record(item, f"{path} item {i}")
        yield from whole
        return
    raise InputError(f"{path} line 1 is not a JSON object", "expected OTLP/JSON lines or Trajectory JSON lines")


# --------------------------------------------------------------- shape checks
# Trace files come from anywhere (other tools, hand edits). Every field the readers
# and converters below use is checked here first, so a wrong type is reported as
# "file line N: field: expected ..." instead of failing somewhere deep inside.
_HINT = "expected OTLP/JSON lines (graphtrail's jsonl exporter) or Trajectory JSON lines"


def check_record(record: dict[str, Any], where: str) -> None:
    """Raise :class:`InputError` naming ``where`` and the field if ``record`` has the wrong shape."""
    if is_otlp(record):
        _check_otlp(record, where)
    elif is_trajectory(record):
        from pydantic import ValidationError

        from graphtrail.tracer import Trajectory

        try:
            Trajectory.model_validate(record)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "record"
            raise InputError(f"{where}: not a valid trajectory: {field}: {err['msg']}", _HINT) from None


def _objects(value: Any, field: str, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError(f"{where}: {field}: expected a list of objects", _HINT)
    return value


def _check_otlp(doc: dict[str, Any], where: str) -> None:
    for i, rs in enumerate(_objects(doc.get("resourceSpans", doc.get("resource_spans")), "resourceSpans", where)):
        resource = rs.get("resource")
        if resource is not None:
            if not isinstance(resource, dict):
                raise InputError(f"{where}: resourceSpans[{i}].resource: expected an object", _HINT)
            _check_attributes(resource.get("attributes"), f"resourceSpans[{i}].resource.attributes", where)
        for j, ss in enumerate(_objects(rs.get("scopeSpans", rs.get("scope_spans")), f"resourceSpans[{i}].scopeSpans", where)):
            for k, span in enumerate(_objects(ss.get("spans"), f"resourceSpans[{i}].scopeSpans[{j}].spans", where)):
                _check_span(span, f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}]", where)


def _check_span(span: dict[str, Any], field: str, where: str) -> None:
    for key in ("traceId", "spanId", "parentSpanId", "name"):
        if span.get(key) is not None and not isinstance(span[key], str):
            raise InputError(f"{where}: {field}.{key}: expected a string", _HINT)
    for key in ("startTimeUnixNano", "endTimeUnixNano"):
        value = span.get(key)
        if value is not None and not _is_int_like(value):
            raise InputError(f"{where}: {field}.{key}: expected a whole number of nanoseconds", _HINT)
    if span.get("kind") is not None and not isinstance(span["kind"], (int, str)):
        raise InputError(f"{where}: {field}.kind: expected a number or a name", _HINT)
    if span.get("status") is not None and not isinstance(span["status"], dict):
        raise InputError(f"{where}: {field}.status: expected an object", _HINT)
    _check_attributes(span.get("attributes"), f"{field}.attributes", where)
    for n, event in enumerate(_objects(span.get("events"), f"{field}.events", where)):
        _check_attributes(event.get("attributes"), f"{field}.events[{n}].attributes", where)
    for n, link in enumerate(_objects(span.get("links"), f"{field}.links", where)):
        _check_attributes(link.get("attributes"), f"{field}.links[{n}].attributes", where)


def _is_int_like(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and 0 < len(value) <= 25 and value.lstrip("-").isdigit()


def _check_attributes(attributes: Any, field: str, where: str, depth: int = 0) -> None:
    for n, attr in enumerate(_objects(attributes, field, where)):
        if not isinstance(attr.get("key"), str):
            raise InputError(f"{where}: {field}[{n}].key: expected a string", _HINT)
        _check_any_value(attr.get("value"), f"{field}[{n}].value", where, depth)


def _check_any_value(value: Any, field: str, where: str, depth: int = 0) -> None:
    if value is None:
        return
    if not isinstance(value, dict) or depth > 16:
        raise InputError(f"{where}: {field}: expected an OTLP AnyValue object", _HINT)
    if "intValue" in value and not _is_int_like(value["intValue"]):
        raise InputError(f"{where}: {field}.intValue: expected a whole number", _HINT)
    if "stringValue" in value and not isinstance(value["stringValue"], str):
        raise InputError(f"{where}: {field}.stringValue: expected a string", _HINT)
    if "arrayValue" in value:
        array = value["arrayValue"]
        if not isinstance(array, dict):
            raise InputError(f"{where}: {field}.arrayValue: expected an object", _HINT)
        for n, item in enumerate(_objects(array.get("values"), f"{field}.arrayValue.values", where)):
            _check_any_value(item, f"{field}.arrayValue.values[{n}]", where, depth + 1)
    if "kvlistValue" in value:
        kvlist = value["kvlistValue"]
        if not isinstance(kvlist, dict):
            raise InputError(f"{where}: {field}.kvlistValue: expected an object", _HINT)
        _check_attributes(kvlist.get("values"), f"{field}.kvlistValue.values", where, depth + 1)


def is_otlp(record: dict[str, Any]) -> bool:
    return "resourceSpans" in record or "resource_spans" in record


def is_trajectory(record: dict[str, Any]) -> bool:
    return "run_id" in record and "steps" in record


def otlp_documents(records: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    docs = [r for r in records if is_otlp(r)]
    if not docs:
        raise InputError(f"{path} holds no OTLP spans", "conversion needs an OTLP/JSON trace file such as OUT/traces.jsonl")
    return docs


def merge_otlp(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One OTLP/JSON document holding every ``resourceSpans`` entry of ``docs``."""
    merged: list[Any] = []
    for doc in docs:
        merged.extend(doc.get("resourceSpans") or doc.get("resource_spans") or [])
    return {"resourceSpans": merged}


def _spans(doc: dict[str, Any]) -> Any:
    for rs in doc.get("resourceSpans") or doc.get("resource_spans") or []:
        for ss in rs.get("scopeSpans") or rs.get("scope_spans") or []:
            yield from ss.get("spans") or []


def trace_order(docs: list[dict[str, Any]]) -> list[str]:
    """The trace ids in ``docs`` (lower-case hex), in the order their first span appears."""
    return list(dict.fromkeys(_hex_id(span.get("traceId")) for doc in docs for span in _spans(doc)))


def keep_traces(docs: list[dict[str, Any]], trace_ids: set[str]) -> list[dict[str, Any]]:
    """``docs`` with only the spans of ``trace_ids``; emptied scope and resource entries are dropped."""
    kept: list[dict[str, Any]] = []
    for doc in docs:
        resources = []
        for rs in doc.get("resourceSpans") or doc.get("resource_spans") or []:
            scopes = []
            for ss in rs.get("scopeSpans") or rs.get("scope_spans") or []:
                spans = [sp for sp in ss.get("spans") or [] if _hex_id(sp.get("traceId")) in trace_ids]
                if spans:
                    scopes.append({**{k: v for k, v in ss.items() if k not in ("spans",)}, "spans": spans})
            if scopes:
                body = {k: v for k, v in rs.items() if k not in ("scopeSpans", "scope_spans")}
                resources.append({**body, "scopeSpans": scopes})
        if resources:
            kept.append({"resourceSpans": resources})
    return kept


# --------------------------------------------------------------- OTLP -> Jaeger
def _any_value(value: dict[str, Any]) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: _any_value(kv.get("value", {})) for kv in value["kvlistValue"].get("values", [])}
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _tag(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "type": "bool", "value": value}
    if isinstance(value, int):
        return {"key": key, "type": "int64", "value": value}
    if isinstance(value, float):
        # Jaeger (Go's encoding/json) writes an integral float64 without a fraction: 0, not 0.0
        integral = value.is_integer() and abs(value) < 1e21
        return {"key": key, "type": "float64", "value": int(value) if integral else value}
    if isinstance(value, str):
        return {"key": key, "type": "string", "value": value}
    # arrays and maps: compact JSON, as Jaeger's translator renders them
    return {"key": key, "type": "string", "value": json.dumps(value, separators=(",", ":"), ensure_ascii=False)}


def _tags(attributes: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [_tag(a["key"], _any_value(a.get("value", {}))) for a in attributes or [] if "key" in a]


def _hex_id(value: str | None) -> str:
    """OTLP/JSON ids are hex; tolerate base64 (the protobuf default JSON mapping)."""
    if not value:
        return ""
    try:
        int(value, 16)
        return value.lower()
    except ValueError:
        import base64

        return base64.b64decode(value).hex()


_KINDS = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


def _kind(value: Any) -> str | None:
    if isinstance(value, int):
        return _KINDS.get(value)
    if isinstance(value, str) and value.startswith("SPAN_KIND_"):
        name = value.removeprefix("SPAN_KIND_").lower()
        return None if name == "unspecified" else name
    return None


def _is_error(status: dict[str, Any] | None) -> bool:
    code = (status or {}).get("code")
    return code in (2, "STATUS_CODE_ERROR")


def otlp_to_jaeger(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """Jaeger UI JSON (``{"data": [trace, ...]}``) for the spans in OTLP/JSON ``docs``."""
    traces: dict[str, dict[str, Any]] = {}
    for doc in docs:
        for rs in doc.get("resourceSpans") or doc.get("resource_spans") or []:
            resource_tags = _tags((rs.get("resource") or {}).get("attributes"))
            service = next((t["value"] for t in resource_tags if t["key"] == "service.name"), "unknown_service")
            process = {"serviceName": service, "tags": [t for t in resource_tags if t["key"] != "service.name"]}
            for ss in rs.get("scopeSpans") or rs.get("scope_spans") or []:
                scope_tags = _scope_tags(ss.get("scope") or {})
                for span in ss.get("spans", []):
                    trace_id = _hex_id(span.get("traceId"))
                    trace = traces.setdefault(trace_id, {"traceID": trace_id, "spans": [], "processes": {}, "warnings": None})
                    pid = next((k for k, p in trace["processes"].items() if p == process), None)
                    if pid is None:
                        pid = f"p{len(trace['processes']) + 1}"
                        trace["processes"][pid] = process
                    trace["spans"].append(_jaeger_span(span, trace_id, pid, scope_tags))
    for trace in traces.values():
        trace["spans"].sort(key=lambda s: (s["startTime"], s["spanID"]))
    return {"data": list(traces.values())}


def _scope_tags(scope: dict[str, Any]) -> list[dict[str, Any]]:
    """``otel.scope.name``/``otel.scope.version``: the tags Jaeger's own OTLP translator puts first on every span."""
    return [_tag(key, scope[field]) for field, key in (("name", "otel.scope.name"), ("version", "otel.scope.version")) if scope.get(field)]


def _jaeger_span(span: dict[str, Any], trace_id: str, pid: str, scope_tags: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One span as Jaeger's OTLP translator writes it: scope tags, attributes, then span.kind and status tags."""
    start = int(span.get("startTimeUnixNano") or 0)
    end = int(span.get("endTimeUnixNano") or start)
    references = []
    if span.get("parentSpanId"):
        references.append({"refType": "CHILD_OF", "traceID": trace_id, "spanID": _hex_id(span["parentSpanId"])})
    for link in span.get("links") or []:
        references.append({"refType": "FOLLOWS_FROM", "traceID": _hex_id(link.get("traceId")), "spanID": _hex_id(link.get("spanId"))})
    tags = [*(scope_tags or []), *_tags(span.get("attributes"))]
    kind = _kind(span.get("kind"))
    if kind:
        tags.append(_tag("span.kind", kind))
    status = span.get("status") or {}
    if _is_error(status):
        tags.append(_tag("otel.status_code", "ERROR"))
        tags.append(_tag("error", True))
    elif status.get("code") in (1, "STATUS_CODE_OK"):
        tags.append(_tag("otel.status_code", "OK"))
    if status.get("message"):
        tags.append(_tag("otel.status_description", status["message"]))
    logs = []
    for ev in span.get("events") or []:
        fields = _tags(ev.get("attributes"))
        if ev.get("name") and not any(f["key"] == "event" for f in fields):
            fields.insert(0, _tag("event", ev["name"]))
        logs.append({"timestamp": int(ev.get("timeUnixNano") or start) // 1000, "fields": fields})
    return {
        "traceID": trace_id,
        "spanID": _hex_id(span.get("spanId")),
        "operationName": span.get("name", ""),
        "references": references,
        "startTime": start // 1000,
        "duration": max(0, end - start) // 1000,
        "tags": tags,
        "logs": logs,
        "processID": pid,
        "warnings": None,
        "flags": 1,
    }
