"""Journey 1: trace the agent you already have with one line.

    python examples/01_decorate_existing_agent.py                  # print the trajectory
    python examples/01_decorate_existing_agent.py --jsonl t.jsonl  # also write OTLP/JSON lines
    OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 python examples/01_decorate_existing_agent.py

``my_agent.py`` is ordinary LangGraph code over your own networkx graph and
your own JSON tools. graphtrail does not change it: ``trace_agent`` wraps the
compiled graph, and every run becomes one OpenTelemetry trace whose tool spans
list the graph entities each call returned, plus a ``Trajectory`` in memory.
Runs offline, no key needed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # so `import my_agent` works from any cwd

import graphtrail  # noqa: E402
from my_agent import QUESTIONS, build_agent  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jsonl", help="also write spans as OTLP/JSON lines here (Jaeger UI: Upload)")
    parser.add_argument("--question", default=QUESTIONS[0]["question"])
    args = parser.parse_args()
    if args.jsonl:
        graphtrail.configure(exporter="jsonl", path=args.jsonl)
    # Otherwise graphtrail exports over OTLP if OTEL_EXPORTER_OTLP_ENDPOINT is set, else nowhere.

    agent = graphtrail.trace_agent(build_agent(), name="countries-agent")  # <- the one line

    with graphtrail.capture() as captured:
        result = agent.invoke({"messages": [("user", args.question)]})
    traj = captured.trajectories[0]

    print("question:        ", traj.question)
    print("agent said:      ", result["messages"][-1].content)
    print("answer:          ", traj.answer)
    print("citations:       ", traj.citations)
    print("visited:         ", traj.visited)
    print("visited, uncited:", traj.visited_uncited)
    print("trace id:        ", traj.trace_id)
    print("steps:")
    for step in traj.steps:
        entities = ", ".join(f"{e.id} ({e.name})" for e in step.entities) or "-"
        print(f"  {step.index}. {step.tool}({step.args}) -> {entities}")
    for cid, source in traj.citation_sources.items():
        print(f"  citation {cid} was first revealed by step(s) {source.steps or 'none: unsupported!'}")

    graphtrail.tracer.flush()
    if args.jsonl:
        print(f"spans written to {args.jsonl}: `graphtrail traces {args.jsonl}` shows them again")


if __name__ == "__main__":
    main()
