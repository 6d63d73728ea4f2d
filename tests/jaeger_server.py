"""A real Jaeger v2 server on loopback, for the live "view spans in Jaeger" tests.

Jaeger publishes no Python package; ``scripts/install_jaeger.sh`` builds the
pinned ``jaeger`` binary from the Go module proxy once into
``~/.cache/graphtrail/bin`` (``.ci/run`` calls it). Without the binary (no Go, no
build yet) the fixture skips and says why.

The server runs all-in-one with in-memory storage from a config file written
per start, so every port (OTLP gRPC/HTTP, query HTTP/gRPC, health check) is a
free one on 127.0.0.1 instead of the fixed 4317/4318/16686: the tests may run
beside a developer's own Jaeger or other suites. Metrics are switched off so no
Prometheus port is opened either.

Jaeger built from the module proxy has no UI assets (they are a separate
JavaScript build); ``GRAPHTRAIL_JAEGER_UI_ASSETS`` may name a built jaeger-ui
``build`` directory to serve, and ``JaegerServer.has_ui`` tells the browser test.

Use the ``jaeger_server`` fixture (session scoped): tests/conftest.py defines it once for the suite.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.servers import HOST, Launch, ci_note, free_port, log_tail, run_server

JAEGER_VERSION = os.environ.get("JAEGER_VERSION", "v1.76.0")
BIN_CACHE = Path(os.environ.get("GRAPHTRAIL_BIN_CACHE", Path.home() / ".cache" / "graphtrail" / "bin"))
#: Start-up takes ~1 s; leave room for a busy CI runner.
STARTUP_TIMEOUT_S = float(os.environ.get("GRAPHTRAIL_JAEGER_STARTUP_TIMEOUT", "60"))


@dataclass(frozen=True)
class JaegerServer:
    """Where a running Jaeger listens."""

    query_url: str  # UI + query APIs (/api/traces, /api/v3/...)
    otlp_http_port: int
    otlp_grpc_port: int
    log_path: Path
    has_ui: bool

    @property
    def otlp_http_endpoint(self) -> str:
        return f"http://{HOST}:{self.otlp_http_port}/v1/traces"

    @property
    def otlp_grpc_endpoint(self) -> str:
        return f"http://{HOST}:{self.otlp_grpc_port}"

    def get(self, path: str, **params: Any) -> Any:
        """JSON from the query service, e.g. ``get("/api/traces", service="graphtrail")``."""
        from urllib.parse import urlencode

        query = ("?" + urlencode(params)) if params else ""
        with urllib.request.urlopen(f"{self.query_url}{path}{query}", timeout=10) as resp:  # noqa: S310 - loopback
            return json.loads(resp.read())

    def log_tail(self, lines: int = 40) -> str:
        return log_tail(self.log_path, lines)


class JaegerStartError(RuntimeError):
    """Jaeger did not become healthy in time (or exited while starting)."""


def jaeger_binary() -> tuple[Path | None, str]:
    """The cached Jaeger binary, or None and why not (a test run never starts the 10-minute build)."""
    target = BIN_CACHE / f"jaeger-{JAEGER_VERSION}"
    if target.is_file() and os.access(target, os.X_OK):
        return target, ""
    if shutil.which("go") is None and not Path("/usr/local/go/bin/go").exists():
        return None, "Go is not installed: Jaeger is built from the Go module proxy (scripts/install_jaeger.sh)"
    return None, f"no Jaeger {JAEGER_VERSION} binary in {BIN_CACHE}: run scripts/install_jaeger.sh (builds it once, 10-45 min on 2 cores)"


def _config(ports: dict[str, int], assets: str | None) -> str:
    """Jaeger v2 (OTel collector) config: all-in-one, memory storage, everything on 127.0.0.1."""
    ui = {"assets_path": assets} if assets else {}
    config = {
        "service": {
            "extensions": ["jaeger_storage", "jaeger_query", "healthcheckv2"],
            "pipelines": {"traces": {"receivers": ["otlp"], "processors": ["batch"], "exporters": ["jaeger_storage_exporter"]}},
            "telemetry": {"metrics": {"level": "none"}, "logs": {"level": "info"}},
        },
        "extensions": {
            "healthcheckv2": {"use_v2": True, "http": {"endpoint": f"{HOST}:{ports['health']}"}},
            "jaeger_query": {
                "storage": {"traces": "memstore"},
                "http": {"endpoint": f"{HOST}:{ports['query']}"},
                "grpc": {"endpoint": f"{HOST}:{ports['query_grpc']}"},
                **({"ui": ui} if ui else {}),
            },
            "jaeger_storage": {"backends": {"memstore": {"memory": {"max_traces": 100000}}}},
        },
        "receivers": {"otlp": {"protocols": {
            "grpc": {"endpoint": f"{HOST}:{ports['otlp_grpc']}"},
            "http": {"endpoint": f"{HOST}:{ports['otlp_http']}"},
        }}},
        "processors": {"batch": {"timeout": "100ms"}},
        "exporters": {"jaeger_storage_exporter": {"trace_storage": "memstore"}},
    }
    return json.dumps(config, indent=1)  # JSON is YAML


def _healthy(health_url: str, query_url: str) -> bool:
    try:
        with urllib.request.urlopen(health_url, timeout=2) as resp:  # noqa: S310 - loopback
            if resp.status != 200:
                return False
        with urllib.request.urlopen(f"{query_url}/api/services", timeout=2) as resp:  # noqa: S310
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def run_jaeger(binary: Path, root: Path, timeout: float = STARTUP_TIMEOUT_S, attempts: int = 3) -> Iterator[JaegerServer]:
    """Start ``jaeger --config`` under ``root``, yield once healthy, always stop it."""
    assets = os.environ.get("GRAPHTRAIL_JAEGER_UI_ASSETS") or None

    def launch(attempt: int) -> Launch[JaegerServer]:
        workdir = root / f"jaeger-{attempt}"
        workdir.mkdir(parents=True, exist_ok=True)
        ports: dict[str, int] = {}
        for name in ("otlp_grpc", "otlp_http", "query", "query_grpc", "health"):
            port = free_port()
            while port in ports.values():
                port = free_port()
            ports[name] = port
        config = workdir / "config.yaml"
        config.write_text(_config(ports, assets), encoding="utf-8")
        server = JaegerServer(
            query_url=f"http://{HOST}:{ports['query']}",
            otlp_http_port=ports["otlp_http"],
            otlp_grpc_port=ports["otlp_grpc"],
            log_path=workdir / "jaeger.log",
            has_ui=bool(assets),
        )
        health = f"http://{HOST}:{ports['health']}/status"
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        return Launch(
            server=server,
            url=server.query_url,
            command=[str(binary), "--config", f"file:{config}"],
            cwd=workdir,
            env=env,
            log_path=server.log_path,
            ready=lambda: _healthy(health, server.query_url),
        )

    with run_server(launch, name="Jaeger", timeout=timeout, attempts=attempts, error=JaegerStartError) as server:
        yield server


@pytest.fixture(scope="session")
def jaeger_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JaegerServer]:
    """A Jaeger server on loopback for the whole session."""
    binary, why = jaeger_binary()
    if binary is None:
        pytest.skip(ci_note("jaeger", why))
    with run_jaeger(binary, tmp_path_factory.mktemp("jaeger")) as server:
        yield server
