"""Neo4j, through the official ``neo4j`` driver: read a graph that lives there, or import one.

``bolt://user:password@host:7687`` (or ``neo4j://``, ``+s``/``+ssc`` for TLS).
The password may also come from ``NEO4J_PASSWORD`` (then ``bolt://user@host``);
with neither, no authentication is sent. Query parameters configure the
:class:`~.mapping.GraphMapping` and the database:
``bolt://host:7687?database=kg&label=Person&id=uuid&name=title``.

The password is used to authenticate and nothing else: the graph's name,
``describe()``, every error message and every span carry the URI without it
(:func:`redact`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from ..errors import KGError, MissingDependencyError
from ..fields import DEFAULT_RELATION
from ..graph import KnowledgeGraph
from .cypher import CypherGraph
from .identifiers import check_keys, relationship_type
from .mapping import GraphMapping, quote_name
from .store import Dialect

__all__ = ["Neo4jStore", "Neo4jTarget", "open_neo4j", "write_neo4j", "redact", "parse_neo4j_uri"]

#: Rows per UNWIND batch when importing.
BATCH = 5000


class Neo4jTarget:
    """A parsed Neo4j URI: where to connect, as whom, which database and mapping. Its repr has no password."""

    def __init__(self, uri: str, display: str, auth: tuple[str, str] | None, database: str | None, options: dict[str, str], name: str | None) -> None:
        self.uri, self.display, self.auth, self.database, self.options, self.name = uri, display, auth, database, options, name

    def __repr__(self) -> str:
        return f"Neo4jTarget({self.display!r})"


def redact(uri: str) -> str:
    """``uri`` without its password (and without its query string)."""
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        user = f"{unquote(parts.username)}@" if parts.username else ""
        return f"{parts.scheme}://{user}{host}{port}"
    except ValueError:
        return "<unparseable Neo4j URI>"


def parse_neo4j_uri(uri: str) -> Neo4jTarget:
    """Split ``uri`` into the driver's URI, credentials, database and mapping options."""
    display = redact(uri)
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        raise KGError(f"{display}: not a valid Neo4j URI; expected bolt://user:password@host:7687") from None
    if not parts.hostname:
        raise KGError(f"{display}: no host in the Neo4j URI; expected bolt://user:password@host:7687")
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    database = options.pop("database", None) or (parts.path.strip("/") or None)
    name = options.pop("graph_name", None)
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else os.environ.get("NEO4J_PASSWORD")
    auth = (user or os.environ.get("NEO4J_USERNAME") or "neo4j", password) if password is not None else None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    driver_uri = f"{parts.scheme}://{host}" + (f":{port}" if port else "")
    return Neo4jTarget(driver_uri, display, auth, database, options, name)


def _scrub(text: str, target: Neo4jTarget) -> str:
    if target.auth and target.auth[1]:
        text = text.replace(target.auth[1], "***")
    return text


def _dialect(m: GraphMapping) -> Dialect:
    L, ID = quote_name(m.entity_label), quote_name(m.id_property)
    ORD = quote_name(m.order_property)
    if m.relation_property:
        rel = f"r.{quote_name(m.relation_property)}"
    else:  # the label as written when the import kept it, else the type
        rel = f"coalesce(r.{quote_name(m.relation_text_property)}, type(r))"
    return Dialect(
        relation_pattern="[r]",
        relation_expr=rel,
        unit_entity_ids_expr=f"coalesce(u.entity_ids, [(u)-[:{quote_name(m.mentions_type)}]->(x:{L}) | x.{ID}])",
        community_members_expr=f"coalesce(c.entity_ids, [(x:{L})-[:{quote_name(m.member_type)}]->(c) | x.{ID}])",
        order_expr_entity=f"e.{ORD}, e.{ID}",
        order_expr_relation=f"r.{ORD}, {rel}, b.{ID}",
        order_expr_unit=f"u.{ORD}, u.{ID}",
        order_expr_community=f"c.{ORD}, c.{ID}",
        scope_by_visible=True,
    )


def _import_neo4j() -> Any:
    try:
        import neo4j
    except ImportError as exc:
        raise MissingDependencyError("Neo4j graphs need the neo4j driver: pip install 'graphtrail[graphdb]'") from exc
    return neo4j


class Neo4jStore:
    """A driver for one Neo4j database; the driver pools connections and is safe across threads."""

    backend = "neo4j"

    def __init__(self, target: Neo4jTarget, mapping: GraphMapping) -> None:
        neo4j = _import_neo4j()
        self.target = target
        self.display = target.display
        self.mapping = mapping
        self.dialect = _dialect(mapping)
        self._neo4j = neo4j
        try:
            self._driver = neo4j.GraphDatabase.driver(
                target.uri, auth=target.auth, user_agent="graphtrail", notifications_min_severity="OFF"
            )
            self._driver.verify_connectivity()
        except Exception as exc:  # noqa: BLE001 - the driver raises many types; all mean "cannot use it"
            self.close()
            raise KGError(f"{target.display}: cannot connect to Neo4j ({self._describe(exc)})") from None

    def _describe(self, exc: BaseException) -> str:
        return _scrub(f"{type(exc).__name__}: {exc}", self.target)

    def rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        try:
            # An auto-commit read in a short-lived session: one round trip (RUN and PULL pipelined), where a
            # managed transaction adds BEGIN and COMMIT. Sessions are cheap (pooled connections), one per call
            # because a session is not thread-safe and views are used from many threads.
            with self._driver.session(database=self.target.database, default_access_mode=self._neo4j.READ_ACCESS) as session:
                return [list(values) for values in session.run(query, params or {}).values()]
        except self._neo4j.exceptions.Neo4jError as exc:
            raise KGError(f"{self.display}: query failed ({self._describe(exc)})") from None
        except self._neo4j.exceptions.DriverError as exc:
            raise KGError(f"{self.display}: Neo4j unavailable ({self._describe(exc)})") from None

    def iter_rows(self, query: str, params: dict[str, Any] | None = None) -> Iterator[list[Any]]:
        """The rows of ``query`` as the driver fetches them (a batch at a time); stopping early discards the rest."""
        try:
            with self._driver.session(database=self.target.database, default_access_mode=self._neo4j.READ_ACCESS) as session:
                for record in session.run(query, params or {}):
                    yield list(record.values())
        except self._neo4j.exceptions.Neo4jError as exc:
            raise KGError(f"{self.display}: query failed ({self._describe(exc)})") from None
        except self._neo4j.exceptions.DriverError as exc:
            raise KGError(f"{self.display}: Neo4j unavailable ({self._describe(exc)})") from None

    def write(self, query: str, params: dict[str, Any] | None = None) -> None:
        try:
            self._driver.execute_query(query, params or {}, database_=self.target.database)
        except (self._neo4j.exceptions.Neo4jError, self._neo4j.exceptions.DriverError) as exc:
            raise KGError(f"{self.display}: write failed ({self._describe(exc)})") from None

    def close(self) -> None:
        driver = getattr(self, "_driver", None)
        if driver is not None:
            driver.close()


def open_neo4j(uri: str, *, mapping: GraphMapping | None = None, name: str | None = None) -> CypherGraph:
    """Read the graph at ``uri`` (see the module docstring); nothing is written to the database."""
    target = parse_neo4j_uri(uri)
    mapping = (mapping or GraphMapping()).with_options(target.options)
    store = Neo4jStore(target, mapping)
    kg = CypherGraph(store, name or target.name or target.display)
    n_entities = kg._shared.entity_count()
    if n_entities == 0:
        store.close()
        raise KGError(
            f"{target.display}: no :{mapping.entity_label} nodes with a '{mapping.id_property}' property; "
            "import a graph (graphtrail kg import GRAPH --to bolt://...) or map your schema (?label=...&id=...&name=...)"
        )
    _warn_without_index(store, mapping)
    from .search import LABEL_INDEX_MAX_ENTITIES

    # Up to a size, search ranks with the label index in this process (see .search); a larger graph asks
    # the full-text indexes, and is told once if it has none.
    kg._shared.fulltext = n_entities > LABEL_INDEX_MAX_ENTITIES and _has_fulltext_index(store, mapping)
    kg._shared.fulltext_grams = kg._shared.fulltext and _online(store, mapping, "GRAMS_INDEX")
    return kg


def _fulltext_statement(m: GraphMapping) -> str:
    from .search import fulltext_statement

    return fulltext_statement(quote_name(m.entity_label), quote_name(m.name_property), quote_name(m.aliases_property))


def _online(store: Neo4jStore, mapping: GraphMapping, which: str) -> bool:
    """Whether the full-text index :mod:`.search` names ``which`` exists on the entity label and is online."""
    from . import search

    name = getattr(search, which)
    wanted = mapping.name_property if which == "FULLTEXT_INDEX" else search.GRAMS_PROPERTY
    try:
        rows = store.rows(
            "SHOW FULLTEXT INDEXES YIELD name, labelsOrTypes, properties, state WHERE name = $name "
            "RETURN labelsOrTypes, properties, state",
            {"name": name},
        )
    except KGError:
        return False  # no privilege to list indexes
    return bool(rows) and mapping.entity_label in (rows[0][0] or []) and wanted in (rows[0][1] or []) and rows[0][2] == "ONLINE"


def _has_fulltext_index(store: Neo4jStore, mapping: GraphMapping) -> bool:
    """Whether entity search can use the full-text index; if not, one warning with the statement that creates it."""
    from .search import warn_missing_fulltext

    if _online(store, mapping, "FULLTEXT_INDEX"):
        return True
    warn_missing_fulltext(store.display, _fulltext_statement(mapping))
    return False


def _warn_without_index(store: Neo4jStore, mapping: GraphMapping) -> None:
    """Lookups by id scan every entity without an index: say so once, with the statement that fixes it."""
    try:
        rows = store.rows("SHOW INDEXES YIELD labelsOrTypes, properties RETURN labelsOrTypes, properties")
    except KGError:
        return  # no privilege to list indexes: nothing to say
    if any(mapping.entity_label in (labels or []) and (props or [None])[0] == mapping.id_property for labels, props in rows):
        return
    warnings.warn(
        f"{store.display}: no index on :{mapping.entity_label}({mapping.id_property}); every tool call scans all entities. "
        f"Create one: CREATE INDEX FOR (e:{quote_name(mapping.entity_label)}) ON (e.{quote_name(mapping.id_property)})",
        stacklevel=3,
    )


#: Most entity ids (memberships, mentions) one import transaction links: Neo4j bounds a transaction's memory
#: (``dbms.memory.transaction.total.max``), and 500 communities of a million-edge graph hold every entity.
LINKS_PER_BATCH = 20_000


def _batches(rows: Iterable[dict[str, Any]], size: int = BATCH, links: int | None = None) -> Iterator[list[dict[str, Any]]]:
    """Rows in batches of ``size``, or fewer when their ``ids`` lists hold more than ``links`` ids in all."""
    batch: list[dict[str, Any]] = []
    weight = 0
    for row in rows:
        batch.append(row)
        weight += len(row["ids"]) if links else 0
        if len(batch) >= size or (links and weight >= links):
            yield batch
            batch, weight = [], 0
    if batch:
        yield batch


def write_neo4j(kg: KnowledgeGraph | CypherGraph, uri: str, *, mapping: GraphMapping | None = None) -> str:
    """Write ``kg`` into the Neo4j database at ``uri`` in graphtrail's mapping; returns the password-free URI.

    Refuses a database that already holds :class:`GraphMapping.entity_label`
    nodes (never overwrite). Creates uniqueness constraints on the ids first, so
    the lookups the tools make are index seeks, and the full-text index entity
    search queries (:mod:`.search`). Batches of :data:`BATCH` rows.
    """
    target = parse_neo4j_uri(uri)
    m = (mapping or GraphMapping()).with_options(target.options)
    check_keys(kg, target.display)  # before the first write: refused whole, never half-imported
    store = Neo4jStore(target, m)
    try:
        L, ID = quote_name(m.entity_label), quote_name(m.id_property)
        TU, COM = quote_name(m.text_unit_label), quote_name(m.community_label)
        ORD = quote_name(m.order_property)
        existing = store.rows(f"MATCH (e:{L}) RETURN count(e) > 0")[0][0]
        if existing:
            raise KGError(
                f"{target.display}: already holds :{m.entity_label} nodes; graphtrail never overwrites a graph. "
                "Import into an empty database (?database=NAME) or under another label (?label=NAME)"
            )
        for label in (L, TU, COM):
            store.write(f"CREATE CONSTRAINT IF NOT EXISTS FOR (n:{label}) REQUIRE n.{ID} IS UNIQUE")
        from .search import GRAMS_PROPERTY, gram_tokens, grams_statement

        entity_props = ", ".join(
            f"{quote_name(p)}: row.{k}"
            for p, k in (
                (m.id_property, "id"), (m.name_property, "name"), (m.type_property, "type"),
                (m.description_property, "description"), (m.aliases_property, "aliases"), (m.order_property, "ord"),
                (GRAMS_PROPERTY, "grams"),
            )
        )  # fmt: skip
        for batch in _batches(
            {"id": e.id, "name": e.name, "type": e.type, "description": e.description, "aliases": list(e.aliases), "ord": i,
             "grams": gram_tokens((e.name, *e.aliases))}
            for i, e in enumerate(kg.entities())
        ):
            store.write(f"UNWIND $rows AS row CREATE (:{L} {{{entity_props}}})", {"rows": batch})
        store.write(_fulltext_statement(m))  # what entity search queries (see .search)
        store.write(grams_statement(L))
        by_type: dict[str, list[dict[str, Any]]] = {}
        for i, r in enumerate(kg.relations()):
            # A type is a name in the statement: a safe one derived from the label, which is kept as a property.
            rel_type = "RELATED" if m.relation_property else relationship_type(r.relation or DEFAULT_RELATION)
            by_type.setdefault(rel_type, []).append({"s": r.source, "t": r.target, "r": r.relation, "d": r.description, "ord": i})
        extra = f", {quote_name(m.relation_property or m.relation_text_property)}: row.r"
        for rel_type, rows in by_type.items():
            for batch in _batches(rows):
                store.write(
                    f"UNWIND $rows AS row MATCH (a:{L} {{{ID}: row.s}}), (b:{L} {{{ID}: row.t}}) "
                    f"CREATE (a)-[:{quote_name(rel_type)} {{{quote_name(m.relation_description_property)}: row.d, {ORD}: row.ord{extra}}}]->(b)",
                    {"rows": batch},
                )
        # Links are CREATEd from each new node's distinct ids (``links``): a MERGE would first look for the link
        # among the community's (or unit's) links so far, which a million-edge graph's large communities make slow.
        units = (
            {"id": u.id, "text": u.text, "ids": list(u.entity_ids), "links": list(dict.fromkeys(u.entity_ids)), "ord": i}
            for i, u in enumerate(kg.text_units.values())
        )
        for batch in _batches(units, links=LINKS_PER_BATCH):
            store.write(
                f"UNWIND $rows AS row CREATE (u:{TU} {{{ID}: row.id, {quote_name(m.text_property)}: row.text, entity_ids: row.ids, {ORD}: row.ord}}) "
                f"WITH u, row UNWIND row.links AS eid MATCH (e:{L} {{{ID}: eid}}) CREATE (u)-[:{quote_name(m.mentions_type)}]->(e)",
                {"rows": batch},
            )
        coms = (
            {"id": c.id, "title": c.title, "summary": c.summary, "level": c.level, "ids": list(c.entity_ids),
             "links": list(dict.fromkeys(c.entity_ids)), "ord": i}
            for i, c in enumerate(kg.communities.values())
        )
        for batch in _batches(coms, 500, links=LINKS_PER_BATCH):
            store.write(
                f"UNWIND $rows AS row CREATE (c:{COM} {{{ID}: row.id, title: row.title, summary: row.summary, level: row.level, "
                f"entity_ids: row.ids, {ORD}: row.ord}}) "
                f"WITH c, row UNWIND row.links AS eid MATCH (e:{L} {{{ID}: eid}}) CREATE (e)-[:{quote_name(m.member_type)}]->(c)",
                {"rows": batch},
            )
        store.write("CALL db.awaitIndexes(600)")  # the import is done when its indexes can answer
    finally:
        store.close()
    return target.display
