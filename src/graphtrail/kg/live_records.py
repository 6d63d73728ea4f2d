"""Filtering database records by node identity, for the current ablation condition.

The exact route for a user's own Neo4j or LadybugDB queries (docs/ablations.md,
"The exact route"): :mod:`.live_db` wraps the driver or connection, and every
result read inside an ablation run passes through :func:`filter_rows` here.
Nodes are told apart by their id property, never by guessing from text:

- a row whose column holds a hidden node (itself, inside a path, or as an
  endpoint of a relationship) is dropped, as a database without the node would
  not have matched it; inside a list (``collect(n)``) only that item goes;
- a masked node keeps its id and edges; its name becomes
  ``"[masked entity] <id>"`` (:meth:`GraphFilter.masked_name`), its aliases go and
  its text properties become empty, as :mod:`.backends.cypher` does in its queries;
- a text-blocked node keeps id, name and edges; its text properties become empty.

What is not a node cannot be told apart: a scalar column (``RETURN d.name``) or
a count is returned as the database gave it, and the evaluation's output filter
and model-input check handle it as any tool output. Return nodes to be exact.

The two drivers shape values differently; :class:`Shapes` holds the difference
(what is a node, a relationship, a path; where the properties and the endpoint
keys are). Endpoints known only by an internal key are resolved by the wrapper's
``resolve`` callback, at most one query per result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .views import GraphFilter

__all__ = ["NodeFields", "Shapes", "filter_rows"]

_DROP = object()


@dataclass(frozen=True)
class NodeFields:
    """Which node properties hold the id, the name, the aliases and the text (configurable per database)."""

    id_property: str = "id"
    name_property: str = "name"
    alias_properties: tuple[str, ...] = ("aliases", "alias")
    text_properties: tuple[str, ...] = ("description", "text", "summary")


@dataclass(frozen=True)
class Shapes:
    """How one driver shapes graph values (plain functions, so the filter stays driver-free)."""

    kind: Callable[[Any], str]  # "node", "rel", "path", "list", "map" or "value"
    props: Callable[[Any], dict[str, Any]]  # a node's property dict, edited in place
    key: Callable[[Any], Any]  # a node's internal key (element id, internal id)
    endpoints: Callable[[Any], tuple[Any, ...]]  # a relationship's endpoint keys
    endpoint_nodes: Callable[[Any], tuple[Any, ...]]  # ... and the endpoint nodes the driver holds (props may be empty)
    path_parts: Callable[[Any], tuple[Sequence[Any], Sequence[Any]]]  # (nodes, relationships)
    null_removes: bool = False  # Neo4j stores no nulls: a cleared property goes; LadybugDB columns become None


@dataclass
class _Known:
    """Internal key -> entity id, from the nodes a result holds and from ``resolve``."""

    ids: dict[Any, str | None] = field(default_factory=dict)
    unknown: set[Any] = field(default_factory=set)


def _entity_id(node: Any, shapes: Shapes, fields: NodeFields) -> str | None:
    value = shapes.props(node).get(fields.id_property)
    return None if value is None else str(value)


def _walk(value: Any, shapes: Shapes, fields: NodeFields, known: _Known) -> None:
    """Note the id of every node in ``value``, and the endpoint keys no node of it names."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = shapes.kind(item)
        if kind == "node":
            eid = _entity_id(item, shapes, fields)
            if eid is not None:
                known.ids[shapes.key(item)] = eid
        elif kind == "rel":
            stack.extend(n for n in shapes.endpoint_nodes(item) if n is not None)
            known.unknown.update(shapes.endpoints(item))
        elif kind == "path":
            nodes, rels = shapes.path_parts(item)
            stack.extend(nodes)
            stack.extend(rels)
        elif kind == "list":
            stack.extend(item)
        elif kind == "map":
            stack.extend(item.values())


def _clear(props: dict[str, Any], name: str, shapes: Shapes) -> None:
    if name in props:
        if shapes.null_removes:
            del props[name]
        else:
            props[name] = None


def _edit(node: Any, eid: str, graph_filter: GraphFilter, shapes: Shapes, fields: NodeFields) -> None:
    props = shapes.props(node)
    masked = eid in graph_filter.masked
    if masked:
        props[fields.name_property] = graph_filter.masked_name(eid)
        for name in fields.alias_properties:
            _clear(props, name, shapes)
    if masked or eid in graph_filter.text_blocked:
        for name in fields.text_properties:
            if props.get(name) is not None:
                props[name] = ""


def _clean(value: Any, graph_filter: GraphFilter, shapes: Shapes, fields: NodeFields, known: _Known) -> Any:
    """``value`` with masked/text-blocked nodes edited, or ``_DROP`` when it holds a hidden node."""
    kind = shapes.kind(value)
    hidden = graph_filter.hidden
    if kind == "node":
        eid = _entity_id(value, shapes, fields)
        if eid is None:
            return value
        if eid in hidden:
            return _DROP
        if eid in graph_filter.masked or eid in graph_filter.text_blocked:
            _edit(value, eid, graph_filter, shapes, fields)
        return value
    if kind == "rel":
        if any(known.ids.get(k) in hidden for k in shapes.endpoints(value)):
            return _DROP
        for node in shapes.endpoint_nodes(value):
            if node is not None:
                _clean(node, graph_filter, shapes, fields, known)
        return value
    if kind == "path":
        nodes, rels = shapes.path_parts(value)
        if any(_clean(part, graph_filter, shapes, fields, known) is _DROP for part in (*nodes, *rels)):
            return _DROP
        return value
    if kind == "list":
        kept = [c for c in (_clean(item, graph_filter, shapes, fields, known) for item in value) if c is not _DROP]
        return type(value)(kept) if isinstance(value, tuple) else kept
    if kind == "map":  # one value, like a row: a map holding a hidden node goes whole
        out = {}
        for k, item in value.items():
            cleaned = _clean(item, graph_filter, shapes, fields, known)
            if cleaned is _DROP:
                return _DROP
            out[k] = cleaned
        return out
    return value


def filter_rows(
    rows: Iterable[Sequence[Any]],
    graph_filter: GraphFilter,
    shapes: Shapes,
    fields: NodeFields,
    resolve: Callable[[set[Any]], dict[Any, str | None]],
) -> list[list[Any]]:
    """The rows a database without the hidden nodes (and with the masked ones renamed) would return.

    ``rows`` are lists of column values. ``resolve(keys)`` maps internal keys of
    relationship endpoints that no node in the result named to entity ids; it is
    called once, only when such endpoints exist and something is hidden.
    """
    rows = [list(row) for row in rows]
    known = _Known()
    for row in rows:
        for value in row:
            _walk(value, shapes, fields, known)
    missing = known.unknown - known.ids.keys()
    if missing and graph_filter.hidden:
        known.ids.update(resolve(missing))
    out = []
    for row in rows:
        cleaned = [_clean(value, graph_filter, shapes, fields, known) for value in row]
        if not any(c is _DROP for c in cleaned):
            out.append(cleaned)
    return out
