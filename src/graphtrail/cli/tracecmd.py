"""What ``graphtrail traces FILE`` does: show a trace file's runs, or convert it, as a stream.

The file is read one line at a time and each trace is handled once it is complete
(:mod:`.tracestream`): a summary prints each run's panel as it comes, a conversion
writes each trace as it comes. Memory holds the traces in flight and one small tag
record per run, whatever the file's size. ``--limit N`` stops reading once N runs
(or, converting, N traces) are out.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import IO, Any

from .errors import InputError

__all__ = ["show_traces"]


def show_traces(
    file: Path, *, fmt: str, output: Path | None, limit: int | None, console: Any,
    conditions: list[str] | None = None, questions: list[str] | None = None,
) -> None:
    from .tracefiles import iter_json_records

    records = iter_json_records(file)
    if fmt == "summary":
        _summary(records, file, limit=limit, console=console, conditions=conditions, questions=questions)
    else:
        _convert(records, file, fmt=fmt, output=output, limit=limit, console=console, conditions=conditions, questions=questions)


def _could_match(run: Any, conditions: list[str] | None, questions: list[str] | None) -> bool:
    """filter_runs raises when nothing matches; this is the same test without the raise."""
    from .runtags import _split

    wanted_c, wanted_q = _split(conditions), _split(questions)
    tags, text = run.tags, (run.trajectory.question or "").lower()
    if wanted_c and tags.condition not in wanted_c:
        return False
    return not wanted_q or tags.question_id in wanted_q or any(q.lower() in text for q in wanted_q)


def _no_match(light: list[tuple[Any, Any]], conditions: list[str] | None, questions: list[str] | None, file: Path) -> None:
    """Raise filter_runs' error naming what the file holds (it raises whenever none of ``light`` matches)."""
    from .runtags import filter_runs

    filter_runs(light, conditions=conditions, questions=questions, file=file)


def _summary(records: Any, file: Path, *, limit: int | None, console: Any, conditions: list[str] | None,
             questions: list[str] | None) -> None:
    from .render import trajectory_panel
    from .runtags import condition_counts, describe_tags
    from .tracestream import iter_runs

    light: list[tuple[Any, Any]] = []  # what a "no run matches" hint needs: question text and tags
    matching = shown = 0
    stopped = False
    for run in iter_runs(records, file):
        light.append((SimpleNamespace(question=(run.trajectory.question or "")[:1000]), run.tags))
        if not _could_match(run, conditions, questions):
            continue
        matching += 1
        console.print(trajectory_panel(run.trajectory, label=describe_tags(run.tags)))
        shown += 1
        if limit is not None and shown >= limit:
            stopped = True
            break
    if not light:
        raise InputError(f"{file} holds no agent runs", "expected spans from a traced agent (an 'invoke_agent ...' root span)")
    if not matching:
        _no_match(light, conditions, questions, file)
    filtered = bool(conditions or questions)
    if stopped:
        summary = f"showing the first {shown} {'matching ' if filtered else ''}run(s) of {file} (--limit {limit}: the rest was not read)"
    else:
        summary = f"{len(light)} run(s) in {file}" + (f", {matching} matching" if matching < len(light) else "")
    counts = condition_counts(g for _, g in light)
    if counts:
        summary += f"; by condition{' (runs read)' if stopped else ''}: " + ", ".join(f"{c} {n}" for c, n in counts.items())
    from graphtrail._secrets import scan_text

    console.print(scan_text(summary), markup=False)  # condition names and the path come from the file


def _convert(records: Any, file: Path, *, fmt: str, output: Path | None, limit: int | None, console: Any,
             conditions: list[str] | None, questions: list[str] | None) -> None:
    """Write each kept trace as it completes: OTLP/JSON (one document) or Jaeger JSON (``{"data": [...]}``).

    To ``--output``, through the output-folder rules (a temporary file moved into place at the end,
    the folder's lock held); spans from another producer are re-emitted redacted, by graphtrail's rules.
    """
    import contextlib
    import sys

    from graphtrail._outdir import open_output

    with contextlib.ExitStack() as stack:
        sink: IO[str] = sys.stdout if output is None else stack.enter_context(open_output(output))
        _write_converted(records, file, sink, fmt=fmt, limit=limit, conditions=conditions, questions=questions)
    if output is not None:
        console.print(f"wrote {fmt} to {output}" + ("  (Jaeger UI: Search → Upload)" if fmt == "jaeger" else ""))


def _write_converted(records: Any, file: Path, sink: IO[str], *, fmt: str, limit: int | None,
                     conditions: list[str] | None, questions: list[str] | None) -> None:
    from graphtrail._secrets import redact_value

    from .tracefiles import otlp_to_jaeger
    from .tracestream import iter_traces

    light: list[tuple[Any, Any]] = []
    kept = 0
    any_otlp = opened = written = False
    for trace in iter_traces(records, file, keep_docs=True):
        if not trace.docs:
            continue  # a trajectory line: nothing to convert
        any_otlp = True
        light.extend((SimpleNamespace(question=(r.trajectory.question or "")[:1000]), r.tags) for r in trace.runs)
        if (conditions or questions) and not any(_could_match(r, conditions, questions) for r in trace.runs):
            continue
        if not opened:
            sink.write('{"data": [' if fmt == "jaeger" else '{"resourceSpans": [')
            opened = True
        items = otlp_to_jaeger(trace.docs)["data"] if fmt == "jaeger" else [
            rs for doc in trace.docs for rs in doc.get("resourceSpans") or doc.get("resource_spans") or []]
        for item in items:
            sink.write((", " if written else "") + json.dumps(redact_value(item), ensure_ascii=False))
            written = True
        kept += 1
        if limit is not None and kept >= limit:
            break
    if not any_otlp:
        raise InputError(f"{file} holds no OTLP spans", "conversion needs an OTLP/JSON trace file such as OUT/traces.jsonl")
    if not opened:  # filters matched nothing: say what is there (this raises), and write nothing
        _no_match(light, conditions, questions, file)
        sink.write('{"data": [' if fmt == "jaeger" else '{"resourceSpans": [')
    sink.write("]}\n")
