"""networkx graphs ablated as live views: nothing is copied, the user's graph is never changed.

Hidden nodes (and every edge touching them) are left out by networkx's own
:func:`networkx.subgraph_view`. Masked and text-blocked nodes keep their place and
edges; reading their attributes gives a rewritten copy of that one node's dict
(name -> ``"[masked entity] <id>"`` and no text for a masked node, no text for a
text-blocked one), so a tool that looks a node up by its real name finds nothing.
Name and text attributes come from :class:`~.ablate.Keys`. Works for ``Graph``,
``DiGraph``, ``MultiGraph`` and ``MultiDiGraph`` alike.

A graph keyed by names (``G.add_node("Lise Meitner", ...)``: no name attribute, or
one equal to the key) has no id apart from the name, so keeping a masked node's key
would keep its name: ``"Lise Meitner" in G`` and ``G.nodes["Lise Meitner"]`` would
still find it. Such a node is relabelled, in the view, to :func:`masked_key` (the
placeholder and a digest of the key, which does not spell the name), in the node
mapping and in every adjacency, so its edges follow it; its old key finds nothing.
The factory route recognises the new key as that entity (:mod:`.recognise`).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ....kg.graph import KnowledgeGraph
from ....kg.live import NodeAttributes
from ....kg.views import MASK_PLACEHOLDER, GraphFilter

__all__ = ["ablated_graph", "graph_catalogue", "register", "masked_key", "placeholders"]


def masked_key(eid: str) -> str:
    """The key of a masked node keyed by its name: the placeholder and a digest that does not spell the name."""
    return f"{MASK_PLACEHOLDER} {hashlib.blake2b(eid.encode('utf-8'), digest_size=5).hexdigest()}"


def placeholders(graph_filter: GraphFilter | None) -> dict[str, str]:
    """``{masked_key(id): id}`` for the condition's masked entities: the new keys read back as the entities."""
    return {masked_key(eid): eid for eid in graph_filter.masked} if graph_filter is not None else {}


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _keyed_by_name(node: Any, attrs: Mapping[str, Any], name: str) -> bool:
    """Whether the node's key is its name: a string key, and no name attribute or one equal to the key."""
    if not isinstance(node, str):
        return False
    shown = attrs.get(name)
    return not isinstance(shown, str) or not shown.strip() or _fold(shown) == _fold(node)


class _Relabelled(Mapping[Any, Any]):
    """A node-keyed mapping (``_node``; ``_adj``/``_succ``/``_pred`` with ``depth=2``) with some keys renamed on read.

    The old key of a renamed node is absent at every level; the new one reads the old entry.
    """

    def __init__(self, inner: Mapping[Any, Any], new: Mapping[Any, Any], old: Mapping[Any, Any], depth: int = 1,
                 name: str | None = None) -> None:
        self._inner, self._new, self._old, self._depth, self._name = inner, new, old, depth, name

    def __getitem__(self, key: Any) -> Any:
        if key in self._new:
            raise KeyError(key)
        old = self._old.get(key, key)
        value = self._inner[old]
        if self._depth > 1:
            return _Relabelled(value, self._new, self._old, self._depth - 1)
        if self._name is not None and old in self._new and isinstance(value, Mapping):
            value = {**value, self._name: key}  # its name is its new key: the old one spelled the name
        return value

    def __iter__(self) -> Iterator[Any]:
        new = self._new
        return (new.get(k, k) for k in self._inner)

    def __len__(self) -> int:
        return len(self._inner)

    def __contains__(self, key: object) -> bool:
        try:
            if key in self._new:
                return False
            return self._old.get(key, key) in self._inner
        except TypeError:  # an unhashable key is no node
            return False


def _relabel(view: Any, graph: Any, graph_filter: GraphFilter, name: str) -> None:
    """Rename, in ``view``, the masked nodes of ``graph`` that are keyed by their name (the module docstring)."""
    new: dict[Any, str] = {}
    for eid in graph_filter.masked:
        node = eid if eid in graph._node else None
        if node is not None and eid not in graph_filter.hidden and _keyed_by_name(node, graph._node[node], name):
            key = masked_key(eid)
            while key in graph._node:  # a digest that is some node's key already: lengthen it
                key += "~"
            new[node] = key
    if not new:
        return
    old = {v: k for k, v in new.items()}
    view._node = _Relabelled(view._node, new, old, 1, name)
    if view.is_directed():
        view._succ = _Relabelled(view._succ, new, old, 2)
        view._pred = _Relabelled(view._pred, new, old, 2)
    else:
        view._adj = _Relabelled(view._adj, new, old, 2)


def ablated_graph(graph: Any, graph_filter: GraphFilter, keys: Any) -> Any:
    """A read-only view of ``graph`` as ``graph_filter`` leaves it (see the module docstring)."""
    import networkx as nx

    hidden = graph_filter.hidden
    view = nx.subgraph_view(graph, filter_node=(lambda n: str(n) not in hidden)) if hidden else nx.subgraph_view(graph)
    if graph_filter.masked or graph_filter.text_blocked:  # before any NodeView reads it
        view._node = NodeAttributes(view._node, lambda: graph_filter, keys.name, keys.text)
    if graph_filter.masked:
        _relabel(view, graph, graph_filter, keys.name)
    return view


def _relation(data: Mapping[str, Any], key: Any) -> str:
    for name in ("relation", "type", "label", "predicate"):
        if isinstance(data.get(name), str):
            return data[name]
    return str(key) if isinstance(key, str) else "related_to"


def graph_catalogue(graph: Any, keys: Any) -> KnowledgeGraph:
    """The graph's entities (name, type, text from ``keys``) and relations, as a KnowledgeGraph."""
    kg = KnowledgeGraph(name=str(graph.graph.get("name") or "graph"))
    for node, data in graph.nodes(data=True):
        text = "\n".join(str(data[k]) for k in keys.text if isinstance(data.get(k), str) and data.get(k))
        name = data.get(keys.name)
        kg.add_entity(str(node), name if isinstance(name, str) else None, str(data.get(keys.type) or "entity"), text,
                      data.get("aliases") or ())
    edges = graph.edges(keys=True, data=True) if graph.is_multigraph() else ((u, v, None, d) for u, v, d in graph.edges(data=True))
    for u, v, key, data in edges:
        kg.add_relation(str(u), _relation(data, key), str(v), str(data.get("description") or ""))
    return kg


def register(add: Callable[..., None]) -> bool:
    """Register networkx's graphs once networkx is imported (a graph of it to ablate means it is; importing it for
    data of another type cost the first evaluation 0.1 s). Whether they are in."""
    nx = sys.modules.get("networkx")
    if nx is None or not hasattr(nx, "Graph"):
        return False
    add(nx.Graph, ablated_graph, graph_catalogue)  # DiGraph, MultiGraph, MultiDiGraph are subclasses
    return True
