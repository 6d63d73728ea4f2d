"""Replayed runs whose spans nobody receives: the Trajectory without the OTel spans.

An evaluation replays the agent hundreds of times, and what it keeps of each run
is the :class:`~.trajectory.Trajectory` (steps, tool outputs, model calls,
citations). When the tracer provider has no span processor at all (graphtrail's
default, ``configure(exporter="none")``, with no processor added since), every
span of those runs is built, filled with GenAI/OpenInference attributes
(message lists as JSON, redacted inputs and outputs) and dropped. For a replayed
run (``run_annotations(replay=True)``) in that case, :func:`replay_tracer` hands
out a tracer of non-recording spans instead: they carry fresh ids from the
provider's own id generator (the Trajectory's span and trace ids stay valid and
unique, children share the root's trace id), and the span-only attributes are
not computed (spans.py asks :attr:`RootRecord.spanless`). The Trajectory is the
same. As soon as a processor is attached, the next run gets real spans again;
runs that are not replays are never affected.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, TraceFlags

__all__ = ["SpanlessTracer", "replay_tracer"]

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def _unexported(tracer: Any) -> bool:
    """True only for an OTel SDK tracer whose provider has no span processor (nothing can see its spans)."""
    try:
        from opentelemetry.sdk.trace import ConcurrentMultiSpanProcessor, SynchronousMultiSpanProcessor, Tracer
    except ImportError:  # pragma: no cover - the SDK is a dependency
        return False
    if type(tracer) is not Tracer:
        return False
    multi = getattr(tracer, "span_processor", None)
    if type(multi) not in (SynchronousMultiSpanProcessor, ConcurrentMultiSpanProcessor):
        return False
    processors = getattr(multi, "_span_processors", None)
    return isinstance(processors, tuple) and not processors


class SpanlessTracer(trace.Tracer):
    """Non-recording spans with real ids: a parent in ``context`` gives its trace id, else a new one."""

    def __init__(self, id_generator: Any) -> None:
        self.ids = id_generator

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Any = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> trace.Span:
        parent = trace.get_current_span(context).get_span_context()
        trace_id = parent.trace_id if parent.is_valid else self.ids.generate_trace_id()
        return NonRecordingSpan(SpanContext(trace_id, self.ids.generate_span_id(), is_remote=False, trace_flags=_SAMPLED))

    @contextlib.contextmanager
    def start_as_current_span(self, name: str, context: Context | None = None, *args: Any, **kwargs: Any) -> Iterator[trace.Span]:
        span = self.start_span(name, context)
        with trace.use_span(span, end_on_exit=False):
            yield span


def replay_tracer(tracer: Any) -> Any:
    """``tracer``, or a :class:`SpanlessTracer` with its id generator when nothing receives its spans."""
    if _unexported(tracer):
        ids = getattr(tracer, "id_generator", None)
        if ids is not None:
            return SpanlessTracer(ids)
    return tracer
