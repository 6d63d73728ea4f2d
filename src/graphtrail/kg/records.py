"""The values a knowledge graph hands out: entities, relations, text units, communities.

Frozen dataclasses, the same whichever backend (in memory or a database)
answers the read. They sit below the graph, its array store and the backends,
so every one of them imports these and none imports another for them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EntityRecord", "Relation", "TextUnit", "Community"]


@dataclass(frozen=True)
class EntityRecord:
    id: str
    name: str
    type: str = "entity"
    description: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Relation:
    source: str
    relation: str
    target: str
    description: str = ""


@dataclass(frozen=True)
class TextUnit:
    id: str
    text: str
    entity_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Community:
    id: str
    title: str
    entity_ids: tuple[str, ...] = ()
    summary: str = ""
    level: int = 0
