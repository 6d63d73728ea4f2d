"""A database graph is warmed as graphtrail opens it, so its first users get a warm database's speed.

What is measured (the first 25 searches after a start) is benchmarks/kg_scale.py's
job; here, that the warm-up happens, asks real questions, says so in the log,
leaves the answers unchanged, and can be turned off.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from graphtrail.agents import load_kg
from graphtrail.kg.backends import warmup

from .graph_backends import on_backend
from .neo4j_server import neo4j_server  # noqa: F401 - the fixture the Neo4j cases use


@pytest.fixture
def every_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warmup, "MIN_ENTITIES", 1)  # the bundled graph is small; large ones are the point


@pytest.mark.usefixtures("every_graph")
@pytest.mark.parametrize("backend", ["ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def test_opening_a_database_graph_warms_it_and_logs_how_long(backend: str, request: pytest.FixtureRequest,
                                                             tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    memory = load_kg("countries")
    request.getfixturevalue("monkeypatch").setenv("GRAPHTRAIL_DB_WARMUP", "10")  # a busy test machine: a short budget
    with caplog.at_level(logging.INFO, logger="graphtrail"):
        kg = on_backend(memory, backend, request, tmp_path)
    report = kg._shared.warmup
    assert report["queries"] >= 4 and report["queries"] % 4 == 0 and report["seconds"] > 0  # search, record, relations
    line = next(r.getMessage() for r in caplog.records if "warmed" in r.getMessage())
    assert f"{report['queries']} queries in" in line and kg.store.display in line
    if backend == "ladybug":
        assert kg._shared.label_index is not None  # built at open, not by the first user's search
    query = next(iter(memory.entities())).name
    assert [(r.id, s) for r, s, _ in kg.search_entities(query)] == [(r.id, s) for r, s, _ in memory.search_entities(query)]


@pytest.mark.usefixtures("every_graph")
def test_the_warm_up_can_be_turned_off_and_skips_small_graphs(request: pytest.FixtureRequest, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHTRAIL_DB_WARMUP", "0")
    kg = on_backend(load_kg("countries"), "ladybug", request, tmp_path)
    assert getattr(kg._shared, "warmup", None) is None and kg._shared.label_index is None
    monkeypatch.delenv("GRAPHTRAIL_DB_WARMUP")
    monkeypatch.setattr(warmup, "MIN_ENTITIES", 10**9)
    assert warmup.warm_up(kg)["queries"] == 0
