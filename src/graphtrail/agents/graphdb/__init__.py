"""Moved to graphtrail.kg.backends; kept so old imports work."""

from __future__ import annotations

from ...kg.backends import (
    LBUG_PREFIX,
    NEO4J_SCHEMES,
    CypherGraph,
    GraphMapping,
    import_graph,
    is_graph_database,
    open_graph_database,
)

__all__ = [
    "CypherGraph",
    "GraphMapping",
    "is_graph_database",
    "open_graph_database",
    "import_graph",
    "NEO4J_SCHEMES",
    "LBUG_PREFIX",
]
