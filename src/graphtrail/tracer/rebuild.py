"""Trajectories rebuilt from exported spans (in-memory ReadableSpans or OTLP/JSON lines).

Everything a :class:`Trajectory` holds is on the spans (docs/spans.md), so the
rebuilt object equals the captured one: times come from the span timestamps
(``ns / 1e9`` on both sides), lists from the JSON-string attributes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from . import attributes as A
from .jsonl import iter_otlp_json_spans
from .provenance import signals_from_attributes
from .trajectory import Edge, Entity, ModelCall, Step, Trajectory


def _record_of(span: Any) -> dict[str, Any]:
    ctx = span.get_span_context() if hasattr(span, "get_span_context") else span.context
    parent = span.parent
    return {
        "name": span.name,
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent_id": format(parent.span_id, "016x") if parent is not None else None,
        "start_ns": int(span.start_time or 0),
        "end_ns": int(span.end_time or 0),
        "attributes": dict(span.attributes or {}),
    }


def _json(attrs: Mapping[str, Any], key: str, default: Any) -> Any:
    value = attrs.get(key)
    if not isinstance(value, str):
        return default
    try:
        return json.loads(value)
    except ValueError:
        return default


def _int(attrs: Mapping[str, Any], key: str) -> int | None:
    value = attrs.get(key)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _str(attrs: Mapping[str, Any], key: str) -> str | None:
    value = attrs.get(key)
    return None if value is None else str(value)


def _step(rec: dict[str, Any]) -> Step:
    a = rec["attributes"]
    ids = _json(a, A.ENTITIES_VISITED, [])
    objects = _json(a, A.ENTITIES, None)
    entities = [Entity(**e) for e in objects] if isinstance(objects, list) else [Entity(id=str(i)) for i in ids]
    edges = [Edge(source=s, relation=r, target=t) for s, r, t in _json(a, A.EDGES_TRAVERSED, [])]
    return Step(
        index=int(a[A.STEP]),
        tool=str(a.get(A.GEN_AI_TOOL_NAME, "tool")),
        args=_json(a, A.STEP_ARGS, {}),
        tool_call_id=_str(a, A.GEN_AI_TOOL_CALL_ID),
        span_id=rec["span_id"],
        entities=entities,
        edges=edges,
        output=_str(a, A.OUTPUT_VALUE),
        error=_str(a, A.STEP_ERROR),
        start_time=rec["start_ns"] / 1e9,
        end_time=rec["end_ns"] / 1e9,
        langgraph_node=_str(a, A.LANGGRAPH_NODE),
        langgraph_step=_int(a, A.LANGGRAPH_STEP),
    )


def _model_call(rec: dict[str, Any]) -> ModelCall:
    a = rec["attributes"]
    return ModelCall(
        index=int(a[A.MODEL_CALL]),
        model=_str(a, A.GEN_AI_RESPONSE_MODEL) or _str(a, A.GEN_AI_REQUEST_MODEL),
        span_id=rec["span_id"],
        input_tokens=_int(a, A.GEN_AI_USAGE_INPUT_TOKENS),
        output_tokens=_int(a, A.GEN_AI_USAGE_OUTPUT_TOKENS),
        tool_calls=[str(n) for n in _json(a, A.TOOL_CALLS, [])],
        start_time=rec["start_ns"] / 1e9,
        end_time=rec["end_ns"] / 1e9,
        langgraph_node=_str(a, A.LANGGRAPH_NODE),
        langgraph_step=_int(a, A.LANGGRAPH_STEP),
    )


def _build(records: Iterable[dict[str, Any]]) -> list[Trajectory]:
    by_id: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in records:
        by_id[(rec["trace_id"], rec["span_id"])] = rec
    roots: dict[tuple[str, str], dict[str, Any]] = {k: r for k, r in by_id.items() if A.RUN_ID in r["attributes"]}
    steps: dict[tuple[str, str], list[Step]] = {k: [] for k in roots}
    calls: dict[tuple[str, str], list[ModelCall]] = {k: [] for k in roots}
    for key, rec in by_id.items():
        a = rec["attributes"]
        if A.STEP not in a and A.MODEL_CALL not in a:
            continue
        # the nearest ancestor that is a graphtrail root owns this span
        cur, owner, hops = rec, None, 0
        while cur is not None and hops < 10_000:
            parent_key = (cur["trace_id"], cur["parent_id"]) if cur["parent_id"] else None
            if parent_key is None:
                break
            if parent_key in roots:
                owner = parent_key
                break
            cur, hops = by_id.get(parent_key), hops + 1
        if owner is None:
            continue
        if A.STEP in a:
            steps[owner].append(_step(rec))
        else:
            calls[owner].append(_model_call(rec))
    out = []
    for key, rec in sorted(roots.items(), key=lambda kv: kv[1]["start_ns"]):
        a = rec["attributes"]
        out.append(
            Trajectory(
                run_id=str(a[A.RUN_ID]),
                trace_id=rec["trace_id"],
                span_id=rec["span_id"],
                name=str(a.get(A.GEN_AI_AGENT_NAME, "agent")),
                question=_str(a, A.QUESTION),
                answer=_str(a, A.ANSWER),
                citations=[str(c) for c in _json(a, A.CITATIONS, [])],
                steps=sorted(steps[key], key=lambda s: s.index),
                model_calls=sorted(calls[key], key=lambda m: m.index),
                status=str(a.get(A.STATUS, "ok")),  # type: ignore[arg-type]
                error=_str(a, A.ERROR),
                start_time=rec["start_ns"] / 1e9,
                end_time=rec["end_ns"] / 1e9,
                conversation_id=_str(a, A.GEN_AI_CONVERSATION_ID),
                metadata=_json(a, A.METADATA, {}),
                provenance=signals_from_attributes(a),
            )
        )
    return out


def trajectories_from_spans(spans: Iterable[Any]) -> list[Trajectory]:
    """Trajectories of the graphtrail roots among finished SDK spans (``ReadableSpan``), by start time."""
    return _build(_record_of(s) for s in spans)


def trajectories_from_span_records(records: Iterable[dict[str, Any]]) -> list[Trajectory]:
    """Trajectories of flat span records (as :func:`~.jsonl.iter_otlp_json_spans` yields them), by start time.

    For readers that group a file's spans by trace and rebuild each trace once it is complete,
    so that memory holds the traces in flight rather than the whole file (``graphtrail traces``).
    """
    return _build(records)


def trajectories_from_otlp_json(source: str | os.PathLike[str] | Iterable[str]) -> list[Trajectory]:
    """Trajectories from OTLP/JSON lines: a file path (e.g. the jsonl exporter's), a string, or lines."""
    return _build(iter_otlp_json_spans(source))
