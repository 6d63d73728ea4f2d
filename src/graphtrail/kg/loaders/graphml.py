"""GraphML, read and written through networkx.

Aliases travel as one ``;``-separated attribute; an edge's relation is its
``relation``/``label``/``predicate``/``type`` attribute, else a meaningful key.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

import networkx as nx

from ..errors import KGError
from ..fields import ALIAS_SEPARATOR, DEFAULT_RELATION, parse_aliases
from ..graph import KnowledgeGraph
from .bulk import add_triples
from .paths import PathLike, graph_name

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
    try:
        g = nx.read_graphml(path, force_multigraph=True)
    except ParseError as exc:
        line, column = exc.position
        raise KGError(f"{path.name} line {line} column {column + 1}: invalid GraphML (XML parse error: {exc.msg if hasattr(exc, 'msg') else exc})") from None
    except (nx.NetworkXError, ValueError, KeyError) as exc:
        raise KGError(f"{path.name}: invalid GraphML: {exc}") from None
    kg = KnowledgeGraph(name=graph_name(path))
    if "" in g:  # networkx keeps <node id=""/>; every other format refuses an empty id
        raise KGError(f"{path.name}: a <node> with an empty id; every node needs a non-empty id")
    columns: tuple[list[Any], ...] = ([], [], [], [], [])
    for node, data in g.nodes(data=True):  # networkx node ids are distinct
        for column, value in zip(columns, (
            str(node),
            str(_first(data, ("name", "title", "label"), node)),
            str(_first(data, ("type", "entity_type"), "entity")),
            str(_first(data, ("description",), "")),
            tuple(parse_aliases(data.get("aliases"))),
        )):  # fmt: skip
            column.append(value)
    kg._store.add_entities(*columns)
    ends: tuple[list[str], ...] = ([], [], [], [])
    for source, target, key, data in g.edges(keys=True, data=True):
        relation = _first(data, ("relation", "label", "predicate", "type"))
        if relation is None and isinstance(key, str) and not key.isdigit() and not key.startswith("e"):
            relation = key
        for column, value in zip(ends, (str(source), str(relation or DEFAULT_RELATION), str(target), str(data.get("description") or ""))):
            column.append(value)
    if ends[0] and not add_triples(kg, ends[0], ends[1], ends[2], ends[3] if any(ends[3]) else None):
        for source, relation, target, description in zip(*ends):  # pragma: no cover - astronomically large graphs
            kg.add_relation(source, relation, target, description)
    return kg


def save_graphml(kg: KnowledgeGraph, path: Path) -> Path:
    """Write ``kg`` as GraphML (aliases joined with ``;``)."""
    g = nx.MultiDiGraph()
    for e in kg.entities():
        g.add_node(e.id, name=e.name, type=e.type, description=e.description, aliases=ALIAS_SEPARATOR.join(e.aliases))
    for r in kg.relations():
        g.add_edge(r.source, r.target, key=r.relation, relation=r.relation, description=r.description)
    nx.write_graphml(g, path)
    return path
