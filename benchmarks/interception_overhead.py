"""What does routing every tool call through the ablation filter cost? (evaluators/replay/interception.py)

Not a test: a measurement you run by hand::

    python benchmarks/interception_overhead.py            # ~10 s

One JSON tool (ten entity rows, the shape the generic filter reads) is invoked
directly, the cheapest tool call LangChain has, so the patch's share is as
large as it can be. Configurations, alternating in short blocks whose order
rotates every round; process CPU time per call, median over all calls:

- ``original``: ``BaseTool.run`` as langchain-core ships it;
- ``installed``: the patch in place but no replay run open (every agent outside
  ``evaluate``, and every baseline run): one ContextVar read;
- ``filtering``: inside a replay run hiding one of the ten rows: the tool runs
  as a ``FilteredTool`` proxy and its output is filtered and leak-checked.

Printed: each median and its ratio to ``original``. The target is that
``installed`` is within noise of ``original`` (ratio <= 1.05).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from langchain_core.tools import BaseTool, tool

from graphtrail.agents import GraphFilter, use_filter
from graphtrail.evaluators.replay.filtered import interception

ROWS = [{"id": f"e{i}", "name": f"Entity {i}", "type": "thing", "description": "x" * 40} for i in range(10)]


@tool
def lookup(query: str) -> str:
    """Ten entity rows as JSON."""
    return json.dumps(ROWS)


def _time_block(n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.process_time_ns()
        lookup.invoke({"query": "q"})
        out.append((time.process_time_ns() - start) / 1e3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--block", type=int, default=200)
    args = parser.parse_args()

    original_run = BaseTool.run
    interception.install()
    patched_run = BaseTool.run
    hide = GraphFilter(hidden=frozenset({"e3"}))
    samples: dict[str, list[float]] = {"original": [], "installed": [], "filtering": []}

    def block(name: str) -> list[float]:
        if name == "original":
            BaseTool.run = original_run  # type: ignore[method-assign]
            try:
                return _time_block(args.block)
            finally:
                BaseTool.run = patched_run  # type: ignore[method-assign]
        if name == "installed":
            return _time_block(args.block)
        with use_filter(hide), interception.filtering(hide):
            return _time_block(args.block)

    names = list(samples)
    for name in names:  # warm-up
        block(name)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            samples[name] += block(name)

    base = statistics.median(samples["original"])
    print(f"tool.invoke, {args.rounds} rounds x {args.block} calls per configuration, process CPU time per call")
    for name, values in samples.items():
        med = statistics.median(values)
        print(f"{name:>10}: median {med:8.1f} us   ratio to original {med / base:5.2f}")


if __name__ == "__main__":
    main()
