"""Moved to graphtrail.kg.backends.neo4j; kept so old imports work."""

from __future__ import annotations

from ...kg.backends.neo4j import BATCH, Neo4jStore, Neo4jTarget, open_neo4j, parse_neo4j_uri, redact, write_neo4j

__all__ = [
    "Neo4jStore",
    "Neo4jTarget",
    "open_neo4j",
    "write_neo4j",
    "redact",
    "parse_neo4j_uri",
    "BATCH",
]
