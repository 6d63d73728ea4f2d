"""How long each quick command takes from a cold process, against its target (issue 30, item 1).

Not a test: a measurement you run by hand, at idle::

    python benchmarks/cli_latency.py            # ~2 min: makes two small evaluations first
    python benchmarks/cli_latency.py --runs 7   # more runs per figure

Every figure is the median wall time of ``--runs`` fresh ``python -m graphtrail ...``
processes (imports included: that is what a user waits for). The "python + typer"
row is the floor: a process that imports only Typer and Rich and exits; "x floor" divides
each figure by it, which stays meaningful on a loaded machine (the targets assume idle). Cases:

- ``kg info`` on a 7-line TSV and ``traces stats`` on the traces of 3 runs: <= 1.0 s;
- ``compare`` of two 3-question evaluations (``--no-html``): <= 1.5 s;
- argument and input errors (a bad ``--fail-on`` rule, an empty questions file, a bad
  ``--trials``, a missing trace file, a FIFO as a trace file): <= 0.5 s each;
- ``annotate --phoenix`` with 100 annotations, sent to a stand-in of Phoenix's REST
  endpoint on loopback (it answers 200 at once, so the figure is graphtrail's own): <= 5 s.

Before issue 30: ``kg info`` 4.2 s, ``compare`` 9-20 s, input errors ~10 s and
``annotate --phoenix`` 56 s for 6 annotations (``import phoenix.client`` loaded the server).

After, measured only at load ~18 on 2 cores (floor 2.4 s instead of ~0.2 s idle), as multiples
of the floor: kg info 2.8x, traces stats 2.6x, compare 3.0x, input errors 0.9-1.7x,
annotate --phoenix (100) 3.5x. Rerun at idle for the absolute figures against the targets.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GRAPH = "Kenya\tcapital\tNairobi\nKenya\tcurrency\tKenyan shilling\nKenya\tborders\tUganda\nUganda\tcapital\tKampala\n" \
        "Uganda\tcurrency\tUgandan shilling\nUganda\tborders\tKenya\nKenya\tofficial language\tSwahili\n"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "120"
    return env


def _graphtrail(args: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "graphtrail", *args], cwd=cwd, env=_env(), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SystemExit(f"graphtrail {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def _median_seconds(argv: list[str], cwd: Path, runs: int, want: int | None) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, stdin=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
        if want is not None and proc.returncode != want:
            raise SystemExit(f"{' '.join(argv[2:])}: exit {proc.returncode}, expected {want}: {proc.stderr.strip()[-300:]}")
    return statistics.median(times)


class _FakePhoenix(http.server.BaseHTTPRequestHandler):
    """Answers ``POST /v1/span_annotations`` with 200, as Phoenix does for known spans."""

    received = 0

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        _FakePhoenix.received += len(body.get("data", []))
        payload = json.dumps({"data": [{"id": str(i)} for i, _ in enumerate(body.get("data", []))]}).encode()
        self.send_response(200 if self.path.startswith("/v1/span_annotations") else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


def _prepare(work: Path) -> None:
    (work / "g.tsv").write_text(GRAPH, encoding="utf-8")
    (work / "empty.jsonl").write_text("", encoding="utf-8")
    os.mkfifo(work / "fifo.jsonl")
    print("preparing: two 3-question evaluations and one traced run (about a minute)...", flush=True)
    _graphtrail(["run", "--kg", "countries", "-q", "countries", "--limit", "3", "-o", "run"], work)
    _graphtrail(["eval", "--kg", "countries", "-q", "countries", "--limit", "3", "-o", "base"], work)
    _graphtrail(["eval", "--kg", "countries", "-q", "countries", "--limit", "3", "--variant", "visited_only", "-o", "new"], work)
    # An evaluation of production questions, as `eval --from-traces` leaves it: 100 production runs in all.
    results = json.loads((work / "base" / "results.json").read_text(encoding="utf-8"))
    ids = [q["question_id"] for q in results["questions"]]
    per = -(-100 // len(ids))
    links = [[f"{n:032x}", f"{n:016x}"] for n in range(1, 1 + per * len(ids))][:100]
    with (work / "base" / "questions-from-traces.jsonl").open("w", encoding="utf-8") as fh:
        for i, qid in enumerate(ids):
            chunk = links[i * per:(i + 1) * per]
            fh.write(json.dumps({"id": qid, "question": qid, "answers": [], "production_traces": chunk}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="processes per figure (the median is shown)")
    args = parser.parse_args()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakePhoenix)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    phoenix = f"http://127.0.0.1:{server.server_address[1]}"

    py = [sys.executable, "-m", "graphtrail"]
    cases = [
        ("python + typer (floor)", [sys.executable, "-c", "import typer, rich.console"], None, 0),
        ("kg info, 7-line TSV", [*py, "kg", "info", "g.tsv"], 1.0, 0),
        ("traces stats, 3 runs", [*py, "traces", "stats", "run/traces.jsonl"], 1.0, 0),
        ("compare, 2 evaluations", [*py, "compare", "base", "new", "--no-html"], 1.5, None),
        ("error: bad --fail-on rule", [*py, "compare", "base", "new", "--fail-on", "bogus"], 0.5, 2),
        ("error: empty questions file", [*py, "eval", "--kg", "countries", "-q", "empty.jsonl", "-o", "o"], 0.5, 2),
        ("error: bad --trials", [*py, "eval", "--kg", "countries", "-q", "countries", "-o", "o", "--trials", "0"], 0.5, 2),
        ("error: missing trace file", [*py, "traces", "stats", "missing.jsonl"], 0.5, 2),
        ("error: FIFO as trace file", [*py, "traces", "fifo.jsonl"], 0.5, 2),
        ("annotate --phoenix, 100", [*py, "annotate", "base", "--phoenix", phoenix], 5.0, 0),
    ]
    with tempfile.TemporaryDirectory(prefix="graphtrail-latency-") as tmp:
        work = Path(tmp)
        _prepare(work)
        print(f"\n{'case':32} {'median':>8} {'x floor':>8} {'target':>8}  verdict   (median of {args.runs} cold processes)")
        floor = None
        for label, argv, target, want in cases:
            seconds = _median_seconds(argv, work, args.runs, want)
            floor = floor or seconds
            verdict = "" if target is None else ("MET" if seconds <= target else "NOT MET")
            shown = "" if target is None else f"<= {target:.1f}s"
            print(f"{label:32} {seconds:7.2f}s {seconds / floor:7.1f}x {shown:>8}  {verdict}", flush=True)
    server.shutdown()
    print(f"\n(Phoenix stand-in received {_FakePhoenix.received} annotations)")


if __name__ == "__main__":
    main()
