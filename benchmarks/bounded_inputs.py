"""What one oversized input costs: a 1 MB question, and a 200 MB questions file read with --limit 1.

Not a test: a measurement you run by hand (issue 18, "bounded cost")::

    python benchmarks/bounded_inputs.py            # ~1 min; writes ~200 MB to a temp dir, removed after
    python benchmarks/bounded_inputs.py --mb 50    # a smaller questions file

Each case runs in a fresh Python process, which reports its wall time and its peak
resident memory (``ru_maxrss``); the import of graphtrail is measured alone too (the
"baseline" row), so the rows above it are what the input itself cost. Cases:

- ``offline model, 1 MB question``: the offline model answers a question of 1 MB
  over the bundled graph (it reads at most ``MAX_QUESTION_CHARS`` of it);
- ``--limit 1 on a N MB file``: the CLI's question reader takes the first question
  of a large JSONL file (it streams: one line is read);
- ``bad first line, N MB file``: the same file with a malformed first line: the
  error comes when that line is read, not after the whole file;
- ``1 MB question in a file``: refused with one line naming the limit.

Before issue 18: 256 KB question 24 s / 3.4 GB (1 MB was OOM-killed at 23 GB);
--limit 1 on 200 MB 94 s / 3.5 GB; a malformed first line reported after 7.9 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_CASE = textwrap.dedent(
    """
    import json, resource, sys, time
    sys.path.insert(0, {src!r})
    case, arg = sys.argv[1], sys.argv[2]
    import graphtrail, graphtrail.agents, graphtrail.cli.inputs  # imports are not the input's cost
    t0 = time.perf_counter()
    outcome = "ok"
    if case == "model":
        from graphtrail import agents
        kg = agents.load_kg("countries")
        agent = agents.create_graphrag_agent(agents.resolve_model("offline"), kg, variant="agentic")
        question = "What is the capital of France? " + "x" * (1 << 20)
        agent.invoke({{"messages": [("user", question)]}})
    elif case == "limit":
        from graphtrail.cli.inputs import load_questions_arg
        try:
            outcome = f"{{len(load_questions_arg(arg, limit=1))}} question read"
        except Exception as exc:  # noqa: BLE001 - the benchmark reports it
            outcome = f"refused: {{str(exc)[:90]}}"
    t = time.perf_counter() - t0
    print(json.dumps({{"seconds": t, "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "outcome": outcome}}))
    """
)


def _run(case: str, arg: str, script: Path) -> dict[str, object]:
    proc = subprocess.run([sys.executable, str(script), case, arg], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {"seconds": float("nan"), "max_rss_mb": float("nan"), "outcome": "failed: " + proc.stderr.strip()[-200:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _big_file(path: Path, mb: int, first: str) -> None:
    line = json.dumps({"id": "q", "question": "What is the capital of France?", "answers": ["Paris"]})
    chunk = "".join(line.replace('"q"', f'"q{i}"') + "\n" for i in range(10_000))
    with path.open("w", encoding="utf-8") as fh:
        fh.write(first + "\n")
        written = 0
        while written < mb << 20:
            fh.write(chunk)
            written += len(chunk)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the large questions file (MB)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gt-bounded-") as tmp:
        d = Path(tmp)
        script = d / "case.py"
        script.write_text(_CASE.format(src=str(REPO / "src")), encoding="utf-8")
        good = json.dumps({"id": "first", "question": "What is the capital of France?", "answers": ["Paris"]})
        _big_file(d / "big.jsonl", args.mb, good)
        _big_file(d / "bad.jsonl", args.mb, "{not json")
        huge = d / "huge-question.jsonl"
        huge.write_text(json.dumps({"id": "h", "question": "x " * (1 << 19), "answers": ["x"]}) + "\n", encoding="utf-8")
        rows = [
            ("baseline (import only)", "limit", "countries-demo"),
            ("offline model, 1 MB question", "model", "-"),
            (f"--limit 1 on a {args.mb} MB file", "limit", str(d / "big.jsonl")),
            (f"bad first line, {args.mb} MB file", "limit", str(d / "bad.jsonl")),
            ("1 MB question in a file", "limit", str(huge)),
        ]
        print(f"{'case':<36} {'seconds':>8} {'peak MB':>8}  outcome")
        for label, case, arg in rows:
            r = _run(case, arg, script)
            print(f"{label:<36} {r['seconds']:>8.2f} {r['max_rss_mb']:>8.0f}  {r['outcome']}")


if __name__ == "__main__":
    main()
