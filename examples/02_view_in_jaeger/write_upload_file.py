"""Journey 2 without a collector: write the agent's traces to a file Jaeger UI can upload.

    python examples/02_view_in_jaeger/write_upload_file.py              # -> traces.jsonl
    python examples/02_view_in_jaeger/write_upload_file.py --out my.jsonl

Runs the example agent (examples/my_agent.py) on its questions with graphtrail's
``jsonl`` exporter: one OTLP/JSON request per line, which Jaeger UI's Upload tab
reads. Offline, no key. See README.md in this folder for the steps.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # examples/, for my_agent

import graphtrail  # noqa: E402
from my_agent import QUESTIONS, build_agent  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("traces.jsonl"))
    args = parser.parse_args()
    if args.out.exists():
        print(f"{args.out} exists; graphtrail appends to trace files, so pick a new name or delete it first", file=sys.stderr)
        return 2

    graphtrail.configure(exporter="jsonl", path=args.out, service_name="countries-agent")
    agent = graphtrail.trace_agent(build_agent(), name="countries-agent")
    for q in QUESTIONS:
        agent.invoke({"messages": [("user", q["question"])]})
    graphtrail.tracer.flush()

    print(f"wrote {len(QUESTIONS)} traces to {args.out}")
    print("Jaeger UI: http://localhost:16686/search -> Upload -> pick the file")
    print(f"older Jaeger UIs: graphtrail traces {args.out} --format jaeger --output traces.json, then upload traces.json")
    print(f"in the terminal:  graphtrail traces {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
