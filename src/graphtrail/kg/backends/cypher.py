"""A knowledge graph that lives in a graph database, behind the :class:`KnowledgeGraph` API.

:class:`CypherGraph` answers the same reads the seven graph tools, the
ablations and the report make of an in-memory
:class:`~graphtrail.kg.KnowledgeGraph` (``entity``, ``out_relations``,
``text_units_for``, ``community`` ...) with Cypher queries against a
:class:`~graphtrail.kg.backends.store.GraphStore` (LadybugDB or Neo4j).

Ablations happen *in the query*: a filtered view passes the hidden, masked and
text-blocked ids as query parameters, and masked entities come back from the
database already carrying their placeholder name. So "removed" means exactly
what it means in memory, on every backend. Lookups go through the id (the
primary key in LadybugDB, an indexed property in Neo4j), so a tool call never
scans the graph; ``entities()`` (what entity search ranks) is the one full read.
(The filters sit after a ``WITH``: written as a plain ``WHERE`` on the
neighbour, LadybugDB's planner answers with a hash join over a node-table scan.)

What stays in memory: the community table (one row per community, read once,
or computed with the same seeded Leiden as in memory when the database has
none) and, only when something asks for ``kg.graph``, a networkx copy.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on use: networkx costs a second at start-up, and only .graph needs it
    import networkx as nx

from ..fields import parse_aliases
from ..graph import KnowledgeGraph
from ..records import Community, EntityRecord, Relation, TextUnit
from ..views import MASK_PLACEHOLDER, GraphFilter
from .mapping import quote_name
from .store import GraphStore

__all__ = ["CypherGraph"]

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
#: Filters whose query parameters are kept (concurrent replays each hold one).
_PARAM_CACHE = 64
_MASK_PREFIX = f"{MASK_PLACEHOLDER} "


def _aliases(value: Any) -> tuple[str, ...]:
    return tuple(parse_aliases(value))  # one parser for every source of aliases


def _id_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):  # a graph written by someone else: one id, never split on a character
        return (value,) if value else ()
    return tuple(str(x) for x in value if x is not None and str(x) != "")


class _Queries:
    """Every query, written once from the store's mapping and dialect.

    ``by_visible``: the view's scope is the list of visible ids (``$visible``)
    instead of the hidden ones (``$hidden``), for a filter hiding most of the
    graph, whose hidden list would otherwise travel with every query. Then
    ``$withheld`` holds the masked, text-blocked and hidden ids that are no
    entity of the graph, and a unit's id counts as hidden when it is an entity
    (an index lookup) outside ``$visible``: exactly the ids the hidden list held.
    """

    def __init__(self, store: GraphStore, by_visible: bool = False) -> None:
        m, d = store.mapping, store.dialect
        L, ID = quote_name(m.entity_label), quote_name(m.id_property)
        NAME, TYPE = quote_name(m.name_property), quote_name(m.type_property)
        DESC, ALIASES = quote_name(m.description_property), quote_name(m.aliases_property)
        RDESC = quote_name(m.relation_description_property)
        TU, TEXT, MENTIONS = quote_name(m.text_unit_label), quote_name(m.text_property), quote_name(m.mentions_type)
        COM = quote_name(m.community_label)
        rel, relpat = d.relation_expr, d.relation_pattern

        def shown(v: str) -> str:  # entity node v is in the view
            return f"{v}.{ID} IN $visible" if by_visible else f"NOT {v}.{ID} IN $hidden"

        # A unit is withheld when it mentions any hidden, masked or text-blocked entity.
        if by_visible:
            withheld_id = f"x IN w OR (NOT x IN $visible AND EXISTS {{ MATCH (h:{L} {{{ID}: x}}) }})"
        else:
            withheld_id = "x IN w"

        def entity(v: str) -> str:
            return (
                f"{v}.{ID}, CASE WHEN {v}.{ID} IN $masked THEN $mask_prefix + coalesce({v}.{NAME}, {v}.{ID}) "
                f"ELSE coalesce({v}.{NAME}, {v}.{ID}) END, "
                f"coalesce({v}.{TYPE}, 'entity'), "
                f"CASE WHEN {v}.{ID} IN $masked OR {v}.{ID} IN $blocked THEN '' ELSE coalesce({v}.{DESC}, '') END, "
                f"CASE WHEN {v}.{ID} IN $masked THEN NULL ELSE {v}.{ALIASES} END"
            )

        self.entity = f"MATCH (e:{L} {{{ID}: $id}}) WHERE {shown('e')} RETURN {entity('e')}"
        self.entities = f"MATCH (e:{L}) WHERE {shown('e')} RETURN {entity('e')} ORDER BY {d.order_expr_entity}"
        # What the search's label index holds: every entity's labels, no description (which may be long).
        self.labels = (
            f"MATCH (e:{L}) RETURN e.{ID}, coalesce(e.{NAME}, e.{ID}), coalesce(e.{TYPE}, 'entity'), e.{ALIASES} "
            f"ORDER BY {d.order_expr_entity}"
        )
        # Search: records of a few ids (primary-key lookups), the masked ones, and (Neo4j) full-text hits.
        self.entities_in = f"UNWIND $ids AS i MATCH (e:{L} {{{ID}: i}}) WHERE {shown('e')} RETURN {entity('e')}"
        self.masked_entities = f"UNWIND $masked AS i MATCH (e:{L} {{{ID}: i}}) WHERE {shown('e')} RETURN {entity('e')}"
        # Full-text candidates in one round trip: the hits of the words index (and of the bigram index), how many
        # each index returned (so the caller can tell "the filter ate them" from "the index ran out"), and the
        # visible ones of the wanted type, labels only (the winners' records are read afterwards).
        keep = (
            f"e:{L} AND {shown('e')} AND NOT e.{ID} IN $masked "
            f"AND ($type = '' OR toLower(coalesce(e.{TYPE}, 'entity')) = $type) "
            f"| [e.{ID}, coalesce(e.{NAME}, e.{ID}), coalesce(e.{TYPE}, 'entity'), '', e.{ALIASES}]"
        )
        words = "CALL db.index.fulltext.queryNodes($index, $lucene, {limit: $k}) YIELD node WITH collect(node) AS words "
        self.fulltext = f"{words}RETURN size(words), 0, [e IN words WHERE {keep}], []"
        self.fulltext_grams = (
            f"{words}CALL () {{ CALL db.index.fulltext.queryNodes($grams_index, $grams, {{limit: $k_grams}}) YIELD node "
            f"RETURN collect(node) AS grams }} "
            f"RETURN size(words), size(grams), [e IN words WHERE {keep}], [e IN grams WHERE {keep}]"
        )  # the subquery aggregates alone: one row even when an index has no hit
        self.entity_ids = f"MATCH (e:{L}) WHERE {shown('e')} RETURN e.{ID} ORDER BY {d.order_expr_entity}"
        self.count = f"MATCH (e:{L}) WHERE {shown('e')} RETURN count(*)"
        self.out = (
            f"MATCH (a:{L} {{{ID}: $id}})-{relpat}->(b:{L}) WITH a, r, b WHERE {shown('a')} AND {shown('b')} "
            f"RETURN b.{ID}, {rel}, coalesce(r.{RDESC}, '') ORDER BY {d.order_expr_relation}"
        )
        self.into = (
            f"MATCH (b:{L})-{relpat}->(a:{L} {{{ID}: $id}}) WITH a, r, b WHERE {shown('a')} AND {shown('b')} "
            f"RETURN b.{ID}, {rel}, coalesce(r.{RDESC}, '') ORDER BY {d.order_expr_relation}"
        )
        self.out_degree = f"MATCH (a:{L} {{{ID}: $id}})-{relpat}->(b:{L}) WITH b WHERE {shown('b')} RETURN count(*)"
        self.in_degree = f"MATCH (b:{L})-{relpat}->(a:{L} {{{ID}: $id}}) WITH b WHERE {shown('b')} RETURN count(*)"
        self.relations = (
            f"MATCH (a:{L})-{relpat}->(b:{L}) WHERE {shown('a')} AND {shown('b')} "
            f"RETURN a.{ID}, {rel}, b.{ID}, coalesce(r.{RDESC}, '') ORDER BY {d.order_expr_relation}"
        )
        ids = d.unit_entity_ids_expr
        self.unit = (
            f"WITH $withheld AS w MATCH (u:{TU} {{{ID}: $id}}) WITH u, w, {ids} AS ids "
            f"WHERE NOT any(x IN ids WHERE {withheld_id}) RETURN u.{ID}, coalesce(u.{TEXT}, ''), ids"
        )
        self.units_for = (
            f"WITH $withheld AS w MATCH (u:{TU})-[:{MENTIONS}]->(e:{L} {{{ID}: $id}}) "
            f"WITH u, e, w, {ids} AS ids WHERE {shown('e')} AND NOT any(x IN ids WHERE {withheld_id}) "
            f"RETURN u.{ID}, coalesce(u.{TEXT}, ''), ids ORDER BY {d.order_expr_unit}"
        )
        self.raw_unit = f"MATCH (u:{TU} {{{ID}: $id}}) RETURN u.{ID}, coalesce(u.{TEXT}, ''), {ids}"
        self.raw_units = f"MATCH (u:{TU}) RETURN u.{ID}, coalesce(u.{TEXT}, ''), {ids} ORDER BY {d.order_expr_unit}"
        self.unit_ids = f"MATCH (u:{TU}) RETURN u.{ID} ORDER BY {d.order_expr_unit}"
        self.unit_count = f"MATCH (u:{TU}) RETURN count(*)"
        self.communities = (
            f"MATCH (c:{COM}) RETURN c.{ID}, c.title, c.summary, c.level, {d.community_members_expr} "
            f"ORDER BY {d.order_expr_community}"
        )
        self.community_count = f"MATCH (c:{COM}) RETURN count(*)"
        self.entity_types = f"MATCH (e:{L}) RETURN coalesce(e.{TYPE}, 'entity'), count(*)"
        self.relation_types = f"MATCH (a:{L})-{relpat}->(b:{L}) RETURN {rel}, count(*)"
        self.params = {q: tuple(dict.fromkeys(_PARAM.findall(q))) for q in vars(self).values() if isinstance(q, str)}


class _Shared:
    """What every view of one database graph shares: the store, the queries, the caches."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.queries = _Queries(store)
        #: Queries scoped by the visible ids, for filters hiding most entities (where the dialect allows).
        self.visible_queries = _Queries(store, by_visible=True) if store.dialect.scope_by_visible else None
        self._all_ids: frozenset[str] | None = None
        self._entity_count: int | None = None
        self.lock = threading.RLock()  # re-entered: loading communities makes an unfiltered view
        self.communities: dict[str, Community] | None = None
        self.communities_by_entity: dict[str, list[str]] | None = None
        self.graph: nx.MultiDiGraph | None = None
        #: Entity search: whether it asks the database's full-text index (a Neo4j graph too large for the label
        #: index, :data:`.search.LABEL_INDEX_MAX_ENTITIES`), else the label index, built by the warm-up or the first search.
        self.fulltext = False
        self.fulltext_grams = False
        self.label_index: Any = None
        #: Held while the label index is built (seconds on a large graph): only searches wait for it.
        self.label_lock = threading.Lock()
        #: What the warm-up did once it ended (:mod:`.warmup`), or ``None`` when it did not run (or still runs).
        self.warmup: dict[str, Any] | None = None
        #: The background warm-up started at open (:class:`.warmup.Warmup`), or ``None``.
        self.warming: Any = None
        #: Per filter, the visible masked entities (searchable by their placeholder, which no index holds).
        self.masked_records: dict[GraphFilter, list[EntityRecord]] = {}
        self.community_seed = 0
        self.community_resolution = 1.0
        self._params: dict[GraphFilter | None, dict[str, Any]] = {}

    def entity_count(self) -> int:
        """How many entities the database holds (counted once)."""
        if self._entity_count is None:
            self._entity_count = int(self.store.rows(self.queries.count, {"hidden": []})[0][0])
        return self._entity_count

    def all_ids(self) -> frozenset[str]:
        """Every entity id in the database (read once, when a filter first hides most of them)."""
        ids = self._all_ids
        if ids is None:
            ids = self._all_ids = frozenset(str(r[0]) for r in self.store.rows(self.queries.entity_ids, {"hidden": []}))
        return ids

    def params_for(self, f: GraphFilter | None) -> dict[str, Any]:
        """The query parameters of a filter, built once per filter.

        A view is made per tool call, and a replay makes hundreds with the same
        filter; under full isolation its id lists hold nearly the whole graph.
        Then (when the dialect allows) the parameters hold the visible ids
        instead, fewer than the hidden ones, and ``by_visible`` is set: the
        view asks :attr:`visible_queries`. Either way the same records come back.
        """
        found = self._params.get(f)
        if found is None:
            masked = sorted(f.masked) if f else []
            blocked = sorted(f.text_blocked) if f else []
            found = {"masked": masked, "blocked": blocked, "mask_prefix": _MASK_PREFIX}
            all_ids = self.all_ids() if f and self.visible_queries is not None and 2 * len(f.hidden) > self.entity_count() else None
            if f and all_ids is not None and 2 * len(f.hidden & all_ids) > len(all_ids):
                found["visible"] = sorted(all_ids - f.hidden)
                found["withheld"] = sorted((f.hidden - all_ids) | f.masked | f.text_blocked)
                found["by_visible"] = True
            else:
                hidden = sorted(f.hidden) if f else []
                found["hidden"] = hidden
                found["withheld"] = sorted(set(hidden) | set(masked) | set(blocked))
            with self.lock:
                if len(self._params) >= _PARAM_CACHE:
                    self._params.pop(next(iter(self._params)))
                self._params[f] = found
        return found


class _TextUnits(Mapping[str, TextUnit]):
    """``kg.text_units`` read from the database: the units as stored, not filtered (as in memory)."""

    def __init__(self, kg: "CypherGraph") -> None:
        self._kg = kg

    def __getitem__(self, unit_id: str) -> TextUnit:
        rows = self._kg._rows("raw_unit", id=str(unit_id))
        if not rows:
            raise KeyError(unit_id)
        return _unit(rows[0])

    def __iter__(self) -> Iterator[str]:
        return iter([str(r[0]) for r in self._kg._rows("unit_ids")])

    def __len__(self) -> int:
        return int(self._kg._rows("unit_count")[0][0])

    def values(self) -> list[TextUnit]:  # type: ignore[override]  # one query, not one per key
        return [_unit(r) for r in self._kg._rows("raw_units")]


def _unit(row: list[Any]) -> TextUnit:
    return TextUnit(str(row[0]), str(row[1] or ""), _id_list(row[2]))


class CypherGraph:
    """A read-only knowledge graph in a graph database, with the :class:`KnowledgeGraph` read API.

    Get one with :func:`graphtrail.kg.load_kg` (``"graph.lbug"``,
    ``"lbug:path"``, ``"bolt://..."``). Views from :meth:`filtered` share the
    connection; close it with :meth:`close` (or a ``with`` block) when done.
    """

    def __init__(self, store: GraphStore, name: str, graph_filter: GraphFilter | None = None, *, _shared: _Shared | None = None) -> None:
        self._shared = _shared or _Shared(store)
        self.name = name
        self.graph_filter = graph_filter
        self._params = self._shared.params_for(graph_filter)
        self.text_units: Mapping[str, TextUnit] = _TextUnits(self)

    # ------------------------------------------------------------ plumbing
    @property
    def store(self) -> GraphStore:
        return self._shared.store

    @property
    def backend(self) -> str:
        """``"ladybug"`` or ``"neo4j"``."""
        return str(getattr(self.store, "backend", type(self.store).__name__))

    def __repr__(self) -> str:
        return f"CypherGraph({self.store.display!r}, filter={self.graph_filter.label if self.graph_filter else None!r})"

    def _rows(self, query: str, **params: Any) -> list[list[Any]]:
        shared = self._shared
        queries = shared.visible_queries if self._params.get("by_visible") else shared.queries
        assert queries is not None  # by_visible is only set when the dialect has them
        text = getattr(queries, query)
        values = {k: params[k] if k in params else self._params[k] for k in queries.params[text]}
        return shared.store.rows(text, values)

    def _iter_rows(self, query: str, **params: Any) -> Iterator[list[Any]]:
        """:meth:`_rows`, streamed where the store can (a long read that its reader may abandon midway)."""
        stream = getattr(self.store, "iter_rows", None)
        if stream is None:
            yield from self._rows(query, **params)
            return
        shared = self._shared
        queries = shared.visible_queries if self._params.get("by_visible") else shared.queries
        assert queries is not None
        text = getattr(queries, query)
        yield from stream(text, {k: params[k] if k in params else self._params[k] for k in queries.params[text]})

    def close(self) -> None:
        """Close the database connection (views share it: close once, from the graph you loaded).

        A warm-up still running in the background ends first, after its question in flight.
        """
        warming = self._shared.warming
        if warming is not None:
            from .warmup import CLOSED

            warming.stop(CLOSED)
        self.store.close()

    def __enter__(self) -> "CypherGraph":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ views
    def filtered(self, graph_filter: GraphFilter | None) -> "CypherGraph":
        """A view whose every query hides, masks and withholds as ``graph_filter`` says."""
        if graph_filter is None or graph_filter.is_empty:
            return self if self.graph_filter is None else CypherGraph(self.store, self.name, None, _shared=self._shared)
        return CypherGraph(self.store, self.name, graph_filter, _shared=self._shared)

    def _hidden(self, entity_id: str) -> bool:
        return self.graph_filter is not None and entity_id in self.graph_filter.hidden

    # ------------------------------------------------------------ entities and relations
    def __contains__(self, entity_id: object) -> bool:
        return isinstance(entity_id, str) and self.entity(entity_id) is not None

    def __len__(self) -> int:
        return int(self._rows("count")[0][0])

    def entity_ids(self) -> Iterator[str]:
        return iter([str(r[0]) for r in self._rows("entity_ids")])

    def _record(self, row: list[Any]) -> EntityRecord:
        eid, name = str(row[0]), str(row[1])
        f = self.graph_filter
        if f is not None and eid in f.masked and name.startswith(_MASK_PREFIX):
            # The query marks a masked entity with the prefix and its real name; the placeholder is written here,
            # as in memory (GraphFilter.masked_name): an id that spells the name gets a digest, not the id.
            name = f.masked_name(eid, name[len(_MASK_PREFIX):])
        return EntityRecord(eid, name, str(row[2] or "entity"), str(row[3] or ""), _aliases(row[4]))

    def entity(self, entity_id: str) -> EntityRecord | None:
        """The entity as the current view shows it, or ``None`` if it is not visible."""
        rows = self._rows("entity", id=str(entity_id))
        return self._record(rows[0]) if rows else None

    def entities(self) -> Iterator[EntityRecord]:
        return iter([self._record(r) for r in self._rows("entities")])

    def entities_by_id(self, ids: list[str]) -> dict[str, EntityRecord]:
        """The visible ones among ``ids``, as this view shows them (one query; none for no ids)."""
        if not ids:
            return {}
        return {r.id: r for r in map(self._record, self._rows("entities_in", ids=[str(i) for i in ids]))}

    def masked_records(self) -> list[EntityRecord]:
        """The visible masked entities, showing their placeholder names (read once per filter: a replay searches often)."""
        f, cache = self.graph_filter, self._shared.masked_records
        if f is None or not f.masked:
            return []
        found = cache.get(f)
        if found is None:
            found = [self._record(r) for r in self._rows("masked_entities")]
            with self._shared.lock:
                if len(cache) >= _PARAM_CACHE:
                    cache.pop(next(iter(cache)))
                cache[f] = found
        return list(found)

    def fulltext_candidates(self, lucene: str, k: int, grams: str, k_grams: int, type_: str) -> tuple[int, int, list[EntityRecord], list[EntityRecord]]:
        """Full-text hits (Neo4j): how many each index returned, and the visible ones of type ``type_`` (labels only).

        ``grams`` empty: the words index only. One query, whatever the indexes.
        """
        from .search import FULLTEXT_INDEX, GRAMS_INDEX

        if grams:
            row = self._rows("fulltext_grams", index=FULLTEXT_INDEX, lucene=lucene, k=k, grams_index=GRAMS_INDEX, grams=grams, k_grams=k_grams, type=type_)[0]
        else:
            row = self._rows("fulltext", index=FULLTEXT_INDEX, lucene=lucene, k=k, type=type_)[0]
        return int(row[0]), int(row[1]), [self._record(r) for r in row[2]], [self._record(r) for r in row[3]]

    def search_entities(self, query: str, *, type: str | None = None, limit: int = 10) -> list[tuple[EntityRecord, float, str]]:
        """Visible entities matching ``query``, best first, ranked as in memory (see :mod:`.search`)."""
        from .search import any_search

        warming = self._shared.warming
        if warming is not None and warming.running and not warming.in_warmup_thread():
            from .warmup import SEARCHED

            warming.stop(SEARCHED, wait=False)  # the users warm it from here; on LadybugDB the label index is awaited below
        return any_search(self, self._shared, query, type=type, limit=limit)

    def relations(self) -> Iterator[Relation]:
        return iter([Relation(str(s), str(r), str(t), str(d or "")) for s, r, t, d in self._rows("relations")])

    def out_relations(self, entity_id: str) -> list[Relation]:
        return [Relation(entity_id, str(r), str(t), str(d or "")) for t, r, d in self._rows("out", id=str(entity_id))]

    def in_relations(self, entity_id: str) -> list[Relation]:
        return [Relation(str(s), str(r), entity_id, str(d or "")) for s, r, d in self._rows("into", id=str(entity_id))]

    def degree(self, entity_id: str) -> int:
        """Visible edges at the entity (a self-loop counts twice, as in networkx)."""
        if self._hidden(entity_id):
            return 0
        return int(self._rows("out_degree", id=entity_id)[0][0]) + int(self._rows("in_degree", id=entity_id)[0][0])

    # ------------------------------------------------------------ text units
    def text_unit(self, unit_id: str) -> TextUnit | None:
        """The text unit, or ``None`` if missing or withheld by the current view."""
        rows = self._rows("unit", id=str(unit_id))
        return _unit(rows[0]) if rows else None

    def text_units_for(self, entity_id: str) -> list[TextUnit]:
        """The visible text units that mention ``entity_id``."""
        return [_unit(r) for r in self._rows("units_for", id=str(entity_id))]

    # ------------------------------------------------------------ communities
    @property
    def communities(self) -> dict[str, Community]:
        """Every community as stored (read once), or computed in memory when the database has none."""
        shared = self._shared
        if shared.communities is None:
            with shared.lock:
                if shared.communities is None:
                    shared.communities = self._load_communities()
        return shared.communities

    def _load_communities(self) -> dict[str, Community]:
        found: dict[str, Community] = {}
        for cid, title, summary, level, members in self._unfiltered()._rows("communities"):
            cid = str(cid)
            found[cid] = Community(cid, str(title or cid), _id_list(members), str(summary or ""), int(level or 0))
        if not found:
            # Same seeded Leiden, on the same graph in the same order, as load_kg runs in memory.
            scratch = KnowledgeGraph(graph=self.graph_unfiltered())
            scratch.compute_communities(seed=self._shared.community_seed, resolution=self._shared.community_resolution)
            found = dict(scratch.communities)
        return found

    def _communities_by_entity(self) -> dict[str, list[str]]:
        shared = self._shared
        if shared.communities_by_entity is None:
            index: dict[str, list[str]] = {}
            for cid, com in self.communities.items():
                for eid in dict.fromkeys(com.entity_ids):
                    index.setdefault(eid, []).append(cid)
            shared.communities_by_entity = index
        return shared.communities_by_entity

    def community(self, community_id: str) -> Community | None:
        """The community as the current view shows it (see :meth:`KnowledgeGraph.community`)."""
        com = self.communities.get(community_id)
        if com is None:
            return None
        f = self.graph_filter
        if f is None or not (f.hidden | f.masked | f.text_blocked) & set(com.entity_ids):
            return com
        members = tuple(e for e in com.entity_ids if e not in f.hidden)
        return Community(com.id, f"Community {com.id}", members, "", com.level)

    def communities_of(self, entity_id: str) -> list[Community]:
        found = (self.community(cid) for cid in self._communities_by_entity().get(entity_id, ()))
        return [c for c in found if c is not None and entity_id in c.entity_ids]

    def compute_communities(self, seed: int = 0, resolution: float = 1.0) -> None:
        """Recompute the communities in memory (seeded Leiden); the database is not written."""
        shared = self._shared
        with shared.lock:
            shared.community_seed, shared.community_resolution = seed, resolution
            scratch = KnowledgeGraph(graph=self.graph_unfiltered())
            scratch.compute_communities(seed=seed, resolution=resolution)
            shared.communities, shared.communities_by_entity = dict(scratch.communities), None

    # ------------------------------------------------------------ networkx and summary
    def _unfiltered(self) -> "CypherGraph":
        return self if self.graph_filter is None else self.filtered(None)

    def graph_unfiltered(self) -> nx.MultiDiGraph:
        """The whole graph as a networkx MultiDiGraph, read once and cached (for code that wants networkx)."""
        shared = self._shared
        if shared.graph is None:
            import networkx as nx

            base = self._unfiltered()
            g = nx.MultiDiGraph()
            for e in base.entities():
                g.add_node(e.id, name=e.name, type=e.type, description=e.description, aliases=e.aliases)
            for r in base.relations():
                g.add_edge(r.source, r.target, key=r.relation, relation=r.relation, description=r.description)
            shared.graph = g
        return shared.graph

    @property
    def graph(self) -> nx.MultiDiGraph:
        """A networkx view, as :attr:`KnowledgeGraph.graph` (the first use reads the whole graph into memory)."""
        full = self.graph_unfiltered()
        if self.graph_filter is None or not self.graph_filter.hidden:
            return full
        hidden = self.graph_filter.hidden
        import networkx as nx

        return nx.subgraph_view(full, filter_node=lambda n: n not in hidden)  # type: ignore[return-value]

    def describe(self, communities: bool = False) -> dict[str, Any]:
        """Counts of what the graph holds, for ``graphtrail kg info`` (aggregate queries, no full read).

        Communities are counted as stored; ``communities=True`` computes them
        first when the database has none (Leiden over the whole graph).
        """
        base = self._unfiltered()
        if communities or self._shared.communities is not None:
            n_communities = len(self.communities)
        else:
            n_communities = int(base._rows("community_count")[0][0])
        types = {str(t): int(n) for t, n in base._rows("entity_types")}
        rels = {str(r): int(n) for r, n in base._rows("relation_types")}
        return {
            "name": self.name,
            "backend": self.backend,
            "location": self.store.display,
            "entities": len(base),
            "relations": sum(rels.values()),
            "text_units": len(self.text_units),
            "communities": n_communities,
            "entity_types": dict(sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))),
            "relation_types": dict(sorted(rels.items(), key=lambda kv: (-kv[1], kv[0]))),
        }
