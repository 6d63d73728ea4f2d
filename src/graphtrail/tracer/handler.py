"""The LangChain callback handler that turns runs into spans and Trajectories.

Span parents come only from LangChain's ``run_id``/``parent_run_id`` through
this handler's own ``run_id -> record`` map; spans are created with an explicit
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

Record now, build at the end. The root span of a wrapped Runnable and the
model, tool and node runs are only *recorded* while the agent runs (a small
slotted object holding the callback's arguments and two timestamps) and become
spans, with their real start and end times, entity extraction and attributes,
in one pass when the agent run ends. Why: callbacks run interleaved with
LangGraph's own code, where the same work costs 2-3x what it costs in one tight
pass (cold caches; see benchmarks/tracer_overhead.py). A run that goes on for
``configure(live_after=...)`` seconds switches to live: its root span starts
and each finished call is built at once, so long runs can be watched while
they work. A decorated function's root starts live, as the function's body
runs inside it. docs/spans.md ("When spans are made") has what this means for
users.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from . import attributes as A
from ._content import ContentMode, check_content_mode, clean_text, dumps, dumps_edges, dumps_entities, to_text
from ._content import clean_args as _clean_args
from .redact import record_exception, redact, redact_keys
from ._safety import warn_once
from .config import get_tracer, run_settings
from .citations import CitationMode, check_citation_mode, known_names, resolve_citations
from .extract import CitationParser, EdgeRef, EntityRef, Extractor, compile_pattern, extract_answer, extract_entities
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
from .scope import Capture, active_annotations, active_captures
from .signals import RunFacts, finish_run  # issue 22: provenance signals + metrics
from .trajectory import ModelCall, Step, Trajectory, first_sources, uncited_ids, visited_ids

_StepRow = tuple[int, list[str], str | None]  # (step index, entity ids, span id): what the root's attributes need
_ROOT_KINDS = ("root", "bound")  # records whose span is the root span

# LangGraph's interrupts and commands, and GeneratorExit: the consumer of stream()
# stopped reading early, which ends the run but is no failure of the agent.
_CONTROL_FLOW = frozenset(
    {"GraphBubbleUp", "GraphInterrupt", "NodeInterrupt", "ParentCommand", "GraphDrained", "GeneratorExit"}
)
_HIDDEN_TAG = "langsmith:hidden"


def is_control_flow(error: BaseException) -> bool:
    """LangGraph's interrupts and parent commands (and a stream closed early) are raised, but are not failures."""
    return any(cls.__name__ in _CONTROL_FLOW for cls in type(error).__mro__)


def _ns_to_s(ns: int) -> float:
    return ns / 1e9


def _hex_span(span: trace.Span) -> str | None:
    span_id = span.get_span_context().span_id
    return format(span_id, "016x") if span_id else None


def _end_if_open(span: trace.Span) -> None:
    """A span whose bookkeeping failed still ends, so the tree has no holes."""
    if span.is_recording():
        span.end()


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
    citations: CitationMode = "names"  # how a free-text answer's citations are read (tracer/citations.py)


def trace_options(
    name: str | None = None,
    *,
    extractors: Mapping[str, Extractor] | None = None,
    citation_pattern: str | re.Pattern[str] | None = None,
    citation_parser: CitationParser | None = None,
    content: ContentMode | None = None,
    conversation_key: str = "thread_id",
    node_spans: bool | None = None,
    citations: CitationMode = "names",
) -> TraceOptions:
    """Checked per-agent options, shared by ``GraphTrailHandler(...)`` and ``trace_agent(...)``."""
    if content is not None:
        check_content_mode(content)
    check_citation_mode(citations)
    return TraceOptions(
        name=name,
        extractors=dict(extractors) if extractors else None,
        citation_pattern=compile_pattern(citation_pattern),
        citation_parser=citation_parser,
        content=content,
        conversation_key=conversation_key,
        node_spans=node_spans,
        citations=citations,
    )


class _Root:
    """State of one agent run (one trace)."""

    __slots__ = (
        "run_id", "name", "span", "tracer", "content", "limit", "opts", "captures", "metadata",
        "question", "conversation_id", "runs", "step_seq", "start_ns", "last_output", "trace_id",
        "span_id", "node_spans", "start_attrs", "links", "parent_ctx", "live_after_ns", "live", "finished",
        "lock", "built", "model_seq", "rows", "steps", "model_calls", "revealed", "provider", "messages",
        "facts",  # issue 22
    )

    def __init__(self, run_id: str, name: str, opts: TraceOptions) -> None:
        self.run_id = run_id
        self.name = name
        self.opts = opts
        mode, self.limit, node_spans, self.live_after_ns = run_settings()
        self.content: ContentMode = opts.content or mode
        self.node_spans: bool = node_spans if opts.node_spans is None else opts.node_spans
        self.tracer = get_tracer()
        self.captures: tuple[Capture, ...] = active_captures()
        self.metadata: dict[str, Any] = {}
        self.question: str | None = None
        self.conversation_id: str | None = None
        self.runs: list[_Run] = []  # recorded child runs, in start order
        self.built = 0  # runs[:built] all have their spans
        self.live = False  # a long run: spans are built as calls finish
        self.finished = False
        self.lock = threading.RLock()  # live builds may happen on several threads at once
        self.step_seq = itertools.count(1)  # steps are numbered in the order tools finish
        self.model_seq = itertools.count(1)  # model calls in the order they start
        self.rows: list[_StepRow] = []  # what the root's attributes need, per step
        self.steps: list[Step] = []  # only when a capture() will read them
        self.model_calls: list[ModelCall] = []
        self.revealed: list[list[EntityRef]] = []  # each step's entities, names kept: citations by name
        self.provider: str | None = None  # LangChain's label of the first model's provider
        self.messages: MessageCache | None = None  # content="full": messages encoded once per run
        self.start_ns = time.time_ns()
        self.last_output: Any = None
        self.span: trace.Span = trace.INVALID_SPAN
        self.trace_id = ""
        self.span_id = ""
        self.start_attrs: dict[str, Any] | None = None  # until the span starts
        self.links: list[Link] = []
        self.parent_ctx: Context = Context()
        self.facts = RunFacts()  # issue 22: what the run's metrics need (tracer/signals.py)

    def text(self, value: Any) -> str:
        """Text as recorded: every free text (question, answer, messages, tool output, errors) goes
        through here, so it is where credentials are redacted (redact.py)."""
        return clean_text(value if isinstance(value, str) else to_text(value), self.limit)


class _Run:
    """One LangChain run inside an agent run, as recorded by the callbacks.

    ``kind``: ``root`` (the agent run), ``bound`` (a decorated function's root),
    ``node``/``chain`` (CHAIN spans), ``chat`` or ``tool``. Collapsed chain runs
    have no record of their own: their run id maps to their nearest recorded
    ancestor, which ``key`` tells apart.
    """

    __slots__ = (
        "root", "kind", "key", "parent", "name", "start_ns", "end_ns", "metadata", "inputs",
        "params", "output", "error", "index", "span", "ctx",
    )

    def __init__(self, root: _Root, kind: str, key: Any, parent: _Run | None, name: str,
                 metadata: Mapping[str, Any] | None = None, inputs: Any = None, params: Any = None) -> None:
        self.root = root
        self.kind = kind
        self.key = key
        self.parent = parent
        self.name = name
        self.start_ns = time.time_ns()
        self.end_ns = 0  # 0: still open
        self.metadata = metadata
        self.inputs = inputs  # chat: last input message; tool: args dict or input string
        self.params = params  # chat: invocation params; tool: tool_call_id
        self.output: Any = None
        self.error: BaseException | None = None
        self.index = 0  # chat: model call number (start order); tool: step number (finishing order; 0: no step)
        self.span: trace.Span | None = None
        self.ctx: Context | None = None  # parent context for child spans, built once


def _open_root_span(root: _Root) -> None:
    attrs, root.start_attrs = root.start_attrs, None
    try:
        root.span = root.tracer.start_span(
            f"invoke_agent {root.name}", context=root.parent_ctx, kind=SpanKind.INTERNAL, attributes=attrs,
            links=root.links, start_time=root.start_ns,
        )
    except Exception as exc:  # noqa: BLE001 - see _start_span
        _pipeline_failed(exc)
        root.span = trace.INVALID_SPAN
    ctx = root.span.get_span_context()
    root.trace_id, root.span_id = format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")


def _close_root(root: _Root) -> None:
    """However finishing went, the root span and its recorded children exist and end: a failure
    while finishing (reported once by the caller) costs attributes, never the trace."""
    try:
        end_ns = time.time_ns()
        if root.start_attrs is not None:
            _open_root_span(root)
        if root.built < len(root.runs):  # finishing failed before all children were built
            with root.lock:
                root.finished = True
                _build_runs(root, end_ns, final=True)
        root.runs = []
        _end_if_open(root.span)
    except Exception:  # noqa: BLE001
        pass


def _ctx_of(run: _Run) -> Context:
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


def _error_text(root: _Root, error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}" if root.content == "full" else type(error).__name__
    return root.text(text)


def _mark_error(span: trace.Span, root: _Root, error: BaseException, at_ns: int) -> str | None:
    """Error status and exception event on ``span``; control flow only gets a tag (returns None)."""
    if is_control_flow(error):
        span.set_attribute(A.CONTROL_FLOW, type(error).__name__)
        return None
    text = _error_text(root, error)
    span.set_status(Status(StatusCode.ERROR, text))
    span.set_attribute(A.ERROR_TYPE, type(error).__name__)
    if root.content == "full":
        record_exception(span, error, at_ns)
    else:
        span.add_event("exception", {"exception.type": type(error).__name__}, timestamp=at_ns)
    return text


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
    if type(usage) is dict or isinstance(usage, Mapping):
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
    # Plain attributes, not BaseCallbackHandler's properties: LangChain reads one on
    # every event it sends, and a property is a Python call each time.
    ignore_llm = False
    ignore_chain = False
    ignore_agent = False
    ignore_chat_model = False

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
        citations: CitationMode = "names",
        _options: TraceOptions | None = None,
    ) -> None:
        super().__init__()
        self.options = _options or trace_options(
            name=name,
            extractors=extractors,
            citation_pattern=citation_pattern,
            citation_parser=citation_parser,
            content=content,
            conversation_key=conversation_key,
            node_spans=node_spans,
            citations=citations,
        )
        # run_id.int -> its record (a folded chain run maps to its nearest recorded
        # ancestor). Keyed by int: a UUID's __hash__ is a Python call, an int's is not.
        self._recs: dict[Any, _Run] = {}
        self._bound_cache: _Run | None = None
        self._bound: _Root | None = None  # a decorated function's root (set by wrap.py)

    # ------------------------------------------------------------ roots

    def _start_root(
        self, run_id: UUID | str, name: str, inputs: Any, metadata: Mapping[str, Any] | None, *, live: bool = False
    ) -> _Root:
        """A new agent run. Its span starts now only if ``live`` (a decorated function's
        root, which becomes the ambient span of the function's body); otherwise it is
        started, with its real start time, when the run ends, like its children."""
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
            if ann.replay:
                root.tracer = get_tracer(replay=True)
            attrs.update(ann.attributes)
            root.metadata = redact(dict(ann.metadata))
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
        ambient = trace.get_current_span()
        root.parent_ctx = trace.set_span_in_context(ambient, Context()) if ambient.get_span_context().is_valid else Context()
        root.start_attrs, root.links = attrs, links
        if live:
            _open_root_span(root)
        return root

    def _conversation(self, root: _Root, metadata: Mapping[str, Any] | None) -> None:
        if root.conversation_id is None and metadata:
            value = metadata.get(self.options.conversation_key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                root.conversation_id = str(value)

    def _finish_root(self, root: _Root, output: Any, error: BaseException | None) -> Trajectory | None:
        """End the root span; the run's Trajectory when a ``capture()`` is active, else None."""
        end_ns = time.time_ns()
        status, err_text, answer, citations = "ok", None, None, []
        attrs: dict[str, Any] = {}
        free_text: str | None = None  # an answer whose citations are read from names after the build
        raw_answer: str | None = None  # issue 22: the answer as given, for provenance signals in every content mode
        if error is not None and not is_control_flow(error):
            status = "error"
            err_text = _error_text(root, error)
            attrs[A.ERROR_TYPE] = type(error).__name__
            attrs[A.ERROR] = err_text
        elif error is not None:
            status = "no_answer"
            attrs[A.CONTROL_FLOW] = type(error).__name__
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
                raw_answer = found.answer  # issue 22
                if found.source == "text" and not citations and found.answer and root.opts.citations != "markers":
                    free_text = found.answer
                if found.answer is not None and root.content == "full":
                    answer = root.text(found.answer)
                    attrs[A.ANSWER] = answer
                    attrs[A.OUTPUT_VALUE] = answer
        attrs[A.STATUS] = status
        attrs[A.CITATIONS] = dumps(citations)
        if root.provider is not None:  # required on invoke_agent by the GenAI semconv
            attrs[A.GEN_AI_PROVIDER_NAME] = provider_name(root.provider)
        if root.conversation_id is not None:
            attrs[A.GEN_AI_CONVERSATION_ID] = root.conversation_id
        if root.start_attrs is not None:  # not started yet: start it with all it knows by now
            root.start_attrs.update(attrs)
            _open_root_span(root)
        else:
            root.span.set_attributes(attrs)
        span = root.span
        if err_text is not None:
            span.set_status(Status(StatusCode.ERROR, err_text))
            if root.content == "full":
                record_exception(span, error, end_ns)  # type: ignore[arg-type]
        with root.lock:
            root.finished = True
            try:
                _build_runs(root, end_ns, final=True)
            finally:
                root.runs = []
        rows = sorted(root.rows, key=lambda r: r[0])
        steps = sorted(root.steps, key=lambda st: st.index)
        model_calls = sorted(root.model_calls, key=lambda m: m.index)
        if free_text is not None:  # citations by name need the run's entities: read them now
            try:
                text, citations = resolve_citations(free_text, known_names(e for ents in root.revealed for e in ents), root.opts.citations)
            except Exception as exc:  # noqa: BLE001 - a citation rule never costs the trace
                warn_once("handler:citations", "graphtrail: could not read citations from the answer (%r)", exc)
                text, citations = free_text, []
            raw_answer = text  # issue 22
            if citations:
                late: dict[str, Any] = {A.CITATIONS: dumps(citations)}
                if root.content == "full":
                    answer = root.text(text)
                    late[A.ANSWER] = late[A.OUTPUT_VALUE] = answer
                span.set_attributes(late)
        # issue 22: provenance signals on the root span, and the run's metrics (tracer/signals.py)
        provenance = finish_run(
            span, root.facts, agent=root.name, citations=citations, rows=rows, revealed=root.revealed, answer=raw_answer,
            question=root.question, status=status, error_type=attrs.get(A.ERROR_TYPE), start_ns=root.start_ns, end_ns=end_ns,
        )
        root.revealed = []
        # What needs the child spans' ids.
        visited = visited_ids(row[1] for row in rows)
        sources = first_sources(citations, rows)
        span.set_attributes({
            A.VISITED: dumps(visited),
            A.VISITED_UNCITED: dumps(uncited_ids(visited, citations)),
            A.CITATION_SOURCES: dumps(
                {cid: {"entity_id": cid, "steps": steps_, "span_ids": spans} for cid, (steps_, spans) in sources.items()}
            ),
        })
        _end_span(span, end_ns)
        if not root.captures:  # nobody reads a Trajectory of this run: don't build one
            return None
        traj = Trajectory(
            run_id=root.run_id,
            trace_id=root.trace_id,
            span_id=root.span_id,
            name=root.name,
            question=root.question,
            answer=answer,
            citations=citations,
            steps=steps,
            model_calls=model_calls,
            status=status,  # type: ignore[arg-type]
            error=err_text,
            start_time=_ns_to_s(root.start_ns),
            end_time=_ns_to_s(end_ns),
            conversation_id=root.conversation_id,
            metadata=root.metadata,
            provenance=provenance,  # issue 22
        )
        for cap in root.captures:
            cap._add(traj)
        return traj

    # ------------------------------------------------------------ helpers
    #
    # The callbacks below run inline on every LangChain run of every traced agent
    # (38 per run of the benchmark agent), so each one is a single frame: the
    # never-break-the-app guard is an inline try/except rather than a decorator
    # (which would re-pack LangChain's keyword arguments on every call), and
    # the run-id lookups are written out rather than called.

    def _parent(self, parent_run_id: UUID | None) -> _Run | None:
        if parent_run_id is not None:
            run = self._recs.get(_key(parent_run_id))
            if run is not None:
                return run
        if self._bound is not None:
            return self._bound_rec
        return None

    @property
    def _bound_rec(self) -> _Run:
        root = self._bound
        assert root is not None
        run = self._bound_cache
        if run is None or run.root is not root:
            run = self._bound_cache = _Run(root, "bound", None, None, root.name)
        return run

    def _finished(self, run_id: UUID) -> _Run | None:
        """The record a run owns, removed from the map and stamped; None for unknown and folded runs."""
        key = _key(run_id)
        run = self._recs.pop(key, None)
        if run is None or run.key != key:
            return None
        run.end_ns = time.time_ns()
        return run

    # ------------------------------------------------------------ chains

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
        try:
            key = _key(run_id)
            parent = self._parent(parent_run_id)
            if parent is None:
                name = kwargs.get("name") or (serialized or {}).get("name") or ""
                root = self._start_root(run_id, name, inputs, metadata)
                self._recs[key] = _Run(root, "root", key, None, root.name)
                return
            root = parent.root
            if root.conversation_id is None and metadata and self.options.conversation_key in metadata:
                self._conversation(root, metadata)
            if parent.kind == "bound" or (root.node_spans and metadata and not (tags and _HIDDEN_TAG in tags)):
                name = kwargs.get("name") or (serialized or {}).get("name") or ""
                if parent.kind == "bound" or metadata.get("langgraph_node") == name:  # type: ignore[union-attr]
                    run = _Run(root, "chain" if parent.kind == "bound" else "node", key, parent, name or "chain", metadata)
                    self._recs[key] = run
                    root.runs.append(run)
                    return
            self._recs[key] = parent  # folded into the nearest recorded ancestor: no record
        except Exception as exc:  # noqa: BLE001 - tracing never breaks the app
            _callback_failed("on_chain_start", exc)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._chain_done(run_id, outputs, None, "on_chain_end")

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._chain_done(run_id, None, error, "on_chain_error")

    def _chain_done(self, run_id: UUID, outputs: Any, error: BaseException | None, callback: str) -> None:
        try:
            run = self._finished(run_id)
            if run is None:
                return
            if run.kind == "root":
                try:
                    self._finish_root(run.root, outputs, error)
                finally:
                    _close_root(run.root)
                return
            if error is not None:
                run.error = error
            elif run.kind == "chain":
                run.root.last_output = outputs
            _after_finish(run)
        except Exception as exc:  # noqa: BLE001
            _callback_failed(callback, exc)

    # ------------------------------------------------------------ models

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
        try:
            self._record_model(run_id, parent_run_id, metadata, kwargs, messages[-1] if messages else None, "chat")
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_chat_model_start", exc)

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
        try:
            self._record_model(run_id, parent_run_id, metadata, kwargs, prompts[-1] if prompts else None, "llm")
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_llm_start", exc)

    def _record_model(
        self, run_id: UUID, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None, kwargs: Mapping[str, Any],
        inputs: Any, kind: str,
    ) -> None:
        """``inputs``: a chat model's message list, or a completion model's last prompt (``kind="llm"``)."""
        parent = self._parent(parent_run_id)
        if parent is not None:
            key = _key(run_id)
            root = parent.root
            if root.provider is None and metadata:
                label = metadata.get("ls_provider")
                if isinstance(label, str) and label:
                    root.provider = label
            run = _Run(root, kind, key, parent, "", metadata, inputs, kwargs.get("invocation_params"))
            run.index = next(parent.root.model_seq)  # numbered in start order, whenever its span is built
            self._recs[key] = run
            parent.root.runs.append(run)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            run = self._finished(run_id)
            if run is not None:
                run.output = response
                _after_finish(run)
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_llm_end", exc)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            run = self._finished(run_id)
            if run is not None:
                run.error = error
                _after_finish(run)
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_llm_error", exc)

    # ------------------------------------------------------------ tools

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
        try:
            parent = self._parent(parent_run_id)
            if parent is None:
                return
            key = _key(run_id)
            name = str(kwargs.get("name") or (serialized or {}).get("name") or "tool")
            call_id = kwargs.get("tool_call_id")
            run = _Run(parent.root, "tool", key, parent, name, metadata,
                       inputs if isinstance(inputs, dict) else input_str, call_id if isinstance(call_id, str) else None)
            self._recs[key] = run
            parent.root.runs.append(run)
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_tool_start", exc)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            run = self._finished(run_id)
            if run is not None:
                run.output = output
                run.index = next(run.root.step_seq)
                _after_finish(run)
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_tool_end", exc)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            run = self._finished(run_id)
            if run is not None:
                run.error = error
                if not is_control_flow(error):  # an interrupted tool did not finish: no step
                    run.index = next(run.root.step_seq)
                _after_finish(run)
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_tool_error", exc)


def _after_finish(run: _Run) -> None:
    """Build spans now if the run is long enough to be watched live (configure(live_after=...))."""
    root = run.root
    if root.live or run.end_ns - root.start_ns >= root.live_after_ns:
        _go_live(root)


def _key(run_id: Any) -> Any:
    """A run id as a dict key: its int for a UUID (whose own __hash__ is a Python call)."""
    return run_id.int if type(run_id) is UUID else run_id


def _callback_failed(callback: str, exc: BaseException) -> None:
    warn_once(f"handler:{callback}", "graphtrail: tracing failed in %s (%r); the agent is unaffected", callback, exc)


# ---------------------------------------------------------------- building spans at the end


def _build_runs(root: _Root, end_ns: int, final: bool) -> None:
    """Make spans (and rows, Steps, ModelCalls) of recorded runs; call with ``root.lock`` held.

    ``final`` (the run ended): every run not built yet, open ones ending at
    ``end_ns``. Otherwise (a long run, live): the runs that finished and whose
    parent span exists; the others wait for a later call.
    """
    runs = root.runs
    keep = root.steps if root.captures else None
    calls = root.model_calls if root.captures else None
    contiguous = True
    for i in range(root.built, len(runs)):
        run = runs[i]
        if run.span is None:
            parent = run.parent
            if not final and not (run.end_ns and (parent is None or parent.span is not None or parent.kind in _ROOT_KINDS)):
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


def _go_live(root: _Root) -> None:
    """A long run: from now on its spans are built as its calls finish."""
    with root.lock:
        if root.finished:
            return
        if not root.live:
            root.live = True
            if root.start_attrs is not None:
                _open_root_span(root)
        _build_runs(root, time.time_ns(), final=False)


_BARE = {
    "chat": ("chat", SpanKind.CLIENT, "LLM"),
    "llm": ("text_completion", SpanKind.CLIENT, "LLM"),
    "tool": ("execute_tool", SpanKind.INTERNAL, "TOOL"),
}


def _emit_bare(run: _Run, end_ns: int) -> None:
    """The span of a run whose attributes could not be built: it still ends, so the tree has no holes."""
    try:
        if run.span is None:
            operation, kind, oi_kind = _BARE.get(run.kind, ("", SpanKind.INTERNAL, "CHAIN"))
            attrs: dict[str, Any] = {A.OPENINFERENCE_SPAN_KIND: oi_kind}
            if operation:
                attrs[A.GEN_AI_OPERATION_NAME] = operation
            name = f"{operation} {run.name}".strip() if run.kind == "tool" else (operation or run.name or "chain")
            _start_span(run, name, kind, attrs)
        if run.span is not None and run.span.is_recording():
            run.span.end(end_time=run.end_ns or end_ns)
    except Exception:  # noqa: BLE001 - already warned
        pass


def _start_span(run: _Run, name: str, kind: SpanKind, attrs: dict[str, Any]) -> trace.Span:
    """The run's span, started at its real start time. A span processor that raises costs
    the span (an invalid one stands in), never the run's Step or Trajectory."""
    parent = run.parent
    try:
        span = run.root.tracer.start_span(
            name, context=_ctx_of(parent) if parent is not None else None, kind=kind, attributes=attrs,
            start_time=run.start_ns,
        )
    except Exception as exc:  # noqa: BLE001
        _pipeline_failed(exc)
        span = trace.INVALID_SPAN
    run.span = span
    return span


def _end_span(span: trace.Span, end_ns: int) -> None:
    try:
        span.end(end_time=end_ns)
    except Exception as exc:  # noqa: BLE001 - a processor's on_end raised; the span did end
        _pipeline_failed(exc)


def _pipeline_failed(exc: BaseException) -> None:
    warn_once(
        "otel-pipeline",
        "graphtrail: a span processor or exporter raised %r; spans may be missing, the agent and its trajectories "
        "are unaffected",
        exc,
    )


def _emit_chain(run: _Run, end_ns: int) -> None:
    attrs: dict[str, Any] = {A.OPENINFERENCE_SPAN_KIND: "CHAIN"}
    _graph_attrs(attrs, run.metadata)
    span = _start_span(run, run.name or "chain", SpanKind.INTERNAL, attrs)
    if run.error is not None:
        _mark_error(span, run.root, run.error, run.end_ns or end_ns)
    _end_span(span, run.end_ns or end_ns)


def _emit_chat(run: _Run, end_ns: int, model_calls: list[ModelCall] | None) -> None:
    index = run.index
    root = run.root
    meta = run.metadata or {}
    params = run.params or {}
    model = meta.get("ls_model_name") or params.get("model") or params.get("model_name")
    model = str(model) if model else None
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
        attrs[A.GEN_AI_PROVIDER_NAME] = provider_name(provider)
    node, step = _graph_attrs(attrs, meta)
    sent = run.inputs  # chat: the message list; completion: the prompt
    full = root.content == "full"
    if full and sent is not None:
        last = sent[-1] if chat and isinstance(sent, list) and sent else sent
        attrs[A.INPUT_VALUE] = root.text(getattr(last, "content", last))
        _input_messages(attrs, root, sent, chat)
    name = f"{operation} {model}" if model else operation
    if not run.end_ns or run.error is not None:  # still open at the end, or failed: no ModelCall
        root.facts.chat(operation, model, None, attrs.get(A.GEN_AI_PROVIDER_NAME), None, None, run.start_ns, run.end_ns or end_ns,
                        type(run.error).__name__ if run.error is not None else None)  # issue 22
        span = _start_span(run, name, SpanKind.CLIENT, attrs)
        if run.error is not None:
            _mark_error(span, root, run.error, run.end_ns)
        _end_span(span, run.end_ns or end_ns)
        return
    response = run.output
    generations = getattr(response, "generations", None) or [[]]
    gen = generations[0][0] if generations and generations[0] else None
    message = getattr(gen, "message", None)
    in_tok, out_tok = _usage(message, getattr(response, "llm_output", None))
    response_meta = getattr(message, "response_metadata", None) or {}
    response_model = response_meta.get("model_name") or response_meta.get("model")
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
            # pass of root.text() below over all of it (strings inside included).
            text = text + ("\n" if text else "") + dumps(
                [{"name": c.get("name"), "args": redact_keys(c.get("args"))} for c in message.tool_calls]
            )
        attrs[A.OUTPUT_VALUE] = root.text(text)
        cap = messages_cap(root.limit)
        attrs[A.GEN_AI_OUTPUT_MESSAGES] = (
            output_messages(message, gen, _message_cache(root), cap) if message is not None
            else completion_messages(gen, root.content, root.limit, cap)
        )
    root.facts.chat(operation, model, str(response_model) if response_model else None, attrs.get(A.GEN_AI_PROVIDER_NAME),
                    in_tok, out_tok, run.start_ns, run.end_ns, None)  # issue 22
    span = _start_span(run, name, SpanKind.CLIENT, attrs)
    _end_span(span, run.end_ns)
    if model_calls is None:
        return
    model_calls.append(ModelCall(
        index=index,
        model=str(response_model) if response_model else model,
        span_id=_hex_span(span),
        input_tokens=in_tok,
        output_tokens=out_tok,
        tool_calls=calls,
        start_time=_ns_to_s(run.start_ns),
        end_time=_ns_to_s(run.end_ns),
        langgraph_node=node,
        langgraph_step=step,
    ))


def _message_cache(root: _Root) -> MessageCache:
    cache = root.messages
    if cache is None:
        cache = root.messages = MessageCache(root.content, root.limit)
    return cache


def _input_messages(attrs: dict[str, Any], root: _Root, sent: Any, chat: bool) -> None:
    """``gen_ai.input.messages`` (content="full"): the whole conversation sent, capped; messages
    left out to fit the cap (the oldest after the first) are counted in ``graphtrail.messages.omitted``."""
    if not chat or not isinstance(sent, list):
        attrs[A.GEN_AI_INPUT_MESSAGES] = capped_json(prompt_messages(to_text(sent), root.content, root.limit), messages_cap(root.limit))
        return
    text, omitted = input_messages(sent, _message_cache(root), messages_cap(root.limit))
    attrs[A.GEN_AI_INPUT_MESSAGES] = text
    if omitted:
        attrs[A.MESSAGES_OMITTED] = omitted


def _emit_tool(run: _Run, end_ns: int, steps: list[Step] | None) -> _StepRow | None:
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
    if root.content != "none":
        attrs[A.STEP_ARGS] = dumps(args)
    if root.content == "full":
        attrs[A.INPUT_VALUE] = attrs[A.STEP_ARGS]
        attrs[A.INPUT_MIME_TYPE] = "application/json"
        # the same cleaned arguments (graphtrail.tracer.genai.clean_content rules), capped
        attrs[A.GEN_AI_TOOL_CALL_ARGUMENTS] = capped_json(attrs[A.STEP_ARGS], messages_cap(root.limit))
    node, step = _graph_attrs(attrs, run.metadata)
    name = f"execute_tool {run.name}"
    if not run.end_ns or not run.index:  # still open at the end, or stopped by control flow: no step
        span = _start_span(run, name, SpanKind.INTERNAL, attrs)
        if run.error is not None:
            _mark_error(span, root, run.error, run.end_ns)
        _end_span(span, run.end_ns or end_ns)
        return None
    error_text: str | None = None
    content: Any = None
    entities: list[EntityRef] = []
    edges: list[EdgeRef] = []
    tool_failed = False
    if run.error is not None:
        error_text = _error_text(root, run.error)
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
        entities, edges = found.entities, found.edges
        if entities:
            root.revealed.append(entities)
        if status == "error":
            tool_failed = True
            error_text = root.text(to_text(content)) if root.content == "full" else "ToolError"
    if root.content == "none":
        entities = [e if e.name is None and e.type is None else e._replace(name=None, type=None) for e in entities]
    ids = [e.id for e in entities]
    attrs[A.STEP] = run.index
    attrs[A.ENTITIES_VISITED] = dumps(ids)
    attrs[A.EDGES_TRAVERSED] = dumps_edges(edges)
    if root.content != "none" and any(e.name is not None or e.type is not None for e in entities):
        attrs[A.ENTITIES] = dumps_entities(entities)
    output_text = None
    if root.content == "full" and content is not None:
        output_text = root.text(content)
        attrs[A.OUTPUT_VALUE] = attrs[A.GEN_AI_TOOL_CALL_RESULT] = output_text
    if error_text is not None:
        attrs[A.STEP_ERROR] = error_text
    root.facts.tool(run.index, run.name, run.start_ns, run.end_ns, None if error_text is None else (
        type(run.error).__name__ if run.error is not None else "ToolError"))  # issue 22
    span = _start_span(run, name, SpanKind.INTERNAL, attrs)
    if entities:
        # On the span's timeline in Jaeger and Phoenix, one look away from the attributes.
        event: dict[str, Any] = {A.EVENT_ENTITY_COUNT: len(ids), A.EVENT_ENTITY_IDS: ids}
        listing = attrs.get(A.ENTITIES)
        if listing is not None:
            event[A.ENTITIES] = listing
        span.add_event(A.ENTITIES_EVENT, event, timestamp=run.end_ns)
    if run.error is not None:
        _mark_error(span, root, run.error, run.end_ns)
    elif tool_failed:
        span.set_status(Status(StatusCode.ERROR, error_text))
        span.set_attribute(A.ERROR_TYPE, "ToolError")
    _end_span(span, run.end_ns)
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
        start_time=_ns_to_s(run.start_ns),
        end_time=_ns_to_s(run.end_ns),
        langgraph_node=node,
        langgraph_step=step,
    ))
    return run.index, ids, span_id


def start_function_root(handler: GraphTrailHandler, name: str, question: str | None) -> _Root:
    """A root for a decorated function: no LangChain run starts it."""
    return handler._start_root(uuid.uuid4(), name, question, None, live=True)


def finish_function_root(handler: GraphTrailHandler, root: _Root, output: Any, error: BaseException | None) -> Trajectory | None:
    try:
        return handler._finish_root(root, output, error)
    except Exception as exc:  # noqa: BLE001
        warn_once("handler:finish", "graphtrail: could not finish the trace (%r); the agent is unaffected", exc)
        return None
    finally:
        _close_root(root)
