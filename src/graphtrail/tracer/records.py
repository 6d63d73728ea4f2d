"""What the callbacks record while an agent runs: one ``RootRecord`` per agent run, one ``RunRecord`` per call.

The callback handler (handler.py) only fills these in -- the callback's
arguments, two timestamps, start and finish numbers -- because callbacks run
interleaved with LangGraph's own code, where every bit of work costs 2-3x what
it costs in one pass later. Turning them into spans, Steps and ModelCalls is
spans.py's and roots.py's job (docs/spans.md, "When spans are made").
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link

from ._content import ContentMode
from .config import get_tracer, run_settings
from .extract import EntityRef
from .genai import MessageCache
from .options import TraceOptions
from .redact import redact_text
from .scope import Capture, active_captures
from .signals import RunFacts
from .trajectory import ModelCall, Step

StepRow = tuple[int, list[str], str | None]  # (step index, entity ids, span id): what the root's attributes need

ROOT_KINDS = ("root", "bound")  # records whose span is the root span

# LangGraph's interrupts and commands, and GeneratorExit: the consumer of stream()
# stopped reading early, which ends the run but is no failure of the agent.
_CONTROL_FLOW = frozenset(
    {"GraphBubbleUp", "GraphInterrupt", "NodeInterrupt", "ParentCommand", "GraphDrained", "GeneratorExit"}
)


def is_control_flow(error: BaseException) -> bool:
    """LangGraph's interrupts and parent commands (and a stream closed early) are raised, but are not failures."""
    return any(cls.__name__ in _CONTROL_FLOW for cls in type(error).__mro__)


class RootRecord:
    """State of one agent run (one trace)."""

    __slots__ = (
        "run_id", "name", "span", "tracer", "content", "limit", "opts", "captures", "metadata",
        "question", "conversation_id", "runs", "step_seq", "start_ns", "last_output", "trace_id",
        "span_id", "node_spans", "start_attrs", "links", "parent_ctx", "live_after_ns", "live", "finished",
        "lock", "built", "model_seq", "rows", "steps", "model_calls", "revealed", "provider", "messages",
        "facts", "spanless", "calls", "batches", "name_from_run",
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
        self.runs: list[RunRecord] = []  # recorded child runs, in start order
        self.built = 0  # runs[:built] all have their spans
        self.live = False  # a long run: spans are built as calls finish
        self.finished = False
        self.lock = threading.RLock()  # live builds may happen on several threads at once
        # Steps are numbered in the order tools finish, except that the parallel calls one model
        # message asked for are numbered in the order it asked for them (batches.py).
        self.step_seq = itertools.count(1)
        self.calls: dict[str, Any] | None = None  # tool_call_id -> its CallBatch (batches.py), while one is open
        self.batches: list[Any] = []  # the CallBatches not fully numbered yet
        self.model_seq = itertools.count(1)  # model calls in the order they start
        self.rows: list[StepRow] = []  # what the root's attributes need, per step
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
        self.facts = RunFacts()  # what the run's provenance signals and metrics need (tracer/signals.py)
        self.name_from_run = False  # its name is LangChain's run name, not one given in code (metric labels)
        self.spanless = False  # a replayed run nobody receives spans of: span-only attributes are skipped (unexported.py)

    def note_conversation(self, metadata: Mapping[str, Any] | None) -> None:
        """The conversation id, from the first run whose metadata carries the options' ``conversation_key``."""
        if self.conversation_id is None and metadata:
            value = metadata.get(self.opts.conversation_key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                self.conversation_id = redact_text(str(value))  # a thread id may be a session token


class RunRecord:
    """One LangChain run inside an agent run, as recorded by the callbacks.

    ``kind``: ``root`` (the agent run), ``bound`` (a decorated function's root),
    ``node``/``chain`` (CHAIN spans), ``chat`` or ``tool``. Collapsed chain runs
    have no record of their own: their run id maps to their nearest recorded
    ancestor, which ``key`` tells apart.
    """

    __slots__ = (
        "root", "kind", "key", "parent", "name", "start_ns", "end_ns", "metadata", "inputs",
        "params", "output", "error", "index", "span", "ctx", "batch",
    )

    def __init__(self, root: RootRecord, kind: str, key: Any, parent: RunRecord | None, name: str,
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
        # chat: model call number (start order); tool: step number (finishing order, or the model's
        # request order within a batch of parallel calls; 0: no step, or not numbered yet)
        self.index = 0
        self.batch: Any = None  # tool: the CallBatch it waits in for its number (batches.py); None: not held
        self.span: trace.Span | None = None
        self.ctx: Context | None = None  # parent context for child spans, built once
