"""``graphtrail traces stats``: the provenance signals of many production runs, summed up.

One trace tells what one run did; a team watching the agent in production asks
what its runs do *together*: how often it cites what it was never shown (and
which runs, so they can open them), which entities it keeps visiting without
citing, and whether that is getting worse by the hour or the day. This module
computes those from trajectories (read from a trace file, an OTLP JSON export or
Jaeger) and prints them; :mod:`.tracestats_html` draws them.

Runs replayed by an evaluation (their root carries ``graphtrail.condition``) are
left out: they are ablated on purpose and would skew production numbers.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

__all__ = ["RunView", "TraceStats", "compute_stats", "print_stats"]

Bucket = Literal["hour", "day"]


@dataclass(frozen=True)
class RunView:
    """One production run as the statistics see it."""

    trajectory: Any
    signals: Any

    @property
    def trace_id(self) -> str:
        return self.trajectory.trace_id or "-"

    @property
    def start(self) -> float | None:
        return self.trajectory.start_time


def _quantile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _summary(values: Sequence[float]) -> dict[str, float | int | None]:
    return {
        "n": len(values),
        "mean": statistics.fmean(values) if values else None,
        "p50": _quantile(values, 0.5),
        "p90": _quantile(values, 0.9),
        "max": max(values) if values else None,
    }


@dataclass
class TraceStats:
    """The numbers ``traces stats`` prints (and writes with ``--json``)."""

    source: str
    runs: list[RunView]
    replays_skipped: int = 0
    bucket: Bucket = "hour"
    top: int = 10
    names: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------ per-run lists
    def unsupported_runs(self) -> list[RunView]:
        return [r for r in self.runs if r.signals.unsupported_citations]

    def unrevealed_answer_runs(self) -> list[RunView]:
        return [r for r in self.runs if r.signals.answer_revealed is False]

    def uncited_entities(self) -> list[tuple[str, int, float]]:
        """(entity id, runs that visited it and left it uncited, share of runs), most frequent first."""
        counts: Counter[str] = Counter()
        for r in self.runs:
            counts.update(set(r.trajectory.visited_uncited))
        n = max(len(self.runs), 1)
        return [(eid, c, c / n) for eid, c in counts.most_common(self.top)]

    # ------------------------------------------------------------ distributions
    def distributions(self) -> dict[str, Any]:
        sig = [r.signals for r in self.runs]
        n = len(sig)
        hops = sum(s.hops for s in sig)
        return {
            "runs": n,
            "status": dict(Counter(r.trajectory.status for r in self.runs)),
            "runs_with_unsupported_citations": sum(1 for s in sig if s.unsupported_citations),
            "unsupported_citations": sum(len(s.unsupported_citations) for s in sig),
            "grounded_citations": sum(len(s.grounded_citations) for s in sig),
            "answers_not_revealed": sum(1 for s in sig if s.answer_revealed is False),
            "answers_revealed": sum(1 for s in sig if s.answer_revealed is True),
            "uncited_share": _summary([s.uncited_share for s in sig if s.uncited_share is not None]),
            "hops": _summary([float(s.hops) for s in sig]),
            "empty_hops": sum(s.empty_hops for s in sig),
            "empty_hop_share": (sum(s.empty_hops for s in sig) / hops) if hops else None,
            "tool_errors": sum(s.tool_errors for s in sig),
            "runs_with_tool_errors": sum(1 for s in sig if s.tool_errors),
        }

    def trend(self) -> list[dict[str, Any]]:
        """Per hour or day (UTC): runs, runs with unsupported citations, unrevealed answers, mean uncited share, tool errors."""
        groups: dict[datetime, list[RunView]] = {}
        for r in self.runs:
            if r.start is None:
                continue
            t = datetime.fromtimestamp(r.start, tz=timezone.utc)
            key = t.replace(minute=0, second=0, microsecond=0)
            if self.bucket == "day":
                key = key.replace(hour=0)
            groups.setdefault(key, []).append(r)
        rows = []
        for key in sorted(groups):
            runs = groups[key]
            shares = [r.signals.uncited_share for r in runs if r.signals.uncited_share is not None]
            rows.append({
                "bucket": key.isoformat(),
                "runs": len(runs),
                "unsupported_runs": sum(1 for r in runs if r.signals.unsupported_citations),
                "answers_not_revealed": sum(1 for r in runs if r.signals.answer_revealed is False),
                "mean_uncited_share": statistics.fmean(shares) if shares else None,
                "tool_errors": sum(r.signals.tool_errors for r in runs),
            })
        return rows

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "replays_skipped": self.replays_skipped,
            "distributions": self.distributions(),
            "unsupported_runs": [
                {
                    "trace_id": r.trace_id,
                    "span_id": r.trajectory.span_id,
                    "start_time": r.start,
                    "question": r.trajectory.question,
                    "answer": r.trajectory.answer,
                    "unsupported_citations": r.signals.unsupported_citations,
                }
                for r in self.unsupported_runs()
            ],
            "uncited_entities": [
                {"id": eid, "name": self.names.get(eid), "runs": c, "share": share} for eid, c, share in self.uncited_entities()
            ],
            "trend": {"by": self.bucket, "rows": self.trend()},
        }


def _is_replay(traj: Any) -> bool:
    return "condition" in (traj.metadata or {})


def compute_stats(trajectories: Sequence[Any], *, source: str, bucket: str = "auto", top: int = 10,
                  include_replays: bool = False) -> TraceStats:
    """Statistics over ``trajectories``; ``bucket``: ``hour``, ``day`` or ``auto`` (hours up to two days of traffic)."""
    from graphtrail.tracer import signals_of

    kept = [t for t in trajectories if include_replays or not _is_replay(t)]
    runs = [RunView(t, signals_of(t)) for t in sorted(kept, key=lambda t: t.start_time or 0.0)]
    if bucket == "auto":
        times = [r.start for r in runs if r.start is not None]
        bucket = "hour" if not times or max(times) - min(times) <= 48 * 3600 else "day"
    names: dict[str, str] = {}
    for t in kept:
        for eid, name in t.entity_names.items():
            names.setdefault(eid, name)
    return TraceStats(source=source, runs=runs, replays_skipped=len(trajectories) - len(kept), bucket=bucket,  # type: ignore[arg-type]
                      top=top, names=names)


# ------------------------------------------------------------ terminal output
def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "0/0"


def _f(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _when(ts: float | None) -> str:
    return "–" if ts is None else datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _short(text: str | None, n: int = 60) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def print_stats(stats: TraceStats, console: Any) -> None:
    """The statistics as tables: distributions, runs with unsupported citations, uncited entities, trend."""
    from rich.table import Table

    d = stats.distributions()
    n = d["runs"]
    head = f"{n} production run(s) from {stats.source}"
    if stats.replays_skipped:
        head += f" ({stats.replays_skipped} evaluation replay(s) left out)"
    console.print(f"[bold]{head}[/]", highlight=False)

    table = Table(title="Provenance signals", title_justify="left")
    table.add_column("signal")
    table.add_column("value", justify="right")
    table.add_row("runs by status", ", ".join(f"{k} {v}" for k, v in sorted(d["status"].items())) or "–")
    table.add_row("runs citing an entity no tool revealed", _pct(d["runs_with_unsupported_citations"], n))
    table.add_row("unsupported / grounded citations", f"{d['unsupported_citations']} / {d['grounded_citations']}")
    table.add_row("answers whose entity no tool revealed", _pct(d["answers_not_revealed"], n))
    share = d["uncited_share"]
    table.add_row("visited-but-uncited share (mean · p50 · p90)", f"{_f(share['mean'])} · {_f(share['p50'])} · {_f(share['p90'])}")
    hops = d["hops"]
    table.add_row("hops per run (mean · p50 · p90 · max)", f"{_f(hops['mean'], 1)} · {_f(hops['p50'], 0)} · {_f(hops['p90'], 0)} · {_f(hops['max'], 0)}")
    table.add_row("hops that revealed nothing", f"{d['empty_hops']}" + (f" ({d['empty_hop_share']:.0%} of hops)" if d["empty_hop_share"] is not None else ""))
    table.add_row("tool errors (runs affected)", f"{d['tool_errors']} ({d['runs_with_tool_errors']})")
    console.print(table)

    bad = stats.unsupported_runs()
    if bad:
        t = Table(title=f"Runs with unsupported citations ({len(bad)}): open them by trace id", title_justify="left")
        t.add_column("trace id", no_wrap=True, min_width=32)
        for col in ("started (UTC)", "question", "answer", "cited, never revealed"):
            t.add_column(col, overflow="ellipsis", no_wrap=col != "question")
        for r in bad:
            t.add_row(r.trace_id, _when(r.start), _short(r.trajectory.question, 80), _short(r.trajectory.answer, 30),
                      ", ".join(r.signals.unsupported_citations))
        console.print(t)
    else:
        console.print("no run cited an entity its tools never revealed")

    uncited = stats.uncited_entities()
    if uncited:
        t = Table(title="Entities most often visited and left uncited", title_justify="left")
        for col in ("entity", "runs", "share of runs"):
            t.add_column(col, justify="left" if col == "entity" else "right")
        for eid, count, frac in uncited:
            label = f"{stats.names[eid]} ({eid})" if eid in stats.names else eid
            t.add_row(label, str(count), f"{frac:.0%}")
        console.print(t)

    trend = stats.trend()
    if trend:
        t = Table(title=f"Trend per {stats.bucket} (UTC)", title_justify="left")
        for col in ("from", "runs", "unsupported", "answer not revealed", "mean uncited share", "tool errors"):
            t.add_column(col, justify="left" if col == "from" else "right")
        for row in trend:
            t.add_row(row["bucket"].replace("T", " ").replace("+00:00", ""), str(row["runs"]),
                      _pct(row["unsupported_runs"], row["runs"]), str(row["answers_not_revealed"]),
                      _f(row["mean_uncited_share"]), str(row["tool_errors"]))
        console.print(t)
