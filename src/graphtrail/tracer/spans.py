"""Recorded runs -> OTel spans, Steps and ModelCalls: where span attributes are set and content is cleaned.

Everything a span carries is decided here (and, for the root span, in
roots.py): the GenAI and OpenInference attributes (through genai.py), entity
extraction (extract.py), and redaction -- every free text goes through
``span_text`` and every argument through ``_content.clean_args``, so secrets are
removed in one place (redact.py) whatever the content mode.

Tree shape: the root ``invoke_agent {name}`` with ``chat {model}`` and
``execute_tool {tool}`` spans under it (each carrying ``langgraph.node`` and
``langgraph.step``). With ``node_spans`` on, one CHAIN span per LangGraph node
execution (a chain run whose name is its ``langgraph_node``) sits in between.
Every other chain run (sequences, hidden writers, routers, and node runs when
node spans are off) is folded into its nearest traced ancestor by the handler:
a dict entry, no record, no span.

Spans are created with an explicit parent context (the parent record's span)
and the OTel context is never attached, so concurrent runs cannot leak into
each other. They are built in one pass when the agent run ends, with the real
start and end times the records kept, or, once a run has gone on for
``configure(live_after=...)`` seconds, as each call finishes (``go_live``).
Why: the same work costs 2-3x more interleaved with LangGraph's code than in
one tight pass (benchmarks/tracer_overhead.py); docs/spans.md, "When spans
are made".
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode

from . import attributes as A
from ._content import clean_text, dumps, dumps_edges, dumps_entities, to_text
from ._content import clean_args as _clean_args
from ._safety import warn_once
from .batches import close_batches
from .extract import EdgeRef, EntityRef, extract_entities
from .genai import (
    MessageCache,
    capped_json,
    completion_messages,
    input_messages,
    messages_cap,
    output_messages,
    prompt_messages,
    provider_name,
)
from .records import ROOT_KINDS, RootRecord, RunRecord, StepRow, is_control_flow
from .redact import record_exception, redact, redact_entities, redact_name
from .trajectory import ModelCall, Step


def span_text(root: RootRecord, value: Any) -> str:
    """Text as recorded: every free text (question, answer, messages, tool output, errors) goes
    through here, so it is where credentials are redacted (redact.py)."""
    return clean_text(value if isinstance(value, str) else to_text(value), root.limit)


def ns_to_s(ns: int) -> float:
    return ns / 1e9


def _hex_span(span: trace.Span) -> str | None:
    span_id = span.get_span_context().span_id
    return format(span_id, "016x") if span_id else None


def end_if_open(span: trace.Span) -> None:
    """A span whose bookkeeping failed still ends, so the tree has no holes."""
    if span.is_recording():
        span.end()


def open_root_span(root: RootRecord) -> None:
    attrs, root.start_attrs = root.start_attrs, None
    try:
        root.span = root.tracer.start_span(
            f"invoke_agent {root.name}", context=root.parent_ctx, kind=SpanKind.INTERNAL, attributes=attrs,
            links=root.links, start_time=root.start_ns,
        )
    except Exception as exc:  # noqa: BLE001 - see start_span
        pipeline_failed(exc)
        root.span = trace.INVALID_SPAN
    ctx = root.span.get_span_context()
    root.trace_id, root.span_id = format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")


def _ctx_of(run: RunRecord) -> Context:
    """The OTel context that parents ``run``'s children: built once, shared by all of them."""
    ctx = run.ctx
    if ctx is None:
        ctx = run.ctx = trace.set_span_in_context(run.span or run.root.span, Context())
    return ctx


def _graph_attrs(attrs: dict[str, Any], metadata: Mapping[str, Any] | None) -> tuple[str | None, int | None]:
    if not metadata:
        return None, None
    node = metadata.get("langgraph_node")
    step = metadata.get("langgraph_step")
    node = node if isinstance(node, str) else None
    step = step if isinstance(step, int) and not isinstance(step, bool) else None
    if node is not None:
        attrs[A.LANGGRAPH_NODE] = node
    if step is not None:
        attrs[A.LANGGRAPH_STEP] = step
    return node, step


def describe_error(root: RootRecord, error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}" if root.content == "full" else type(error).__name__
    return span_text(root, text)


def mark_error(span: trace.Span, root: RootRecord, error: BaseException, at_ns: int) -> str | None:
    """Error status and exception event on ``span``; control flow only gets a tag (returns None)."""
    if is_control_flow(error):
        span.set_attribute(A.CONTROL_FLOW, type(error).__name__)
        return None
    text = describe_error(root, error)
    span.set_status(Status(StatusCode.ERROR, text))
    span.set_attribute(A.ERROR_TYPE, type(error).__name__)
    if root.content == "full":
        record_exception(span, error, at_ns)
    else:
        span.add_event("exception", {"exception.type": type(error).__name__}, timestamp=at_ns)
    return text


def _usage(message: Any, llm_output: Any) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None)
    if type(usage) is dict or isinstance(usage, Mapping):
        return usage.get("input_tokens"), usage.get("output_tokens")
    if isinstance(llm_output, Mapping):
        tu = llm_output.get("token_usage") or llm_output.get("usage")
        if isinstance(tu, Mapping):
            return tu.get("prompt_tokens") or tu.get("input_tokens"), tu.get("completion_tokens") or tu.get("output_tokens")
    return None, None


def build_runs(root: RootRecord, end_ns: int, final: bool) -> None:
    """Make spans (and rows, Steps, ModelCalls) of recorded runs; call with ``root.lock`` held.

    ``final`` (the run ended): every run not built yet, open ones ending at
    ``end_ns``. Otherwise (a long run, live): the runs that finished and whose
    parent span exists; the others wait for a later call.
    """
    if final and root.batches:
        close_batches(root, final=True)  # held parallel calls get their numbers before their spans
    runs = root.runs
    keep = root.steps if root.captures else None
    calls = root.model_calls if root.captures else None
    contiguous = True
    for i in range(root.built, len(runs)):
        run = runs[i]
        if run.span is None:
            parent = run.parent
            if not final and not (run.end_ns and run.batch is None and (
                parent is None or parent.span is not None or parent.kind in ROOT_KINDS
            )):  # still open, held for its number (batches.py), or its parent's span does not exist yet
                contiguous = False
                continue
            try:
                if run.kind == "chat" or run.kind == "llm":
                    _emit_chat(run, end_ns, calls)
                elif run.kind == "tool":
                    row = _emit_tool(run, end_ns, keep)
                    if row is not None:
                        root.rows.append(row)
                else:
                    _emit_chain(run, end_ns)
            except Exception as exc:  # noqa: BLE001 - one bad run never costs the others their spans
                warn_once(f"handler:emit:{run.kind}", "graphtrail: could not record a %s run (%r); the agent is unaffected", run.kind, exc)
                _emit_bare(run, end_ns)
            run.inputs = run.output = run.metadata = run.params = None  # built: let go of what the agent produced
        if contiguous:
            root.built = i + 1


def go_live(root: RootRecord) -> None:
    """A long run: from now on its spans are built as its calls finish."""
    with root.lock:
        if root.finished:
            return
        if not root.live:
            root.live = True
            if root.start_attrs is not None:
                open_root_span(root)
        build_runs(root, time.time_ns(), final=False)


_BARE = {
    "chat": ("chat", SpanKind.CLIENT, "LLM"),
    "llm": ("text_completion", SpanKind.CLIENT, "LLM"),
    "tool": ("execute_tool", SpanKind.INTERNAL, "TOOL"),
}


def _emit_bare(run: RunRecord, end_ns: int) -> None:
    """The span of a run whose attributes could not be built: it still ends, so the tree has no holes."""
    try:
        if run.span is None:
            operation, kind, oi_kind = _BARE.get(run.kind, ("", SpanKind.INTERNAL, "CHAIN"))
            attrs: dict[str, Any] = {A.OPENINFERENCE_SPAN_KIND: oi_kind}
            if operation:
                attrs[A.GEN_AI_OPERATION_NAME] = operation
            name = f"{operation} {run.name}".strip() if run.kind == "tool" else (operation or run.name or "chain")
            start_span(run, name, kind, attrs)
        if run.span is not None and run.span.is_recording():
            run.span.end(end_time=run.end_ns or end_ns)
    except Exception:  # noqa: BLE001 - already warned
        pass


def start_span(run: RunRecord, name: str, kind: SpanKind, attrs: dict[str, Any]) -> trace.Span:
    """The run's span, started at its real start time. A span processor that raises costs
    the span (an invalid one stands in), never the run's Step or Trajectory."""
    parent = run.parent
    try:
        span = run.root.tracer.start_span(
            name, context=_ctx_of(parent) if parent is not None else None, kind=kind, attributes=attrs,
            start_time=run.start_ns,
        )
    except Exception as exc:  # noqa: BLE001
        pipeline_failed(exc)
        span = trace.INVALID_SPAN
    run.span = span
    return span


def end_span(span: trace.Span, end_ns: int) -> None:
    try:
        span.end(end_time=end_ns)
    except Exception as exc:  # noqa: BLE001 - a processor's on_end raised; the span did end
        pipeline_failed(exc)


def pipeline_failed(exc: BaseException) -> None:
    warn_once(
        "otel-pipeline",
        "graphtrail: a span processor or exporter raised %r; spans may be missing, the agent and its trajectories "
        "are unaffected",
        exc,
    )


def _emit_chain(run: RunRecord, end_ns: int) -> None:
    attrs: dict[str, Any] = {A.OPENINFERENCE_SPAN_KIND: "CHAIN"}
    _graph_attrs(attrs, run.metadata)
    span = start_span(run, run.name or "chain", SpanKind.INTERNAL, attrs)
    if run.error is not None:
        mark_error(span, run.root, run.error, run.end_ns or end_ns)
    end_span(span, run.end_ns or end_ns)


def _emit_chat(run: RunRecord, end_ns: int, model_calls: list[ModelCall] | None) -> None:
    index = run.index
    root = run.root
    meta = run.metadata or {}
    params = run.params or {}
    model = meta.get("ls_model_name") or params.get("model") or params.get("model_name")
    model = redact_name(str(model)) if model else None  # a name is any string a caller or provider gave
    chat = run.kind == "chat"
    operation = "chat" if chat else "text_completion"
    attrs: dict[str, Any] = {
        A.GEN_AI_OPERATION_NAME: operation,
        A.OPENINFERENCE_SPAN_KIND: "LLM",
        A.MODEL_CALL: index,
    }
    if model:
        attrs[A.GEN_AI_REQUEST_MODEL] = model
        attrs[A.LLM_MODEL_NAME] = model
    provider = meta.get("ls_provider")
    if isinstance(provider, str) and provider:
        attrs[A.GEN_AI_PROVIDER_NAME] = redact_name(provider_name(provider))
    node, step = _graph_attrs(attrs, meta)
    sent = run.inputs  # chat: the message list; completion: the prompt
    full = root.content == "full" and not root.spanless  # the content attributes only a span carries
    if full and sent is not None:
        last = sent[-1] if chat and isinstance(sent, list) and sent else sent
        attrs[A.INPUT_VALUE] = span_text(root, getattr(last, "content", last))
        _input_messages(attrs, root, sent, chat)
    name = f"{operation} {model}" if model else operation
    if not run.end_ns or run.error is not None:  # still open at the end, or failed: no ModelCall
        root.facts.chat(operation, model, None, attrs.get(A.GEN_AI_PROVIDER_NAME), None, None, run.start_ns, run.end_ns or end_ns,
                        type(run.error).__name__ if run.error is not None else None)
        span = start_span(run, name, SpanKind.CLIENT, attrs)
        if run.error is not None:
            mark_error(span, root, run.error, run.end_ns)
        end_span(span, run.end_ns or end_ns)
        return
    response = run.output
    generations = getattr(response, "generations", None) or [[]]
    gen = generations[0][0] if generations and generations[0] else None
    message = getattr(gen, "message", None)
    in_tok, out_tok = _usage(message, getattr(response, "llm_output", None))
    response_meta = getattr(message, "response_metadata", None) or {}
    response_model = response_meta.get("model_name") or response_meta.get("model")
    response_model = redact_name(str(response_model)) if response_model else None
    calls = [c.get("name", "") for c in (getattr(message, "tool_calls", None) or []) if type(c) is dict or isinstance(c, Mapping)]
    attrs[A.TOOL_CALLS] = dumps(calls)
    if isinstance(in_tok, int):
        attrs[A.GEN_AI_USAGE_INPUT_TOKENS] = attrs[A.LLM_TOKEN_COUNT_PROMPT] = in_tok
    else:
        in_tok = None
    if isinstance(out_tok, int):
        attrs[A.GEN_AI_USAGE_OUTPUT_TOKENS] = attrs[A.LLM_TOKEN_COUNT_COMPLETION] = out_tok
    else:
        out_tok = None
    if response_model:
        attrs[A.GEN_AI_RESPONSE_MODEL] = str(response_model)
    if full and gen is not None:
        text = to_text(getattr(message, "content", None) if message is not None else getattr(gen, "text", ""))
        if calls:
            # The model's requested calls carry the tool arguments: secret keys here, and the text
            # pass of span_text() below over all of it (strings inside included).
            text = text + ("\n" if text else "") + dumps(
                [{"name": c.get("name"), "args": redact(c.get("args"))} for c in message.tool_calls]
            )
        attrs[A.OUTPUT_VALUE] = span_text(root, text)
        cap = messages_cap(root.limit)
        attrs[A.GEN_AI_OUTPUT_MESSAGES] = (
            output_messages(message, gen, _message_cache(root), cap) if message is not None
            else completion_messages(gen, root.content, root.limit, cap)
        )
    root.facts.chat(operation, model, str(response_model) if response_model else None, attrs.get(A.GEN_AI_PROVIDER_NAME),
                    in_tok, out_tok, run.start_ns, run.end_ns, None)
    span = start_span(run, name, SpanKind.CLIENT, attrs)
    end_span(span, run.end_ns)
    if model_calls is None:
        return
    model_calls.append(ModelCall(
        index=index,
        model=str(response_model) if response_model else model,
        span_id=_hex_span(span),
        input_tokens=in_tok,
        output_tokens=out_tok,
        tool_calls=calls,
        start_time=ns_to_s(run.start_ns),
        end_time=ns_to_s(run.end_ns),
        langgraph_node=node,
        langgraph_step=step,
    ))


def _message_cache(root: RootRecord) -> MessageCache:
    cache = root.messages
    if cache is None:
        cache = root.messages = MessageCache(root.content, root.limit)
    return cache


def _input_messages(attrs: dict[str, Any], root: RootRecord, sent: Any, chat: bool) -> None:
    """``gen_ai.input.messages`` (content="full"): the whole conversation sent, capped; messages
    left out to fit the cap (the oldest after the first) are counted in ``graphtrail.messages.omitted``."""
    if not chat or not isinstance(sent, list):
        attrs[A.GEN_AI_INPUT_MESSAGES] = capped_json(prompt_messages(to_text(sent), root.content, root.limit), messages_cap(root.limit))
        return
    text, omitted = input_messages(sent, _message_cache(root), messages_cap(root.limit))
    attrs[A.GEN_AI_INPUT_MESSAGES] = text
    if omitted:
        attrs[A.MESSAGES_OMITTED] = omitted


def _emit_tool(run: RunRecord, end_ns: int, steps: list[Step] | None) -> StepRow | None:
    root = run.root
    raw_args = run.inputs if isinstance(run.inputs, dict) else {"input": run.inputs}
    args = _clean_args(raw_args, root.content, root.limit)
    call_id = run.params
    attrs: dict[str, Any] = {
        A.GEN_AI_OPERATION_NAME: "execute_tool",
        A.OPENINFERENCE_SPAN_KIND: "TOOL",
        A.GEN_AI_TOOL_NAME: run.name,
        A.GEN_AI_TOOL_TYPE: "function",
        A.TOOL_NAME: run.name,
    }
    if call_id is not None:
        attrs[A.GEN_AI_TOOL_CALL_ID] = call_id
    spanless = root.spanless  # nobody receives the span: only what the Step needs
    if root.content != "none" and not spanless:
        attrs[A.STEP_ARGS] = dumps(args)
    if root.content == "full" and not spanless:
        attrs[A.INPUT_VALUE] = attrs[A.STEP_ARGS]
        attrs[A.INPUT_MIME_TYPE] = "application/json"
        # the same cleaned arguments (graphtrail.tracer.genai.clean_content rules), capped
        attrs[A.GEN_AI_TOOL_CALL_ARGUMENTS] = capped_json(attrs[A.STEP_ARGS], messages_cap(root.limit))
    node, step = _graph_attrs(attrs, run.metadata)
    name = f"execute_tool {run.name}"
    if not run.end_ns or not run.index:  # still open at the end, or stopped by control flow: no step
        span = start_span(run, name, SpanKind.INTERNAL, attrs)
        if run.error is not None:
            mark_error(span, root, run.error, run.end_ns)
        end_span(span, run.end_ns or end_ns)
        return None
    error_text: str | None = None
    content: Any = None
    entities: list[EntityRef] = []
    edges: list[EdgeRef] = []
    tool_failed = False
    if run.error is not None:
        error_text = describe_error(root, run.error)
    else:
        output = message = run.output
        if type(output).__name__ == "Command":  # a tool may answer with a LangGraph Command
            update = getattr(output, "update", None)
            msgs = update.get("messages") if isinstance(update, Mapping) else None
            message = next((m for m in msgs or [] if getattr(m, "type", None) == "tool"), None)
        if getattr(message, "type", None) == "tool":
            content, artifact, status = message.content, getattr(message, "artifact", None), getattr(message, "status", "success")
        else:
            content, artifact, status = output, None, "success"
        found = extract_entities(run.name, content, run.inputs if isinstance(run.inputs, dict) else {}, artifact, root.opts.extractors)
        entities, edges = redact_entities(found.entities), found.edges
        if entities:
            root.revealed.append(entities)
        if status == "error":
            tool_failed = True
            error_text = span_text(root, to_text(content)) if root.content == "full" else "ToolError"
    if root.content == "none":
        entities = [e if e.name is None and e.type is None else e._replace(name=None, type=None) for e in entities]
    ids = [e.id for e in entities]
    attrs[A.STEP] = run.index
    if not spanless:
        attrs[A.ENTITIES_VISITED] = dumps(ids)
        attrs[A.EDGES_TRAVERSED] = dumps_edges(edges)
        if root.content != "none" and any(e.name is not None or e.type is not None for e in entities):
            attrs[A.ENTITIES] = dumps_entities(entities)
    output_text = None
    if root.content == "full" and content is not None:
        output_text = span_text(root, content)
        attrs[A.OUTPUT_VALUE] = attrs[A.GEN_AI_TOOL_CALL_RESULT] = output_text
    if error_text is not None:
        attrs[A.STEP_ERROR] = error_text
    root.facts.tool(run.index, run.name, run.start_ns, run.end_ns, None if error_text is None else (
        type(run.error).__name__ if run.error is not None else "ToolError"))
    span = start_span(run, name, SpanKind.INTERNAL, attrs)
    if entities and not spanless:
        # On the span's timeline in Jaeger and Phoenix, one look away from the attributes.
        event: dict[str, Any] = {A.EVENT_ENTITY_COUNT: len(ids), A.EVENT_ENTITY_IDS: ids}
        listing = attrs.get(A.ENTITIES)
        if listing is not None:
            event[A.ENTITIES] = listing
        span.add_event(A.ENTITIES_EVENT, event, timestamp=run.end_ns)
    if run.error is not None:
        mark_error(span, root, run.error, run.end_ns)
    elif tool_failed:
        span.set_status(Status(StatusCode.ERROR, error_text))
        span.set_attribute(A.ERROR_TYPE, "ToolError")
    end_span(span, run.end_ns)
    span_id = _hex_span(span)
    if steps is None:
        return run.index, ids, span_id
    steps.append(Step(
        index=run.index,
        tool=run.name,
        args=args,
        tool_call_id=call_id,
        span_id=span_id,
        entities=[e.to_model() for e in entities],
        edges=[e.to_model() for e in edges],
        output=output_text,
        error=error_text,
        start_time=ns_to_s(run.start_ns),
        end_time=ns_to_s(run.end_ns),
        langgraph_node=node,
        langgraph_step=step,
    ))
    return run.index, ids, span_id
