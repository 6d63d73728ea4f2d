"""graphtrail's own CPU per run, timed where it is spent: a load-robust companion to tracer_overhead.py.

Not a test: a measurement you run by hand::

    python benchmarks/tracer_split.py                 # ~1 min idle
    python benchmarks/tracer_split.py --cold-scan     # the redaction cache emptied before every run

Why: ``tracer_overhead.py`` divides medians of whole runs, and on a shared machine
two medians of the same configuration differ by 0.05 of a run or more (its
``graphtrail`` and ``gt-no-metrics`` rows can swap). Here every callback of
graphtrail's handler is timed with the thread CPU clock of the thread it runs on
(tools run on LangGraph's worker threads), summed per run, and divided by the
untraced run's CPU on the agent's thread, runs alternating one by one. Three
figures per run:

- ``callbacks``: everything graphtrail does inside LangChain's callbacks,
  including building the spans at the end of the run and the OTel SDK's work for them;
- ``build``: the part spent turning the run's records into spans (spans.build_runs);
- ``sdk``: the OTel SDK's own span work inside those (start, end, events, processors).

``--cold-scan`` empties the redaction cache (tracer/redact.py) before each run,
so only the repeats within one run are served from it: the benchmark agent asks
the same question every run, where production traffic mostly does not.
What is *not* here: LangChain's cost of calling a handler at all (the
``lc-handler`` floor of tracer_overhead.py), and the export thread.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from tests.kg_agent import agent_input, build_agent  # noqa: E402

_CALLBACKS = ("on_chain_start", "on_chain_end", "on_chat_model_start", "on_llm_end", "on_tool_start", "on_tool_end")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="timed runs per configuration (default 300)")
    parser.add_argument("--cold-scan", action="store_true", help="empty the redaction cache before every run")
    args = parser.parse_args(argv)

    import graphtrail
    from graphtrail.tracer import handler, redact, roots, spans

    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    graphtrail.configure(tracer_provider=provider, metrics=InMemoryMetricReader())
    traced, bare = graphtrail.trace_agent(build_agent(), name="kg-agent"), build_agent()

    spent = {"callbacks": 0, "build": 0, "sdk": 0}

    def timed(owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def call(*a: Any, **k: Any) -> Any:
            t0 = time.thread_time_ns()
            try:
                return inner(*a, **k)
            finally:
                spent[label] += time.thread_time_ns() - t0

        setattr(owner, name, call)

    for name in _CALLBACKS:
        timed(handler.GraphTrailHandler, name, "callbacks")
    timed(roots, "build_runs", "build")
    for owner, name in ((spans, "start_span"), (spans, "end_span"), (roots, "open_root_span"), (roots, "end_span")):
        timed(owner, name, "sdk")

    for _ in range(20):
        traced.invoke(agent_input())
        bare.invoke(agent_input())
    per_run: dict[str, list[int]] = {k: [] for k in spent}
    untraced: list[int] = []
    gc.collect()
    for i in range(args.runs):
        for k in spent:
            spent[k] = 0
        if args.cold_scan:
            redact.clear_scan_cache()
        traced.invoke(agent_input())
        for k, v in spent.items():
            per_run[k].append(v)
        t0 = time.thread_time_ns()
        bare.invoke(agent_input())
        untraced.append(time.thread_time_ns() - t0)
        if i % 100 == 0:
            exporter.clear()
    base = statistics.median(untraced) / 1e3
    print(f"untraced run, agent's thread CPU: median {base:.0f} us")
    for k, v in per_run.items():
        m = statistics.median(v) / 1e3
        print(f"graphtrail {k:<10} median {m:8.1f} us per run = {m / base:.4f} x untraced")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
