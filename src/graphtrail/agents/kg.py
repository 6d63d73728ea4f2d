"""Moved to graphtrail.kg.graph; kept so old imports work.

Records in graphtrail.kg.records, KGError in graphtrail.kg.errors.
"""

from __future__ import annotations

from ..kg.errors import KGError
from ..kg.graph import KnowledgeGraph
from ..kg.records import Community, EntityRecord, Relation, TextUnit

__all__ = [
    "KnowledgeGraph",
    "EntityRecord",
    "Relation",
    "TextUnit",
    "Community",
    "KGError",
]
