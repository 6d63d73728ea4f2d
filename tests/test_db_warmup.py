"""A database graph is warmed in the background as graphtrail opens it, so its first users get a warm database's speed.

What is measured (the first 25 searches after a start) is benchmarks/kg_scale.py's
job; here, that the warm-up happens without holding up the open, asks real
questions, says so in the log once, ends when a user searches, when the graph is
closed or when the process exits, leaves the answers unchanged, and can be turned off.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graphtrail.agents import load_kg
from graphtrail.kg.backends import import_graph, warmup

from .graph_backends import on_backend

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def every_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warmup, "MIN_ENTITIES", 1)  # the bundled graph is small; large ones are the point


@pytest.fixture
def never_settles(monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm-up that would ask until its budget: only a search, a close or the exit ends it early."""
    monkeypatch.setattr(warmup, "SETTLED_MS", 0.0)
    monkeypatch.setattr(warmup, "STALE_WINDOWS", 10**9)
    monkeypatch.setenv("GRAPHTRAIL_DB_WARMUP", "600")


def _warmed_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "warmed" in r.getMessage()]


@pytest.mark.usefixtures("every_graph")
@pytest.mark.parametrize("backend", ["ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def test_opening_a_database_graph_warms_it_and_logs_how_long(backend: str, request: pytest.FixtureRequest,
                                                             tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    memory = load_kg("countries")
    request.getfixturevalue("monkeypatch").setenv("GRAPHTRAIL_DB_WARMUP", "10")  # a busy test machine: a short budget
    with caplog.at_level(logging.INFO, logger="graphtrail"):
        kg = on_backend(memory, backend, request, tmp_path)
        assert kg._shared.warming.wait(120), "the warm-up ends by itself (settled, or at its budget)"
    report = kg._shared.warmup
    assert report["stopped"] in (warmup.SETTLED, warmup.BUDGET)
    # One search that builds the index, then searches each with its record and relations.
    assert report["queries"] >= 5 and (report["queries"] - 1) % 4 == 0 and report["seconds"] >= report["first_search_s"] > 0
    [line] = _warmed_lines(caplog)  # one line
    assert f"{report['queries']} queries in" in line and kg.store.display in line
    if backend == "ladybug":
        assert kg._shared.label_index is not None  # built by the warm-up, not by the first user's search
    query = next(iter(memory.entities())).name
    assert [(r.id, s) for r, s, _ in kg.search_entities(query)] == [(r.id, s) for r, s, _ in memory.search_entities(query)]


@pytest.mark.usefixtures("every_graph", "never_settles")
@pytest.mark.parametrize("backend", ["ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def test_opening_does_not_wait_for_the_warm_up_and_the_first_search_ends_it(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    memory = load_kg("countries")
    with caplog.at_level(logging.INFO, logger="graphtrail"):
        kg = on_backend(memory, backend, request, tmp_path)
        warming = kg._shared.warming
        assert warming.running, "open returned while the warm-up (600 s budget, never settling) still runs"
        assert kg.describe()["entities"] == len(memory)  # a command that never searches is not held up
        assert warming.running and _warmed_lines(caplog) == []
        query = next(iter(memory.entities())).name
        got = kg.search_entities(query)
        assert warming.wait(60), "the first search ends the warm-up (after its question in flight)"
    assert [(r.id, s) for r, s, _ in got] == [(r.id, s) for r, s, _ in memory.search_entities(query)]
    assert kg._shared.warmup["stopped"] == warmup.SEARCHED and not kg._shared.warmup["settled"]
    [line] = _warmed_lines(caplog)
    assert line.endswith("stopped: a search came in)") and kg.store.display in line


@pytest.mark.usefixtures("every_graph", "never_settles")
def test_closing_the_graph_ends_the_warm_up(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    target = tmp_path / "countries.lbug"
    import_graph(load_kg("countries"), target)
    with caplog.at_level(logging.INFO, logger="graphtrail"):
        kg = load_kg(target)
        warming = kg._shared.warming
        assert warming.running
        kg.close()
        assert not warming.running and warming.thread is not None and not warming.thread.is_alive()
    assert kg._shared.warmup["stopped"] == warmup.CLOSED
    assert _warmed_lines(caplog)[0].endswith("stopped: closed)")


def test_a_process_that_exits_without_closing_is_not_held_up_by_the_warm_up(tmp_path: Path) -> None:
    """``graphtrail kg info`` never closes the graph: the exit ends the warm-up, well before its budget."""
    target = tmp_path / "countries.lbug"
    import_graph(load_kg("countries"), target)
    script = textwrap.dedent(f"""
        import logging, sys
        from graphtrail.kg import load_kg
        from graphtrail.kg.backends import warmup
        logging.basicConfig(level=logging.INFO, stream=sys.stderr)
        warmup.MIN_ENTITIES, warmup.SETTLED_MS, warmup.STALE_WINDOWS = 1, 0.0, 10**9
        kg = load_kg({str(target)!r})
        assert kg._shared.warming.running
        print(kg.describe()["entities"])
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]), "GRAPHTRAIL_DB_WARMUP": "600"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == str(len(load_kg("countries")))
    lines = [line for line in proc.stderr.splitlines() if "warmed" in line]
    assert len(lines) == 1 and lines[0].endswith("stopped: the process exited)"), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


@pytest.mark.usefixtures("every_graph")
def test_the_warm_up_can_be_turned_off_and_skips_small_graphs(request: pytest.FixtureRequest, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHTRAIL_DB_WARMUP", "0")
    kg = on_backend(load_kg("countries"), "ladybug", request, tmp_path)
    assert kg._shared.warming is None and kg._shared.warmup is None and kg._shared.label_index is None
    monkeypatch.delenv("GRAPHTRAIL_DB_WARMUP")
    monkeypatch.setattr(warmup, "MIN_ENTITIES", 10**9)
    assert warmup.start_warm_up(kg) is None and warmup.warm_up(kg)["queries"] == 0


@pytest.mark.parametrize("backend", ["ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def test_an_abandoned_label_read_frees_the_connection(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Closing a graph while the warm-up reads its labels ends that read; the connection serves the next query."""
    import threading

    from graphtrail.kg.backends.search import LabelIndex, LabelIndexCancelled

    memory = load_kg("countries")
    kg = on_backend(memory, backend, request, tmp_path)
    abandon = threading.Event()
    abandon.set()
    with pytest.raises(LabelIndexCancelled):
        LabelIndex(kg, abandon)
    assert kg._shared.label_index is None and len(kg) == len(memory)  # not left holding the connection's lock
    assert LabelIndex(kg).index.n_entities == len(memory)
