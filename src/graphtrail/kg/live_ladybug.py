"""The LadybugDB half of :mod:`.live_db`: each query of an ablation run in a write transaction rolled back.

LadybugDB allows one write transaction at a time per database. Inside an
ablation run, ``execute`` takes the database's writer slot (one lock per
database in this process; a write transaction begun elsewhere is waited for),
and on graphtrail's own connection to the same database runs ``BEGIN
TRANSACTION``, the condition's statements (:func:`~.live_ablate.ablation_statements`),
the tool's query, and ``ROLLBACK``. The result is the database's own
``QueryResult``, read after the rollback as any other (rows, DataFrame,
Arrow, networkx). Other connections read the committed data meanwhile
(LadybugDB's MVCC), so concurrent runs never see each other's ablations; a
process killed inside the transaction leaves nothing committed, because
nothing ever is. What the serialisation costs at concurrency 8 is measured
in ``benchmarks/live_db_ablation.py``.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any

from .errors import KGError
from .live_ablate import NodeFields, ablation_statements, current_filter, refuse_transaction_control
from .views import GraphFilter

__all__ = ["AblatedConnection"]

#: How long an ablated query waits for a write transaction begun outside graphtrail (seconds).
WRITER_WAIT_S = 60.0
_BUSY = "Only one write transaction at a time"

_LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def _writer_lock(database: Any) -> threading.Lock:
    """One lock per open database in this process: its single writer slot."""
    with _LOCKS_GUARD:
        lock = _LOCKS.get(database)
        if lock is None:
            lock = _LOCKS[database] = threading.Lock()
        return lock


def _close(result: Any) -> None:
    for r in result if isinstance(result, list) else [result]:
        r.close()


class AblatedConnection:
    """A LadybugDB connection whose queries, inside an ablation run, read the condition's data (see :mod:`.live_db`)."""

    def __init__(self, conn: Any, fields: NodeFields) -> None:
        self._conn = conn
        self._fields = fields
        self._own: Any = None  # graphtrail's connection to the same database, used under the writer lock only
        self._properties: frozenset[str] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, query: Any, parameters: dict[str, Any] | None = None) -> Any:
        graph_filter = current_filter()
        if graph_filter is None:
            return self._conn.execute(query, parameters)
        refuse_transaction_control(query)
        database = getattr(self._conn, "database", None)
        if database is None:
            raise KGError("ablated_connection needs a ladybug.Connection (its .database is where the ablation runs)")
        if getattr(database, "read_only", False):
            raise KGError("ablated_connection cannot ablate a database opened read_only=True: open it read-write "
                          "(graphtrail commits nothing: every ablated query runs in a transaction it rolls back)")
        with _writer_lock(database):
            return self._in_rolled_back_transaction(database, graph_filter, query, parameters)

    def _connection(self, database: Any) -> Any:
        if self._own is None:
            import ladybug

            self._own = ladybug.Connection(database)
        return self._own

    def _node_properties(self, conn: Any) -> frozenset[str]:
        """Every node property of the database (LadybugDB refuses SET on a property no table has); read once."""
        if self._properties is None:
            names: set[str] = set()
            tables = conn.execute("CALL show_tables() RETURN name, type")
            node_tables = [name for name, kind in tables.get_all() if kind == "NODE"]
            tables.close()
            for table in node_tables:
                literal = "'" + table.replace("\\", "\\\\").replace("'", "\\'") + "'"  # CALL takes literals only
                info = conn.execute(f"CALL table_info({literal}) RETURN name")
                names.update(row[0] for row in info.get_all())
                info.close()
            self._properties = frozenset(names)
        return self._properties

    def _begin(self, conn: Any) -> None:
        deadline = time.monotonic() + WRITER_WAIT_S
        while True:
            try:
                _close(conn.execute("BEGIN TRANSACTION"))
                return
            except RuntimeError as exc:  # a write transaction begun outside graphtrail (the user's own)
                if _BUSY not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _in_rolled_back_transaction(self, database: Any, graph_filter: GraphFilter, query: Any,
                                    parameters: dict[str, Any] | None) -> Any:
        conn = self._connection(database)
        statements = ablation_statements(graph_filter, self._fields, dialect="ladybug",
                                         present=self._node_properties(conn))
        self._begin(conn)
        try:
            for statement, params in statements:
                _close(conn.execute(statement, params))
            return conn.execute(query, parameters)
        finally:
            try:
                _close(conn.execute("ROLLBACK"))
            except RuntimeError as exc:
                if "No active transaction" not in str(exc):  # a failed query already rolled it back
                    raise
