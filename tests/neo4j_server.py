"""A real Neo4j 5.26 LTS on loopback, for the Neo4j backend's tests.

The server is Neo4j's own test harness (``org.neo4j.test:neo4j-harness``) run
in-process by the one-class launcher in ``tests/neo4j_launcher``, which
``scripts/install_neo4j_harness.sh`` builds once into
``~/.cache/graphtrail/neo4j`` (or ``$GRAPHTRAIL_NEO4J_CACHE``). The launcher
binds Bolt to 127.0.0.1 on a free port with authentication off, prints the
Bolt URI on stdout, and runs until its stdin closes, so even a test process
that dies without cleaning up takes the server with it.

Without Java 17 or the built launcher the fixture skips, saying how to build it.

Use the ``neo4j_server`` fixture (session scoped): import it into the test
module, ``from tests.neo4j_server import neo4j_server``. Each test that writes
should start from :func:`wipe`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import ci_note, log_tail, terminate

#: The harness starts in ~10 s on an idle box and ~30 s on a busy 2-core one.
STARTUP_TIMEOUT_S = float(os.environ.get("GRAPHTRAIL_NEO4J_STARTUP_TIMEOUT", "240"))
INSTALL_HINT = "run scripts/install_neo4j_harness.sh"
MAIN_CLASS = "graphtrail.Neo4jLauncher"


@dataclass(frozen=True)
class Neo4jServer:
    """Where a running Neo4j listens (``bolt://127.0.0.1:PORT``), and its log."""

    bolt_uri: str
    log_path: Path

    def log_tail(self, lines: int = 40) -> str:
        return log_tail(self.log_path, lines)


class Neo4jStartError(RuntimeError):
    """The launcher did not print its Bolt URI in time (or exited while starting)."""


def launcher_dir() -> Path:
    return Path(os.environ.get("GRAPHTRAIL_NEO4J_CACHE", Path.home() / ".cache" / "graphtrail" / "neo4j"))


def missing_requirement() -> str | None:
    """Why the server cannot run here, or ``None`` when it can."""
    if importlib.util.find_spec("neo4j") is None:
        return "the neo4j driver is not installed (pip install 'graphtrail[graphdb]')"
    if shutil.which(os.environ.get("JAVA", "java")) is None:
        return f"no java on PATH (Neo4j 5.26 needs Java 17; then {INSTALL_HINT})"
    home = launcher_dir()
    if not (home / "classes").is_dir() or not (home / "lib").is_dir():
        return f"the Neo4j harness launcher is not built in {home} ({INSTALL_HINT})"
    return None


@contextlib.contextmanager
def run_neo4j(root: Path, timeout: float = STARTUP_TIMEOUT_S) -> Iterator[Neo4jServer]:
    """Start the launcher, yield once it printed the Bolt URI, always stop it."""
    home = launcher_dir()
    log_path = root / "neo4j.log"
    command = [
        os.environ.get("JAVA", "java"), "-Xmx768m", "-XX:+UseSerialGC",
        "-cp", f"{home / 'classes'}{os.pathsep}{home / 'lib'}/*", MAIN_CLASS,
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True
        )
    lines: queue.Queue[bytes] = queue.Queue()
    reader = threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        try:
            first = lines.get(timeout=timeout).decode().strip()
        except queue.Empty:
            raise Neo4jStartError(f"Neo4j printed no Bolt URI within {timeout:.0f}s\n{log_tail(log_path)}") from None
        if not first.startswith("bolt://"):
            raise Neo4jStartError(f"Neo4j launcher exited ({proc.poll()}) without a Bolt URI: {first!r}\n{log_tail(log_path)}")
        yield Neo4jServer(first.rstrip("/"), log_path)
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]  # the launcher's signal to shut down
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            terminate(proc)


def wipe(bolt_uri: str) -> None:
    """Delete every node, relationship and constraint, so a test starts from an empty database."""
    import neo4j

    with neo4j.GraphDatabase.driver(bolt_uri, auth=None) as driver:
        driver.execute_query("MATCH (n) DETACH DELETE n")  # test graphs are small: one transaction
        for record in driver.execute_query("SHOW CONSTRAINTS YIELD name RETURN name").records:
            driver.execute_query(f"DROP CONSTRAINT `{record['name']}`")
        for record in driver.execute_query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name").records:
            driver.execute_query(f"DROP INDEX `{record['name']}`")


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Neo4jServer]:
    """A Neo4j 5.26 server on loopback for the whole session."""
    reason = missing_requirement()
    if reason is not None:
        pytest.skip(ci_note("neo4j", reason))
    with run_neo4j(tmp_path_factory.mktemp("neo4j")) as server:
        yield server
