"""Where a knowledge graph lives inside a graph database: labels and property names.

graphtrail's graph model (entities with id/name/type/description/aliases,
typed relations, text units, communities) maps onto a property graph as:

- an entity is a node labelled :attr:`GraphMapping.entity_label`, with the id,
  name, type, description and aliases in the named properties;
- a relation is a relationship between two entity nodes. Its type stands for the
  label (Neo4j's natural shape: ``(:Entity)-[:CAPITAL_OF]->(:Entity)``; the import
  derives a safe type from the label and keeps the label as written in
  :attr:`relation_text_property`) unless :attr:`relation_property` names a
  property that holds it;
- a text unit is a node labelled :attr:`text_unit_label` with its text, linked to
  the entities it mentions by :attr:`mentions_type` relationships;
- a community is a node labelled :attr:`community_label` with title, summary,
  level and its members' ids (``entity_ids``), or, when that property is absent,
  members linked to it by :attr:`member_type` relationships (GraphRAG's
  ``IN_COMMUNITY``).

Every name here goes into statements, so each must be a plain identifier
(:mod:`.identifiers`); values never do. ``graphtrail kg import`` writes exactly this shape; a graph that already lives in
Neo4j under other names is read by overriding the fields (see docs/datasets.md).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import KGError
from .identifiers import cypher_name

__all__ = ["GraphMapping", "quote_name"]


@dataclass(frozen=True)
class GraphMapping:
    """Labels, relationship types and property names of a graph in a database."""

    entity_label: str = "Entity"
    id_property: str = "id"
    name_property: str = "name"
    type_property: str = "type"
    description_property: str = "description"
    aliases_property: str = "aliases"
    #: ``None``: the relationship type stands for the relation label (see :attr:`relation_text_property`).
    relation_property: str | None = None
    #: When the type stands for the label: the property holding the label as written
    #: (``kg import`` maps ``"capital of"`` to type ``CAPITAL_OF`` and keeps the text here);
    #: relationships without it show their type.
    relation_text_property: str = "relation"
    relation_description_property: str = "description"
    text_unit_label: str = "TextUnit"
    text_property: str = "text"
    mentions_type: str = "MENTIONS"
    community_label: str = "Community"
    member_type: str = "IN_COMMUNITY"
    #: Insertion order written by ``graphtrail kg import``; graphs without it are read in id order.
    order_property: str = "ord"

    def with_options(self, options: dict[str, str]) -> "GraphMapping":
        """This mapping with fields overridden by name (short aliases allowed: ``label``, ``id``, ``name`` ...)."""
        aliases = {
            "label": "entity_label",
            "id": "id_property",
            "name": "name_property",
            "type": "type_property",
            "description": "description_property",
            "aliases": "aliases_property",
            "relation": "relation_property",
            "relation_text": "relation_text_property",
            "text_unit": "text_unit_label",
            "text": "text_property",
            "mentions": "mentions_type",
            "community": "community_label",
            "member": "member_type",
        }
        known = {f.name for f in fields(self)}
        changes: dict[str, Any] = {}
        for key, value in options.items():
            field = aliases.get(key, key)
            if field not in known:
                raise KGError(
                    f"unknown graph mapping option {key!r}; known: {', '.join(sorted(set(aliases) | known))}"
                )
            changes[field] = value or None if field == "relation_property" else value
            if changes[field] is not None:
                cypher_name(changes[field], f"graph mapping option {key}=")  # reject bad names early, with the option named
        return replace(self, **changes)


def quote_name(name: str) -> str:
    """A label, type or property name for a statement: checked by :func:`.identifiers.cypher_name`, backtick-quoted."""
    return cypher_name(name)
