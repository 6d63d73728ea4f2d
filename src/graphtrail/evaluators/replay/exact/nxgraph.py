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

import sys
from collections.abc import Callable, Mapping
from typing import Any

from ....kg.graph import KnowledgeGraph
from ....kg.live import NodeAttributes
from ....kg.relabel import masked_key, relabel, renamed_nodes
from ....kg.views import GraphFilter

__all__ = ["ablated_graph", "graph_catalogue", "register", "masked_key", "placeholders"]


def placeholders(graph_filter: GraphFilter | None) -> dict[str, str]:
    """``{masked_key(id): id}`` for the condition's masked entities: the new keys read back as the entities."""
    return {masked_key(eid): eid for eid in graph_filter.masked} if graph_filter is not None else {}


def ablated_graph(graph: Any, graph_filter: GraphFilter, keys: Any) -> Any:
    """A read-only view of ``graph`` as ``graph_filter`` leaves it (see the module docstring)."""
    import networkx as nx

    hidden = graph_filter.hidden
    view = nx.subgraph_view(graph, filter_node=(lambda n: str(n) not in hidden)) if hidden else nx.subgraph_view(graph)
    if graph_filter.masked or graph_filter.text_blocked:  # before any NodeView reads it
        view._node = NodeAttributes(view._node, lambda: graph_filter, keys.name, keys.text)
    if graph_filter.masked:
        renames = renamed_nodes(graph._node, graph_filter, keys.name)  # the module docstring's relabelling
        if renames[0]:
            relabel(view, lambda: renames, keys.name)
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
