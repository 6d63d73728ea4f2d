"""What ``graphtrail traces stats`` does: load runs from a file or Jaeger, compute, print, write."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = ["traces_stats", "load_trajectories", "shown_stats"]


def load_trajectories(source: Path | None, *, jaeger: str | None, service: str | None, since: str | None,
                      keep: Callable[[Any], bool] | None = None) -> tuple[list[Any], str]:
    """The trajectories of ``source`` (a trace file) or of a live Jaeger, and a label naming where they came from.

    A file is read as a stream and each run is kept slim (:func:`.tracestream.slim`), so memory grows
    with the number of runs, not the size of the file. ``keep``: read on while it returns True for
    each run (``eval --from-traces --limit``: stop once enough questions are in).
    """
    if source is not None and jaeger:
        raise InputError("pass a trace file or --jaeger, not both", "drop SOURCE to read from Jaeger, or --jaeger to read the file")
    if source is None and not jaeger:
        raise InputError("nothing to read", "pass a trace file (e.g. OUT/traces.jsonl) or --jaeger http://host:16686 --service NAME")
    if jaeger:
        from graphtrail.tracer import trajectories_from_otlp_json

        from .jaegersource import fetch_jaeger_traces, jaeger_to_otlp, parse_since

        window = parse_since(since or "24h")
        name = service or os.environ.get("OTEL_SERVICE_NAME") or "graphtrail"
        traces = fetch_jaeger_traces(jaeger, name, window)
        trajectories = list(trajectories_from_otlp_json([json.dumps(jaeger_to_otlp(traces))])) if traces else []
        return trajectories, f"Jaeger {jaeger} service {name} (last {since or '24h'})"
    if service or since:
        raise InputError("--service and --since apply to --jaeger", "drop them when reading a trace file")
    from .tracefiles import iter_json_records
    from .tracestream import iter_runs, slim

    assert source is not None
    out = []
    for run in iter_runs(iter_json_records(source), source):
        if keep is not None and not keep(run.trajectory):
            break
        out.append(slim(run.trajectory))
    return out, str(source)


def traces_stats(*, source: Path | None, jaeger: str | None, service: str | None, since: str | None, by: str, top: int,
                 html: Path | None, json_out: Path | None, include_replays: bool, console: Any) -> None:
    from .render import print_files
    from .tracestats import compute_stats, print_stats

    if by not in ("auto", "hour", "day"):
        raise InputError(f"--by {by!r} is not a period", "use --by hour, --by day or --by auto")
    trajectories, label = load_trajectories(source, jaeger=jaeger, service=service, since=since)
    stats = shown_stats(compute_stats(trajectories, source=label, bucket=by, top=top, include_replays=include_replays))
    if not stats.runs:
        where = "in that window" if jaeger else f"in {source}"
        hint = ("check --service (Jaeger's service picker lists them) and --since" if jaeger
                else "expected spans of a traced agent ('invoke_agent ...' root spans)"
                + ("; pass --include-replays to count evaluation replays" if stats.replays_skipped else ""))
        raise InputError(f"no production agent runs {where}", hint)
    print_stats(stats, console)
    files: dict[str, Path] = {}
    from graphtrail._outdir import write_output  # atomic, the folder's lock held, a planted symlink replaced

    if json_out is not None:
        write_output(json_out, json.dumps(stats.to_json(), ensure_ascii=False, indent=1) + "\n")
        files["statistics (JSON)"] = json_out
    if html is not None:
        from .tracestats_html import render_stats_html

        write_output(html, render_stats_html(stats))
        files["statistics (HTML)"] = html
    if files:
        print_files(console, files)


@dataclass(frozen=True)
class _ShownRun:
    """What the statistics print of one run, redacted (a trace file may come from any producer)."""

    trace_id: str | None
    span_id: str | None
    question: str | None
    answer: str | None
    status: str
    start_time: float | None
    visited_uncited: list[str]
    metadata: dict[str, Any]


def shown_stats(stats: Any) -> Any:
    """``stats`` with every text it prints or writes (stdout, ``--json``, ``--html``) redacted.

    Only the fields the statistics show are copied and scanned, not whole trajectories
    (tool outputs are never shown here, and scanning them would cost more than the rest).
    """
    from dataclasses import replace

    from graphtrail._secrets import scan_text

    from .tracestats import RunView

    def text(value: Any) -> Any:
        return scan_text(value) if isinstance(value, str) else value

    runs = []
    for r in stats.runs:
        t = r.trajectory
        view = _ShownRun(text(t.trace_id), text(t.span_id), text(t.question), text(t.answer), text(t.status), t.start_time,
                         [text(e) for e in t.visited_uncited], t.metadata)
        signals = r.signals
        if signals.unsupported_citations:
            signals = signals.model_copy(update={"unsupported_citations": [text(c) for c in signals.unsupported_citations]})
        runs.append(RunView(view, signals))
    names = {text(k): text(v) for k, v in stats.names.items()}
    return replace(stats, source=text(stats.source), runs=runs, names=names)
