"""The LadybugDB half of :mod:`.live_db`: a condition's queries run on a copy of the database holding it.

LadybugDB allows one write transaction at a time per database, so the Neo4j
mechanism (each query in a write transaction that is rolled back) would queue
every ablated query of every concurrent run behind one writer, and deleting a
hub's relationships again for each query is slow. Measured at concurrency 8
(``benchmarks/live_db_ablation.py``, 100k edges, 200 ms of model time between
queries, a shared 2-core machine at load ~15-18), against unablated queries:
rolled-back transactions 6.1x, a copy per condition 5.3x (13.1x and 11.3x
without model time; an earlier copy that never closed its copies, 1.06x against
4.6x). Both pay for deleting the hidden hubs' relationships; a copy pays it once
per condition, in parallel with the other runs. So, inside an ablation run,
``execute``:

- finds or makes the condition's copy: the database file (and its write-ahead
  log, so what was committed but not yet checkpointed is in it) copied into a
  scratch folder beside it (named and locked as :mod:`.backends.scratch` makes
  them: removed when done, swept after a kill), opened, and the
  condition applied *in the copy*, in a transaction that stays open for the
  copy's life and is never committed (:func:`~.live_ablate.ablation_statements`). Copies are kept per condition
  (:data:`COPIES` at most, least recently used closed first), so the runs and
  trials of one condition share one;
- runs the query on the copy's connection and returns the database's own
  ``QueryResult`` (every export works).

The original file is only ever read: a process killed mid-run leaves it as it
was, and its scratch folder is removed by the next wrapper. Each condition has
its own database, so concurrent runs never see each other's ablations and
never wait for a writer. A database without a file (in memory) cannot be
copied: there each query runs in a write transaction that is rolled back, one
at a time.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

from .errors import KGError
from .live_ablate import NodeFields, ablation_statements, current_filter, masked_names_read, refuse_transaction_control
from .views import GraphFilter

__all__ = ["AblatedConnection", "COPIES"]

#: Condition copies a wrapper keeps open (an evaluation at concurrency 8 runs at most 8 conditions at once).
COPIES = 16
#: Each copy's page buffer; its address space is capped too, so many copies can be open at once.
COPY_BUFFER_BYTES = 128 << 20
COPY_MAX_DB_BYTES = 1 << 36

_LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()
_FOLDERS = threading.Lock()


def _writer_lock(database: Any) -> threading.Lock:
    """One lock per open database in this process: its single writer slot (the in-memory fallback)."""
    with _LOCKS_GUARD:
        lock = _LOCKS.get(database)
        if lock is None:
            lock = _LOCKS[database] = threading.Lock()
        return lock


def _close(result: Any) -> None:
    for r in result if isinstance(result, list) else [result]:
        r.close()


def _node_properties(conn: Any) -> frozenset[str]:
    """Every node property of the database (LadybugDB refuses SET on a property no table has)."""
    names: set[str] = set()
    tables = conn.execute("CALL show_tables() RETURN name, type")
    node_tables = [name for name, kind in tables.get_all() if kind == "NODE"]
    tables.close()
    for table in node_tables:
        literal = "'" + table.replace("\\", "\\\\").replace("'", "\\'") + "'"  # CALL takes literals only
        info = conn.execute(f"CALL table_info({literal}) RETURN name")
        names.update(row[0] for row in info.get_all())
        info.close()
    return frozenset(names)


def _statements(conn: Any, graph_filter: GraphFilter, fields: NodeFields, present: frozenset[str]) -> list[Any]:
    """The condition's statements, after reading the masked nodes' names (an id that spells one gets a digest)."""
    read = masked_names_read(graph_filter, fields, present=present)
    names: list[Any] = []
    if read is not None:
        result = conn.execute(*read)
        names = [tuple(row) for row in result.get_all()]
        result.close()
    return ablation_statements(graph_filter, fields, dialect="ladybug", present=present, names=names)


def _locked_folder(parent: Path, stack: contextlib.ExitStack) -> Path:
    """A scratch folder as :mod:`.backends.scratch` makes them (locked while open, swept after a kill).

    Not :func:`~.backends.scratch.scratch_folder` itself: a copy outlives the
    call that made it, and that context also installs signal handlers for its
    duration, which must not stay installed between calls.
    """
    import fcntl

    from .backends.scratch import LOCK, PREFIX, sweep

    with _FOLDERS:  # no sweep in this process between a folder's creation and its lock
        sweep(parent)  # the copies of a process that was killed
        folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
        stack.callback(shutil.rmtree, folder, True)
        fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        stack.callback(os.close, fd)
        fcntl.flock(fd, fcntl.LOCK_EX)
    return folder


class _Copy:
    """One condition's database: a copy of the file with the condition committed, removed on close."""

    def __init__(self, source: Path, graph_filter: GraphFilter, fields: NodeFields) -> None:
        import ladybug

        self._stack = contextlib.ExitStack()
        try:
            parent = source.parent if os.access(source.parent, os.W_OK) else Path(tempfile.gettempdir())
            target = _locked_folder(parent, self._stack) / source.name
            shutil.copyfile(source, target)
            wal = source.with_name(source.name + ".wal")
            if wal.exists():
                shutil.copyfile(wal, target.with_name(target.name + ".wal"))
            self.db = ladybug.Database(str(target), buffer_pool_size=COPY_BUFFER_BYTES, max_db_size=COPY_MAX_DB_BYTES)
            self._stack.callback(self.db.close)
            self.conn = ladybug.Connection(self.db)
            self._stack.callback(self.conn.close)
            present = _node_properties(self.conn)
            # Applied in a transaction that stays open for the copy's life and is never committed: no
            # write-ahead log to write now, no checkpoint when the copy closes (each took ~0.1-0.8 s).
            _close(self.conn.execute("BEGIN TRANSACTION"))
            self._stack.callback(_rollback, self.conn)
            for statement, params in _statements(self.conn, graph_filter, fields, present):
                _close(self.conn.execute(statement, params))
        except BaseException:
            self._stack.close()
            raise
        self.lock = threading.Lock()  # one connection per copy; the runs of one condition take turns

    def close(self) -> None:
        self._stack.close()


def _rollback(conn: Any) -> None:
    with contextlib.suppress(RuntimeError):  # "No active transaction": a failed query ended it
        _close(conn.execute("ROLLBACK"))


class AblatedConnection:
    """A LadybugDB connection whose queries, inside an ablation run, read the condition's data (see :mod:`.live_db`)."""

    def __init__(self, conn: Any, fields: NodeFields) -> None:
        self._conn = conn
        self._fields = fields
        self._copies: OrderedDict[GraphFilter, _Copy] = OrderedDict()
        self._making: dict[GraphFilter, threading.Lock] = {}
        self._guard = threading.Lock()
        self._own: Any = None  # the in-memory fallback's connection, used under the writer lock only
        self._finalizer = weakref.finalize(self, _close_copies, self._copies, self._guard)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def close(self) -> None:
        """Close the condition copies (their folders are removed), then the connection."""
        self._finalizer()
        self._conn.close()

    def execute(self, query: Any, parameters: dict[str, Any] | None = None) -> Any:
        graph_filter = current_filter()
        if graph_filter is None:
            return self._conn.execute(query, parameters)
        database = getattr(self._conn, "database", None)
        if database is None:
            raise KGError("ablated_connection needs a ladybug.Connection (its .database is what is ablated)")
        path = getattr(database, "database_path", None)
        if not path or str(path) == ":memory:" or not Path(path).is_file():
            return self._rolled_back(database, graph_filter, query, parameters)
        refuse_transaction_control(query)  # it would end the transaction holding the condition
        copy = self._copy(Path(path), graph_filter)
        with copy.lock:
            try:
                return copy.conn.execute(query, parameters)
            except Exception:
                self._discard(graph_filter, copy)  # a failed query rolled the condition back with it
                raise

    def _discard(self, graph_filter: GraphFilter, copy: _Copy) -> None:
        with self._guard:
            if self._copies.get(graph_filter) is copy:
                del self._copies[graph_filter]
        threading.Thread(target=copy.close, daemon=True, name="graphtrail-close-copy").start()

    def _copy(self, source: Path, graph_filter: GraphFilter) -> _Copy:
        with self._guard:
            found = self._copies.get(graph_filter)
            if found is not None:
                self._copies.move_to_end(graph_filter)
                return found
            making = self._making.setdefault(graph_filter, threading.Lock())
        with making:  # one copy per condition, however many runs ask at once
            with self._guard:
                found = self._copies.get(graph_filter)
            if found is None:
                found = _Copy(source, graph_filter, self._fields)
                with self._guard:
                    self._copies[graph_filter] = found
                    self._making.pop(graph_filter, None)
                    evicted = [self._copies.popitem(last=False)[1] for _ in range(len(self._copies) - COPIES)]
                for old in evicted:  # closed aside: the run that asked for a new copy does not wait
                    threading.Thread(target=_close_when_free, args=(old,), daemon=True,
                                     name="graphtrail-close-copy").start()
            return found

    def _rolled_back(self, database: Any, graph_filter: GraphFilter, query: Any,
                     parameters: dict[str, Any] | None) -> Any:
        """An in-memory database: the query in a write transaction applying the condition, always rolled back."""
        import ladybug

        refuse_transaction_control(query)
        with _writer_lock(database):
            if self._own is None:
                self._own = ladybug.Connection(database)
            conn = self._own
            _close(conn.execute("BEGIN TRANSACTION"))
            try:
                statements = _statements(conn, graph_filter, self._fields, _node_properties(conn))
                for statement, params in statements:
                    _close(conn.execute(statement, params))
                return conn.execute(query, parameters)
            finally:
                try:
                    _close(conn.execute("ROLLBACK"))
                except RuntimeError as exc:
                    if "No active transaction" not in str(exc):  # a failed query already rolled it back
                        raise


def _close_when_free(copy: _Copy) -> None:
    with copy.lock:  # not while a query reads it
        copy.close()


def _close_copies(copies: OrderedDict[GraphFilter, _Copy], guard: threading.Lock) -> None:
    with guard:
        found = list(copies.values())
        copies.clear()
    for copy in found:
        with contextlib.suppress(Exception):
            copy.close()
