"""Suite-wide isolation between tests that run the CLI in-process.

The CLI owns its process: `graphtrail run/eval/demo` install a filter on the "graphtrail"
logger so that they report the OTLP outcome themselves, once. A test that calls the CLI
(or its pipeline) in-process would leave that filter behind and silence the tracer's own
warnings for every later test; each test therefore starts with the logger as the library
leaves it.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The servers' session fixtures, defined here once: each worker starts each server at most once.
# Imported into a test module instead, a session-scoped fixture becomes that module's own definition,
# cached apart from every other module's: one more server per importing module, all alive until the
# session ends (it was 8 Neo4j, 2 Phoenix and 2 Jaeger servers per run).
from tests.jaeger_server import jaeger_server  # noqa: E402,F401
from tests.llamacpp_server import llamacpp_server  # noqa: E402,F401
from tests.neo4j_server import neo4j_server  # noqa: E402,F401
from tests.phoenix_server import phoenix_server  # noqa: E402,F401


@pytest.fixture(autouse=True)
def _graphtrail_logger_as_the_library_leaves_it() -> Iterator[None]:
    # The library installs one filter on its logger, the redacting one (graphtrail._secret_log), which
    # stays; the others are the CLI's. A module- or session-scoped fixture may have run the CLI
    # in-process before this test started, so clear them on the way in too.
    from graphtrail._secret_log import RedactingFilter, install_log_filter

    logger = logging.getLogger("graphtrail")
    for installed in list(logger.filters):
        if not isinstance(installed, RedactingFilter):
            logger.removeFilter(installed)
    install_log_filter()
    yield
    for installed in list(logger.filters):
        if not isinstance(installed, RedactingFilter):
            logger.removeFilter(installed)


# ---- running the suite on every core (pytest-xdist, `-n auto` in pyproject) ----
# Tests that share something costly run on one worker: a server (one Neo4j, Phoenix, Jaeger, llama.cpp
# or Chromium per worker would cost a start-up each), a page of docs (its blocks run in order in one
# folder), or a module- or session-scoped fixture of ours (an evaluation built once for a module).
# Everything else is handed out test by test, so the workers of a 2-core machine finish together.
# xdist's own `--dist loadgroup` cannot carry the groups on pytest >= 9.2 (it rewrites a node id
# attribute pytest no longer reads), so each worker writes the groups it computed at collection to a
# file of the run, and the controller's scheduler (below) reads them: the workers collect the same
# items, and the controller schedules only after every worker has reported its collection.
#: A server's marker -> its group, named after its session fixture, so that a test asking for the
#: fixture without the marker lands in the same group (one server per run, not one per group).
SHARED_SERVICES = {"neo4j": "neo4j_server", "phoenix": "phoenix_server", "jaeger": "jaeger_server",
                   "llamacpp": "llamacpp_server", "browser": "browser"}
MAX_AUTO_WORKERS = 6  # each worker starts its own services; more than this buys little


def _shared_group(item: pytest.Item) -> str | None:
    """The group ``item`` must share a worker with, or None to schedule it alone."""
    callspec = getattr(item, "callspec", None)
    module = getattr(item, "module", None)
    module_name = module.__name__ if module is not None else ""
    if callspec is not None and "page" in callspec.params and module_name.endswith("test_docs"):
        return f"docs:{callspec.params['page'].name}"
    for marker, group in SHARED_SERVICES.items():
        if item.get_closest_marker(marker) is not None:
            return group
    info = getattr(item, "_fixtureinfo", None)
    for name in info.names_closure if info is not None else ():
        definitions = info.name2fixturedefs.get(name) or ()
        if not definitions:
            continue
        fixturedef = definitions[-1]
        if fixturedef.scope == "function" or not getattr(fixturedef.func, "__module__", "").startswith("tests"):
            continue
        return name if fixturedef.scope == "session" else f"{fixturedef.scope}:{module_name}"
    return None


def _groups_file(run_id: str) -> Path:
    return Path(tempfile.gettempdir(), f"graphtrail-test-groups-{run_id}.json")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:  # not an xdist worker: nothing to schedule
        return
    groups = {item.nodeid: group for item in items if (group := _shared_group(item)) is not None}
    target = _groups_file(workerinput["testrunuid"])
    partial = target.with_suffix(f".{workerinput['workerid']}.tmp")
    partial.write_text(json.dumps(groups), encoding="utf-8")
    os.replace(partial, target)  # every worker writes the same groups; the last complete file wins


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    run_id = config.getoption("testrunuid")  # set in pytest_configure below

    class SharedGroupScheduling(LoadScopeScheduling):
        """Load scheduling, except that a group's tests go to one worker, in collection order."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                path = _groups_file(run_id)
                try:
                    self.groups = json.loads(path.read_text(encoding="utf-8"))
                    path.unlink()
                except (OSError, ValueError):
                    self.groups = {}
            return self.groups.get(nodeid, nodeid)

    return SharedGroupScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    # The controller names the run, so that its scheduler finds the file its workers write.
    if not hasattr(config, "workerinput") and config.pluginmanager.hasplugin("xdist") and not config.getoption("testrunuid"):
        config.option.testrunuid = uuid.uuid4().hex


def pytest_unconfigure(config: pytest.Config) -> None:
    # A run that schedules nothing (``--co -n 2``, or one stopped early) never reads the groups file.
    if not hasattr(config, "workerinput") and (run_id := getattr(config.option, "testrunuid", None)):
        _groups_file(run_id).unlink(missing_ok=True)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return max(1, min(len(os.sched_getaffinity(0)), MAX_AUTO_WORKERS))
