"""The CLI and the tracer when things go wrong around them: Ctrl-C, a collector that is down,
a collector that accepts connections and never answers. Real subprocesses, real signals,
real sockets on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphtrail.tracer.config import DEFAULT_EXPORT_TIMEOUT_S

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]), "COLUMNS": "200"}
for _name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TIMEOUT",
              "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_BSP_SCHEDULE_DELAY"):
    ENV.pop(_name, None)

# The plain progress lines a non-TTY stderr gets ("graphtrail: baseline 3/36 runs (8%), 0 s elapsed").
PROGRESS = re.compile(r"^graphtrail: .* \d+/\d+ .*\(\d+%\), \d+ s elapsed$")


def _default_sigint() -> None:
    # A shell starts background jobs with SIGINT ignored, and the child would inherit that.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_collector() -> Iterator[int]:
    """A port that accepts connections (the kernel completes the handshake) and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    try:
        yield int(sock.getsockname()[1])
    finally:
        sock.close()


def test_ctrl_c_prints_how_to_resume(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphtrail", "eval", "--kg", "countries", "-q", "countries-demo", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, preexec_fn=_default_sigint,
    )
    try:
        runs = out / "runs.jsonl"
        deadline = time.monotonic() + 120
        while not (runs.exists() and runs.stat().st_size > 0):  # interrupt it in the middle of its work
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the evaluation never started"
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip() and not PROGRESS.match(ln)]
    assert len(lines) == 1 and "interrupted" in lines[0] and "--resume" in lines[0], err


def test_a_down_collector_is_reported_in_one_line(tmp_path: Path, closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}"
    proc = subprocess.run(
        [sys.executable, "-m", "graphtrail", "run", "--kg", "countries", "-q", "countries-demo", "--limit", "1",
         "--out", str(tmp_path / "o"), "--otlp", url],
        capture_output=True, text=True, env=ENV, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    said = [ln for ln in (proc.stdout + proc.stderr).splitlines() if url in ln]
    assert len(said) == 1, proc.stdout + proc.stderr
    assert "unreachable" in said[0] and "spans dropped" in said[0] and "also exported" not in said[0]
    # the SDK's retry chatter and graphtrail's own logger warning are not repeated on top of it
    assert "retrying" not in proc.stderr and "Transient error" not in proc.stderr and "Failed to export" not in proc.stderr
    assert [ln for ln in proc.stderr.splitlines() if ln.strip() and not PROGRESS.match(ln)] == [], proc.stderr
    assert (tmp_path / "o" / "traces.jsonl").stat().st_size > 0


_SILENT_SCRIPT = textwrap.dedent(
    """
    import sys, time
    import graphtrail
    from tests.kg_agent import agent_input, build_agent

    graphtrail.configure(exporter="otlp", endpoint=sys.argv[1])
    agent = graphtrail.trace_agent(build_agent())
    agent.invoke(agent_input())
    time.sleep(float(sys.argv[2]))  # the batch processor's worker is now stuck exporting the first batch
    agent.invoke(agent_input())    # ... and these spans wait for it
    print("runs done", time.time(), flush=True)
    """
)


def test_exit_is_bounded_by_the_export_timeout_when_the_collector_never_answers(silent_collector: int) -> None:
    """Shutdown waits for at most one export timeout, even with an export already stuck and
    spans queued behind it (each would otherwise wait for its own timeout)."""
    proc = subprocess.run(
        [sys.executable, "-c", _SILENT_SCRIPT, f"http://127.0.0.1:{silent_collector}", "5.5"],
        capture_output=True, text=True, env=ENV, timeout=120,
    )
    ended = time.time()
    assert proc.returncode == 0, proc.stderr
    done = float(proc.stdout.split("runs done", 1)[1].split()[0])
    assert ended - done < DEFAULT_EXPORT_TIMEOUT_S + 3, f"took {ended - done:.1f}s to exit after the runs"
    assert "Traceback" not in proc.stderr
