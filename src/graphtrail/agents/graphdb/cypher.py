"""Moved to graphtrail.kg.backends.cypher; kept so old imports work."""

from __future__ import annotations

from ...kg.backends.cypher import LIST_SEPARATOR, CypherGraph

__all__ = ["CypherGraph", "LIST_SEPARATOR"]
