"""Ablation at the data source for a user's own Neo4j driver or LadybugDB connection.

The exact route (docs/ablations.md, "The exact route") for tools that run
Cypher themselves: wrap the driver or connection once, where the agent is built,
and let the tools use the wrapper as they used the original::

    driver = graphtrail.kg.ablated_driver(neo4j.GraphDatabase.driver(uri, auth=auth))
    conn = graphtrail.kg.ablated_connection(ladybug.Connection(db))

Outside an ablation run (and in baseline runs) every call goes straight to the
original: one ContextVar read. Inside one, each query runs on the condition's
data, made real in a write transaction that is always rolled back
(:mod:`.live_ablate`): hidden nodes deleted with their relationships, masked
nodes renamed to the placeholder with their aliases and text gone,
text-blocked nodes' text emptied. So a pattern that passes *through* a hidden
node matches nothing, as on a database built without it, and a lookup by a
masked entity's real name finds nothing. Filtering returned records could not
be exact: a query matches through nodes it never returns.

The user's committed data is never changed: nothing is committed, and a
process killed mid-query leaves an uncommitted transaction the database
discards (tests/foreign/test_live_db_exact.py kills one with SIGKILL). The
condition comes from :func:`~graphtrail.kg.views.active_filter`, as for
:func:`~graphtrail.kg.ablated_view`, so concurrent runs each see their own.
Neo4j: :mod:`.live_neo4j`; LadybugDB: :mod:`.live_ladybug`.
"""

from __future__ import annotations

from typing import Any

from .errors import KGError
from .live_ablate import NodeFields
from .live_ladybug import AblatedConnection
from .live_neo4j import AblatedDriver

__all__ = ["ablated_driver", "ablated_connection", "AblatedDriver", "AblatedConnection"]


def _fields(id_property: str, name_property: str, alias_properties: Any, text_properties: Any) -> NodeFields:
    from .backends.identifiers import cypher_name

    for name in (id_property, name_property, *alias_properties, *text_properties):
        cypher_name(name, "property name")  # checked now: they are written into the ablation's statements
    return NodeFields(id_property, name_property, tuple(alias_properties), tuple(text_properties))


def ablated_driver(driver: Any, *, id_property: str = "id", name_property: str = "name",
                   alias_properties: tuple[str, ...] = ("aliases", "alias"),
                   text_properties: tuple[str, ...] = ("description", "text", "summary")) -> AblatedDriver:
    """Wrap a ``neo4j`` driver so every query inside an ablation run reads the condition's data.

    ``id_property`` is the node property holding the entity id the evaluation
    hides and masks by (string ids); ``name_property`` and ``alias_properties``
    are what a mask replaces and removes; ``text_properties`` what masking and
    text-blocking empty. All must be plain identifiers. Outside ablation runs
    the wrapper passes every call through unchanged. Inside one, each query
    runs in a write transaction that is rolled back: a tool's own writes in an
    ablation run are discarded too (an explicit transaction's ``commit`` rolls back).
    Raises :class:`~graphtrail.kg.KGError` for the async driver.
    """
    _refuse_async(driver, "ablated_driver", "neo4j's async driver (AsyncGraphDatabase)")
    return AblatedDriver(driver, _fields(id_property, name_property, alias_properties, text_properties))


def ablated_connection(conn: Any, *, id_property: str = "id", name_property: str = "name",
                       alias_properties: tuple[str, ...] = ("aliases", "alias"),
                       text_properties: tuple[str, ...] = ("description", "text", "summary")) -> AblatedConnection:
    """Wrap a ``ladybug.Connection`` so every query inside an ablation run reads the condition's data.

    The arguments mean what they mean for :func:`ablated_driver`. The database
    must be open read-write (LadybugDB's one writer slot is taken per ablated
    query, and released at the rollback); a query that begins, commits or
    rolls back a transaction is refused inside a run.
    """
    _refuse_async(conn, "ablated_connection", "LadybugDB's AsyncConnection")
    return AblatedConnection(conn, _fields(id_property, name_property, alias_properties, text_properties))


def _refuse_async(source: Any, wrapper: str, what: str) -> None:
    """An async driver's queries are coroutines: wrapping them as sync ones would run them unablated."""
    import inspect

    if inspect.iscoroutinefunction(getattr(type(source), "execute_query", None)) or \
            inspect.iscoroutinefunction(getattr(type(source), "execute", None)):
        raise KGError(f"{wrapper} cannot filter {what}: wrap a sync driver/connection, or ablate in your own "
                      f"query with graphtrail.kg.active_filter() (docs/ablations.md, 'The exact route')")
