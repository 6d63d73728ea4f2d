"""What the database wrappers (:mod:`.live_db`) write inside the transaction they always roll back.

An ablation condition at a user's own database is made real, not imitated:
each query a tool runs inside an ablation run is preceded, in the same write
transaction, by statements that

- delete every hidden node with its relationships (``DETACH DELETE``), so no
  pattern can pass through it, as in a database built without it;
- rename every masked node (its name becomes ``"[masked entity] <id>"``, or
  the placeholder and a digest when the id spells the name, as in memory:
  :meth:`~.views.GraphFilter.masked_name`; its aliases go, its text
  properties become ``""``), so a lookup by the real name (``CONTAINS``, a
  full-text index) finds nothing, while its id and edges stay;
- empty the text properties of every text-blocked node.

The transaction is then rolled back whatever happens; nothing is ever
committed (docs/ablations.md, "Database records"). Property names reach the
statement text only through :func:`~.backends.identifiers.cypher_name`; ids
are parameters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import KGError
from .views import MASK_PLACEHOLDER, GraphFilter, active_filter, id_spells_name, masked_key, note_source_read

__all__ = ["NodeFields", "Statement", "current_filter", "ablation_statements", "masked_names_read",
           "refuse_transaction_control"]

Statement = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class NodeFields:
    """Which node properties hold the id, the name, the aliases and the text (configurable per database)."""

    id_property: str = "id"
    name_property: str = "name"
    alias_properties: tuple[str, ...] = ("aliases", "alias")
    text_properties: tuple[str, ...] = ("description", "text", "summary")


def current_filter() -> GraphFilter | None:
    """The run's filter, or ``None`` outside ablation runs (and for an empty one): then nothing is wrapped."""
    f = active_filter()
    if f is None or f.is_empty:
        return None
    note_source_read()  # the wrapper applies this condition to the data: the call is exact (the evaluator's method)
    return f


def _q(name: str) -> str:
    from .backends.identifiers import cypher_name

    return cypher_name(name, "property name")


def masked_names_read(graph_filter: GraphFilter, fields: NodeFields, *,
                      present: Iterable[str] | None = None) -> Statement | None:
    """The read (run first, in the same transaction) of the masked nodes' ``[id, name]`` rows, for
    :func:`ablation_statements`' ``names``; ``None`` when nothing is masked or the nodes have no name property."""
    masked = sorted(graph_filter.masked - graph_filter.hidden)
    if not masked or (present is not None and fields.name_property not in set(present)):
        return None
    ident, name = _q(fields.id_property), _q(fields.name_property)
    return f"MATCH (n) WHERE n.{ident} IN $ids RETURN n.{ident}, n.{name}", {"ids": masked}


def _spelled(graph_filter: GraphFilter, names: Iterable[Any]) -> dict[str, str]:
    """Masked id -> its digest placeholder, for the ``[id, name]`` rows whose id spells the name (a node without
    a name has its id for one)."""
    out: dict[str, str] = {}
    for eid, name in names:
        if eid is None:
            continue
        eid = str(eid)
        shown = name if isinstance(name, str) and name.strip() else eid
        if eid in graph_filter.masked and id_spells_name(eid, shown):
            out[eid] = masked_key(eid)
    return out


def ablation_statements(
    graph_filter: GraphFilter, fields: NodeFields, *, dialect: str, present: Iterable[str] | None = None,
    names: Iterable[Any] = (),
) -> list[Statement]:
    """The statements that turn the committed data into the condition's data (inside a transaction).

    ``dialect`` is ``"neo4j"`` or ``"ladybug"`` (string concatenation and
    removing a property differ). ``present``, when given, is the set of node
    properties the database knows: LadybugDB refuses ``SET`` on a property no
    table has, so the others are left out (there is nothing to withhold there).
    ``names``: the ``[id, name]`` rows :func:`masked_names_read` returned; a masked
    node whose id spells its name is named :func:`~.views.masked_key` instead of
    ``"[masked entity] <id>"`` (which would spell the name).
    """
    known = None if present is None else set(present)

    def has(name: str) -> bool:
        return known is None or name in known

    ident = _q(fields.id_property)
    out: list[Statement] = []
    if graph_filter.hidden:
        out.append((f"MATCH (n) WHERE n.{ident} IN $ids DETACH DELETE n", {"ids": sorted(graph_filter.hidden)}))
    texts = [_q(p) for p in fields.text_properties if has(p)]
    empty_text = [f"n.{t} = CASE WHEN n.{t} IS NULL THEN NULL ELSE '' END" for t in texts]
    withheld = (graph_filter.masked | graph_filter.text_blocked) - graph_filter.hidden
    if withheld and empty_text:
        out.append((f"MATCH (n) WHERE n.{ident} IN $ids SET {', '.join(empty_text)}", {"ids": sorted(withheld)}))
    masked = sorted(graph_filter.masked - graph_filter.hidden)
    if masked:
        prefix = f"{MASK_PLACEHOLDER} "
        sets = []
        if has(fields.name_property):
            name = _q(fields.name_property)
            sets.append(f"n.{name} = $prefix + toString(n.{ident})" if dialect == "neo4j"
                        else f"n.{name} = concat($prefix, CAST(n.{ident} AS STRING))")
        aliases = [_q(p) for p in fields.alias_properties if has(p)]
        tail = ""
        if dialect == "neo4j":
            tail = f" REMOVE {', '.join(f'n.{a}' for a in aliases)}" if aliases else ""
        else:
            sets += [f"n.{a} = NULL" for a in aliases]
        if sets or tail:
            body = f"SET {', '.join(sets)}" if sets else ""
            out.append((f"MATCH (n) WHERE n.{ident} IN $ids {body}{tail}", {"ids": masked, "prefix": prefix}))
        if has(fields.name_property):
            name = _q(fields.name_property)
            for eid, shown in sorted(_spelled(graph_filter, names).items()):  # few: the masked ids that spell names
                out.append((f"MATCH (n) WHERE n.{ident} = $id SET n.{name} = $shown", {"id": eid, "shown": shown}))
    return out


#: Statements that would end or commit the wrapper's transaction (LadybugDB reads them from the query text).
_TRANSACTION_CONTROL = re.compile(r"(?:^|;)\s*(?:BEGIN|COMMIT|ROLLBACK|CHECKPOINT)\b", re.IGNORECASE)


def refuse_transaction_control(query: Any) -> None:
    """A query that commits inside the wrapper's transaction would commit the ablation: refuse it."""
    if isinstance(query, str) and _TRANSACTION_CONTROL.search(query):
        raise KGError("a query run through ablated_connection inside an ablation run may not begin, commit or "
                      "roll back a transaction (or checkpoint): graphtrail runs it in a transaction it rolls back")
