"""GraphML streamed by expat straight into columns, for the usual shape of file; anything else goes to networkx.

networkx builds an ElementTree of the whole file and then a networkx graph,
element by element in Python (25x ``pandas.read_csv`` of the same graph). Here
expat (C) calls back per element and the callbacks only append to lists; ids
then become integers with pyarrow and numpy (:mod:`.bulk`). The result is the
graph networkx's reader gives, in its order: declared nodes first, then edge
ends in order of first appearance; edges grouped by source node in node order,
then by first appearance of the (source, target) pair.

Whatever this reader does not reproduce exactly raises :class:`Unusual` and the
caller reads the file with networkx as before, so its errors and results are
unchanged: a DOCTYPE (entities: networkx's parser refuses or expands them), XML
errors, undirected graphs, several graphs, nested graphs, hyperedges, ports,
yFiles extensions, data keys that are not declared or typed values that do
not convert, a repeated node or edge id, an edge without both ends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..arrays import distinct

__all__ = ["Unusual", "networkx_edge_order", "read_graphml_columns"]

_NS = "http://graphml.graphdrawing.org/xmlns "
_GRAPHML, _KEY, _DEFAULT, _DESC = _NS + "graphml", _NS + "key", _NS + "default", _NS + "desc"
_GRAPH, _NODE, _EDGE, _DATA = _NS + "graph", _NS + "node", _NS + "edge", _NS + "data"
_BOOL = {"true": True, "false": False, "0": False, "1": True}
_TYPES: dict[str, Any] = {"string": str, "yfiles": str, "integer": int, "int": int, "long": int, "float": float, "double": float, "boolean": bool}


class Unusual(Exception):
    """The file needs networkx's reader (its exact errors, or a feature this reader leaves to it)."""


def _convert(kind: Any, text: str) -> Any:
    if kind is str:
        return text
    if kind is bool:
        return _BOOL[text.lower()]
    return kind(text)


def _edge_key(edge_id: str | None, data: dict[str, Any]) -> Any:
    """networkx's multigraph key: the id (an int when it reads as one), else the data's 'key'."""
    if edge_id:
        try:
            return int(edge_id)
        except ValueError:
            return edge_id
    return data.get("key")


def read_graphml_columns(
    raw: bytes, header: dict[str, Any] | None = None,
) -> tuple[list[tuple[str, dict[str, Any]]], tuple[list[Any], ...]]:
    """``(nodes, edges)`` in networkx's order: ``(id, data)`` pairs, and edge columns (sources, targets, keys, data,
    source positions, target positions in ``nodes``); :class:`Unusual` otherwise.

    ``header``, when given, receives what :mod:`.graphml_plain` needs of a file's
    head: ``keys`` (id: (name, type)), ``scope`` (id: its ``for``) and ``graph_at``
    (the byte offset of the ``<graph>`` start tag)."""
    import pyexpat

    keys: dict[str, tuple[str, Any]] = {}
    scope: dict[str, str] = {}
    node_ids: list[str] = []
    node_data: list[dict[str, Any]] = []
    sources: list[str] = []
    targets: list[str] = []
    edge_ids: list[str | None] = []
    edge_data: list[dict[str, Any]] = []
    stack: list[str] = []
    graphs = 0
    data: dict[str, Any] | None = None  # the open <data>'s owner's attributes
    key: str | None = None
    text: list[str] = []
    parser = pyexpat.ParserCreate(namespace_separator=" ")

    def start(name: str, attrs: dict[str, str]) -> None:
        nonlocal data, key, text, graphs
        parent = stack[-1] if stack else None
        stack.append(name)
        if name == _DATA and parent in (_NODE, _EDGE, _GRAPH):
            key = attrs.get("key")
            if key not in keys:
                raise Unusual("undeclared data key")
            data = node_data[-1] if parent == _NODE else edge_data[-1] if parent == _EDGE else {}
            text = []
            parser.CharacterDataHandler = text.append  # text is collected only inside <data>, without a Python call
        elif name == _EDGE and parent == _GRAPH:
            source, target = attrs.get("source"), attrs.get("target")
            if source is None or target is None or "directed" in attrs:
                raise Unusual("edge")
            sources.append(source)
            targets.append(target)
            edge_ids.append(attrs.get("id"))
            edge_data.append({})
        elif name == _NODE and parent == _GRAPH:
            node_id = attrs.get("id")
            if node_id is None or "yfiles.foldertype" in attrs:
                raise Unusual("node")
            node_ids.append(node_id)
            node_data.append({})
        elif name == _KEY and parent == _GRAPHML:
            if "yfiles.type" in attrs or attrs.get("attr.name") is None or attrs.get("attr.type", "string") not in _TYPES:
                raise Unusual("key")
            keys[attrs.get("id")] = (attrs["attr.name"], _TYPES[attrs.get("attr.type", "string")])  # type: ignore[index]
            scope[attrs.get("id")] = attrs.get("for", "all")  # type: ignore[index]
        elif name == _GRAPH and parent == _GRAPHML:
            graphs += 1
            if header is not None:
                header["graph_at"] = parser.CurrentByteIndex
            if graphs > 1 or attrs.get("edgedefault") != "directed":
                raise Unusual("graph")
        elif (name == _GRAPHML and parent is None) or (name == _DESC and parent != _DATA):
            pass
        elif name == _DEFAULT and parent == _KEY and keys[next(reversed(keys))][1] is str:
            pass
        else:
            raise Unusual(name)

    def end(name: str) -> None:
        nonlocal data
        stack.pop()
        if data is not None and name == _DATA:
            parser.CharacterDataHandler = None
            value = "".join(text)
            if value:
                data_name, kind = keys[key]  # type: ignore[index]
                data[data_name] = _convert(kind, value)
            data = None

    def doctype(*_: Any) -> None:
        raise Unusual("DOCTYPE")

    parser.buffer_text = True
    parser.buffer_size = 1 << 16
    parser.StartDoctypeDeclHandler = doctype
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(raw, True)
    except (pyexpat.ExpatError, KeyError, ValueError, TypeError) as exc:
        raise Unusual(str(exc)) from None
    if graphs != 1 or len(set(node_ids)) < len(node_ids):
        raise Unusual("graphs or repeated node ids")
    if header is not None:
        header.update(keys=keys, scope=scope)
    return _in_networkx_order(node_ids, node_data, sources, targets, edge_ids, edge_data)


def _in_networkx_order(
    node_ids: list[str], node_data: list[dict[str, Any]], sources: list[str], targets: list[str],
    edge_ids: list[str | None], edge_data: list[dict[str, Any]],
) -> tuple[list[tuple[str, dict[str, Any]]], tuple[list[Any], ...]]:
    nodes = list(zip(node_ids, node_data))
    n = len(sources)
    if not n:
        return nodes, ([], [], [], [], None, None)
    keyed_data = any("key" in d for d in edge_data)  # an edge without an id is keyed by its 'key' attribute
    edge_keys = [_edge_key(i, d) for i, d in zip(edge_ids, edge_data)] if keyed_data or any(edge_ids) else None
    fresh, order, u, v = networkx_edge_order(node_ids, sources, targets, edge_keys)
    nodes.extend((name, {}) for name in fresh)
    edge_keys = edge_keys if edge_keys is not None else [None] * n

    def ordered(values: list[Any]) -> list[Any]:
        column = np.empty(n, dtype=object)
        column[:] = values
        return column[order].tolist()

    return nodes, (ordered(sources), ordered(targets), ordered(edge_keys), ordered(edge_data), u, v)


def networkx_edge_order(
    node_ids: list[str], sources: list[str], targets: list[str], edge_keys: list[Any] | None,
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """networkx's order for a directed multigraph read from GraphML, by sorting integer codes.

    ``(fresh, order, u, v)``: the edge ends that are not declared nodes, in
    order of first appearance (source, target, source, ...), which networkx adds
    after the declared ones; the edge order (grouped by source node in node
    order, then by first appearance of the (source, target) pair); and the
    ordered edges' ends as positions in ``node_ids + fresh``. ``edge_keys``:
    each edge's multigraph key, or ``None`` when no edge has one. Raises
    :class:`Unusual` (networkx merges those edges) when a key repeats between
    the same two nodes, or without pyarrow.
    """
    try:
        import pyarrow  # noqa: F401 - the caller's bulk add needs it
    except ImportError:  # pyarrow is optional: networkx reads the file
        raise Unusual("no pyarrow") from None

    n = len(sources)
    fresh_ids, u, v = _positions(node_ids, sources, targets)
    n_nodes = len(node_ids) + len(fresh_ids)
    pair = u * n_nodes + v
    if edge_keys is not None and any(k is not None for k in edge_keys):
        pairs = pair.tolist()
        keyed = [(p, k) for p, k in zip(pairs, edge_keys) if k is not None]
        keyless = {p for p, k in zip(pairs, edge_keys) if k is None}
        if len(set(keyed)) < len(keyed) or keyless & {p for p, k in keyed if isinstance(k, int)}:
            raise Unusual("an edge key repeated between the same nodes")  # networkx merges those edges
    if len(distinct(pair)) == n:  # every (source, target) once: by source node, stably
        order = np.argsort(u, kind="stable")
    else:
        _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
        order = np.lexsort((np.arange(n), first[inverse], u))
    return fresh_ids, order, u[order], v[order]


def _positions(node_ids: list[str], sources: list[str], targets: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Edge ends as positions in ``node_ids + fresh``, where ``fresh`` are the undeclared ends by first appearance.

    With pandas: one ``factorize`` of the declared ids followed by the ends
    (source, target, source, ...), which numbers values in order of first
    appearance (a C hash table over the str objects; a Python dict lookup per
    end measured 3x slower, converting the strings to Arrow as slow). Else
    pyarrow's dictionary encoding.
    """
    try:
        import pandas as pd
    except ImportError:
        return _positions_by_arrow(node_ids, sources, targets)
    k, n = len(node_ids), len(sources)
    values = np.empty(k + 2 * n, dtype=object)
    values[:k], values[k::2], values[k + 1::2] = node_ids, sources, targets
    codes, distinct_values = pd.factorize(values)
    return distinct_values[k:].tolist(), codes[k::2].astype(np.int64), codes[k + 1::2].astype(np.int64)


def _positions_by_arrow(node_ids: list[str], sources: list[str], targets: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(sources)
    both = pa.concat_arrays([pa.array(sources, type=pa.large_string()), pa.array(targets, type=pa.large_string())])
    interleave = np.empty(2 * n, dtype=np.int64)
    interleave[0::2], interleave[1::2] = np.arange(n), np.arange(n, 2 * n)
    encoded = pc.dictionary_encode(both.take(pa.array(interleave)))
    values = encoded.dictionary
    declared = pc.index_in(values, value_set=pa.array(node_ids, type=pa.large_string()))
    known = declared.is_valid().to_numpy(zero_copy_only=False)
    fresh = np.flatnonzero(~known)
    position = np.where(known, declared.fill_null(0).to_numpy(zero_copy_only=False), 0).astype(np.int64)
    position[fresh] = len(node_ids) + np.arange(len(fresh))
    codes = position[encoded.indices.to_numpy(zero_copy_only=False)]
    return values.take(pa.array(fresh)).to_pylist(), codes[0::2], codes[1::2]
