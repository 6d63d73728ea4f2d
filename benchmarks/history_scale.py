"""How long `graphtrail history` takes over 100 evaluations: cold (no comparison cached) and rebuilt after one more run.

A team rebuilds the page after every merge, so the rebuild is the figure that matters day
to day; the cold build is what a first `history` over an existing archive costs. The runs
are copies of one real evaluation (the bundled agent, 6 questions) whose results.json
differ in time and in one question's trajectory fidelity, so every consecutive pair
really is compared.

    python benchmarks/history_scale.py [--runs 100]

Prints each figure against its target (MET / NOT met).

Measured on 2 cores at load 7-18, four runs alternating the code before and after the
speed-up (power search by bisection, bootstrap indices reused, each report read once,
one figure per trend score): cold 9.2-19.9 s before, 3.2-10.6 s after (1.9x to 3.3x
faster in each pair); rebuild 2.7-4.3 s before, 2.1-4.8 s after (mostly the trend plots).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Targets (seconds, wall, in-process): a cold page over 100 runs, and a rebuild with one run more.
COLD_TARGET_S = 30.0
REBUILD_TARGET_S = 5.0


def _make_runs(root: Path, n: int) -> list[Path]:
    seed_run = root / "run-000"
    cmd = [sys.executable, "-m", "graphtrail", "eval", "--kg", "countries", "--questions", "countries-demo", "--limit", "6",
           "--conditions", "baseline,cited_removal", "--out", str(seed_run)]
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    runs = [seed_run]
    base = json.loads((seed_run / "results.json").read_text(encoding="utf-8"))
    for i in range(1, n):
        dest = root / f"run-{i:03d}"
        shutil.copytree(seed_run, dest)
        data = json.loads(json.dumps(base))
        data["created"] += 3600 * i
        q = data["questions"][i % len(data["questions"])]
        if q.get("fidelity") is not None:
            q["fidelity"] = (i % 5) / 4
        (dest / "results.json").write_text(json.dumps(data), encoding="utf-8")
        runs.append(dest)
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    args = ap.parse_args(argv)
    from graphtrail.evaluators.history import build_history

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs = _make_runs(root, args.runs + 1)
        out = root / "history"
        t0 = time.perf_counter()
        build_history(runs[:-1], out)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        build_history(runs, out)
        rebuild = time.perf_counter() - t0
    print(f"history over {args.runs} runs, cold:             {cold:6.2f} s  (target {COLD_TARGET_S:g} s)  "
          f"{'MET' if cold <= COLD_TARGET_S else 'NOT met'}")
    print(f"rebuilt with run {args.runs + 1} (cached comparisons): {rebuild:6.2f} s  (target {REBUILD_TARGET_S:g} s)  "
          f"{'MET' if rebuild <= REBUILD_TARGET_S else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
