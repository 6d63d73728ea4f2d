"""The LangChain callback handler that turns runs into spans and Trajectories.

Span parents come only from LangChain's ``run_id``/``parent_run_id`` through
this handler's own ``run_id -> span`` map; spans are created with an explicit
parent context and the OTel context is never attached in a callback, so
concurrent runs cannot leak into each other and no "Failed to detach context"
can happen. Only a root span may take the ambient OTel span (e.g. the app's
request span) as its parent.

Tree shape: the root ``invoke_agent {name}`` with ``chat {model}`` and
``execute_tool {tool}`` spans under it (each carrying ``langgraph.node`` and
``langgraph.step``). With ``node_spans`` on, one CHAIN span per LangGraph node
execution (a chain run whose name is its ``langgraph_node``) sits in between.
Every other chain run (sequences, hidden writers, routers, and node runs when
node spans are off) is folded into its nearest traced ancestor: a dict entry,
no span.

This runs on every step of every traced agent, so it is kept cheap (see
benchmarks/tracer_overhead.py): one dict lookup per callback, parent contexts
built once per parent, attributes handed to the SDK in one call at start and
one at end, lists serialized once. Node spans are off by default because they
nearly double the span count (19 -> 10 per run of the benchmark agent) for
information the model and tool spans already carry.
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from . import attributes as A
from ._content import ContentMode, check_content_mode, dumps, to_text, truncate
from ._content import clean_args as _clean_args
from ._safety import guarded, warn_once
from .config import get_tracer, run_settings
from .extract import CitationParser, Extractor, compile_pattern, extract_answer, extract_entities
from .scope import Capture, active_annotations, active_captures
from .trajectory import ModelCall, Step, Trajectory

_CONTROL_FLOW = frozenset({"GraphBubbleUp", "GraphInterrupt", "NodeInterrupt", "ParentCommand", "GraphDrained"})
_HIDDEN_TAG = "langsmith:hidden"


def is_control_flow(error: BaseException) -> bool:
    """LangGraph's interrupts and parent commands are raised, but are not failures."""
    return any(cls.__name__ in _CONTROL_FLOW for cls in type(error).__mro__)


def _ns_to_s(ns: int) -> float:
    return ns / 1e9


def _hex_span(span: trace.Span) -> str:
    return format(span.get_span_context().span_id, "016x")


def _end_if_open(span: trace.Span) -> None:
    """A span whose bookkeeping failed still ends, so the tree has no holes."""
    if span.is_recording():
        span.end()


def _hex_trace(span: trace.Span) -> str:
    return format(span.get_span_context().trace_id, "032x")


@dataclass(slots=True)
class TraceOptions:
    """What a handler does beyond the global configure(): per-agent settings."""

    name: str | None = None
    extractors: Mapping[str, Extractor] | None = None
    citation_pattern: re.Pattern[str] = field(default_factory=lambda: compile_pattern(None))
    citation_parser: CitationParser | None = None
    content: ContentMode | None = None
    conversation_key: str = "thread_id"
    node_spans: bool | None = None  # None: configure()'s choice


class _Root:
    """State of one agent run (one trace)."""

    __slots__ = (
        "run_id", "name", "span", "tracer", "content", "limit", "opts", "captures", "metadata",
        "question", "conversation_id", "steps", "model_calls", "step_seq", "model_seq",
        "start_ns", "open", "last_output", "trace_id", "span_id", "node_spans",
    )

    def __init__(self, run_id: str, name: str, opts: TraceOptions) -> None:
        self.run_id = run_id
        self.name = name
        self.opts = opts
        mode, self.limit, node_spans = run_settings()
        self.content: ContentMode = opts.content or mode
        self.node_spans: bool = node_spans if opts.node_spans is None else opts.node_spans
        self.tracer = get_tracer()
        self.captures: tuple[Capture, ...] = active_captures()
        self.metadata: dict[str, Any] = {}
        self.question: str | None = None
        self.conversation_id: str | None = None
        self.steps: list[Step] = []
        self.model_calls: list[ModelCall] = []
        self.step_seq = itertools.count(1)
        self.model_seq = itertools.count(1)
        self.start_ns = time.time_ns()
        self.open: dict[Any, _Rec] = {}  # open child spans, keyed like GraphTrailHandler._recs
        self.last_output: Any = None
        self.span: trace.Span = trace.INVALID_SPAN
        self.trace_id = ""
        self.span_id = ""

    def text(self, value: Any) -> str:
        return truncate(value if isinstance(value, str) else to_text(value), self.limit)


@dataclass(slots=True)
class _Rec:
    root: _Root
    kind: str  # root | node | chain | collapsed | chat | tool
    span: trace.Span | None  # None when collapsed
    parent: trace.Span  # the span children of this run attach to
    start_ns: int = 0
    node: str | None = None
    step: int | None = None
    tool: str = ""
    args: Any = None
    clean_args: dict[str, Any] | None = None
    tool_call_id: str | None = None
    index: int = 0
    model: str | None = None
    ctx: Context | None = None  # parent context for child spans, built once per rec


def _question_of(inputs: Any) -> str | None:
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        msgs = inputs.get("messages")
        if isinstance(msgs, (list, tuple)):
            for msg in msgs:
                if isinstance(msg, (list, tuple)) and len(msg) == 2 and msg[0] in ("user", "human"):
                    return to_text(msg[1])
                if getattr(msg, "type", None) == "human":
                    return to_text(msg.content)
                if isinstance(msg, Mapping) and msg.get("role") in ("user", "human"):
                    return to_text(msg.get("content"))
                if isinstance(msg, str):
                    return msg
        for key in ("question", "input", "query"):
            if isinstance(inputs.get(key), str):
                return inputs[key]
    return None


def _usage(message: Any, llm_output: Any) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None)
    if isinstance(usage, Mapping):
        return usage.get("input_tokens"), usage.get("output_tokens")
    if isinstance(llm_output, Mapping):
        tu = llm_output.get("token_usage") or llm_output.get("usage")
        if isinstance(tu, Mapping):
            return tu.get("prompt_tokens") or tu.get("input_tokens"), tu.get("completion_tokens") or tu.get("output_tokens")
    return None, None


class GraphTrailHandler(BaseCallbackHandler):
    """LangChain callback handler: each top-level run becomes one trace and one Trajectory.

    Pass it as ``config={"callbacks": [GraphTrailHandler(name="kg-agent")]}``; one
    instance may serve many concurrent runs (state is keyed by ``run_id``). It is
    sync, runs inline and is thread-safe, so async code calls it without a thread hop.
    """

    run_inline = True
    raise_error = False
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(
        self,
        name: str | None = None,
        *,
        extractors: Mapping[str, Extractor] | None = None,
        citation_pattern: str | re.Pattern[str] | None = None,
        citation_parser: CitationParser | None = None,
        content: ContentMode | None = None,
        conversation_key: str = "thread_id",
        node_spans: bool | None = None,
        _options: TraceOptions | None = None,
        _bound_root: _Root | None = None,
    ) -> None:
        super().__init__()
        if content is not None:
            check_content_mode(content)
        self.options = _options or TraceOptions(
            name=name,
            extractors=extractors,
            citation_pattern=compile_pattern(citation_pattern),
            citation_parser=citation_parser,
            content=content,
            conversation_key=conversation_key,
            node_spans=node_spans,
        )
        # Keyed by run_id.int: a UUID's __hash__ is a Python call, an int's is not.
        self._recs: dict[Any, _Rec] = {}
        self._bound_cache: _Rec | None = None
        self._bound = _bound_root

    # ------------------------------------------------------------ roots

    def _start_root(self, run_id: UUID | str, name: str, inputs: Any, metadata: Mapping[str, Any] | None) -> _Root:
        root = _Root(str(run_id), self.options.name or name or "agent", self.options)
        ann = active_annotations()
        attrs: dict[str, Any] = {
            A.GEN_AI_OPERATION_NAME: "invoke_agent",
            A.OPENINFERENCE_SPAN_KIND: "AGENT",
            A.GEN_AI_AGENT_NAME: root.name,
            A.RUN_ID: root.run_id,
            A.CONTENT_MODE: root.content,
        }
        links: list[Link] = []
        if ann is not None:
            attrs.update(ann.attributes)
            root.metadata = dict(ann.metadata)
            links = [
                Link(SpanContext(int(t, 16), int(s, 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)))
                for t, s in ann.links
            ]
        if root.metadata:
            attrs[A.METADATA] = dumps(root.metadata)
        question = _question_of(inputs)
        if question is not None and root.content == "full":
            root.question = root.text(question)
            attrs[A.QUESTION] = root.question
            attrs[A.INPUT_VALUE] = root.question
        self._conversation(root, metadata)
        if root.conversation_id is not None:
            attrs[A.GEN_AI_CONVERSATION_ID] = root.conversation_id
        # The ambient span (e.g. the app's request span) may parent the root; nothing else.
        root.span = root.tracer.start_span(
            f"invoke_agent {root.name}", kind=SpanKind.INTERNAL, attributes=attrs, links=links, start_time=root.start_ns
        )
        root.trace_id, root.span_id = _hex_trace(root.span), _hex_span(root.span)
        return root

    def _conversation(self, root: _Root, metadata: Mapping[str, Any] | None) -> None:
        if root.conversation_id is None and metadata:
            value = metadata.get(self.options.conversation_key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                root.conversation_id = str(value)

    def _finish_root(self, root: _Root, output: Any, error: BaseException | None) -> Trajectory:
        end_ns = time.time_ns()
        span = root.span
        for rec in list(root.open.values()):  # children left open (interrupts, cancellations)
            if rec.span is not None:
                rec.span.end(end_time=end_ns)
        root.open.clear()
        status, err_text, answer, citations = "ok", None, None, []
        if error is not None and not is_control_flow(error):
            status = "error"
            err_text = f"{type(error).__name__}: {error}" if root.content == "full" else type(error).__name__
            err_text = root.text(err_text)
            span.set_status(Status(StatusCode.ERROR, err_text))
            span.set_attribute(A.ERROR_TYPE, type(error).__name__)
            span.set_attribute(A.ERROR, err_text)
            if root.content == "full":
                span.record_exception(error)
        elif error is not None:
            status = "no_answer"
            span.set_attribute(A.CONTROL_FLOW, type(error).__name__)
        else:
            found = extract_answer(output, root.opts.citation_pattern, root.opts.citation_parser)
            if (found is None or not found.citations) and root.last_output is not None:
                # A decorated function may return plain text: its inner run's final
                # state still holds the submit_answer call and its citations.
                inner = extract_answer(root.last_output, root.opts.citation_pattern, root.opts.citation_parser)
                if inner is not None and (found is None or inner.citations):
                    found = inner
            if found is None:
                status = "no_answer"
            else:
                status, citations = found.status, found.citations
                if found.answer is not None and root.content == "full":
                    answer = root.text(found.answer)
        steps = sorted(root.steps, key=lambda s: s.index)
        traj = Trajectory(
            run_id=root.run_id,
            trace_id=root.trace_id,
            span_id=root.span_id,
            name=root.name,
            question=root.question,
            answer=answer,
            citations=citations,
            steps=steps,
            model_calls=sorted(root.model_calls, key=lambda m: m.index),
            status=status,  # type: ignore[arg-type]
            error=err_text,
            start_time=_ns_to_s(root.start_ns),
            end_time=_ns_to_s(end_ns),
            conversation_id=root.conversation_id,
            metadata=root.metadata,
        )
        attrs: dict[str, Any] = {
            A.STATUS: status,
            A.CITATIONS: dumps(citations),
            A.VISITED: dumps(traj.visited),
            A.VISITED_UNCITED: dumps(traj.visited_uncited),
            A.CITATION_SOURCES: dumps(
                {k: {"entity_id": v.entity_id, "steps": v.steps, "span_ids": v.span_ids} for k, v in traj.citation_sources.items()}
            ),
        }
        if answer is not None:
            attrs[A.ANSWER] = answer
            attrs[A.OUTPUT_VALUE] = answer
        if root.conversation_id is not None:
            attrs[A.GEN_AI_CONVERSATION_ID] = root.conversation_id
        span.set_attributes(attrs)
        span.end(end_time=end_ns)
        for cap in root.captures:
            cap._add(traj)
        return traj

    # ------------------------------------------------------------ helpers

    def _parent(self, parent_run_id: UUID | None) -> _Rec | None:
        if parent_run_id is not None:
            rec = self._recs.get(getattr(parent_run_id, "int", parent_run_id))
            if rec is not None:
                return rec
        if self._bound is not None:
            return self._bound_rec
        return None

    @property
    def _bound_rec(self) -> _Rec:
        root = self._bound
        assert root is not None
        rec = self._bound_cache
        if rec is None or rec.root is not root:
            rec = self._bound_cache = _Rec(root=root, kind="bound", span=root.span, parent=root.span)
        return rec

    @staticmethod
    def _ctx_of(rec: _Rec) -> Context:
        """The OTel context that parents ``rec``'s children: built once, shared by all of them."""
        ctx = rec.ctx
        if ctx is None:
            ctx = rec.ctx = trace.set_span_in_context(rec.parent, Context())
        return ctx

    def _child_span(self, rec_parent: _Rec, name: str, kind: SpanKind, attrs: dict[str, Any], start_ns: int) -> trace.Span:
        return rec_parent.root.tracer.start_span(
            name, context=self._ctx_of(rec_parent), kind=kind, attributes=attrs, start_time=start_ns
        )

    @staticmethod
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

    def _pop(self, run_id: UUID) -> _Rec | None:
        key = getattr(run_id, "int", run_id)
        rec = self._recs.pop(key, None)
        if rec is not None and rec.span is not None:
            rec.root.open.pop(key, None)
        return rec

    def _keep(self, run_id: UUID, rec: _Rec) -> None:
        key = getattr(run_id, "int", run_id)
        self._recs[key] = rec
        if rec.span is not None and rec.kind != "root":
            rec.root.open[key] = rec

    # ------------------------------------------------------------ chains

    @guarded("on_chain_start")
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or ""
        parent = self._parent(parent_run_id)
        if parent is None:
            root = self._start_root(run_id, name, inputs, metadata)
            self._keep(run_id, _Rec(root=root, kind="root", span=root.span, parent=root.span))
            return
        root = parent.root
        if root.conversation_id is None and metadata and self.options.conversation_key in metadata:
            self._conversation(root, metadata)
        if parent.kind == "bound" or (
            root.node_spans
            and metadata
            and metadata.get("langgraph_node") == name
            and not (tags and _HIDDEN_TAG in tags)
        ):
            start_ns = time.time_ns()
            attrs: dict[str, Any] = {A.OPENINFERENCE_SPAN_KIND: "CHAIN"}
            self._graph_attrs(attrs, metadata)
            span = self._child_span(parent, name or "chain", SpanKind.INTERNAL, attrs, start_ns)
            self._keep(run_id, _Rec(root=root, kind="chain" if parent.kind == "bound" else "node", span=span, parent=span))
        else:  # folded into the nearest traced ancestor: one dict entry, no span
            self._recs[getattr(run_id, "int", run_id)] = _Rec(
                root=root, kind="collapsed", span=None, parent=parent.parent, ctx=self._ctx_of(parent)
            )

    @guarded("on_chain_end")
    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        rec = self._pop(run_id)
        if rec is None:
            return
        if rec.kind == "root":
            try:
                self._finish_root(rec.root, outputs, None)
            finally:
                _end_if_open(rec.root.span)
            return
        if rec.kind == "chain":
            rec.root.last_output = outputs
        if rec.span is not None:
            rec.span.end()

    @guarded("on_chain_error")
    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        rec = self._pop(run_id)
        if rec is None:
            return
        if rec.kind == "root":
            try:
                self._finish_root(rec.root, None, error)
            finally:
                _end_if_open(rec.root.span)
            return
        span = rec.span
        if span is None:
            return
        self._mark_error(span, rec.root, error)
        span.end()

    @staticmethod
    def _mark_error(span: trace.Span, root: _Root, error: BaseException) -> str | None:
        if is_control_flow(error):
            span.set_attribute(A.CONTROL_FLOW, type(error).__name__)
            return None
        text = f"{type(error).__name__}: {error}" if root.content == "full" else type(error).__name__
        text = root.text(text)
        span.set_status(Status(StatusCode.ERROR, text))
        span.set_attribute(A.ERROR_TYPE, type(error).__name__)
        if root.content == "full":
            span.record_exception(error)
        else:
            span.add_event("exception", {"exception.type": type(error).__name__})
        return text

    # ------------------------------------------------------------ models

    @guarded("on_chat_model_start")
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_start(run_id, parent_run_id, metadata, kwargs, messages[-1][-1] if messages and messages[-1] else None)

    @guarded("on_llm_start")
    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_start(run_id, parent_run_id, metadata, kwargs, prompts[-1] if prompts else None)

    def _model_start(
        self, run_id: UUID, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None, kwargs: Mapping[str, Any], last: Any
    ) -> None:
        parent = self._parent(parent_run_id)
        if parent is None:
            return
        root = parent.root
        start_ns = time.time_ns()
        meta = metadata or {}
        params = kwargs.get("invocation_params") or {}
        model = meta.get("ls_model_name") or params.get("model") or params.get("model_name")
        model = str(model) if model else None
        index = next(root.model_seq)
        attrs: dict[str, Any] = {
            A.GEN_AI_OPERATION_NAME: "chat",
            A.OPENINFERENCE_SPAN_KIND: "LLM",
            A.MODEL_CALL: index,
        }
        if model:
            attrs[A.GEN_AI_REQUEST_MODEL] = model
            attrs[A.LLM_MODEL_NAME] = model
        provider = meta.get("ls_provider")
        if isinstance(provider, str):
            attrs[A.GEN_AI_PROVIDER_NAME] = provider
        node, step = self._graph_attrs(attrs, meta)
        if root.content == "full" and last is not None:
            attrs[A.INPUT_VALUE] = root.text(getattr(last, "content", last))
        span = self._child_span(parent, f"chat {model}" if model else "chat", SpanKind.CLIENT, attrs, start_ns)
        self._keep(run_id, _Rec(root=root, kind="chat", span=span, parent=span, start_ns=start_ns, node=node, step=step, index=index, model=model))

    @guarded("on_llm_end")
    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._finish_child(run_id, self._llm_end, response)

    def _finish_child(self, run_id: UUID, finish: Callable[[_Rec, Any], None], result: Any) -> None:
        """Pop a model/tool run and finish its span; if finishing fails, the span still ends (no holes)."""
        rec = self._pop(run_id)
        if rec is None or rec.span is None:
            return
        try:
            finish(rec, result)
        except BaseException:
            _end_if_open(rec.span)
            raise

    def _llm_end(self, rec: _Rec, response: Any) -> None:
        root, span = rec.root, rec.span
        assert span is not None
        generations = getattr(response, "generations", None) or [[]]
        gen = generations[0][0] if generations and generations[0] else None
        message = getattr(gen, "message", None)
        in_tok, out_tok = _usage(message, getattr(response, "llm_output", None))
        response_meta = getattr(message, "response_metadata", None) or {}
        response_model = response_meta.get("model_name") or response_meta.get("model")
        calls = [c.get("name", "") for c in (getattr(message, "tool_calls", None) or []) if isinstance(c, Mapping)]
        attrs: dict[str, Any] = {A.TOOL_CALLS: dumps(calls)}
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
        if root.content == "full" and gen is not None:
            text = to_text(getattr(message, "content", None) if message is not None else getattr(gen, "text", ""))
            if calls:
                text = text + ("\n" if text else "") + dumps([{"name": c.get("name"), "args": c.get("args")} for c in message.tool_calls])
            attrs[A.OUTPUT_VALUE] = root.text(text)
        end_ns = time.time_ns()
        span.set_attributes(attrs)
        span.end(end_time=end_ns)
        root.model_calls.append(
            ModelCall(
                index=rec.index,
                model=str(response_model) if response_model else rec.model,
                span_id=_hex_span(span),
                input_tokens=in_tok,
                output_tokens=out_tok,
                tool_calls=calls,
                start_time=_ns_to_s(rec.start_ns),
                end_time=_ns_to_s(end_ns),
                langgraph_node=rec.node,
                langgraph_step=rec.step,
            )
        )

    @guarded("on_llm_error")
    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        rec = self._pop(run_id)
        if rec is None or rec.span is None:
            return
        self._mark_error(rec.span, rec.root, error)
        rec.span.end()

    # ------------------------------------------------------------ tools

    @guarded("on_tool_start")
    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        parent = self._parent(parent_run_id)
        if parent is None:
            return
        root = parent.root
        start_ns = time.time_ns()
        tool = str(kwargs.get("name") or (serialized or {}).get("name") or "tool")
        call_id = kwargs.get("tool_call_id")
        raw_args = inputs if isinstance(inputs, dict) else {"input": input_str}
        args = _clean_args(raw_args, root.content, root.limit)
        attrs: dict[str, Any] = {
            A.GEN_AI_OPERATION_NAME: "execute_tool",
            A.OPENINFERENCE_SPAN_KIND: "TOOL",
            A.GEN_AI_TOOL_NAME: tool,
            A.TOOL_NAME: tool,
        }
        if isinstance(call_id, str):
            attrs[A.GEN_AI_TOOL_CALL_ID] = call_id
        else:
            call_id = None
        if root.content != "none":
            attrs[A.STEP_ARGS] = dumps(args)
        if root.content == "full":
            attrs[A.INPUT_VALUE] = attrs[A.STEP_ARGS]
            attrs[A.INPUT_MIME_TYPE] = "application/json"
        node, step = self._graph_attrs(attrs, metadata)
        span = self._child_span(parent, f"execute_tool {tool}", SpanKind.INTERNAL, attrs, start_ns)
        self._keep(
            run_id,
            _Rec(root=root, kind="tool", span=span, parent=span, start_ns=start_ns, node=node, step=step,
                 tool=tool, args=raw_args, clean_args=args, tool_call_id=call_id),
        )

    @guarded("on_tool_end")
    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._finish_child(run_id, self._tool_end, output)

    def _tool_end(self, rec: _Rec, output: Any) -> None:
        assert rec.span is not None
        message = output
        if type(output).__name__ == "Command":  # a tool may answer with a LangGraph Command
            update = getattr(output, "update", None)
            msgs = update.get("messages") if isinstance(update, Mapping) else None
            message = next((m for m in msgs or [] if getattr(m, "type", None) == "tool"), None)
        if getattr(message, "type", None) == "tool":
            content, artifact, status = message.content, getattr(message, "artifact", None), getattr(message, "status", "success")
        else:
            content, artifact, status = output, None, "success"
        found = extract_entities(rec.tool, content, rec.args if isinstance(rec.args, dict) else {}, artifact, rec.root.opts.extractors)
        error = None
        if status == "error":
            error = rec.root.text(to_text(content)) if rec.root.content == "full" else "ToolError"
            rec.span.set_status(Status(StatusCode.ERROR, error))
            rec.span.set_attribute(A.ERROR_TYPE, "ToolError")
        self._end_tool(rec, found.entities, found.edges, content, error)

    @guarded("on_tool_error")
    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        rec = self._pop(run_id)
        if rec is None or rec.span is None:
            return
        text = self._mark_error(rec.span, rec.root, error)
        if text is None:  # control flow: the tool did not finish, so it is no step
            rec.span.end()
            return
        self._end_tool(rec, [], [], None, text)

    def _end_tool(self, rec: _Rec, entities: list, edges: list, content: Any, error: str | None) -> None:
        root, span = rec.root, rec.span
        assert span is not None
        index = next(root.step_seq)
        if root.content == "none":
            entities = [e if e.name is None and e.type is None else e.model_copy(update={"name": None, "type": None}) for e in entities]
        ids = [e.id for e in entities]
        attrs: dict[str, Any] = {
            A.STEP: index,
            A.ENTITIES_VISITED: dumps(ids),
            A.EDGES_TRAVERSED: dumps([[e.source, e.relation, e.target] for e in edges]),
        }
        if root.content != "none" and any(e.name is not None or e.type is not None for e in entities):
            attrs[A.ENTITIES] = dumps([{"id": e.id, "name": e.name, "type": e.type} for e in entities])
        output_text = None
        if root.content == "full" and content is not None:
            output_text = root.text(content)
            attrs[A.OUTPUT_VALUE] = output_text
        if error is not None:
            attrs[A.STEP_ERROR] = error
        end_ns = time.time_ns()
        span.set_attributes(attrs)
        span.end(end_time=end_ns)
        root.steps.append(
            Step(
                index=index,
                tool=rec.tool,
                args=rec.clean_args or {},
                tool_call_id=rec.tool_call_id,
                span_id=_hex_span(span),
                entities=entities,
                edges=edges,
                output=output_text,
                error=error,
                start_time=_ns_to_s(rec.start_ns),
                end_time=_ns_to_s(end_ns),
                langgraph_node=rec.node,
                langgraph_step=rec.step,
            )
        )


def start_function_root(handler: GraphTrailHandler, name: str, question: str | None) -> _Root:
    """A root for a decorated function: no LangChain run starts it."""
    return handler._start_root(uuid.uuid4(), name, question, None)


def finish_function_root(handler: GraphTrailHandler, root: _Root, output: Any, error: BaseException | None) -> Trajectory | None:
    try:
        return handler._finish_root(root, output, error)
    except Exception as exc:  # noqa: BLE001
        warn_once("handler:finish", "graphtrail: could not finish the trace (%r); the agent is unaffected", exc)
        return None
    finally:
        _end_if_open(root.span)
