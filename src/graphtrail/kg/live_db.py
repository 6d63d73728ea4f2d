"""Ablation at the data source for a user's own Neo4j driver or LadybugDB connection.

The exact route (docs/ablations.md, "The exact route") for tools that run
Cypher themselves: wrap the driver or connection once, where the agent is built,
and let the tools use the wrapper as they used the original::

    driver = graphtrail.kg.ablated_driver(neo4j.GraphDatabase.driver(uri, auth=auth))
    conn = graphtrail.kg.ablated_connection(ladybug.Connection(db))

Outside an ablation run (and in baseline runs) every call goes straight to the
original: one ContextVar read. Inside one, each result is read whole and
filtered by node identity (:mod:`.live_records`) before the tool sees it: rows
holding a hidden node are gone, masked nodes carry the mask, text-blocked nodes
no text. The condition comes from :func:`~graphtrail.kg.views.active_filter`,
as for :func:`~graphtrail.kg.ablated_view`, so concurrent runs each see their own.

Neo4j: ``driver.execute_query`` (any ``result_transformer_``), ``driver.session()``
with ``session.run``, ``execute_read`` / ``execute_write`` and explicit
transactions; ``record.data()``, ``result.to_df()`` etc. then read filtered
records (``result.graph()`` is the driver's and is not). The async driver is
refused. LadybugDB: ``conn.execute`` returns a
filtered result with the reading methods of ``QueryResult`` (rows, dicts,
``get_as_df``); the Arrow, Polars, networkx and PyG exports are refused inside
a run rather than answered unfiltered, and so is ``AsyncConnection``.
"""

from __future__ import annotations

import functools
from collections import deque
from typing import Any

from .errors import KGError
from .live_records import NodeFields, Shapes, filter_rows
from .views import GraphFilter, active_filter

__all__ = ["ablated_driver", "ablated_connection", "AblatedDriver", "AblatedConnection"]


def _current() -> GraphFilter | None:
    f = active_filter()
    return None if f is None or f.is_empty else f


def _fields(id_property: str, name_property: str, alias_properties: Any, text_properties: Any) -> NodeFields:
    return NodeFields(id_property, name_property, tuple(alias_properties), tuple(text_properties))


# ---------------------------------------------------------------- Neo4j


@functools.lru_cache(maxsize=1)
def _neo4j_shapes() -> Shapes:
    from neo4j.graph import Node, Path, Relationship

    def kind(v: Any) -> str:
        if isinstance(v, Node):
            return "node"
        if isinstance(v, Relationship):
            return "rel"
        if isinstance(v, Path):
            return "path"
        if isinstance(v, (list, tuple)):
            return "list"
        return "map" if isinstance(v, dict) else "value"

    return Shapes(
        kind=kind,
        props=lambda n: n._properties,  # the driver's own dict: record.data(), to_df() and paths read it
        key=lambda n: n.element_id,
        endpoints=lambda r: tuple(n.element_id for n in (r.start_node, r.end_node) if n is not None),
        endpoint_nodes=lambda r: (r.start_node, r.end_node),
        path_parts=lambda p: (p.nodes, p.relationships),
        null_removes=True,
    )


_RESOLVE_NEO4J = "MATCH (n) WHERE elementId(n) IN $keys RETURN elementId(n) AS key, n[$prop] AS id"


class AblatedDriver:
    """A Neo4j driver whose results honour the current ablation condition (see the module docstring)."""

    def __init__(self, driver: Any, fields: NodeFields) -> None:
        self._driver = driver
        self._fields = fields

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)

    def __enter__(self) -> AblatedDriver:
        self._driver.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._driver.__exit__(*exc)

    def _resolve(self, keys: set[Any], database: str | None) -> dict[Any, str | None]:
        records = self._driver.execute_query(_RESOLVE_NEO4J, {"keys": sorted(keys), "prop": self._fields.id_property},
                                             database_=database).records
        return {r["key"]: (None if r["id"] is None else str(r["id"])) for r in records}

    def _filter(self, result: Any, graph_filter: GraphFilter, database: str | None) -> Any:
        """Read ``result`` whole and leave only the filtered records in it (every Result method then reads those)."""
        from neo4j import Record

        if not hasattr(result, "_buffer_all") or not hasattr(result, "_record_buffer"):
            raise KGError("this neo4j driver's Result cannot be filtered by graphtrail (neo4j>=5.20 is supported)")
        result._buffer_all()
        keys = list(result.keys())
        rows = filter_rows((r.values() for r in result._record_buffer), graph_filter, _neo4j_shapes(), self._fields,
                           lambda missing: self._resolve(missing, database))
        result._record_buffer = deque(Record(zip(keys, row)) for row in rows)
        return result

    def execute_query(self, query_: Any, parameters_: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        graph_filter = _current()
        if graph_filter is None:
            return self._driver.execute_query(query_, parameters_, **kwargs)
        from neo4j import Result

        transform = kwargs.get("result_transformer_", Result.to_eager_result)
        database = kwargs.get("database_")
        kwargs["result_transformer_"] = lambda result: transform(self._filter(result, graph_filter, database))
        return self._driver.execute_query(query_, parameters_, **kwargs)

    def session(self, **kwargs: Any) -> _AblatedSession:
        return _AblatedSession(self._driver.session(**kwargs), self, kwargs.get("database"))


class _Runs:
    """What a session and a transaction share: ``run`` filtered, everything else the original's."""

    def __init__(self, inner: Any, owner: AblatedDriver, database: str | None) -> None:
        self._inner = inner
        self._owner = owner
        self._database = database

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> Any:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._inner.__exit__(*exc)

    def __iter__(self) -> Any:
        return iter(self._inner)

    def run(self, query: Any, parameters: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        result = self._inner.run(query, parameters, **kwargs)
        graph_filter = _current()
        return result if graph_filter is None else self._owner._filter(result, graph_filter, self._database)


class _AblatedTransaction(_Runs):
    pass


class _AblatedSession(_Runs):
    def begin_transaction(self, *args: Any, **kwargs: Any) -> _AblatedTransaction:
        return _AblatedTransaction(self._inner.begin_transaction(*args, **kwargs), self._owner, self._database)

    def _managed(self, work: Any) -> Any:
        @functools.wraps(work)  # keeps @unit_of_work's timeout and metadata
        def run_with(tx: Any, *args: Any, **kwargs: Any) -> Any:
            return work(_AblatedTransaction(tx, self._owner, self._database), *args, **kwargs)

        return run_with

    def execute_read(self, transaction_function: Any, *args: Any, **kwargs: Any) -> Any:
        return self._inner.execute_read(self._managed(transaction_function), *args, **kwargs)

    def execute_write(self, transaction_function: Any, *args: Any, **kwargs: Any) -> Any:
        return self._inner.execute_write(self._managed(transaction_function), *args, **kwargs)


def ablated_driver(driver: Any, *, id_property: str = "id", name_property: str = "name",
                   alias_properties: tuple[str, ...] = ("aliases", "alias"),
                   text_properties: tuple[str, ...] = ("description", "text", "summary")) -> AblatedDriver:
    """Wrap a ``neo4j`` driver so every result read inside an ablation run is filtered by node identity.

    ``id_property`` is the node property holding the entity id the evaluation
    hides and masks by; ``name_property`` and ``alias_properties`` are what a
    mask replaces; ``text_properties`` what masking and text-blocking empty.
    Outside ablation runs the wrapper passes every call through unchanged.
    Raises :class:`~graphtrail.kg.KGError` for the async driver, which it cannot filter.
    """
    _refuse_async(driver, "ablated_driver", "neo4j's async driver (AsyncGraphDatabase)")
    return AblatedDriver(driver, _fields(id_property, name_property, alias_properties, text_properties))


def _refuse_async(source: Any, wrapper: str, what: str) -> None:
    """An async driver's results are coroutines: filtering them as sync ones would pass them on unfiltered."""
    import inspect

    if inspect.iscoroutinefunction(getattr(type(source), "execute_query", None)) or \
            inspect.iscoroutinefunction(getattr(type(source), "execute", None)):
        raise KGError(f"{wrapper} cannot filter {what}: wrap a sync driver/connection, or ablate in your own "
                      f"query with graphtrail.kg.active_filter() (docs/ablations.md, 'The exact route')")


# ---------------------------------------------------------------- LadybugDB


def _lb_key(internal: dict[str, Any]) -> tuple[Any, Any]:
    return internal["offset"], internal["table"]


def _lb_kind(v: Any) -> str:
    if isinstance(v, dict):
        if "_SRC" in v and "_DST" in v:
            return "rel"
        if "_NODES" in v and "_RELS" in v:
            return "path"
        return "node" if "_ID" in v and "_LABEL" in v else "map"
    return "list" if isinstance(v, list) else "value"


_LADYBUG_SHAPES = Shapes(
    kind=_lb_kind,
    props=lambda n: n,  # a node is a dict of its properties plus _ID and _LABEL
    key=lambda n: _lb_key(n["_ID"]),
    endpoints=lambda r: (_lb_key(r["_SRC"]), _lb_key(r["_DST"])),
    endpoint_nodes=lambda r: (),
    path_parts=lambda p: (p["_NODES"], p["_RELS"]),
)


class FilteredQueryResult:
    """The rows of a LadybugDB ``QueryResult`` after the filter, read the same ways (rows, dicts, a DataFrame)."""

    def __init__(self, rows: list[list[Any]], columns: list[str], types: list[str]) -> None:
        self._rows = rows
        self._columns = columns
        self._types = types
        self._at = 0
        self.as_dict = False
        self._closed = False

    def __iter__(self) -> FilteredQueryResult:
        return self

    def __next__(self) -> Any:
        if self.has_next():
            return self.get_next()
        raise StopIteration

    def __enter__(self) -> FilteredQueryResult:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def has_next(self) -> bool:
        return self._at < len(self._rows)

    def get_next(self) -> Any:
        if not self.has_next():
            raise RuntimeError("no more rows in the query result")
        row = self._rows[self._at]
        self._at += 1
        return dict(zip(self._columns, row)) if self.as_dict else row

    def get_n(self, count: int) -> list[Any]:
        out = []
        while self.has_next() and len(out) < count:
            out.append(self.get_next())
        return out

    def get_all(self) -> list[Any]:
        return list(self)

    def get_num_tuples(self) -> int:
        return len(self._rows)

    def get_column_names(self) -> list[str]:
        return list(self._columns)

    def get_column_data_types(self) -> list[str]:
        return list(self._types)

    def get_schema(self) -> dict[str, str]:
        return dict(zip(self._columns, self._types))

    def rows_as_dict(self, state: bool = True) -> FilteredQueryResult:
        self.as_dict = state
        return self

    def reset_iterator(self) -> None:
        self._at = 0

    def get_as_df(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self._rows[self._at:], columns=self._columns)

    def close(self) -> None:
        self._closed = True

    def is_closed(self) -> bool:
        return self._closed

    def _refused(self, *args: Any, **kwargs: Any) -> Any:
        raise KGError("this QueryResult export is not filtered by graphtrail in an ablation run; read rows with "
                      "get_all(), iteration, rows_as_dict() or get_as_df()")

    get_as_arrow = get_as_pl = get_as_networkx = get_as_torch_geometric = _refused


class AblatedConnection:
    """A LadybugDB connection whose results honour the current ablation condition (see the module docstring)."""

    def __init__(self, conn: Any, fields: NodeFields) -> None:
        from .backends.identifiers import cypher_name

        ident = cypher_name(fields.id_property, "id property")  # checked, backtick-quoted; values stay parameters
        self._conn = conn
        self._fields = fields
        self._resolve_query = f"MATCH (n) WHERE n.{ident} IN $hidden RETURN id(n), n.{ident}"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def _resolve(self, graph_filter: GraphFilter) -> dict[Any, str | None]:
        result = self._conn.execute(self._resolve_query, {"hidden": sorted(graph_filter.hidden)})
        try:
            return {_lb_key(internal): str(eid) for internal, eid in result.get_all()}
        finally:
            result.close()

    def _filter(self, result: Any, graph_filter: GraphFilter) -> FilteredQueryResult:
        try:
            columns, types = result.get_column_names(), result.get_column_data_types()
            rows = result.get_all()
        finally:
            result.close()
        if rows and isinstance(rows[0], dict):
            rows = [[row[c] for c in columns] for row in rows]
        kept = filter_rows(rows, graph_filter, _LADYBUG_SHAPES, self._fields, lambda missing: self._resolve(graph_filter))
        return FilteredQueryResult(kept, columns, types)

    def execute(self, query: Any, parameters: dict[str, Any] | None = None) -> Any:
        result = self._conn.execute(query, parameters)
        graph_filter = _current()
        if graph_filter is None:
            return result
        if isinstance(result, list):
            return [self._filter(r, graph_filter) for r in result]
        return self._filter(result, graph_filter)


def ablated_connection(conn: Any, *, id_property: str = "id", name_property: str = "name",
                       alias_properties: tuple[str, ...] = ("aliases", "alias"),
                       text_properties: tuple[str, ...] = ("description", "text", "summary")) -> AblatedConnection:
    """Wrap a ``ladybug.Connection`` so every result read inside an ablation run is filtered by node identity.

    The arguments mean what they mean for :func:`ablated_driver`. ``id_property``
    must be a plain identifier (it is written into the one query that finds
    hidden relationship endpoints; the ids themselves are parameters).
    """
    _refuse_async(conn, "ablated_connection", "LadybugDB's AsyncConnection")
    return AblatedConnection(conn, _fields(id_property, name_property, alias_properties, text_properties))
