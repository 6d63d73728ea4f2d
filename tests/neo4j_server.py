"""A real Neo4j 5.26 LTS on loopback, for the Neo4j backend's tests.

The server is Neo4j's own test harness (``org.neo4j.test:neo4j-harness``) run
in-process by the one-class launcher in ``tests/neo4j_launcher``, which
``scripts/install_neo4j_harness.sh`` builds once into
``~/.cache/graphtrail/neo4j`` (or ``$GRAPHTRAIL_NEO4J_CACHE``). The launcher
binds Bolt to 127.0.0.1 on a free port with authentication off, prints the
Bolt URI on stdout, and runs until its stdin closes, so even a test process
that dies without cleaning up takes the server with it.

Without Java 17 or the built launcher the fixture skips, saying how to build it.

Use the ``neo4j_server`` fixture (session scoped): tests/conftest.py defines it once for
the whole suite (imported into a test module it would start one server per module). Each test that writes
should start from :func:`wipe`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import queue
import re
import shutil
import signal
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
#: The tests' memory: small, so the many small test graphs start fast on a shared 2-core box.
#: How long a stop waits for the launcher to close the database before killing it.
STOP_GRACE_S = 2.0
DEFAULT_HEAP = "768m"
DEFAULT_PAGECACHE = "64m"
#: The JVM system property the launcher reads its page cache size from.
PAGECACHE_PROPERTY = "graphtrail.neo4j.pagecache"
_SIZE = re.compile(r"[1-9][0-9]{0,6}[kmg]?", re.IGNORECASE)


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
def run_neo4j(
    root: Path, timeout: float = STARTUP_TIMEOUT_S, *, pagecache: str | None = None, heap: str | None = None
) -> Iterator[Neo4jServer]:
    """Start the launcher, yield once it printed the Bolt URI, always stop it.

    ``pagecache`` and ``heap`` (sizes such as ``512m``, ``2g``) default to what the
    tests need: 64 MB of page cache and a 768 MB heap, small so that a test run stays
    light. A benchmark of a large graph passes what a production server would have;
    a launcher built before the page cache was configurable ignores it, so check the
    server's own ``server.memory.pagecache.size`` setting (:func:`effective_memory`).
    """
    heap = check_size(heap or DEFAULT_HEAP, "heap")
    pagecache = check_size(pagecache or DEFAULT_PAGECACHE, "page cache")
    home = launcher_dir()
    log_path = root / "neo4j.log"
    command = [
        os.environ.get("JAVA", "java"), f"-Xmx{heap}", "-XX:+UseSerialGC", f"-D{PAGECACHE_PROPERTY}={pagecache}",
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
        server = Neo4jServer(first.rstrip("/"), log_path)
        yield server
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]  # the launcher's signal to shut down
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            # A throwaway database: no checkpoint worth waiting for (a clean close takes ~10 s idle,
            # more on a busy box, at the end of the suite). Kill it and delete its home ourselves.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        home = home_folder(Neo4jServer("", log_path))
        if home is not None and home.name.startswith("graphtrail-neo4j-"):
            shutil.rmtree(home, ignore_errors=True)


def check_size(text: str, what: str) -> str:
    """``text`` if it is a memory size the JVM and Neo4j both read (``768m``, ``2g``), else ValueError."""
    if not _SIZE.fullmatch(text):
        raise ValueError(f"{what} size {text!r} is not a size such as 512m or 2g")
    return text


def effective_memory(bolt_uri: str) -> dict[str, str]:
    """The running server's own word on its memory: page cache size and the JVM's max heap (bytes)."""
    import neo4j

    with neo4j.GraphDatabase.driver(bolt_uri, auth=None) as driver:
        settings = driver.execute_query(
            "SHOW SETTINGS YIELD name, value WHERE name = $name RETURN value", name="server.memory.pagecache.size"
        ).records
        heap = driver.execute_query(
            "CALL dbms.queryJmx($bean) YIELD attributes RETURN attributes.HeapMemoryUsage.value.properties.max AS max",
            bean="java.lang:type=Memory",
        ).records
    return {
        "pagecache": settings[0]["value"] if settings else "unknown",
        "heap_max_bytes": str(heap[0]["max"]) if heap else "unknown",
    }


def home_folder(server: Neo4jServer) -> Path | None:
    """The database's home folder, from the launcher's first stderr line (``None`` if it did not say)."""
    found = re.search(r"graphtrail\.Neo4jLauncher: .*, home (\S+)", server.log_tail(400))
    return Path(found.group(1)) if found else None


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
