"""Ablation at the data source for a user's own networkx graph: a live view that honours the current condition.

The exact route (docs/ablations.md, "The exact route"): tools that read
``ablated_view(graph)`` instead of ``graph`` see, in each replay run, the graph
without that run's hidden entities, and the real graph everywhere else. The
view is networkx's own :func:`networkx.subgraph_view`; its node filter reads
:func:`~graphtrail.kg.views.active_filter` on every access, so concurrent runs
each see their own condition and nothing is copied. Edges touching a hidden
node go with it. Masked names are not rewritten here: the evaluation's output
filter masks them in what the tool returns.
"""

from __future__ import annotations

from typing import Any

from .views import active_filter, note_source_read

__all__ = ["ablated_view"]


def _shown(node: Any) -> bool:
    graph_filter = active_filter()
    if graph_filter is None:
        return True
    note_source_read()
    return str(node) not in graph_filter.hidden


def ablated_view(graph: Any) -> Any:
    """A read-only live view of a networkx graph without the current run's hidden nodes (all of them outside a run)."""
    import networkx as nx

    return nx.subgraph_view(graph, filter_node=_shown)
