"""The Neo4j half of :mod:`.live_db`: every query of an ablation run in a transaction that is rolled back.

Inside an ablation run each query the user's tool runs (``execute_query``,
``session.run``, a managed or explicit transaction) runs in a write
transaction of its own that first applies the condition
(:func:`~.live_ablate.ablation_statements`: hidden nodes deleted, masked ones
renamed, text withheld) and is rolled back once the tool's query has been
read. Neo4j's isolation (read committed) keeps these uncommitted changes to
that one transaction: a concurrent run, ablated or not, never sees them, and
a client killed mid-query leaves a transaction the server rolls back when the
connection drops. Two runs deleting next to the same node wait for each
other's locks (for a query's length); a deadlock Neo4j detects is retried.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .live_ablate import NodeFields, ablation_statements, current_filter, masked_names_read
from .views import GraphFilter

__all__ = ["AblatedDriver"]

T = TypeVar("T")

#: How often a transaction that failed with a transient error (a deadlock between two runs' deletions) is retried.
RETRIES = 20
#: After this many failed attempts, a query's retries run one at a time in this process (they cannot deadlock
#: each other then): eight runs deleting around the same hubs otherwise keep choosing each other as victims.
SERIAL_AFTER = 2
_SERIAL = threading.Lock()


def _apply(tx: Any, graph_filter: GraphFilter, fields: NodeFields) -> None:
    read = masked_names_read(graph_filter, fields)
    names = [tuple(r.values()) for r in tx.run(*read)] if read is not None else []
    for statement, params in ablation_statements(graph_filter, fields, dialect="neo4j", names=names):
        tx.run(statement, params).consume()


def _rolled_back(session: Any, graph_filter: GraphFilter, fields: NodeFields, work: Callable[[Any], T],
                 **begin: Any) -> T:
    """``work(tx)`` in a transaction holding the condition's data, always rolled back; transient errors retried."""
    from neo4j.exceptions import TransientError

    for attempt in range(RETRIES + 1):
        with _SERIAL if attempt >= SERIAL_AFTER else contextlib.nullcontext():
            tx = session.begin_transaction(**begin)
            try:
                _apply(tx, graph_filter, fields)
                out = work(tx)
            except BaseException as exc:
                with contextlib.suppress(Exception):  # a failed transaction may refuse the rollback: it is over anyway
                    tx.rollback()
                if not isinstance(exc, TransientError) or attempt == RETRIES:
                    raise
            else:
                tx.rollback()
                return out
        time.sleep(random.uniform(0.0, min(0.5, 0.01 * 2**attempt)))
    raise AssertionError("unreachable")  # pragma: no cover


def _detached(result: Any, tx: Any) -> Any:
    """``result`` read whole and detached from ``tx``, so it stays readable after the rollback."""
    from .errors import KGError

    if not hasattr(result, "_buffer_all") or not hasattr(tx, "_results"):
        raise KGError("this neo4j driver's Result cannot be read after graphtrail's rollback (neo4j>=5.20 is supported)")
    result._buffer_all()
    if result in tx._results:
        tx._results.remove(result)  # the rollback then leaves its buffered records alone
    return result


class AblatedDriver:
    """A Neo4j driver whose queries, inside an ablation run, read the condition's data (see :mod:`.live_db`)."""

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

    def execute_query(self, query_: Any, parameters_: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        graph_filter = current_filter()
        if graph_filter is None:
            return self._driver.execute_query(query_, parameters_, **kwargs)
        from neo4j import Query, Result

        transform = kwargs.pop("result_transformer_", Result.to_eager_result)
        kwargs.pop("routing_", None)  # the ablation writes: the transaction goes to a writer
        session_kwargs = {key[:-1]: kwargs.pop(key) for key in ("database_", "impersonated_user_", "auth_",
                                                                 "bookmark_manager_") if key in kwargs}
        parameters = dict(parameters_ or {}, **kwargs)
        begin: dict[str, Any] = {}
        text = query_
        if isinstance(query_, Query):
            text = query_.text
            begin = {"metadata": query_.metadata, "timeout": query_.timeout}
        with self._driver.session(**session_kwargs) as session:
            return _rolled_back(session, graph_filter, self._fields, lambda tx: transform(tx.run(text, parameters)),
                                **begin)

    def session(self, **kwargs: Any) -> _AblatedSession:
        return _AblatedSession(self._driver.session(**kwargs), self._fields)


class _Wrapped:
    def __init__(self, inner: Any, fields: NodeFields) -> None:
        self._inner = inner
        self._fields = fields

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> Any:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._inner.__exit__(*exc)


class _AblatedTransaction(_Wrapped):
    """A transaction graphtrail opened with the condition applied: ``commit`` rolls back (nothing is committed).

    So does leaving its ``with`` block, which commits a driver's transaction.
    """

    def commit(self) -> None:
        self._inner.rollback()

    def __exit__(self, *exc: Any) -> None:
        if not self._inner.closed():
            self._inner.rollback()


class _AblatedSession(_Wrapped):
    def run(self, query: Any, parameters: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        graph_filter = current_filter()
        if graph_filter is None:
            return self._inner.run(query, parameters, **kwargs)
        from neo4j import Query

        begin: dict[str, Any] = {}
        if isinstance(query, Query):
            begin = {"metadata": query.metadata, "timeout": query.timeout}
            query = query.text
        return _rolled_back(self._inner, graph_filter, self._fields,
                            lambda tx: _detached(tx.run(query, parameters, **kwargs), tx), **begin)

    def begin_transaction(self, *args: Any, **kwargs: Any) -> Any:
        graph_filter = current_filter()
        tx = self._inner.begin_transaction(*args, **kwargs)
        if graph_filter is None:
            return tx
        _apply(tx, graph_filter, self._fields)
        return _AblatedTransaction(tx, self._fields)

    def _managed(self, work: Callable[..., T], args: Any, kwargs: Any) -> T:
        graph_filter = current_filter()
        begin = {k: getattr(work, k) for k in ("metadata", "timeout") if getattr(work, k, None) is not None}
        assert graph_filter is not None
        fields = self._fields
        return _rolled_back(self._inner, graph_filter, fields,
                            lambda tx: work(_AblatedTransaction(tx, fields), *args, **kwargs), **begin)

    def execute_read(self, transaction_function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if current_filter() is None:
            return self._inner.execute_read(transaction_function, *args, **kwargs)
        return self._managed(transaction_function, args, kwargs)

    def execute_write(self, transaction_function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if current_filter() is None:
            return self._inner.execute_write(transaction_function, *args, **kwargs)
        return self._managed(transaction_function, args, kwargs)

