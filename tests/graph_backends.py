"""Run a test on every knowledge-graph backend: in memory, LadybugDB, Neo4j.

:func:`on_backend` takes an in-memory graph and returns the same graph as the
requested backend serves it: imported into a fresh ``.lbug`` file, or into the
session's Neo4j (wiped first). Use :data:`BACKEND_PARAMS` to parametrize a
fixture; the Neo4j case carries the ``neo4j`` marker and skips, with the reason,
where Java or the harness launcher is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphtrail.agents import KnowledgeGraph

BACKEND_PARAMS = ("memory", "ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j))


def on_backend(kg: KnowledgeGraph, backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """``kg`` served by ``backend``; closed when the test ends."""
    if backend == "memory":
        return kg
    from graphtrail.agents import load_kg
    from graphtrail.kg.backends import import_graph

    if backend == "ladybug":
        pytest.importorskip("ladybug", reason="LadybugDB is not installed (pip install 'graphtrail[graphdb]')")
        target = str(tmp_path / f"{kg.name}.lbug")
    elif backend == "neo4j":
        from tests.neo4j_server import wipe

        server = request.getfixturevalue("neo4j_server")
        wipe(server.bolt_uri)
        target = server.bolt_uri
    else:  # pragma: no cover - a typo in a test
        raise ValueError(backend)
    import_graph(kg, target)
    served = load_kg(target, name=kg.name)
    request.addfinalizer(served.close)
    return served
