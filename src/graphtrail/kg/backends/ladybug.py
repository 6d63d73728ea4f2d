"""LadybugDB (the maintained fork of Kùzu): an embedded, on-disk graph database.

One file (``graph.lbug``) holds the graph; reading it needs no server and no
more memory than the pages a query touches. graphtrail owns the schema:

- ``Entity(id PRIMARY KEY, name, type, description, aliases, ord)`` — aliases as
  a JSON list, ``ord`` the insertion order;
- ``RELATION(FROM Entity TO Entity, relation, description, ord)``;
- ``TextUnit(id PRIMARY KEY, text, entity_ids STRING[], ord)`` and
  ``MENTIONS(FROM TextUnit TO Entity)`` for the indexed "units of this entity";
- ``Community(id PRIMARY KEY, title, summary, level, entity_ids STRING[], ord)``;
- ``GraphInfo(key PRIMARY KEY, value)``: the graph's name and the schema version.

Id lists are ``STRING[]`` columns: no separator character, so an id may hold any character.
Every lookup goes through a primary key (a hash index), so a tool call reads
the entity and its adjacency, never the whole graph.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import KGError, MissingDependencyError
from ..graph import KnowledgeGraph
from .cypher import CypherGraph
from .identifiers import check_keys
from .mapping import GraphMapping
from .scratch import LOCK, scratch_folder
from .store import Dialect

__all__ = ["LadybugStore", "open_ladybug", "write_ladybug", "SCHEMA_VERSION", "LADYBUG_SUFFIX"]

SCHEMA_VERSION = "2"  # 2: id lists as STRING[] (1 joined them with a separator character)
LADYBUG_SUFFIX = ".lbug"

_MAPPING = GraphMapping(relation_property="relation")
_DIALECT = Dialect(
    relation_pattern="[r:RELATION]",
    relation_expr="r.relation",
    unit_entity_ids_expr="u.entity_ids",
    community_members_expr="c.entity_ids",
    order_expr_entity="e.ord",
    order_expr_relation="r.ord",
    order_expr_unit="u.ord",
    order_expr_community="c.ord",
)

_SCHEMA = (
    "CREATE NODE TABLE Entity(id STRING PRIMARY KEY, name STRING, type STRING, description STRING, aliases STRING, ord INT64)",
    "CREATE REL TABLE RELATION(FROM Entity TO Entity, relation STRING, description STRING, ord INT64)",
    "CREATE NODE TABLE TextUnit(id STRING PRIMARY KEY, text STRING, entity_ids STRING[], ord INT64)",
    "CREATE REL TABLE MENTIONS(FROM TextUnit TO Entity)",
    "CREATE NODE TABLE Community(id STRING PRIMARY KEY, title STRING, summary STRING, level INT64, entity_ids STRING[], ord INT64)",
    "CREATE NODE TABLE GraphInfo(key STRING PRIMARY KEY, value STRING)",
)
#: Rows converted per step of :meth:`LadybugStore.iter_rows`.
_CHUNK = 4096
#: One bulk load per table, the rows an Arrow table passed as the ``$rows`` parameter.
_COPY = {table: f"COPY {table} FROM $rows" for table in ("Entity", "RELATION", "TextUnit", "MENTIONS", "Community")}


def _import_ladybug() -> Any:
    try:
        import ladybug
    except ImportError as exc:
        raise MissingDependencyError(
            "LadybugDB graphs need the ladybug package: pip install 'graphtrail[graphdb]'"
        ) from exc
    return ladybug


class LadybugStore:
    """A read connection to one ``.lbug`` file; queries are serialised (one connection, many threads)."""

    backend = "ladybug"
    mapping = _MAPPING
    dialect = _DIALECT

    def __init__(self, path: Path, *, read_only: bool = True) -> None:
        lb = _import_ladybug()
        self.path = path
        self.display = str(path)
        try:
            self._db = lb.Database(str(path), read_only=read_only)
            self._conn = lb.Connection(self._db)
        except RuntimeError as exc:
            raise KGError(f"{path}: cannot open as a LadybugDB graph ({exc})") from None
        self._lock = threading.Lock()

    def rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        with self._lock:
            result = self._conn.execute(query, params or {})
            try:
                return result.get_all()  # type: ignore[union-attr, no-any-return]
            finally:
                result.close()  # type: ignore[union-attr]

    def iter_rows(self, query: str, params: dict[str, Any] | None = None) -> Iterator[list[Any]]:
        """The rows of ``query``, a few thousand at a time (the connection is held until the iteration ends)."""
        with self._lock:
            result = self._conn.execute(query, params or {})
            try:
                while result.has_next():  # type: ignore[union-attr]
                    yield from result.get_n(_CHUNK)  # type: ignore[union-attr]
            finally:
                result.close()  # type: ignore[union-attr]

    def close(self) -> None:
        with self._lock:
            for thing in (getattr(self, "_conn", None), getattr(self, "_db", None)):
                if thing is not None:
                    thing.close()


def open_ladybug(path: str | os.PathLike[str], *, name: str | None = None) -> CypherGraph:
    """Open a graph written by :func:`write_ladybug` (``graphtrail kg import ... --to graph.lbug``)."""
    path = Path(path)
    if not path.exists():
        raise KGError(f"{path}: no such LadybugDB graph; create one with: graphtrail kg import GRAPH --to {path}")
    store = LadybugStore(path)
    try:
        info = dict(store.rows("MATCH (i:GraphInfo) RETURN i.key, i.value"))
    except RuntimeError:
        store.close()
        raise KGError(
            f"{path}: a LadybugDB database, but not a graphtrail graph (no GraphInfo table); "
            f"write one with: graphtrail kg import GRAPH --to NEW.lbug"
        ) from None
    if info.get("schema") != SCHEMA_VERSION:
        store.close()
        raise KGError(f"{path}: graph schema {info.get('schema')!r}, this graphtrail reads {SCHEMA_VERSION!r}; re-import it")
    return CypherGraph(store, name or info.get("name") or path.stem)


def _import_pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError as exc:
        raise MissingDependencyError(
            "writing a LadybugDB graph needs the pyarrow package: pip install 'graphtrail[graphdb]'"
        ) from exc
    return pyarrow


def _tables(kg: KnowledgeGraph) -> dict[str, Any]:
    """The graph as one Arrow table per LadybugDB table, in the schema's column order.

    Arrow holds lists as lists and strings as they are (quotes, separators,
    NUL), and reaches ``COPY`` as a query parameter: no file, no path, no
    character that has to be escaped anywhere.
    """
    pa = _import_pyarrow()
    ids = set(kg.entity_ids())
    text, number, id_list = pa.string(), pa.int64(), pa.list_(pa.string())

    def table(columns: list[tuple[str, Any]], rows: Any) -> Any:
        data: list[list[Any]] = [[] for _ in columns]
        for row in rows:
            for column, value in zip(data, row):
                column.append(value)
        return pa.table({name: pa.array(values, type=kind) for (name, kind), values in zip(columns, data)})

    units = list(kg.text_units.values())
    return {
        "Entity": table(
            [("id", text), ("name", text), ("type", text), ("description", text), ("aliases", text), ("ord", number)],
            ([e.id, e.name, e.type, e.description, json.dumps(list(e.aliases), ensure_ascii=False), i] for i, e in enumerate(kg.entities())),
        ),
        "RELATION": table(
            [("from", text), ("to", text), ("relation", text), ("description", text), ("ord", number)],
            ([r.source, r.target, r.relation, r.description, i] for i, r in enumerate(kg.relations())),
        ),
        "TextUnit": table(
            [("id", text), ("text", text), ("entity_ids", id_list), ("ord", number)],
            ([u.id, u.text, list(u.entity_ids), i] for i, u in enumerate(units)),
        ),
        "MENTIONS": table(
            [("from", text), ("to", text)],
            ([u.id, e] for u in units for e in dict.fromkeys(u.entity_ids) if e in ids),
        ),
        "Community": table(
            [("id", text), ("title", text), ("summary", text), ("level", number), ("entity_ids", id_list), ("ord", number)],
            ([c.id, c.title, c.summary, c.level, list(c.entity_ids), i] for i, c in enumerate(kg.communities.values())),
        ),
    }


def _reason(exc: BaseException) -> str:
    """The engine's message without the statement it may quote (first line, bounded)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first[:200]


def write_ladybug(kg: KnowledgeGraph, path: str | os.PathLike[str]) -> Path:
    """Write ``kg`` (entities, relations, text units, communities) as a new LadybugDB file.

    Never overwrites: an existing ``path`` is an error. The database is built in
    a working folder beside ``path`` (:mod:`.scratch`: removed on exit, on
    SIGTERM, or by the next import after a SIGKILL) and renamed when complete,
    so an interrupted import leaves nothing a later load could mistake for a
    graph. Bulk-loaded with ``COPY`` from Arrow tables passed as parameters,
    so a million edges take seconds and no statement holds a value or a path.
    """
    lb = _import_ladybug()
    path = Path(path)
    if path.exists():
        raise KGError(f"{path} already exists; graphtrail never overwrites it: pick a new path or delete it first")
    if not path.parent.is_dir():
        raise KGError(f"{path.parent}: no such folder")
    check_keys(kg, str(path))
    tables = _tables(kg)
    with scratch_folder(path.parent) as work:
        db_path = work / path.name
        try:
            db = lb.Database(str(db_path))
            conn = lb.Connection(db)
        except RuntimeError as exc:
            raise KGError(f"{path}: cannot create a LadybugDB graph ({_reason(exc)})") from None
        try:
            for statement in _SCHEMA:
                conn.execute(statement)
            for table, rows in tables.items():
                if rows.num_rows:
                    conn.execute(_COPY[table], {"rows": rows})
            for key, value in (("name", kg.name), ("schema", SCHEMA_VERSION)):
                conn.execute("CREATE (:GraphInfo {key: $k, value: $v})", {"k": key, "v": str(value)})
        except RuntimeError as exc:
            raise KGError(f"{path}: LadybugDB import failed ({_reason(exc)})") from None
        finally:
            conn.close()
            db.close()
        produced = [p for p in work.iterdir() if p.name != LOCK]
        if path.exists():
            raise KGError(f"{path} appeared while importing; graphtrail never overwrites it")
        db_path.rename(path)
        for extra in produced:
            if extra != db_path and extra.exists():
                extra.rename(path.with_name(path.name + extra.name[len(db_path.name):]))
        return path
