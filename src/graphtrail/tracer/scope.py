"""Per-task scopes read when a root run starts: ``capture()`` and ``run_annotations()``.

Both live in ContextVars, so every asyncio task and every thread started with a
copied context sees its own; a run belongs to the scopes active *where it
started*, which is what lets concurrent replays each collect their own runs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook

from ._safety import warn_once
from .trajectory import Trajectory


class Capture:
    """Trajectories of the runs started inside a ``with graphtrail.capture()`` block."""

    def __init__(self) -> None:
        self.trajectories: list[Trajectory] = []
        self._lock = threading.Lock()

    def _add(self, trajectory: Trajectory) -> None:
        with self._lock:
            self.trajectories.append(trajectory)

    def __len__(self) -> int:
        return len(self.trajectories)

    def __iter__(self) -> Iterator[Trajectory]:
        return iter(list(self.trajectories))

    @property
    def last(self) -> Trajectory | None:
        return self.trajectories[-1] if self.trajectories else None

    def __repr__(self) -> str:
        # Printed in a REPL or a log; the trajectories themselves print one line each.
        from .._display import one_line, plural, short

        last = self.last
        where = f"last: {short(last.question or '', 40)!r} -> {short(last.answer or '', 24)!r}" if last is not None else None
        return one_line("Capture", plural(len(self.trajectories), "trajectory", "trajectories"), where)


_captures: ContextVar[tuple[Capture, ...]] = ContextVar("graphtrail_captures", default=())


class _RunObserver(BaseCallbackHandler):
    """Notes that *some* LangChain run started inside a ``capture()`` block, traced or not.

    Attached through a configure hook (below) only while a block is open, so a
    ``capture()`` around an agent nobody traced can say so instead of quietly
    returning nothing. It only flips a flag: no per-run state, nothing to leak.
    """

    raise_error = False
    # Called on the event loop: a handler that is not inline costs every LangChain event of an async
    # run a hop to the default thread pool (and a wait for a free worker there), only to flip a flag.
    run_inline = True
    seen = False

    def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
        self.seen = True

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.seen = True

    def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        self.seen = True

    def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
        self.seen = True


_observer: ContextVar[_RunObserver | None] = ContextVar("graphtrail_capture_observer", default=None)
register_configure_hook(_observer, inheritable=True)

@contextmanager
def traced_call() -> Iterator[None]:
    """A traced agent's own call: ``capture()``'s observer is not attached to it.

    The observer only tells an untraced run from none at all; a traced run hands the
    block its Trajectory, so watching it would only cost one more handler on every
    LangChain event of the run (about 50 per agent run).
    """
    if _observer.get() is None:
        yield
        return
    token = _observer.set(None)
    try:
        yield
    finally:
        _observer.reset(token)


#: Logged when a ``capture()`` block closes having seen LangChain runs but no traced one.
UNTRACED_WARNING = (
    "graphtrail: capture() saw LangChain runs but no traced run, so it holds no trajectory; "
    "wrap the agent with graphtrail.trace_agent(agent) (or decorate the function that runs it "
    "with @graphtrail.trace_agent), or call graphtrail.instrument()"
)


@contextmanager
def capture() -> Iterator[Capture]:
    """Collect a :class:`Trajectory` for each traced run started inside the block.

    Nested blocks each see the runs started inside them (an outer block sees
    the inner block's runs too). A run is delivered when it finishes, so read
    ``.trajectories`` after the runs returned. A block that saw LangChain runs
    but collected no trajectory (the agent was not traced) logs one warning
    naming ``trace_agent`` when it closes (once per process: a replay of an
    untraced agent would otherwise log it for every run).
    """
    cap = Capture()
    outer_observer = _observer.get()
    observer = outer_observer or _RunObserver()
    token = _captures.set((*_captures.get(), cap))
    obs_token = _observer.set(observer)
    closed_normally = False
    try:
        yield cap
        closed_normally = True
    finally:
        _observer.reset(obs_token)
        _captures.reset(token)
        # A block left by an exception (Ctrl-C, a failing run) may hold no trajectory
        # because its traced run never finished: that is not an untraced agent.
        if closed_normally and outer_observer is None and observer.seen and not cap.trajectories:
            warn_once("capture_untraced", UNTRACED_WARNING)


def active_captures() -> tuple[Capture, ...]:
    return _captures.get()


@dataclass(frozen=True)
class Annotations:
    attributes: dict[str, Any] = field(default_factory=dict)
    links: tuple[tuple[str, str], ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    replay: bool = False


_annotations: ContextVar[Annotations | None] = ContextVar("graphtrail_annotations", default=None)


@contextmanager
def run_annotations(
    attributes: dict[str, Any] | None = None,
    links: list[tuple[str, str]] | None = None,
    metadata: dict[str, Any] | None = None,
    replay: bool | None = None,
) -> Iterator[Annotations]:
    """Tag the root spans (and Trajectories) of runs started inside the block.

    - ``attributes``: extra root-span attributes, e.g. ``{"graphtrail.condition": "hide-top1"}``
      (OTel attribute values: str, bool, int, float or lists of them);
    - ``links``: ``(trace_id_hex, span_id_hex)`` pairs, added as span links (e.g. to
      the baseline run a replay was derived from);
    - ``metadata``: JSON-safe dict merged into ``Trajectory.metadata``;
    - ``replay``: the runs are replays (e.g. an evaluation's): their spans are
      exported under the replay service (``configure(replay_service=...)``,
      default ``<service>-replay``) so backends list them apart from real runs.

    Nested blocks merge, the inner one winning on equal keys.
    """
    for pair in links or []:
        trace_id, span_id = pair
        if len(trace_id) != 32 or len(span_id) != 16:
            raise ValueError(f"links must be (32-hex trace id, 16-hex span id) pairs, got {pair!r}")
        int(trace_id, 16), int(span_id, 16)
    # JSON-normalize so the metadata equals what a rebuild from spans reads back.
    meta = json.loads(json.dumps(metadata or {}, default=str))
    outer = _annotations.get() or Annotations()
    merged = Annotations(
        attributes={**outer.attributes, **(attributes or {})},
        links=(*outer.links, *(tuple(p) for p in links or [])),
        metadata={**outer.metadata, **meta},
        replay=outer.replay if replay is None else bool(replay),
    )
    token = _annotations.set(merged)
    try:
        yield merged
    finally:
        _annotations.reset(token)


def active_annotations() -> Annotations | None:
    return _annotations.get()
