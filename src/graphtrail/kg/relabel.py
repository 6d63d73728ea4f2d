"""A masked node keyed by its name gets a new key in a networkx view: its name is gone, so its key goes too.

A graph keyed by names (``G.add_node("Lise Meitner", ...)``: no name attribute, or
one equal to the key) has no id apart from the name. Keeping a masked node's key
would keep its name: ``"Lise Meitner" in G``, ``G.nodes["Lise Meitner"]`` and every
neighbour listing would still spell and find it. Such a node is shown under
:func:`masked_key` (the placeholder and a digest of the key, which does not spell
the name), in the node mapping and in every adjacency, so its edges follow it and
its old key finds nothing (docs/ablations.md, "What an ablation does").

Used by both networkx views: ``graphtrail.evaluators.ablated`` (one condition, fixed)
and :func:`~graphtrail.kg.live.ablated_view` (the current run's condition, read on
every access). The renames come from a callable so that one wrapper serves both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .views import GraphFilter, masked_key

__all__ = ["masked_key", "keyed_by_name", "placeholder", "renamed_nodes", "relabel", "Renames", "NO_RENAMES"]

#: ``(new, old)``: old key -> new key, and back.
Renames = tuple[Mapping[Any, Any], Mapping[Any, Any]]
NO_RENAMES: Renames = ({}, {})


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def keyed_by_name(node: Any, attrs: Mapping[str, Any], name: str) -> bool:
    """Whether the node's key is its name: a string key, and no name attribute or one equal to the key."""
    if not isinstance(node, str):
        return False
    shown = attrs.get(name)
    return not isinstance(shown, str) or not shown.strip() or _fold(shown) == _fold(node)


def placeholder(graph_filter: GraphFilter, eid: str, name: Any = None) -> str:
    """What a masked entity named ``name`` is shown as: ``"[masked entity] <id>"``, unless the id spells the
    name (``"Lise Meitner"``, ``"dbr:Lise_Meitner"``: then the placeholder would spell it, and a lookup of the
    shown text would find the name): :func:`masked_key` (:meth:`GraphFilter.masked_name`). The output filter
    uses it wherever it writes a masked entity's placeholder."""
    return graph_filter.masked_name(eid, name)


def renamed_nodes(nodes: Mapping[Any, Any], graph_filter: GraphFilter, name: str) -> Renames:
    """The masked nodes of ``nodes`` (the graph's own node -> attributes) keyed by their name, with their new keys."""
    new: dict[Any, str] = {}
    for eid in graph_filter.masked:
        if eid in graph_filter.hidden or eid not in nodes:
            continue
        if keyed_by_name(eid, nodes[eid], name):
            key = masked_key(eid)
            while key in nodes:  # a digest that is some node's key already: lengthen it
                key += "~"
            new[eid] = key
    return (new, {v: k for k, v in new.items()}) if new else NO_RENAMES


class Relabelled(Mapping[Any, Any]):
    """A node-keyed mapping (``_node``; ``_adj``/``_succ``/``_pred`` with ``depth=2``) with some keys renamed on read.

    The old key of a renamed node is absent at every level; the new one reads the old entry.
    """

    def __init__(self, inner: Mapping[Any, Any], renames: Callable[[], Renames], depth: int = 1,
                 name: str | None = None) -> None:
        self._inner, self._renames, self._depth, self._name = inner, renames, depth, name

    def __getitem__(self, key: Any) -> Any:
        new, old = self._renames()
        if not new:
            return self._inner[key]
        if key in new:
            raise KeyError(key)
        was = old.get(key, key)
        value = self._inner[was]
        if self._depth > 1:
            return Relabelled(value, self._renames, self._depth - 1)
        if self._name is not None and was in new and isinstance(value, Mapping):
            value = {**value, self._name: key}  # its name is its new key: the old one spelled the name
        return value

    def __iter__(self) -> Iterator[Any]:
        new = self._renames()[0]
        if not new:
            return iter(self._inner)
        return (new.get(k, k) for k in self._inner)

    def __len__(self) -> int:
        return len(self._inner)

    def __contains__(self, key: object) -> bool:
        new, old = self._renames()
        try:
            if key in new:
                return False
            return old.get(key, key) in self._inner
        except TypeError:  # an unhashable key is no node
            return False


def relabel(view: Any, renames: Callable[[], Renames], name: str) -> None:
    """Wrap ``view``'s node mapping and adjacencies so the nodes ``renames()`` names read under their new keys.

    Call it before anything reads the view (networkx caches ``view.nodes``/``view.adj`` on first use).
    """
    view._node = Relabelled(view._node, renames, 1, name)
    if view.is_directed():
        view._succ = Relabelled(view._succ, renames, 2)
        view._pred = Relabelled(view._pred, renames, 2)
    else:
        view._adj = Relabelled(view._adj, renames, 2)
