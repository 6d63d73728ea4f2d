"""A GraphRAG-style knowledge graph: entities, typed relations, text units, communities.

:class:`KnowledgeGraph` is a thin layer over a :class:`networkx.MultiDiGraph`
(``kg.graph``): nodes are entity ids carrying ``name``, ``type``,
``description`` and ``aliases``; edges are keyed by their relation label and
carry ``relation`` and ``description``. Text units (source passages) and
communities sit beside the graph, each linked to entity ids.

Ablations never copy the graph: :meth:`KnowledgeGraph.filtered` returns a view
whose lookups honour a :class:`~graphtrail.agents.views.GraphFilter`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from .views import GraphFilter

__all__ = ["KnowledgeGraph", "EntityRecord", "Relation", "TextUnit", "Community", "KGError"]


class KGError(ValueError):
    """A knowledge graph could not be built or loaded; the message says where and why."""


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


@dataclass
class KnowledgeGraph:
    """Entities, relations, text units and communities, with filtered views.

    Build one with :meth:`add_entity` / :meth:`add_relation` /
    :meth:`add_text_unit` / :meth:`add_community`, or with
    :func:`graphtrail.agents.load_kg`.
    """

    graph: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)
    text_units: dict[str, TextUnit] = field(default_factory=dict)
    communities: dict[str, Community] = field(default_factory=dict)
    name: str = "kg"
    graph_filter: GraphFilter | None = None
    _units_by_entity: dict[str, list[str]] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------ building
    def add_entity(
        self,
        entity_id: str,
        name: str | None = None,
        type: str = "entity",
        description: str = "",
        aliases: Iterable[str] = (),
    ) -> None:
        self.graph.add_node(
            str(entity_id),
            name=name or str(entity_id),
            type=type or "entity",
            description=description or "",
            aliases=tuple(aliases),
        )

    def add_relation(self, source: str, relation: str, target: str, description: str = "") -> None:
        for node in (source, target):
            if node not in self.graph:
                self.add_entity(node)
        self.graph.add_edge(str(source), str(target), key=relation, relation=relation, description=description or "")

    def add_text_unit(self, unit_id: str, text: str, entity_ids: Iterable[str] = ()) -> None:
        unit = TextUnit(str(unit_id), text, tuple(str(e) for e in entity_ids))
        self.text_units[unit.id] = unit
        for eid in unit.entity_ids:
            self._units_by_entity.setdefault(eid, []).append(unit.id)

    def add_community(
        self, community_id: str, title: str, entity_ids: Iterable[str], summary: str = "", level: int = 0
    ) -> None:
        self.communities[str(community_id)] = Community(
            str(community_id), title, tuple(str(e) for e in entity_ids), summary, level
        )

    def compute_communities(self, seed: int = 0, resolution: float = 1.0) -> None:
        """Fill :attr:`communities` with seeded Louvain communities of the undirected graph."""
        self.communities.clear()
        undirected = nx.Graph(self.graph.to_undirected(as_view=True))
        # Louvain iterates over sets of nodes; for string ids that order follows
        # Python's per-process hash seed, so the same seed would give different
        # communities in different runs. Integer labels hash to themselves.
        order = list(self.graph.nodes)
        index = {node: i for i, node in enumerate(order)}
        numbered = nx.Graph()
        numbered.add_nodes_from(range(len(order)))
        numbered.add_edges_from(sorted(tuple(sorted((index[u], index[v]))) for u, v in undirected.edges()))
        parts_numbered = nx.community.louvain_communities(numbered, seed=seed, resolution=resolution)
        parts = sorted((sorted(order[i] for i in p) for p in parts_numbered), key=lambda p: (-len(p), p[0]))
        for i, members in enumerate(parts):
            by_degree = sorted(members, key=lambda m: (-undirected.degree(m), m))
            title = "Community of " + ", ".join(self.graph.nodes[m].get("name", m) for m in by_degree[:3])
            self.add_community(f"C{i}", title, members, self._community_summary(by_degree))

    def _community_summary(self, members_by_degree: list[str], per_type: int = 12) -> str:
        """Members grouped by type, best-connected first, so a reader can tell what the community is about."""
        groups: dict[str, list[str]] = {}
        for m in members_by_degree:
            data = self.graph.nodes[m]
            groups.setdefault(data.get("type", "entity"), []).append(data.get("name", m))
        parts = []
        for type_, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            more = f" and {len(names) - per_type} more" if len(names) > per_type else ""
            parts.append(f"{type_} ({len(names)}): " + ", ".join(names[:per_type]) + more)
        return f"{len(members_by_degree)} entities. " + "; ".join(parts) + "."

    # ------------------------------------------------------------ views
    def filtered(self, graph_filter: GraphFilter | None) -> "KnowledgeGraph":
        """A view of this graph as the tools should see it under ``graph_filter``.

        Hidden entities vanish (with their edges and the text units that
        mention them); masked ones keep id and edges but lose name, description
        and text; text-blocked ones keep structure but lose text.
        """
        if graph_filter is None or graph_filter.is_empty:
            return self
        hidden = graph_filter.hidden
        view = nx.subgraph_view(self.graph, filter_node=lambda n: n not in hidden)
        return KnowledgeGraph(
            graph=view,  # type: ignore[arg-type]
            text_units=self.text_units,
            communities=self.communities,
            name=self.name,
            graph_filter=graph_filter,
            _units_by_entity=self._units_by_entity,
        )

    # ------------------------------------------------------------ reading
    def __contains__(self, entity_id: object) -> bool:
        return entity_id in self.graph

    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def entity_ids(self) -> Iterator[str]:
        return iter(self.graph.nodes)

    def entity(self, entity_id: str) -> EntityRecord | None:
        """The entity as the current view shows it, or ``None`` if it is not visible."""
        if entity_id not in self.graph:
            return None
        data = self.graph.nodes[entity_id]
        f = self.graph_filter
        if f is not None and entity_id in f.masked:
            return EntityRecord(entity_id, f.masked_name(entity_id), data.get("type", "entity"), "", ())
        description = data.get("description", "")
        if f is not None and entity_id in f.text_blocked:
            description = ""
        return EntityRecord(
            entity_id, data.get("name", entity_id), data.get("type", "entity"), description, tuple(data.get("aliases", ()))
        )

    def entities(self) -> Iterator[EntityRecord]:
        for eid in self.graph.nodes:
            record = self.entity(eid)
            if record is not None:
                yield record

    def relations(self) -> Iterator[Relation]:
        for s, t, data in self.graph.edges(data=True):
            yield Relation(s, data.get("relation", ""), t, data.get("description", ""))

    def out_relations(self, entity_id: str) -> list[Relation]:
        if entity_id not in self.graph:
            return []
        return [Relation(entity_id, d.get("relation", ""), t, d.get("description", "")) for _, t, d in self.graph.out_edges(entity_id, data=True)]

    def in_relations(self, entity_id: str) -> list[Relation]:
        if entity_id not in self.graph:
            return []
        return [Relation(s, d.get("relation", ""), entity_id, d.get("description", "")) for s, _, d in self.graph.in_edges(entity_id, data=True)]

    def text_unit(self, unit_id: str) -> TextUnit | None:
        """The text unit, or ``None`` if missing or withheld by the current view."""
        unit = self.text_units.get(unit_id)
        if unit is None:
            return None
        f = self.graph_filter
        if f is not None and any(e in f.hidden or e in f.masked or e in f.text_blocked for e in unit.entity_ids):
            return None
        return unit

    def text_units_for(self, entity_id: str) -> list[TextUnit]:
        """The visible text units that mention ``entity_id``."""
        if entity_id not in self.graph:
            return []
        units = (self.text_unit(uid) for uid in self._units_by_entity.get(entity_id, ()))
        return [u for u in units if u is not None]

    def community(self, community_id: str) -> Community | None:
        """The community as the current view shows it.

        When the filter touches a member, hidden members are dropped (masked
        ones stay, by id) and the title and summary become neutral: both are
        text that quotes member names, so either could leak a withheld entity.
        """
        com = self.communities.get(community_id)
        if com is None:
            return None
        f = self.graph_filter
        if f is None or not (f.hidden | f.masked | f.text_blocked) & set(com.entity_ids):
            return com
        members = tuple(e for e in com.entity_ids if e not in f.hidden)
        return Community(com.id, f"Community {com.id}", members, "", com.level)

    def communities_of(self, entity_id: str) -> list[Community]:
        return [c for c in (self.community(cid) for cid in self.communities) if c is not None and entity_id in c.entity_ids]

    def degree(self, entity_id: str) -> int:
        return int(self.graph.degree(entity_id)) if entity_id in self.graph else 0

    def describe(self) -> dict[str, Any]:
        """Counts of what the graph holds, for ``graphtrail kg info``."""
        types: dict[str, int] = {}
        for _, data in self.graph.nodes(data=True):
            types[data.get("type", "entity")] = types.get(data.get("type", "entity"), 0) + 1
        rels: dict[str, int] = {}
        for _, _, data in self.graph.edges(data=True):
            rels[data.get("relation", "")] = rels.get(data.get("relation", ""), 0) + 1
        return {
            "name": self.name,
            "entities": self.graph.number_of_nodes(),
            "relations": self.graph.number_of_edges(),
            "text_units": len(self.text_units),
            "communities": len(self.communities),
            "entity_types": dict(sorted(types.items(), key=lambda kv: -kv[1])),
            "relation_types": dict(sorted(rels.items(), key=lambda kv: -kv[1])),
        }

    # ------------------------------------------------------------ display
    # One line in a REPL, a small table in a notebook; counts only, so a big graph prints instantly.
    def _summary_rows(self) -> list[tuple[str, Any]]:
        from itertools import islice

        rows: list[tuple[str, Any]] = [
            ("entities", len(self)),
            ("edges", self.graph.number_of_edges()),
            ("text units", len(self.text_units)),
            ("communities", len(self.communities)),
        ]
        if self.graph_filter is not None:
            f = self.graph_filter
            rows.append(("filter", f"{f.label or 'unnamed'}: {len(f.hidden)} hidden, {len(f.masked)} masked, "
                                   f"{len(f.text_blocked)} text-blocked"))
        sample = [self.graph.nodes[n].get("name", n) for n in islice(self.graph.nodes, 5)]
        if sample:
            rows.append(("first entities", ", ".join(map(str, sample)) + (" …" if len(self) > len(sample) else "")))
        return rows

    def __repr__(self) -> str:
        from .._display import one_line, plural

        return one_line(
            "KnowledgeGraph",
            repr(self.name),
            plural(len(self), "entity", "entities"),
            plural(self.graph.number_of_edges(), "edge"),
            plural(len(self.text_units), "text unit"),
            plural(len(self.communities), "community", "communities") if self.communities else None,
            "filtered" if self.graph_filter is not None else None,
        )

    def _repr_html_(self) -> str:
        from .._display import html_summary

        return html_summary(repr(self), self._summary_rows())

    def __rich__(self) -> Any:
        from .._display import rich_summary

        return rich_summary(repr(self), self._summary_rows())
