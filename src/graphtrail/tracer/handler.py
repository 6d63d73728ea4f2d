"""The LangChain callback handler: it records an agent's runs, and hands them over to be built into spans.

Span parents come only from LangChain's ``run_id``/``parent_run_id`` through
this handler's own ``run_id -> record`` map (records.py); spans are created
with an explicit parent context and the OTel context is never attached in a
callback, so concurrent runs cannot leak into each other and no "Failed to
detach context" can happen. Only a root span may take the ambient OTel span
(e.g. the app's request span) as its parent.

Record now, build at the end. While the agent runs, the callbacks below only
*record* the root of a wrapped Runnable and its model, tool and node runs (a
small slotted object holding the callback's arguments and two timestamps);
chain runs that get no span of their own are folded into their nearest
recorded ancestor. They become spans, with their real start and end times,
entity extraction and attributes, in one pass when the agent run ends
(roots.finish_root, spans.build_runs). Why: callbacks run interleaved with
LangGraph's own code, where the same work costs 2-3x what it costs in one
tight pass (cold caches; see benchmarks/tracer_overhead.py). A run that goes on
for ``configure(live_after=...)`` seconds switches to live: its root span
starts and each finished call is built at once (spans.go_live), so long runs
can be watched while they work. A decorated function's root starts live, as
the function's body runs inside it. docs/spans.md ("When spans are made") has
what this means for users.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from ._content import ContentMode
from ._safety import warn_once
from .batches import close_batches, finish_batched, join_batch, note_requested_calls
from .citations import CitationMode
from .extract import CitationParser, Extractor
from .options import TraceOptions, trace_options
from .records import RootRecord, RunRecord, is_control_flow
from .roots import close_root, finish_root, start_root
from .spans import go_live
from .trajectory import Trajectory

__all__ = [
    "GraphTrailHandler",
    "TraceOptions",
    "trace_options",
    "start_function_root",
    "finish_function_root",
    "is_control_flow",
]

_HIDDEN_TAG = "langsmith:hidden"


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
        answer_field: str | None = None,
        citations_field: str | None = None,
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
            answer_field=answer_field,
            citations_field=citations_field,
        )
        # run_id.int -> its record (a folded chain run maps to its nearest recorded
        # ancestor). Keyed by int: a UUID's __hash__ is a Python call, an int's is not.
        self._recs: dict[Any, RunRecord] = {}
        self._bound_cache: RunRecord | None = None
        self._bound: RootRecord | None = None  # a decorated function's root (set by wrap.py)

    # ------------------------------------------------------------ helpers
    #
    # The callbacks below run inline on every LangChain run of every traced agent
    # (38 per run of the benchmark agent), so each one is a single frame: the
    # never-break-the-app guard is an inline try/except rather than a decorator
    # (which would re-pack LangChain's keyword arguments on every call), and
    # the run-id lookups are written out rather than called.

    def _parent(self, parent_run_id: UUID | None) -> RunRecord | None:
        if parent_run_id is not None:
            run = self._recs.get(_key(parent_run_id))
            if run is not None:
                return run
        if self._bound is not None:
            return self._bound_rec
        return None

    @property
    def _bound_rec(self) -> RunRecord:
        root = self._bound
        assert root is not None
        run = self._bound_cache
        if run is None or run.root is not root:
            run = self._bound_cache = RunRecord(root, "bound", None, None, root.name)
        return run

    def _finished(self, run_id: UUID) -> RunRecord | None:
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
                root = start_root(self.options, run_id, name, inputs, metadata, name_from_run=True)
                self._recs[key] = RunRecord(root, "root", key, None, root.name)
                return
            root = parent.root
            if root.conversation_id is None and metadata and self.options.conversation_key in metadata:
                root.note_conversation(metadata)
            if parent.kind == "bound" or (root.node_spans and metadata and not (tags and _HIDDEN_TAG in tags)):
                name = kwargs.get("name") or (serialized or {}).get("name") or ""
                if parent.kind == "bound" or metadata.get("langgraph_node") == name:  # type: ignore[union-attr]
                    run = RunRecord(root, "chain" if parent.kind == "bound" else "node", key, parent, name or "chain", metadata)
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
                    finish_root(run.root, outputs, error)
                finally:
                    close_root(run.root)
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
            run = RunRecord(root, kind, key, parent, "", metadata, inputs, kwargs.get("invocation_params"))
            run.index = next(parent.root.model_seq)  # numbered in start order, whenever its span is built
            self._recs[key] = run
            parent.root.runs.append(run)
            # the agent may have moved on: parallel calls of earlier messages that never started will not
            if root.batches and close_batches(root, final=False) and root.live:
                go_live(root)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            run = self._finished(run_id)
            if run is not None:
                run.output = response
                if run.kind == "chat":
                    note_requested_calls(run.root, response)  # parallel calls: numbered in this order
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
            if not isinstance(call_id, str):
                call_id = None
            run = RunRecord(parent.root, "tool", key, parent, name, metadata,
                       inputs if isinstance(inputs, dict) else input_str, call_id)
            self._recs[key] = run
            parent.root.runs.append(run)
            if call_id is not None and parent.root.calls:
                join_batch(run, call_id)
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_tool_start", exc)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            run = self._finished(run_id)
            if run is not None:
                run.output = output
                if run.batch is None:
                    run.index = next(run.root.step_seq)
                else:  # one of parallel calls: numbered in the order the model asked for them
                    finish_batched(run, True)
                _after_finish(run)
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_tool_end", exc)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            run = self._finished(run_id)
            if run is not None:
                run.error = error
                step = not is_control_flow(error)  # an interrupted tool did not finish: no step
                if run.batch is not None:
                    finish_batched(run, step)
                elif step:
                    run.index = next(run.root.step_seq)
                _after_finish(run)
        except Exception as exc:  # noqa: BLE001
            _callback_failed("on_tool_error", exc)


def _after_finish(run: RunRecord) -> None:
    """Build spans now if the run is long enough to be watched live (configure(live_after=...)).

    Not for a spanless root (a replayed run whose spans nobody receives, unexported.py):
    nobody watches it, and its one build at the end makes the same Trajectory.
    """
    root = run.root
    if root.live or (run.end_ns - root.start_ns >= root.live_after_ns and not root.spanless):
        go_live(root)


def _key(run_id: Any) -> Any:
    """A run id as a dict key: its int for a UUID (whose own __hash__ is a Python call)."""
    return run_id.int if type(run_id) is UUID else run_id


def _callback_failed(callback: str, exc: BaseException) -> None:
    warn_once(f"handler:{callback}", "graphtrail: tracing failed in %s (%r); the agent is unaffected", callback, exc)


def start_function_root(handler: GraphTrailHandler, name: str, question: str | None) -> RootRecord:
    """A root for a decorated function: no LangChain run starts it."""
    return start_root(handler.options, uuid.uuid4(), name, question, None, live=True)


def finish_function_root(handler: GraphTrailHandler, root: RootRecord, output: Any, error: BaseException | None) -> Trajectory | None:
    try:
        return finish_root(root, output, error)
    except Exception as exc:  # noqa: BLE001
        warn_once("handler:finish", "graphtrail: could not finish the trace (%r); the agent is unaffected", exc)
        return None
    finally:
        close_root(root)
