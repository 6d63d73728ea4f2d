"""graphtrail.agents: reference GraphRAG agents over a networkx knowledge graph."""

from .kg import Community, EntityRecord, KGError, KnowledgeGraph, Relation, TextUnit
from .views import GraphFilter, active_filter, use_filter

__all__ = [
    "KnowledgeGraph",
    "EntityRecord",
    "Relation",
    "TextUnit",
    "Community",
    "KGError",
    "GraphFilter",
    "active_filter",
    "use_filter",
]
