"""A GraphRAG-style knowledge graph: entities, typed relations, text units, communities.

:class:`KnowledgeGraph` stores entities in parallel lists indexed by an integer
node id, and relations as integer arrays with a CSR adjacency (built when first
read, rebuilt after a change; the arrays live in :mod:`graphtrail.kg.store`).
A million-edge graph is a few tens of megabytes
and loads in seconds; a networkx graph of the same size took 2 GB and 22 s.
Entities carry ``name``, ``type``, ``description`` and ``aliases``; a relation
between two entities is keyed by its label (adding the same source, label and
target again replaces its description, as in a ``MultiDiGraph``). Text units
(source passages) and communities sit beside the graph, each linked to entity ids.

What is derived is derived lazily, once:

- ``kg.graph``: a :class:`networkx.MultiDiGraph` *copy*, built on first access,
  for users who want networkx algorithms (changing it does not change ``kg``);
- communities: seeded Leiden, computed when first read if the source had none
  (see :mod:`graphtrail.kg.communities`), and cached beside the graph file;
- the entity search index (:class:`~graphtrail.kg.search.EntityIndex`).

Ablations never copy the graph: :meth:`KnowledgeGraph.filtered` returns a view
whose lookups honour a :class:`~graphtrail.kg.views.GraphFilter`, at a cost
proportional to the response, not to the graph or the filter.

This is the in-memory backend (see :mod:`graphtrail.kg.backends`). It imports
communities and search only inside the methods that need them, and neither of
those imports it back.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .records import Community, EntityRecord, Relation, TextUnit
from .store import _EMPTY_I64, _Store
from .views import GraphFilter

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

    from .search import EntityIndex

__all__ = ["KnowledgeGraph"]


class KnowledgeGraph:
    """Entities, relations, text units and communities, with filtered views.

    Build one with :meth:`add_entity` / :meth:`add_relation` /
    :meth:`add_text_unit` / :meth:`add_community`, or with
    :func:`graphtrail.kg.load_kg`. Implements
    :class:`graphtrail.kg.backends.base.GraphBackend`.
    """

    def __init__(self, graph: "nx.MultiDiGraph | None" = None, *, name: str = "kg", graph_filter: GraphFilter | None = None) -> None:
        self._store = _Store()
        self.name = name
        self.graph_filter = graph_filter
        if graph is not None:
            for node, data in graph.nodes(data=True):
                self.add_entity(node, data.get("name"), data.get("type", "entity"), data.get("description", ""), data.get("aliases", ()))
            for s, t, data in graph.edges(data=True):
                self.add_relation(s, str(data.get("relation", "")), t, data.get("description", ""))

    # ------------------------------------------------------------ building
    def add_entity(
        self,
        entity_id: str,
        name: str | None = None,
        type: str = "entity",
        description: str = "",
        aliases: Iterable[str] = (),
    ) -> None:
        """Add an entity, or replace the attributes of an existing one (it keeps its place)."""
        s = self._store
        eid = str(entity_id)
        values = (name or eid, type or "entity", description or "", tuple(aliases))
        i = s.index.get(eid)
        if i is None:
            s.index[eid] = len(s.ids)
            s.ids.append(eid)
            s.names.append(values[0])
            s.types.append(values[1])
            s.descriptions.append(values[2])
            s.aliases.append(values[3])
        else:
            s.names[i], s.types[i], s.descriptions[i], s.aliases[i] = values
        s.changed()

    def _node(self, entity_id: str) -> int:
        s = self._store
        i = s.index.get(entity_id)
        if i is None:
            self.add_entity(entity_id)
            i = s.index[entity_id]
        return i

    def add_relation(self, source: str, relation: str, target: str, description: str = "") -> None:
        """Add ``source -[relation]-> target``; the same triple again replaces its description."""
        s = self._store
        u, v = self._node(str(source)), self._node(str(target))
        code = s.rel_code.get(relation)
        if code is None:
            code = s.rel_code[relation] = len(s.rel_labels)
            s.rel_labels.append(relation)
        if s.edge_at is None:
            s.commit()
            s.edge_at = {(int(a), int(b), int(c)): e for e, (a, b, c) in enumerate(zip(s.src, s.dst, s.rel))}
        key = (u, v, code)
        e = s.edge_at.get(key)
        if e is None:
            s.edge_at[key] = s.n_edges()
            s.pending.append((u, v, code, description or ""))
        else:
            s.commit()
            if s.edge_desc is None and description:
                s.edge_desc = [""] * len(s.src)
            if s.edge_desc is not None:
                s.edge_desc[e] = description or ""
        s.changed()

    def add_relations_bulk(
        self,
        ids: list[str],
        src: np.ndarray,
        dst: np.ndarray,
        relation_labels: list[str],
        rel: np.ndarray,
        descriptions: list[str] | None = None,
    ) -> None:
        """Add many distinct relations at once, between ``ids`` (added as bare entities when new).

        ``src``/``dst`` index ``ids``; ``rel`` indexes ``relation_labels``. The
        caller guarantees no (source, label, target) repeats, here or in the
        graph already: this is the loaders' fast path, not a merge.
        """
        s = self._store
        s.commit()
        index = s.index
        node = np.empty(len(ids), dtype=np.int64)
        if not index and len(set(ids)) == len(ids):  # a new graph: the ids are the nodes, in order
            s.ids = list(ids)
            s.index = dict(zip(s.ids, range(len(s.ids))))
            s.names = list(s.ids)
            s.types = ["entity"] * len(ids)
            s.descriptions = [""] * len(ids)
            s.aliases = [()] * len(ids)
            node = np.arange(len(ids), dtype=np.int64)
            ids = []
        for k, eid in enumerate(ids):
            i = index.get(eid)
            if i is None:  # a bare entity, as add_relation would add it
                i = index[eid] = len(s.ids)
                s.ids.append(eid)
                s.names.append(eid)
                s.types.append("entity")
                s.descriptions.append("")
                s.aliases.append(())
            node[k] = i
        s.append_edges(node[src], node[dst], relation_labels, rel, descriptions)

    def add_text_unit(self, unit_id: str, text: str, entity_ids: Iterable[str] = ()) -> None:
        s = self._store
        unit = TextUnit(str(unit_id), text, tuple(str(e) for e in entity_ids))
        s.text_units[unit.id] = unit
        for eid in unit.entity_ids:
            s.units_by_entity.setdefault(eid, []).append(unit.id)

    def add_community(
        self, community_id: str, title: str, entity_ids: Iterable[str], summary: str = "", level: int = 0
    ) -> None:
        s = self._store
        s.communities[str(community_id)] = Community(str(community_id), title, tuple(str(e) for e in entity_ids), summary, level)
        s.community_source = None
        s.changed()

    def compute_communities(self, seed: int = 0, resolution: float = 1.0) -> None:
        """Fill :attr:`communities` with seeded Leiden communities of the undirected graph (replacing any)."""
        from .communities import leiden_communities

        s = self._store
        s.communities.clear()
        s.community_source = None
        for com in leiden_communities(self, seed=seed, resolution=resolution):
            s.communities[com.id] = com
        s.changed()

    @property
    def communities_ready(self) -> bool:
        """Whether reading :attr:`communities` is free (loaded, or already computed), i.e. triggers no community detection."""
        return self._store.community_source is None

    # ------------------------------------------------------------ stored collections
    @property
    def text_units(self) -> dict[str, TextUnit]:
        """Every text unit by id, unfiltered (read them through :meth:`text_unit` to honour a filter)."""
        return self._store.text_units

    @property
    def communities(self) -> dict[str, Community]:
        """Every community by id, unfiltered. Reading it may compute them (once; see ``load_kg``)."""
        s = self._store
        if s.community_source is not None:
            with s.lock:  # concurrent replays wait for the one computation instead of reading half of it
                source = s.community_source
                if source is not None:
                    for com in source(self._base()):
                        s.communities[com.id] = com
                    s.community_source = None
                    s.changed()
        return s.communities

    def _base(self) -> "KnowledgeGraph":
        if self.graph_filter is None:
            return self
        base = KnowledgeGraph.__new__(KnowledgeGraph)
        base._store, base.name, base.graph_filter = self._store, self.name, None
        return base

    @property
    def graph(self) -> "nx.MultiDiGraph":
        """The graph as a :class:`networkx.MultiDiGraph`, built on first access (a copy: edit ``kg``, not this).

        On a filtered view, hidden entities are left out (a read-only subgraph view).
        """
        import networkx as nx

        s = self._store
        with s.lock:
            if s._nx is None or s._nx_version != s.version:
                g = nx.MultiDiGraph()
                for i, eid in enumerate(s.ids):
                    g.add_node(eid, name=s.names[i], type=s.types[i], description=s.descriptions[i], aliases=s.aliases[i])
                s.commit()
                for e, (u, v, r) in enumerate(zip(s.src.tolist(), s.dst.tolist(), s.rel.tolist())):
                    label = s.rel_labels[r]
                    g.add_edge(s.ids[u], s.ids[v], key=label, relation=label, description=s.desc(e))
                s._nx, s._nx_version = g, s.version
            full = s._nx
        if self.graph_filter is None or not self.graph_filter.hidden:
            return full
        hidden = self.graph_filter.hidden
        return nx.subgraph_view(full, filter_node=lambda n: n not in hidden)

    # ------------------------------------------------------------ views
    def filtered(self, graph_filter: GraphFilter | None) -> "KnowledgeGraph":
        """A view of this graph as the tools should see it under ``graph_filter``.

        Hidden entities vanish (with their edges and the text units that
        mention them); masked ones keep id and edges but lose name, description
        and text; text-blocked ones keep structure but lose text. Creating a
        view copies nothing.
        """
        if graph_filter is None or graph_filter.is_empty:
            return self if self.graph_filter is None else self._base()
        view = KnowledgeGraph.__new__(KnowledgeGraph)
        view._store, view.name, view.graph_filter = self._store, self.name, graph_filter
        return view

    def _hidden(self) -> frozenset[str]:
        f = self.graph_filter
        return f.hidden if f is not None else frozenset()

    # ------------------------------------------------------------ reading
    def __contains__(self, entity_id: object) -> bool:
        return entity_id in self._store.index and entity_id not in self._hidden()

    def __len__(self) -> int:
        n = self._store.n_entities()
        if self.graph_filter is not None and self.graph_filter.hidden:
            n -= self._store.for_filter(self.graph_filter)["n_hidden"]
        return n

    def entity_ids(self) -> Iterator[str]:
        hidden = self._hidden()
        if not hidden:
            return iter(self._store.ids)
        return (e for e in self._store.ids if e not in hidden)

    def _record(self, i: int) -> EntityRecord:
        s = self._store
        eid = s.ids[i]
        f = self.graph_filter
        if f is not None and eid in f.masked:
            return EntityRecord(eid, f.masked_name(eid, s.names[i]), s.types[i], "", ())  # an id spelling the name: a digest
        description = s.descriptions[i]
        if f is not None and eid in f.text_blocked:
            description = ""
        return EntityRecord(eid, s.names[i], s.types[i], description, s.aliases[i])

    def entity(self, entity_id: str) -> EntityRecord | None:
        """The entity as the current view shows it, or ``None`` if it is not visible."""
        i = self._store.index.get(entity_id)
        if i is None or entity_id in self._hidden():
            return None
        return self._record(i)

    def entities(self) -> Iterator[EntityRecord]:
        hidden = self._hidden()
        for i, eid in enumerate(self._store.ids):
            if eid not in hidden:
                yield self._record(i)

    def _relation(self, e: int) -> Relation:
        s = self._store
        return Relation(s.ids[s.src[e]], s.rel_labels[s.rel[e]], s.ids[s.dst[e]], s.desc(e))

    def relations(self) -> Iterator[Relation]:
        s = self._store
        out_ptr, out_edges, _, _ = s.csr()
        hidden = self._hidden()
        ids, labels = s.ids, s.rel_labels
        src, dst, rel = s.src.tolist(), s.dst.tolist(), s.rel.tolist()
        for e in out_edges.tolist():
            u, v = ids[src[e]], ids[dst[e]]
            if hidden and (u in hidden or v in hidden):
                continue
            yield Relation(u, labels[rel[e]], v, s.desc(e))

    def described_relations(self) -> Iterator[Relation]:
        """The relations with a description, as :meth:`relations` lists them; the others are never built."""
        s = self._store
        _, out_edges, _, _ = s.csr()
        if s.edge_desc is None:
            return
        described = [e for e in out_edges.tolist() if s.edge_desc[e]]
        yield from (r for r in map(self._relation, described) if not (self._hidden() & {r.source, r.target}))

    def _incident(self, entity_id: str, outgoing: bool) -> list[Relation]:
        s = self._store
        i = s.index.get(entity_id)
        hidden = self._hidden()
        if i is None or entity_id in hidden:
            return []
        out_ptr, out_edges, in_ptr, in_edges = s.csr()
        ptr, edges, other = (out_ptr, out_edges, s.dst) if outgoing else (in_ptr, in_edges, s.src)
        found = edges[ptr[i] : ptr[i + 1]]
        if hidden:
            mask = s.for_filter(self.graph_filter)["hidden_mask"]  # type: ignore[arg-type]
            found = found[~mask[other[found]]]
        return [self._relation(e) for e in found.tolist()]

    def out_relations(self, entity_id: str) -> list[Relation]:
        return self._incident(entity_id, True)

    def in_relations(self, entity_id: str) -> list[Relation]:
        return self._incident(entity_id, False)

    def degree(self, entity_id: str) -> int:
        """Edges in and out (a self-loop counts twice), among visible entities."""
        s = self._store
        i = s.index.get(entity_id)
        hidden = self._hidden()
        if i is None or entity_id in hidden:
            return 0
        out_ptr, out_edges, in_ptr, in_edges = s.csr()
        if not hidden:
            return int(out_ptr[i + 1] - out_ptr[i] + in_ptr[i + 1] - in_ptr[i])
        mask = s.for_filter(self.graph_filter)["hidden_mask"]  # type: ignore[arg-type]
        out = out_edges[out_ptr[i] : out_ptr[i + 1]]
        inc = in_edges[in_ptr[i] : in_ptr[i + 1]]
        return int((~mask[s.dst[out]]).sum() + (~mask[s.src[inc]]).sum())

    def neighbor_indices(self, i: int) -> np.ndarray:
        """Integer ids of the entities linked to integer id ``i`` either way (unfiltered; for graph walks)."""
        s = self._store
        out_ptr, out_edges, in_ptr, in_edges = s.csr()
        return np.concatenate([s.dst[out_edges[out_ptr[i] : out_ptr[i + 1]]], s.src[in_edges[in_ptr[i] : in_ptr[i + 1]]]])

    def hop_distances(
        self, sources: Iterable[str], max_depth: int | None = None, until: Collection[str] | None = None
    ) -> dict[str, int]:
        """Undirected hop counts from ``sources`` (breadth-first, stopping after ``max_depth`` hops,
        or once every entity in ``until`` is reached).

        Honours the view's hidden set. This is what the ablations need instead
        of a whole-graph Dijkstra: the walk touches only what lies within reach.
        """
        s = self._store
        out_ptr, out_edges, in_ptr, in_edges = s.csr()
        hidden_mask = s.for_filter(self.graph_filter)["hidden_mask"] if self.graph_filter is not None and self.graph_filter.hidden else None
        dist = np.full(len(s.ids), -1, dtype=np.int64)
        frontier = np.unique(np.asarray([s.index[e] for e in sources if e in self], dtype=np.int64))
        dist[frontier] = 0
        depth = 0
        wanted = np.asarray([s.index[e] for e in until if e in s.index], dtype=np.int64) if until is not None else None
        while len(frontier) and (max_depth is None or depth < max_depth):
            if wanted is not None and (dist[wanted] >= 0).all():
                break
            depth += 1
            outs = [out_edges[out_ptr[i] : out_ptr[i + 1]] for i in frontier.tolist()]
            ins = [in_edges[in_ptr[i] : in_ptr[i + 1]] for i in frontier.tolist()]
            nxt = np.concatenate([s.dst[np.concatenate(outs)], s.src[np.concatenate(ins)]]) if outs else _EMPTY_I64
            nxt = np.sort(nxt)  # then drop repeats below (np.unique hashes: 25x slower on large int arrays)
            nxt = nxt[(np.diff(nxt, prepend=-1) != 0) & (dist[nxt] < 0)]
            if hidden_mask is not None:
                nxt = nxt[~hidden_mask[nxt]]
            dist[nxt] = depth
            frontier = nxt
        reached = np.flatnonzero(dist >= 0)
        return {s.ids[i]: int(dist[i]) for i in reached.tolist()}

    def text_unit(self, unit_id: str) -> TextUnit | None:
        """The text unit, or ``None`` if missing or withheld by the current view."""
        unit = self._store.text_units.get(unit_id)
        if unit is None:
            return None
        f = self.graph_filter
        if f is not None and any(e in f.hidden or e in f.masked or e in f.text_blocked for e in unit.entity_ids):
            return None
        return unit

    def text_units_for(self, entity_id: str) -> list[TextUnit]:
        """The visible text units that mention ``entity_id``."""
        if entity_id not in self:
            return []
        units = (self.text_unit(uid) for uid in self._store.units_by_entity.get(entity_id, ()))
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
        if f is None:
            return com
        derived = self._store.for_filter(f)
        if community_id not in derived["touched"]:
            return com
        shown = derived.setdefault("communities", {})  # built once per filter: members can run to thousands
        view = shown.get(community_id)
        if view is None:
            members = tuple(e for e in com.entity_ids if e not in f.hidden)
            view = shown[community_id] = Community(com.id, f"Community {com.id}", members, "", com.level)
        return view

    def community_touched(self, community_id: str) -> bool:
        """Whether the view's filter hides, masks or text-blocks a member of the community."""
        f = self.graph_filter
        return f is not None and community_id in self._store.for_filter(f)["touched"]

    def communities_of(self, entity_id: str) -> list[Community]:
        """The communities the entity belongs to, as the view shows them (none if it is hidden)."""
        self.communities  # noqa: B018 - computes them on first use
        if entity_id in self._hidden():
            return []
        # A visible member of a community stays a member under any filter (only hidden ones are dropped).
        found = (self.community(cid) for cid in self._store.communities_by_entity().get(entity_id, ()))
        return [c for c in found if c is not None]

    # ------------------------------------------------------------ search
    def entity_index(self) -> "EntityIndex":
        """The search index over every entity, built on first use and after any change."""
        from .search import EntityIndex

        s = self._store
        with s.lock:
            if s._index is None or s._index_version != s.version:
                s._index = EntityIndex(s.ids, s.names, s.types, s.aliases)
                s._index_version = s.version
            return s._index

    def search_entities(self, query: str, *, type: str | None = None, limit: int = 10) -> list[tuple[EntityRecord, float, str]]:
        """Visible entities matching ``query``, best first (see :func:`graphtrail.agents.tools.search_entity_records`)."""
        index = self.entity_index()
        s = self._store
        f = self.graph_filter
        visible = None
        extra: list[tuple[int, str]] = []
        if f is not None and (f.hidden or f.masked):
            derived = s.for_filter(f)
            visible = derived.get("search_visible")
            if visible is None:
                visible = ~derived["hidden_mask"]
                masked = [i for e in f.masked if (i := s.index.get(e)) is not None and e not in f.hidden]
                visible[masked] = False
                derived["search_visible"] = visible
                derived["search_masked"] = sorted(masked)
            extra = derived.get("search_extra")
            if extra is None:  # the placeholders, once per filter (an id spelling its name gets a digest)
                extra = derived["search_extra"] = [(i, f.masked_name(s.ids[i], s.names[i])) for i in derived["search_masked"]]
        return index.search(query, visible=visible, extra=extra, type=type, limit=limit, record=self.entity)

    # ------------------------------------------------------------ summary
    def describe(self, *, communities: bool = False) -> dict[str, Any]:
        """Counts of what the graph holds, for ``graphtrail kg info``.

        Communities are counted only when known already or when
        ``communities=True`` (which computes them if needed): on a large graph
        Community detection is the slowest thing graphtrail does.
        """
        s = self._store
        s.commit()
        types: dict[str, int] = {}
        for t in s.types:
            types[t] = types.get(t, 0) + 1
        rels: dict[str, int] = {}
        hidden = self._hidden()
        relations = self.number_of_relations()
        counts = np.bincount(s.rel, minlength=len(s.rel_labels)) if not hidden else None
        if counts is not None:
            for label, n in zip(s.rel_labels, counts.tolist()):
                if n:
                    rels[label] = rels.get(label, 0) + n
        else:
            for r in self.relations():
                rels[r.relation] = rels.get(r.relation, 0) + 1
        info: dict[str, Any] = {
            "name": self.name,
            "entities": len(self),
            "relations": relations,
            "text_units": len(s.text_units),
        }
        if communities or self.communities_ready:
            info["communities"] = len(self.communities)
        else:
            info["communities"] = "not computed (--communities computes them)"
        info["entity_types"] = dict(sorted(types.items(), key=lambda kv: -kv[1]))
        info["relation_types"] = dict(sorted(rels.items(), key=lambda kv: -kv[1]))
        return info

    def number_of_relations(self) -> int:
        if not self._hidden():
            return self._store.n_edges()
        return sum(1 for _ in self.relations())

    def content_hash(self) -> str:
        """A digest of entities (ids, names, types) and relations: what a derived cache is keyed by."""
        import hashlib

        s = self._store
        s.commit()
        h = hashlib.sha256()
        for column in (s.ids, s.names, s.types, s.rel_labels):
            h.update("\x1f".join(column).encode("utf-8", "surrogatepass"))
            h.update(b"\x1e")
        for array in (s.src, s.dst, s.rel):
            h.update(np.ascontiguousarray(array, dtype=np.int64).tobytes())
        return h.hexdigest()


    # ------------------------------------------------------------ display
    # One line in a REPL, a small table in a notebook; counts only, so a big graph prints instantly.
    def _summary_rows(self) -> list[tuple[str, Any]]:
        from itertools import islice

        rows: list[tuple[str, Any]] = [
            ("entities", len(self)),
            ("edges", self.number_of_relations()),
            ("text units", len(self.text_units)),
            ("communities", len(self.communities) if self.communities_ready else "not computed yet"),
        ]
        if self.graph_filter is not None:
            f = self.graph_filter
            rows.append(("filter", f"{f.label or 'unnamed'}: {len(f.hidden)} hidden, {len(f.masked)} masked, "
                                   f"{len(f.text_blocked)} text-blocked"))
        sample = [r.name for r in islice(self.entities(), 5)]
        if sample:
            rows.append(("first entities", ", ".join(map(str, sample)) + (" …" if len(self) > len(sample) else "")))
        return rows

    def __repr__(self) -> str:
        from .._display import one_line, plural

        return one_line(
            "KnowledgeGraph",
            repr(self.name),
            plural(len(self), "entity", "entities"),
            plural(self.number_of_relations(), "edge"),
            plural(len(self.text_units), "text unit"),
            plural(len(self.communities), "community", "communities") if self.communities_ready and self.communities else None,
            "filtered" if self.graph_filter is not None else None,
        )

    def _repr_html_(self) -> str:
        from .._display import html_summary

        return html_summary(repr(self), self._summary_rows())

    def __rich__(self) -> Any:
        from .._display import rich_summary

        return rich_summary(repr(self), self._summary_rows())
