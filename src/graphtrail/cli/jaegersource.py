"""Read graphtrail traces back from a live Jaeger through its query API (``/api/traces``).

``graphtrail traces stats --jaeger URL --service NAME --since 24h`` needs every
run of a service in a time window. Jaeger's search returns at most ``limit``
traces per request and promises no order among them, so paging by "older than
the last one seen" could skip traces. Instead the window is split: a slice that
comes back full is halved and both halves are asked again, until every slice
returns fewer than ``limit`` traces. Each trace is then turned back into the
OTLP/JSON shape graphtrail's own files have (the inverse of Jaeger's OTLP
translator, see ``tracefiles.otlp_to_jaeger``), so one reader serves both.

Only ``/api/traces`` is used: it is served by Jaeger v1 and v2 alike.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from .errors import InputError

__all__ = ["parse_since", "fetch_jaeger_traces", "jaeger_to_otlp"]

DEFAULT_PAGE = 200
MAX_TRACES = 50_000
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
# Tags Jaeger's translator derives from OTLP fields (not span attributes): turned back into those fields.
_DERIVED = {"otel.scope.name", "otel.scope.version", "span.kind", "otel.status_code", "otel.status_description", "error"}
_KINDS = {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}


def parse_since(text: str) -> float:
    """``"24h"``, ``"30m"``, ``"7d"``, ``"90s"``, ``"2w"`` as seconds; InputError otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text or "")
    if not match or float(match.group(1)) <= 0:
        raise InputError(f"--since {text!r} is not a duration", "write a number and a unit, e.g. 90m, 24h or 7d")
    return float(match.group(1)) * _UNITS[match.group(2)]


def _get(url: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
    full = f"{url.rstrip('/')}/api/traces?{urllib.parse.urlencode(params)}"
    try:
        with urllib.request.urlopen(full, timeout=timeout) as resp:  # noqa: S310 - the user's Jaeger
            body = resp.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:200].strip()
        raise InputError(f"Jaeger at {url} answered {exc.code} to /api/traces ({detail or exc.reason})",
                         "check --jaeger (the query UI's address, e.g. http://localhost:16686) and --service") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise InputError(f"cannot reach Jaeger at {url} ({reason})",
                         "check --jaeger: the Jaeger query service's address, e.g. http://localhost:16686") from None
    try:
        doc = json.loads(body)
    except ValueError:
        raise InputError(f"{url}/api/traces did not answer JSON", "is --jaeger the Jaeger query service (port 16686)?") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("data") or [], list):
        raise InputError(f"{url}/api/traces answered an unexpected shape", "is --jaeger the Jaeger query service (port 16686)?")
    return doc


def fetch_jaeger_traces(url: str, service: str, since_s: float, *, page: int = DEFAULT_PAGE, timeout: float = 10.0,
                        now: float | None = None, max_traces: int = MAX_TRACES) -> list[dict[str, Any]]:
    """Every Jaeger trace of ``service`` that has spans in the last ``since_s`` seconds (Jaeger JSON traces)."""
    if urllib.parse.urlparse(url).scheme not in ("http", "https"):
        raise InputError(f"--jaeger {url!r} is not an http(s) URL", "pass the query service's address, e.g. http://localhost:16686")
    end_us = int((now if now is not None else time.time()) * 1e6)
    start_us = end_us - int(since_s * 1e6)
    found: dict[str, dict[str, Any]] = {}
    slices = [(start_us, end_us)]
    while slices:
        lo, hi = slices.pop()
        data = _get(url, {"service": service, "start": lo, "end": hi, "limit": page}, timeout).get("data") or []
        if len(data) >= page and hi - lo > 1000:  # full: there may be more in this slice; ask for each half
            mid = (lo + hi) // 2
            slices += [(lo, mid), (mid + 1, hi)]
            continue
        for trace in data:
            if isinstance(trace, dict) and trace.get("traceID"):
                found.setdefault(str(trace["traceID"]), trace)
        if len(found) >= max_traces:
            break
    return list(found.values())


def _any_value(tag: dict[str, Any]) -> dict[str, Any] | None:
    kind, value = str(tag.get("type", "string")).lower(), tag.get("value")
    if kind == "bool":
        return {"boolValue": bool(value) if not isinstance(value, str) else value.lower() == "true"}
    if kind == "int64":
        return {"intValue": str(int(value))}
    if kind == "float64":
        return {"doubleValue": float(value)}
    if kind == "binary":
        return None
    return {"stringValue": value if isinstance(value, str) else json.dumps(value)}


def _attributes(tags: Any) -> list[dict[str, Any]]:
    out = []
    for tag in tags or []:
        if isinstance(tag, dict) and isinstance(tag.get("key"), str) and tag["key"] not in _DERIVED:
            value = _any_value(tag)
            if value is not None:
                out.append({"key": tag["key"], "value": value})
    return out


def _hex(value: Any, width: int) -> str:
    return str(value or "").lower().zfill(width)


def _otlp_span(span: dict[str, Any]) -> dict[str, Any]:
    tags = {t.get("key"): t.get("value") for t in span.get("tags") or [] if isinstance(t, dict)}
    start = int(span.get("startTime") or 0) * 1000
    out: dict[str, Any] = {
        "traceId": _hex(span.get("traceID"), 32),
        "spanId": _hex(span.get("spanID"), 16),
        "name": str(span.get("operationName") or ""),
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + int(span.get("duration") or 0) * 1000),
        "attributes": _attributes(span.get("tags")),
    }
    links = []
    for ref in span.get("references") or []:
        if not isinstance(ref, dict):
            continue
        if ref.get("refType") == "CHILD_OF" and "parentSpanId" not in out and ref.get("traceID") == span.get("traceID"):
            out["parentSpanId"] = _hex(ref.get("spanID"), 16)
        else:
            links.append({"traceId": _hex(ref.get("traceID"), 32), "spanId": _hex(ref.get("spanID"), 16)})
    if links:
        out["links"] = links
    kind = _KINDS.get(str(tags.get("span.kind") or ""))
    if kind:
        out["kind"] = kind
    code = tags.get("otel.status_code")
    if code == "ERROR" or tags.get("error") in (True, "true"):
        out["status"] = {"code": 2, "message": str(tags.get("otel.status_description") or "")}
    elif code == "OK":
        out["status"] = {"code": 1}
    events = []
    for log in span.get("logs") or []:
        fields = log.get("fields") if isinstance(log, dict) else None
        name = next((f.get("value") for f in fields or [] if isinstance(f, dict) and f.get("key") == "event"), "")
        events.append({
            "timeUnixNano": str(int(log.get("timestamp") or 0) * 1000),
            "name": str(name),
            "attributes": _attributes([f for f in fields or [] if isinstance(f, dict) and f.get("key") != "event"]),
        })
    if events:
        out["events"] = events
    return out


def jaeger_to_otlp(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """One OTLP/JSON document (``resourceSpans``) holding the spans of Jaeger JSON ``traces``."""
    resource_spans = []
    for trace in traces:
        processes = trace.get("processes") or {}
        by_process: dict[str, list[dict[str, Any]]] = {}
        for span in trace.get("spans") or []:
            if isinstance(span, dict):
                span.setdefault("traceID", trace.get("traceID"))
                by_process.setdefault(str(span.get("processID") or ""), []).append(_otlp_span(span))
        for pid, spans in by_process.items():
            process = processes.get(pid) or {}
            attrs = [{"key": "service.name", "value": {"stringValue": str(process.get("serviceName") or "unknown_service")}}]
            attrs += _attributes(process.get("tags"))
            resource_spans.append({"resource": {"attributes": attrs}, "scopeSpans": [{"scope": {"name": "graphtrail"}, "spans": spans}]})
    return {"resourceSpans": resource_spans}
