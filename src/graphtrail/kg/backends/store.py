"""What a graph database backend must provide: run one read query, return rows.

:class:`~graphtrail.kg.backends.cypher.CypherGraph` holds all the graph
logic (the queries, the ablation filter, the record shapes); a store only runs
Cypher. The two engines differ in a few spellings, which the store states as
:class:`Dialect` fields so the queries are written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .mapping import GraphMapping

__all__ = ["GraphStore", "Dialect"]


@dataclass(frozen=True)
class Dialect:
    """The few Cypher spellings that differ between LadybugDB and Neo4j."""

    #: Relationship pattern between two entities, e.g. ``[r:RELATION]`` or ``[r]``.
    relation_pattern: str
    #: Expression for the relation label of ``r``, e.g. ``r.relation`` or ``type(r)``.
    relation_expr: str
    #: Expression for a text unit ``u``'s mentioned entity ids, as a list.
    unit_entity_ids_expr: str
    #: Expression for a community ``c``'s member ids, as a list.
    community_members_expr: str
    #: ORDER BY expressions for entities ``e``, relations ``r`` (to neighbour ``b``), units ``u``,
    #: communities ``c``: insertion order where the import stored it, else ids.
    order_expr_entity: str
    order_expr_relation: str
    order_expr_unit: str
    order_expr_community: str
    #: Whether a view hiding most entities may send the visible ids instead of the hidden ones
    #: (the unit filter then asks the database whether an id is an entity: an ``EXISTS`` subquery).
    scope_by_visible: bool = False


class GraphStore(Protocol):
    """A connection to one graph in a database, read-only from graphtrail's side."""

    mapping: GraphMapping
    dialect: Dialect
    #: Where the graph is, safe to print: never contains a password.
    display: str

    def rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """Run ``query`` and return every row as a list of values."""
        ...

    def close(self) -> None:
        ...
