"""LadybugDB (the maintained fork of Kùzu): an embedded, on-disk graph database.

One file (``graph.lbug``) holds the graph; reading it needs no server and no
more memory than the pages a query touches. graphtrail owns the schema:

- ``Entity(id PRIMARY KEY, name, type, description, aliases, ord)`` — aliases as
  a JSON list, ``ord`` the insertion order;
- ``RELATION(FROM Entity TO Entity, relation, description, ord)``;
- ``TextUnit(id PRIMARY KEY, text, entity_ids, ord)`` and
  ``MENTIONS(FROM TextUnit TO Entity)`` for the indexed "units of this entity";
- ``Community(id PRIMARY KEY, title, summary, level, entity_ids, ord)``;
- ``GraphInfo(key PRIMARY KEY, value)``: the graph's name and the schema version.

Id lists are stored as one string joined by :data:`~.cypher.LIST_SEPARATOR`.
Every lookup goes through a primary key (a hash index), so a tool call reads
the entity and its adjacency, never the whole graph.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from ..errors import KGError, MissingDependencyError
from ..graph import KnowledgeGraph
from .cypher import LIST_SEPARATOR, CypherGraph
from .mapping import GraphMapping
from .store import Dialect

__all__ = ["LadybugStore", "open_ladybug", "write_ladybug", "SCHEMA_VERSION", "LADYBUG_SUFFIX"]

SCHEMA_VERSION = "1"
LADYBUG_SUFFIX = ".lbug"

_MAPPING = GraphMapping(relation_property="relation")
_DIALECT = Dialect(
    relation_pattern="[r:RELATION]",
    relation_expr="r.relation",
    unit_entity_ids_expr="string_split(u.entity_ids, $sep)",
    community_members_expr="string_split(c.entity_ids, $sep)",
    order_expr_entity="e.ord",
    order_expr_relation="r.ord",
    order_expr_unit="u.ord",
    order_expr_community="c.ord",
)

_SCHEMA = (
    "CREATE NODE TABLE Entity(id STRING PRIMARY KEY, name STRING, type STRING, description STRING, aliases STRING, ord INT64)",
    "CREATE REL TABLE RELATION(FROM Entity TO Entity, relation STRING, description STRING, ord INT64)",
    "CREATE NODE TABLE TextUnit(id STRING PRIMARY KEY, text STRING, entity_ids STRING, ord INT64)",
    "CREATE REL TABLE MENTIONS(FROM TextUnit TO Entity)",
    "CREATE NODE TABLE Community(id STRING PRIMARY KEY, title STRING, summary STRING, level INT64, entity_ids STRING, ord INT64)",
    "CREATE NODE TABLE GraphInfo(key STRING PRIMARY KEY, value STRING)",
)


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


def _write_csv(path: Path, header: list[str], rows: Any) -> int:
    n = 0
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow(row)
            n += 1
    return n


def write_ladybug(kg: KnowledgeGraph, path: str | os.PathLike[str]) -> Path:
    """Write ``kg`` (entities, relations, text units, communities) as a new LadybugDB file.

    Never overwrites: an existing ``path`` is an error. The database is built
    under a temporary name beside ``path`` and renamed when complete, so an
    interrupted import leaves nothing a later load could mistake for a graph.
    Bulk-loaded with ``COPY`` from CSV, so a million edges take seconds.
    """
    lb = _import_ladybug()
    path = Path(path)
    if path.exists():
        raise KGError(f"{path} already exists; graphtrail never overwrites it: pick a new path or delete it first")
    if not path.parent.is_dir():
        raise KGError(f"{path.parent}: no such folder")
    work = Path(tempfile.mkdtemp(prefix=".graphtrail-import-", dir=path.parent))
    try:
        db_path = work / path.name
        ids = set(kg.entity_ids())
        sep = LIST_SEPARATOR
        files = {
            "Entity": _write_csv(
                work / "entity.csv",
                ["id", "name", "type", "description", "aliases", "ord"],
                ([e.id, e.name, e.type, e.description, json.dumps(list(e.aliases), ensure_ascii=False), i] for i, e in enumerate(kg.entities())),
            ),
            "RELATION": _write_csv(
                work / "relation.csv",
                ["from", "to", "relation", "description", "ord"],
                ([r.source, r.target, r.relation, r.description, i] for i, r in enumerate(kg.relations())),
            ),
            "TextUnit": _write_csv(
                work / "textunit.csv",
                ["id", "text", "entity_ids", "ord"],
                ([u.id, u.text, sep.join(u.entity_ids), i] for i, u in enumerate(kg.text_units.values())),
            ),
            "MENTIONS": _write_csv(
                work / "mentions.csv",
                ["from", "to"],
                ([u.id, e] for u in kg.text_units.values() for e in dict.fromkeys(u.entity_ids) if e in ids),
            ),
            "Community": _write_csv(
                work / "community.csv",
                ["id", "title", "summary", "level", "entity_ids", "ord"],
                ([c.id, c.title, c.summary, c.level, sep.join(c.entity_ids), i] for i, c in enumerate(kg.communities.values())),
            ),
        }
        db = lb.Database(str(db_path))
        conn = lb.Connection(db)
        try:
            for statement in _SCHEMA:
                conn.execute(statement)
            csv_names = {"Entity": "entity", "RELATION": "relation", "TextUnit": "textunit", "MENTIONS": "mentions", "Community": "community"}
            for table, n in files.items():
                if n:
                    source = (work / f"{csv_names[table]}.csv").as_posix().replace("'", "\\'")
                    conn.execute(f"COPY {table} FROM '{source}' (HEADER=true, QUOTE='\"', ESCAPE='\"', DELIM=',', PARALLEL=false)")
            for key, value in (("name", kg.name), ("schema", SCHEMA_VERSION)):
                conn.execute("CREATE (:GraphInfo {key: $k, value: $v})", {"k": key, "v": str(value)})
        except RuntimeError as exc:
            raise KGError(f"{path}: LadybugDB import failed ({exc})") from None
        finally:
            conn.close()
            db.close()
        for leftover in work.glob("*.csv"):
            leftover.unlink()
        produced = [p for p in work.iterdir()]
        if path.exists():
            raise KGError(f"{path} appeared while importing; graphtrail never overwrites it")
        db_path.rename(path)
        for extra in produced:
            if extra != db_path and extra.exists():
                extra.rename(path.with_name(path.name + extra.name[len(db_path.name):]))
        return path
    finally:
        shutil.rmtree(work, ignore_errors=True)
