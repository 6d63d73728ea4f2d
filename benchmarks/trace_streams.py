"""What a large trace file costs `traces`, `traces stats` and `eval --from-traces` (issue 29, item 5).

Not a test: a measurement you run by hand::

    python benchmarks/trace_streams.py             # 100 MB and 500 MB files (~10 min on 2 cores)
    python benchmarks/trace_streams.py --mb 50 200 # other sizes

A real traced run's OTLP/JSON lines (three questions of the bundled graph, offline model) are
copied with fresh trace ids until the file has the size asked for. Each case is one
``python -m graphtrail ...`` process; the table shows its wall time and its peak resident memory
(``ru_maxrss`` of that child). Targets: <= 200 MB RSS at 500 MB, time linear in size (the
"s per 100 MB" column stays flat), ``--limit 1`` answered without reading the file.

Before issue 29: ``traces stats`` 21 s / 911 MB on 100 MB and 104 s / 4.4 GB on 500 MB;
``eval --from-traces --limit 1`` on 500 MB 118 s / 4.5 GB.

After (2 cores at load ~18, so times are several times idle's): ``traces stats`` 100 MB
37.6 s / 47 MB, 500 MB 159.5 s / 80 MB (31.9 s per 100 MB: linear); ``--format otlp-json``
500 MB 180 s / 48 MB; ``traces --limit 1`` on 500 MB 2.1 s / 38 MB; ``eval --from-traces
--limit 1`` on 500 MB 26 s / 308 MB (the evaluation's own footprint: the same on 20 MB).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_TRACE_ID = re.compile(r'"traceId": ?"([0-9a-f]{32})"')


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}


def _measure(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of one graphtrail process."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "graphtrail", *args], cwd=cwd, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        sys.stderr.write(f"graphtrail {' '.join(args)}: exit {proc.returncode}: {proc.stderr.read().decode()[-300:] if proc.stderr else ''}\n")
    return seconds, usage.ru_maxrss / 1024, proc.returncode


def _seed_traces(work: Path) -> list[str]:
    subprocess.run([sys.executable, "-m", "graphtrail", "run", "--kg", "countries", "-q", "countries", "--limit", "3", "-o", "seed"],
                   cwd=work, env=_env(), check=True, capture_output=True)
    return [line for line in (work / "seed" / "traces.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def _big_file(path: Path, lines: list[str], mb: int) -> int:
    """``lines`` again and again, each copy with its own trace ids, until ``mb`` MB; returns the runs written."""
    copies = 0
    with path.open("w", encoding="utf-8") as fh:
        while fh.tell() < mb << 20:
            copies += 1
            prefix = f"{copies:08x}"
            for line in lines:
                fh.write(_TRACE_ID.sub(lambda m: f'"traceId": "{prefix}{m.group(1)[8:]}"', line) + "\n")
    return copies * 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, nargs="+", default=[100, 500], help="file sizes to measure (MB)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphtrail-streams-") as tmp:
        work = Path(tmp)
        print("preparing: one traced run of 3 questions...", flush=True)
        lines = _seed_traces(work)
        print(f"\n{'case':44} {'seconds':>8} {'s/100MB':>8} {'peak MB':>8}  exit")
        floor = _measure(["--version"], work)
        print(f"{'graphtrail --version (the floor)':44} {floor[0]:8.2f} {'':>8} {floor[1]:8.0f}  {floor[2]}", flush=True)
        for mb in args.mb:
            big = work / f"traces-{mb}.jsonl"
            runs = _big_file(big, lines, mb)
            real_mb = big.stat().st_size / (1 << 20)
            cases = [
                (f"traces stats, {real_mb:.0f} MB ({runs} runs)", ["traces", "stats", big.name]),
                (f"traces --format otlp-json, {real_mb:.0f} MB", ["traces", big.name, "--format", "otlp-json"]),
                (f"traces --limit 1, {real_mb:.0f} MB", ["traces", big.name, "--limit", "1"]),
                (f"eval --from-traces --limit 1, {real_mb:.0f} MB", ["eval", "--kg", "countries", "--from-traces", big.name, "--limit", "1",
                                                                    "--conditions", "baseline,cited_removal", "-o", f"eval-{mb}", "--force"]),
            ]
            for label, argv in cases:
                seconds, rss, code = _measure(argv, work)
                per = "" if "--limit" in argv else f"{seconds / real_mb * 100:8.1f}"
                verdict = "" if "--limit" in argv else ("  (<= 200 MB: MET)" if rss <= 200 else "  (<= 200 MB: NOT MET)")
                print(f"{label:44} {seconds:8.2f} {per:>8} {rss:8.0f}  {code}{verdict}", flush=True)
            big.unlink()


if __name__ == "__main__":
    main()
