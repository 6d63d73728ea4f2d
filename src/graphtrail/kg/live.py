"""Ablation at the data source for a user's own networkx graph: a live view that honours the current condition.

The exact route (docs/ablations.md, "Routes"): tools that read
``ablated_view(graph)`` instead of ``graph`` see, in each replay run, the graph as
that run's condition leaves it, and the real graph everywhere else. The view is
networkx's own :func:`networkx.subgraph_view`; its node filter reads
:func:`~graphtrail.kg.views.active_filter` on every access, so concurrent runs
each see their own condition and nothing is copied. Following the one definition
(docs/ablations.md, "What an ablation does"): hidden nodes go with their edges;
a masked node keeps its id and edges, its name attribute reads as the placeholder
and its text attributes are gone (so a lookup by its real name finds nothing); a
text-blocked node loses its text attributes. :class:`NodeAttributes` does the
rewriting for this live view and for ``graphtrail.evaluators.ablated`` alike.

A masked node keyed by its name (no name attribute, or one equal to the key) would
keep its name in its key; the view shows it under the placeholder key of
:mod:`.relabel` instead, in the node mapping and every adjacency, so membership,
``view.nodes[name]``, a scan of the nodes and neighbour listings all miss the real
name, as in a graph built without it. Which nodes those are is worked out once per
condition (from the graph as it is then).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .relabel import NO_RENAMES, Renames, relabel, renamed_nodes
from .views import GraphFilter, active_filter, note_source_read

__all__ = ["ablated_view", "NodeAttributes", "TEXT_ATTRIBUTES"]

#: The node attributes that hold an entity's text, unless told otherwise.
TEXT_ATTRIBUTES = ("description", "text", "summary")


class NodeAttributes(Mapping[Any, Any]):
    """A graph's node -> attribute-dict mapping, masked and text-blocked nodes rewritten on read (nothing copied)."""

    def __init__(self, nodes: Mapping[Any, Any], condition: Callable[[], GraphFilter | None], name: str = "name",
                 text: tuple[str, ...] = TEXT_ATTRIBUTES) -> None:
        self._nodes, self._condition, self._name, self._text = nodes, condition, name, text

    def __getitem__(self, node: Any) -> Any:
        attrs = self._nodes[node]
        f = self._condition()
        if f is None:
            return attrs
        eid = str(node)
        if eid in f.masked or eid in f.text_blocked:
            attrs = {k: v for k, v in attrs.items() if k not in self._text}
            if eid in f.masked:
                attrs[self._name] = f.masked_name(eid, self._nodes[node].get(self._name))
                attrs.pop("aliases", None)
        return attrs

    def __iter__(self) -> Iterator[Any]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node: object) -> bool:
        return node in self._nodes


def _shown(node: Any) -> bool:
    graph_filter = active_filter()
    if graph_filter is None:
        return True
    note_source_read()  # the run read its ablated data: its numbers are exact (evaluators' ``method``)
    return str(node) not in graph_filter.hidden


def ablated_view(graph: Any, *, name: str = "name", text: tuple[str, ...] = TEXT_ATTRIBUTES) -> Any:
    """A read-only live view of a networkx graph as the current run's condition leaves it (all of it outside a run).

    ``name`` and ``text``: the node attributes holding an entity's name and its text.
    """
    import networkx as nx

    view = nx.subgraph_view(graph, filter_node=_shown)
    view._node = NodeAttributes(view._node, active_filter, name, text)  # before any NodeView reads it
    relabel(view, _RunRenames(graph, name), name)
    return view


class _RunRenames:
    """The current run's renamed nodes (:func:`.relabel.renamed_nodes`), worked out once per condition."""

    _LIMIT = 256  # conditions remembered; an evaluation has a few per question

    def __init__(self, graph: Any, name: str) -> None:
        self._graph, self._name = graph, name
        self._known: dict[GraphFilter, Renames] = {}
        self._last: tuple[GraphFilter | None, Renames] = (None, NO_RENAMES)  # read on every access: no hashing
        self._lock = threading.Lock()

    def __call__(self) -> Renames:
        f = active_filter()
        if f is None:
            return NO_RENAMES
        last = self._last
        if last[0] is f:
            if last[1][0]:
                note_source_read()  # a lookup the renames answer alone (an old key) still read the ablated data
            return last[1]
        found = self._known.get(f) if f.masked else NO_RENAMES
        if found is None:
            found = renamed_nodes(self._graph._node, f, self._name)
            with self._lock:
                if len(self._known) >= self._LIMIT:
                    self._known.clear()
                self._known[f] = found
        self._last = (f, found)
        if found[0]:
            note_source_read()
        return found
