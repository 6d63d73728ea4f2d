"""GraphML: read by one pattern into columns (:mod:`.graphml_plain`), else by expat (:mod:`.graphml_stream`), else by networkx.

Each reader hands a file it does not reproduce exactly to the next one; networkx writes.

Aliases travel as one ``;``-separated attribute; an edge's relation is its
``relation``/``label``/``predicate``/``type`` attribute, else a meaningful key.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from xml.etree.ElementTree import ParseError

from ..errors import KGError
from ..fields import ALIAS_SEPARATOR, DEFAULT_RELATION, parse_aliases
from ..graph import KnowledgeGraph
from .bulk import add_triples, gc_paused
from .graphml_plain import PlainGraphML, read_graphml_plain
from .graphml_stream import Unusual, networkx_edge_order, read_graphml_columns
from .paths import PathLike, graph_name
from .textcolumns import alias_tuples, or_default

__all__ = ["load_graphml", "save_graphml"]


def _first(mapping: dict[str, Any], keys: Iterable[str], default: Any = None) -> Any:
    for key in keys:
        value = mapping.get(key)
        if value is not None and value != "":
            return value
    return default


def load_graphml(path: PathLike) -> KnowledgeGraph:
    """GraphML with node attributes name/title/label, type, description, aliases and edge relation/label."""
    path = Path(path)
    raw = path.read_bytes()
    try:
        with gc_paused():  # millions of strings and tuples, no cycles
            return _from_plain(path, read_graphml_plain(raw))
    except Unusual:  # not the plain shape: expat reads it
        pass
    try:
        with gc_paused():  # millions of small dicts and tuples, no cycles
            nodes, edges = read_graphml_columns(raw)
    except Unusual:  # networkx reads it (and names what is wrong), as it always did
        nodes, edges = _read_with_networkx(path)
    if any(node == "" for node, _ in nodes):  # networkx keeps <node id=""/>; every other format refuses an empty id
        raise KGError(f"{path.name}: a <node> with an empty id; every node needs a non-empty id")
    kg = KnowledgeGraph(name=graph_name(path))
    columns: tuple[list[Any], ...] = ([], [], [], [], [])
    for node, data in nodes:  # node ids are distinct
        for column, value in zip(columns, (
            str(node),
            str(_first(data, ("name", "title", "label"), node)),
            str(_first(data, ("type", "entity_type"), "entity")),
            str(_first(data, ("description",), "")),
            tuple(parse_aliases(data.get("aliases"))),
        )):  # fmt: skip
            column.append(value)
    kg._store.add_entities(*columns)
    ends = _edge_columns(*edges[:4])
    coded = (edges[4], edges[5]) if edges[4] is not None else None  # ends already numbered by the stream: the nodes' places
    if ends[0] and not add_triples(kg, ends[0], ends[1], ends[2], ends[3] if any(ends[3]) else None, coded=coded):
        for source, relation, target, description in zip(*ends):  # pragma: no cover - astronomically large graphs, or no pyarrow
            kg.add_relation(source, relation, target, description)
    return kg


def _first_column(g: PlainGraphML, names: tuple[str, ...], default: list[str]) -> list[str]:
    """Per node, the first of the attributes ``names`` with a value (not absent, not ``""``) as text, else ``default``'s."""
    present = [g.nodes[k] for k in names if k in g.nodes]
    if not present:
        return default
    if len(present) == 1 and not g.typed & set(names):  # one string key: no call per row
        return or_default(present[0], default)
    return [next((str(v) for v in row[:-1] if v is not None and v != ""), row[-1]) for row in zip(*present, default)]


def _from_plain(path: Path, g: PlainGraphML) -> KnowledgeGraph:
    """The graph networkx's reading gives, from columns: the same entities and relations in the same order."""
    nodes, edges, n = g.nodes, g.edges, len(g.sources)
    edge_keys = None
    if g.edge_ids is not None or "key" in edges:  # networkx's multigraph key: the id (an int if it reads as one), else data 'key'
        ids, data_keys = g.edge_ids or [""] * n, edges.get("key") or [None] * n
        edge_keys = [_int_or_text(i) if i else (k if k != "" else None) for i, k in zip(ids, data_keys)]
    fresh, order, u, v = networkx_edge_order(g.node_ids, g.sources, g.targets, edge_keys) if n else ([], None, None, None)
    ids = g.node_ids + fresh
    if "" in ids:
        raise KGError(f"{path.name}: a <node> with an empty id; every node needs a non-empty id")
    declared, extra = len(g.node_ids), len(fresh)
    aliases = nodes.get("aliases")
    kg = KnowledgeGraph(name=graph_name(path))
    kg._store.add_entities(
        ids,
        _first_column(g, ("name", "title", "label"), g.node_ids) + fresh,
        _first_column(g, ("type", "entity_type"), ["entity"] * declared) + ["entity"] * extra,
        _first_column(g, ("description",), [""] * declared) + [""] * extra,
        _alias_column(aliases, "aliases" in g.typed) + [()] * extra if aliases else [()] * len(ids),
    )
    if not n:
        return kg
    relations = edges.get("relation")
    if relations is None or "relation" in g.typed or "" in relations:  # the label, predicate, type or key decides
        names = [k for k in ("relation", "label", "predicate", "type") if k in edges]
        keys = edge_keys or [None] * n
        relations = [_relation({k: c[i] for k, c in zip(names, map(edges.get, names)) if c[i] is not None}, keys[i]) for i in range(n)]
    descriptions = edges.get("description")
    if descriptions is not None and "description" in g.typed:
        descriptions = [str(d or "") for d in descriptions]
    import pyarrow as pa  # present: networkx_edge_order needs it

    rel_codes, rel_labels = _ordered_codes(relations, order)
    description_column = pa.array(descriptions, type=pa.string()).take(pa.array(order)) if descriptions is not None and any(descriptions) else None
    if not add_triples(kg, None, None, None, description_column, coded=(u, v), relation_codes=(rel_codes, rel_labels)):  # pragma: no cover
        for s, r, t, d in zip(u.tolist(), rel_codes.tolist(), v.tolist(), description_column.to_pylist() if description_column is not None else [""] * n):
            kg.add_relation(ids[s], rel_labels[r], ids[t], d)  # astronomically large graphs
    return kg


def _alias_column(aliases: list[Any], typed: bool) -> list[tuple[str, ...]]:
    """Each node's aliases attribute as a tuple (``;``-separated text, or a JSON list in the text), as parse_aliases reads it."""
    if typed:
        return [tuple(parse_aliases(a if a != "" else None)) for a in aliases]  # pragma: no cover - an alias key typed int or bool
    import pyarrow as pa
    import pyarrow.compute as pc

    from .delimited import PY_WHITESPACE

    column = pa.array(aliases, type=pa.large_string())
    out = alias_tuples(column)
    listed = np.flatnonzero(pc.starts_with(pc.utf8_ltrim(column, characters=PY_WHITESPACE), "[").to_numpy(zero_copy_only=False)).tolist()
    deque(map(out.__setitem__, listed, map(tuple, map(parse_aliases, map(aliases.__getitem__, listed)))), maxlen=0)  # a JSON list
    return out


def _ordered_codes(relations: list[str], order: Any) -> tuple[Any, list[str]]:
    """The relations taken in ``order`` as integer codes and labels, labels in order of first appearance there."""
    try:
        import pandas as pd
    except ImportError:  # pandas is optional; pyarrow is here
        import pyarrow as pa
        import pyarrow.compute as pc

        encoded = pc.dictionary_encode(pa.array(relations, type=pa.string()).take(pa.array(order)))
        return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary.to_pylist()
    values = np.empty(len(relations), dtype=object)
    values[:] = relations
    codes, labels = pd.factorize(values)  # a C hash table over the str objects
    renumbered, used = pd.factorize(codes[order])  # numbered again by first appearance in the edge order
    return renumbered.astype(np.int64), [labels[i] for i in used]


def _int_or_text(value: str) -> Any:
    try:
        return int(value)
    except ValueError:
        return value


def _relation(data: dict[str, Any], key: Any) -> str:
    relation = _first(data, ("relation", "label", "predicate", "type"))
    if relation is None and isinstance(key, str) and not key.isdigit() and not key.startswith("e"):
        relation = key
    return str(relation or DEFAULT_RELATION)


def _edge_columns(sources: list[Any], targets: list[Any], keys: list[Any], datas: list[dict[str, Any]]) -> tuple[list[str], ...]:
    """(source, relation, target, description) columns; the per-edge rules run only when some edge is not plain
    (a non-empty string relation, a string or missing description)."""
    relations = [d.get("relation") for d in datas]
    descriptions = [d.get("description") for d in datas]
    plain_relations = set(map(type, relations)) == {str} and "" not in relations
    if not plain_relations:  # a missing, empty or typed relation: the label, predicate, type or edge key decides
        relations = [_relation(d, k) for d, k in zip(datas, keys)]
    if not set(map(type, descriptions)) <= {str, type(None)}:
        descriptions = [str(d.get("description") or "") for d in datas]
    else:
        descriptions = [d or "" for d in descriptions]
    as_text = (lambda values: values if set(map(type, values)) == {str} else [str(v) for v in values])  # noqa: E731
    return as_text(sources), relations, as_text(targets), descriptions


def _read_with_networkx(path: Path) -> tuple[list[tuple[Any, dict[str, Any]]], tuple[Any, ...]]:
    import networkx as nx  # on use (the last of three readers): importing it cost a second of every start-up

    try:
        g = nx.read_graphml(path, force_multigraph=True)
    except ParseError as exc:
        line, column = exc.position
        raise KGError(f"{path.name} line {line} column {column + 1}: invalid GraphML (XML parse error: {exc.msg if hasattr(exc, 'msg') else exc})") from None
    except (nx.NetworkXError, ValueError, KeyError) as exc:
        raise KGError(f"{path.name}: invalid GraphML: {exc}") from None
    edges = list(g.edges(keys=True, data=True))
    columns = tuple(list(column) for column in zip(*edges)) if edges else ([], [], [], [])
    return list(g.nodes(data=True)), (*columns, None, None)


def save_graphml(kg: KnowledgeGraph, path: Path) -> Path:
    """Write ``kg`` as GraphML (aliases joined with ``;``)."""
    import networkx as nx

    g = nx.MultiDiGraph()
    for e in kg.entities():
        g.add_node(e.id, name=e.name, type=e.type, description=e.description, aliases=ALIAS_SEPARATOR.join(e.aliases))
    for r in kg.relations():
        g.add_edge(r.source, r.target, key=r.relation, relation=r.relation, description=r.description)
    import io

    from ..._outdir import write_bytes  # atomic, a planted symlink replaced

    buf = io.BytesIO()
    nx.write_graphml(g, buf)
    write_bytes(path, buf.getvalue())
    return path
