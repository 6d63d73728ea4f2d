"""Where a knowledge graph is served from: in memory, or a graph database (LadybugDB, Neo4j).

Every backend offers the read API of :class:`~.base.GraphBackend`, so the graph
tools, the ablations and the metrics work on any of them unchanged:

- :mod:`.base`: the :class:`GraphBackend` protocol, what a backend must answer;
- :mod:`.memory`: the in-memory :class:`~graphtrail.kg.KnowledgeGraph`, the reference;
- :mod:`.cypher`: :class:`CypherGraph`, the shared Cypher layer (queries, ablation
  filters in the query, record shapes) over a :mod:`.store` that only runs Cypher;
- :mod:`.mapping`: labels and property names of a graph inside a database;
- :mod:`.ladybug` and :mod:`.neo4j`: the two engines' stores, readers and importers.

:func:`open_graph_database` turns a source string into a
:class:`~.cypher.CypherGraph` (the :class:`~graphtrail.kg.KnowledgeGraph`
read API over Cypher); :func:`import_graph` writes a loaded graph into one.
Which strings are databases (:func:`is_graph_database`):

- ``graph.lbug`` or ``lbug:path``: a LadybugDB file;
- ``bolt://``, ``neo4j://`` (and their ``+s``/``+ssc`` variants): a Neo4j server,
  with an optional ``?label=...&id=...`` mapping (see :class:`GraphMapping`).

The engines are optional dependencies (``pip install 'graphtrail[graphdb]'``),
imported only when such a source is used. The loaders import this package,
never the reverse.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..graph import KnowledgeGraph
from .base import GraphBackend
from .cypher import CypherGraph
from .mapping import GraphMapping

__all__ = ["GraphBackend", "CypherGraph", "GraphMapping", "is_graph_database", "open_graph_database", "import_graph", "NEO4J_SCHEMES"]

NEO4J_SCHEMES = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")
LBUG_PREFIX = "lbug:"


def is_graph_database(source: object) -> bool:
    """Whether ``source`` names a graph database rather than a file format or bundled name."""
    if isinstance(source, Path):
        return source.suffix.lower() == ".lbug"
    if not isinstance(source, str):
        return False
    low = source.lower()
    return low.startswith(NEO4J_SCHEMES) or low.startswith(LBUG_PREFIX) or low.endswith(".lbug")


def _lbug_path(source: str | os.PathLike[str]) -> Path:
    text = os.fspath(source)
    return Path(text[len(LBUG_PREFIX):] if text.lower().startswith(LBUG_PREFIX) else text)


def open_graph_database(
    source: str | os.PathLike[str],
    *,
    mapping: GraphMapping | None = None,
    name: str | None = None,
    community_seed: int = 0,
    community_resolution: float = 1.0,
) -> CypherGraph:
    """Open the graph database ``source`` names (see the module docstring), read-only.

    When the database holds no communities, they are computed in memory on first
    use with seeded Leiden (``community_seed``, ``community_resolution``), as
    :func:`~graphtrail.kg.load_kg` does for files. A graph of 10k entities or
    more is warmed in a background thread that opening does not wait for, and
    that the first search stops (:mod:`.warmup`, logged once).
    """
    text = os.fspath(source)
    if text.lower().startswith(NEO4J_SCHEMES):
        from .neo4j import open_neo4j

        kg = open_neo4j(text, mapping=mapping, name=name)
    else:
        from .ladybug import open_ladybug

        kg = open_ladybug(_lbug_path(text), name=name)
    kg._shared.community_seed, kg._shared.community_resolution = community_seed, community_resolution
    from .warmup import start_warm_up

    start_warm_up(kg)  # in the background: the first users get a warm database's speed (see .warmup); logged
    return kg


def import_graph(kg: KnowledgeGraph | CypherGraph, target: str | os.PathLike[str], *, mapping: GraphMapping | None = None) -> str:
    """Write ``kg`` into a new LadybugDB file or a Neo4j database; returns where (password-free)."""
    text = os.fspath(target)
    if text.lower().startswith(NEO4J_SCHEMES):
        from .neo4j import write_neo4j

        return write_neo4j(kg, text, mapping=mapping)
    from .ladybug import write_ladybug

    return str(write_ladybug(kg, _lbug_path(text)))  # type: ignore[arg-type]
