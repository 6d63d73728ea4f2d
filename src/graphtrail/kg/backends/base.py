"""What a knowledge-graph backend must offer the graph tools, the ablations and the evaluators.

:class:`~graphtrail.kg.KnowledgeGraph` (in memory, :mod:`.memory`) is the reference
implementation; a database-backed graph (embedded or over the network) offers
the same methods and the seven tools, the ablation builders and the metrics
work on it unchanged. The protocol lists exactly what graphtrail's own code
calls, so a backend knows what it must answer and nothing more.

Two methods are optional, found with ``getattr`` and replaced by a generic
fallback when absent, so a minimal backend still works:

- ``search_entities(query, *, type=None, limit=10)``: indexed entity search
  returning ``(EntityRecord, score, matched label)`` best first, with the
  ranking rules of :func:`graphtrail.agents.tools.search_entity_records`.
  Without it, search scores every visible entity (a full scan).
- ``hop_distances(sources, max_depth=None, until=None)``: undirected BFS hop
  counts from the sources, bounded to ``max_depth`` hops or stopped once every
  id in ``until`` is reached. Without it, the ablations walk
  ``in_relations``/``out_relations`` one entity at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol, runtime_checkable

from ..records import Community, EntityRecord, Relation, TextUnit
from ..views import GraphFilter

__all__ = ["GraphBackend"]


@runtime_checkable
class GraphBackend(Protocol):
    """The read interface of a knowledge graph, as the tools see it (optionally through a filter).

    Every read honours :attr:`graph_filter`: hidden entities are absent (with
    their edges and the text units that mention them), masked ones keep id and
    edges but show :meth:`GraphFilter.masked_name` and no description, aliases
    or text, and text-blocked ones lose description and text units.
    """

    name: str
    graph_filter: GraphFilter | None

    @property
    def text_units(self) -> Mapping[str, TextUnit]:
        """Every text unit by id, unfiltered; read them through :meth:`text_unit`."""
        ...

    @property
    def communities(self) -> Mapping[str, Community]:
        """Every community by id, unfiltered; read them through :meth:`community`."""
        ...

    def filtered(self, graph_filter: GraphFilter | None) -> "GraphBackend":
        """A view under ``graph_filter``; the graph itself when the filter is ``None`` or empty. Must be cheap."""
        ...

    def __contains__(self, entity_id: object) -> bool: ...

    def __len__(self) -> int: ...

    def entity_ids(self) -> Iterator[str]: ...

    def entity(self, entity_id: str) -> EntityRecord | None: ...

    def entities(self) -> Iterator[EntityRecord]: ...

    def relations(self) -> Iterator[Relation]: ...

    def out_relations(self, entity_id: str) -> list[Relation]: ...

    def in_relations(self, entity_id: str) -> list[Relation]: ...

    def degree(self, entity_id: str) -> int: ...

    def text_unit(self, unit_id: str) -> TextUnit | None: ...

    def text_units_for(self, entity_id: str) -> list[TextUnit]: ...

    def community(self, community_id: str) -> Community | None: ...

    def communities_of(self, entity_id: str) -> list[Community]: ...
