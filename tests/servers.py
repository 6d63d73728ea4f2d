"""Start a real server as a child process for a test, and always stop it.

The integration fixtures (``tests/phoenix_server.py``, ``tests/llamacpp_server.py``)
run real servers on loopback. Both need the same care: free ports, a log file
to show when start-up fails, a retry when a port is taken between choosing and
binding it, and a stop that also ends whatever the server spawned.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

HOST = "127.0.0.1"
SHUTDOWN_TIMEOUT_S = 15.0

ServerT = TypeVar("ServerT")


def ci_note(marker: str, reason: str) -> str:
    """``reason``, plus what CI recorded about the build this marker needs (.ci/run writes
    ``$GRAPHTRAIL_CI_STATUS/<marker>`` when that build failed or was cut short by its time bound)."""
    status = os.environ.get("GRAPHTRAIL_CI_STATUS")
    note = Path(status, marker) if status else None
    if note is not None and note.is_file():
        return f"{reason} [CI: {note.read_text(encoding='utf-8').strip()}]"
    return reason


def free_port(all_interfaces: bool = False) -> int:
    """A TCP port free on loopback, or on every interface (for servers that bind ``[::]``)."""
    if not all_interfaces:
        family, address = socket.AF_INET, HOST
    else:
        family, address = (socket.AF_INET6 if socket.has_ipv6 else socket.AF_INET), ""
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError:  # IPv6 compiled in but disabled in the kernel
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "<no log>"


def terminate(proc: subprocess.Popen[bytes], timeout: float = SHUTDOWN_TIMEOUT_S) -> None:
    """Stop the server and anything it spawned (it leads its own process group)."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)


@dataclass(frozen=True)
class Launch(Generic[ServerT]):
    """One start attempt: the server's description to yield, and how to start and probe it."""

    server: ServerT
    url: str  # where it listens, for error messages
    command: list[str]
    cwd: Path
    env: dict[str, str]
    log_path: Path
    ready: Callable[[], bool]


@contextlib.contextmanager
def run_server(
    launch: Callable[[int], Launch[ServerT]],
    *,
    name: str,
    timeout: float,
    attempts: int = 3,
    error: type[Exception] = RuntimeError,
) -> Iterator[ServerT]:
    """Start ``launch(attempt)``'s command, yield its server once ``ready()``, always stop it.

    A server that exits during start-up (most likely a port taken between
    choosing and binding it) is retried with a fresh ``launch``, ``attempts``
    times; one still running but never ready raises ``error`` at once.
    """
    last_error = ""
    for attempt in range(1, attempts + 1):
        spec = launch(attempt)
        with open(spec.log_path, "wb") as log:
            proc = subprocess.Popen(
                spec.command,
                cwd=spec.cwd,
                env=spec.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            deadline = time.monotonic() + timeout
            while proc.poll() is None and time.monotonic() < deadline:
                if spec.ready():
                    break
                time.sleep(0.25)
            else:
                if proc.poll() is None:
                    raise error(f"{name} not ready after {timeout:.0f}s at {spec.url}\n{log_tail(spec.log_path)}")
                last_error = f"{name} exited with code {proc.returncode}\n{log_tail(spec.log_path)}"
                continue
            yield spec.server
            return
        finally:
            terminate(proc)
    raise error(f"{name} failed to start after {attempts} attempts: {last_error}")
