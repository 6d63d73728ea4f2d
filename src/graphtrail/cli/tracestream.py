"""Runs of a trace file, read as a stream: memory holds the traces in flight, not the file.

A trace file can be as large as a production day (gigabytes). ``graphtrail traces``,
``traces stats`` and ``eval --from-traces`` read it through :func:`iter_runs`:

- records come one line at a time (:func:`~.tracefiles.iter_json_records`);
- OTLP spans are grouped by trace, and a trace is rebuilt into trajectories once its
  root span (the one without a parent) has been read. An exporter writes a span when it
  ends and a root ends after its children, so by then the trace is complete; the trace's
  spans are then dropped. Traces still open at the end of the file are rebuilt there
  (a file cut short, or an export that wrote no root);
- trajectory lines (``trajectories.jsonl``) are runs as they are.

Runs come out in the order their traces completed, which for one process's exporter
is the order the runs ended.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InputError
from .runtags import RunTags, root_tags, tags_of

__all__ = ["Run", "RunDigest", "Trace", "iter_runs", "iter_traces", "slim"]


@dataclass(frozen=True)
class Run:
    """One run read back from a trace file, with its evaluation tags (condition, question id, trial)."""

    trajectory: Any
    tags: RunTags


@dataclass
class Trace:
    """One complete trace: its OTLP documents (cut down to its spans) and the runs rebuilt from them."""

    trace_id: str
    docs: list[dict[str, Any]]
    runs: list[Run]


def iter_traces(records: Iterable[dict[str, Any]], file: Path, *, keep_docs: bool = False) -> Iterator[Trace]:
    """Every trace in ``records`` (the JSON objects of ``file``), as soon as it is complete.

    ``keep_docs``: also hand over the trace's OTLP documents (for conversions); otherwise only
    its span records are held while it is open. A trajectory line is a trace of one run.
    """
    from graphtrail.tracer import Trajectory
    from graphtrail.tracer.jsonl import spans_of_request
    from graphtrail.tracer.rebuild import trajectories_from_span_records

    from .tracefiles import is_otlp, is_trajectory, keep_traces

    spans_of: dict[str, list[dict[str, Any]]] = {}
    docs_of: dict[str, list[dict[str, Any]]] = {}
    tags: dict[tuple[str, str], dict[str, Any]] = {}
    seen_any = False

    def close(trace_id: str) -> Trace:
        runs = []
        for traj in trajectories_from_span_records(spans_of.pop(trace_id, [])):
            runs.append(Run(traj, tags_of(traj, tags)))
            tags.pop(((traj.trace_id or "").lower(), (traj.span_id or "").lower()), None)
        return Trace(trace_id, docs_of.pop(trace_id, []), runs)

    for record in records:
        if is_otlp(record):
            seen_any = True
            tags.update(root_tags([record]))
            complete: list[str] = []
            in_record: dict[str, None] = {}
            for span in spans_of_request(record):
                trace_id = span["trace_id"] or ""
                in_record[trace_id] = None
                spans_of.setdefault(trace_id, []).append(span)
                if span["parent_id"] is None:
                    complete.append(trace_id)
            if keep_docs:
                for trace_id in in_record:
                    docs_of.setdefault(trace_id, []).extend(keep_traces([record], {trace_id}))
            for trace_id in dict.fromkeys(complete):
                yield close(trace_id)
        elif is_trajectory(record):
            seen_any = True
            traj = Trajectory.model_validate(record)
            yield Trace(str(traj.trace_id or ""), [], [Run(traj, tags_of(traj, {}))])
    for trace_id in list(spans_of):
        yield close(trace_id)
    if not seen_any and not keep_docs:  # a conversion says instead that it found no OTLP spans
        raise InputError(
            f"{file} is neither OTLP/JSON spans nor trajectories",
            "pass traces.jsonl (OTLP/JSON lines) or trajectories.jsonl written by `graphtrail run`",
        )


def iter_runs(records: Iterable[dict[str, Any]], file: Path) -> Iterator[Run]:
    """Every run in ``records`` (the JSON objects of ``file``), as soon as its trace is complete."""
    for trace in iter_traces(records, file):
        yield from trace.runs


@dataclass(frozen=True)
class RunDigest:
    """What statistics and question sampling read of a run, and nothing else (a few hundred bytes).

    Has the :class:`~graphtrail.tracer.Trajectory` attributes those readers use, so they take
    either; ``provenance`` holds the signals computed from the whole run.
    """

    run_id: str
    trace_id: str | None
    span_id: str | None
    start_time: float | None
    status: str
    question: str | None
    answer: str | None
    citations: tuple[str, ...]
    visited_uncited: tuple[str, ...]
    entity_names: dict[str, str]
    metadata: dict[str, Any]
    provenance: Any
    #: the model each of the run's model calls named (``--from-traces`` replays the commonest), kept as
    #: light stand-ins for :attr:`Trajectory.model_calls`, which are dropped
    model_calls: tuple[Any, ...] = ()


def slim(trajectory: Any) -> RunDigest:
    """``trajectory`` as a :class:`RunDigest`: its signals computed first, its steps, tool outputs and
    model calls dropped, so a production day of runs fits in memory whatever the file's size."""
    from graphtrail.tracer import signals_of

    uncited = tuple(trajectory.visited_uncited)
    names = trajectory.entity_names
    return RunDigest(
        run_id=trajectory.run_id, trace_id=trajectory.trace_id, span_id=trajectory.span_id, start_time=trajectory.start_time,
        status=trajectory.status, question=trajectory.question, answer=trajectory.answer, citations=tuple(trajectory.citations),
        visited_uncited=uncited, entity_names={e: names[e] for e in uncited if e in names},
        metadata={k: v for k, v in (trajectory.metadata or {}).items() if k == "condition"},  # what marks a replay
        provenance=signals_of(trajectory),
        model_calls=tuple(_ModelName(c.model) for c in (trajectory.model_calls or []) if getattr(c, "model", None)),
    )


@dataclass(frozen=True)
class _ModelName:
    """A model call reduced to the model it named."""

    model: str
