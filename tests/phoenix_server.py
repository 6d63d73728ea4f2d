"""A real Arize Phoenix server on loopback, for OTLP integration tests.

No Jaeger binary can be installed in the test environment, so Phoenix is the
real OTLP backend that proves graphtrail's export works end to end. Phoenix is
a heavy optional extra (``graphtrail[phoenix]``): without it the fixture skips.

The server runs as a child process with its own temporary working dir (and so
its own SQLite database), on free ports, with telemetry and every outbound
fetch switched off. Its gRPC receiver binds ``[::]`` whatever ``PHOENIX_HOST``
says, so both ports are chosen free on all interfaces; the tests only ever
talk to 127.0.0.1.

Use the ``phoenix_server`` fixture (session scoped): tests/conftest.py defines it once for
the whole suite (imported into a test module it would start one server per module).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import HOST, Launch, free_port, log_tail, run_server

#: Start-up takes ~7 s on an idle 2-core box; leave room for a busy CI runner.
STARTUP_TIMEOUT_S = float(os.environ.get("GRAPHTRAIL_PHOENIX_STARTUP_TIMEOUT", "120"))

#: Environment that keeps Phoenix local and quiet.
_QUIET_ENV = {
    "PHOENIX_TELEMETRY_ENABLED": "false",  # master switch for the UI's analytics pixels
    "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",  # no web fonts, no sandbox download, no telemetry
    "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",  # no LLM assistant endpoint
    "PHOENIX_ENABLE_MCP_SERVER": "false",
    "PHOENIX_ENABLE_PROMETHEUS": "false",
    "PHOENIX_ENABLE_AUTH": "false",
}


@dataclass(frozen=True)
class PhoenixServer:
    """Where a running Phoenix server listens."""

    base_url: str  # e.g. http://127.0.0.1:40123 (UI + REST API + OTLP/HTTP)
    grpc_port: int
    working_dir: Path
    log_path: Path

    @property
    def otlp_http_endpoint(self) -> str:
        """Full OTLP/HTTP traces URL (what ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` takes)."""
        return f"{self.base_url}/v1/traces"

    @property
    def otlp_grpc_endpoint(self) -> str:
        return f"http://{HOST}:{self.grpc_port}"

    def log_tail(self, lines: int = 40) -> str:
        return log_tail(self.log_path, lines)


class PhoenixStartError(RuntimeError):
    """Phoenix did not become healthy in time (or exited while starting)."""


def phoenix_available() -> bool:
    # Ask the installed distributions, not the import system: importing ``phoenix``
    # in the test process is slow, and ``arize-phoenix-client`` alone also provides it.
    try:
        importlib.metadata.version("arize-phoenix")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _child_env(working_dir: Path, http_port: int, grpc_port: int) -> dict[str, str]:
    # Drop the parent's OTEL_*/PHOENIX_* settings: the server must neither pick up a
    # test's exporter configuration nor a developer's real Phoenix deployment.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    env.update(_QUIET_ENV)
    env.update(
        PHOENIX_WORKING_DIR=str(working_dir),
        PHOENIX_HOST=HOST,
        PHOENIX_PORT=str(http_port),
        PHOENIX_GRPC_PORT=str(grpc_port),
        PYTHONUNBUFFERED="1",
    )
    return env


def _healthy(base_url: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{base_url}/healthz", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


@contextlib.contextmanager
def run_phoenix(root: Path, timeout: float = STARTUP_TIMEOUT_S, attempts: int = 3) -> Iterator[PhoenixServer]:
    """Start ``phoenix serve`` under ``root``, yield once ``/healthz`` answers, always stop it.

    Free ports can be taken between choosing and binding them, so a server that
    exits during start-up is retried on new ports (``attempts`` times).
    """

    def launch(attempt: int) -> Launch[PhoenixServer]:
        working_dir = root / f"phoenix-{attempt}"
        working_dir.mkdir(parents=True, exist_ok=True)
        # the gRPC receiver binds [::] whatever PHOENIX_HOST says: both ports free on every interface
        http_port, grpc_port = free_port(all_interfaces=True), free_port(all_interfaces=True)
        while grpc_port == http_port:
            grpc_port = free_port(all_interfaces=True)
        server = PhoenixServer(f"http://{HOST}:{http_port}", grpc_port, working_dir, working_dir / "server.log")
        return Launch(
            server=server,
            url=server.base_url,
            command=[sys.executable, "-m", "phoenix.server.main", "serve"],
            cwd=working_dir,
            env=_child_env(working_dir, http_port, grpc_port),
            log_path=server.log_path,
            ready=lambda: _healthy(server.base_url),
        )

    with run_server(launch, name="Phoenix", timeout=timeout, attempts=attempts, error=PhoenixStartError) as server:
        yield server


@pytest.fixture(scope="session")
def phoenix_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    """A Phoenix server on loopback for the whole session (start-up costs seconds)."""
    if not phoenix_available():
        pytest.skip("arize-phoenix is not installed (pip install 'graphtrail[phoenix]')")
    with run_phoenix(tmp_path_factory.mktemp("phoenix")) as server:
        yield server
