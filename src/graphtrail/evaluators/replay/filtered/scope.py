"""One filtered replay run's bookkeeping: which tools were routed through the filter.

A :class:`FilterScope` lives for one replay run (:func:`.interception.filtering`
enters it). It counts, per tool name, the calls that went through a filter, and holds
the run's tool proxies. Whether a hidden entity still reached the model is not
judged here from tool outputs but from the model's inputs (:mod:`.leaks`). :class:`~.tools.FilteredTool` reports to it through :func:`current_scope`;
the replay runner turns the counts into ``RunRecord.tool_coverage``.
"""

from __future__ import annotations

import contextvars
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.tools import BaseTool

from ....kg.views import GraphFilter

__all__ = ["FilterScope", "current_scope", "scope_var"]


class FilterScope:
    """One replay run's filter bookkeeping: names known for hidden entities, and call counts."""

    def __init__(self, graph_filter: GraphFilter, names: Mapping[str, str] | None = None) -> None:
        self.graph_filter = graph_filter
        #: id -> name of entities the baseline run saw; lets the plain-text filter drop lines naming them.
        self.names = dict(names or {})
        #: every name the evaluation knows (KG and baselines), for reading table cells (:mod:`.tablefilter`); None: ``names`` only
        self.entity_names: Any = None
        self.routed: Counter[str] = Counter()
        #: tool -> calls whose filter removed entities the condition keeps (:mod:`.overfilter`)
        self.over_filtered: Counter[str] = Counter()
        #: how each tool call's output was ablated: "exact" | "filtered" | "estimated" -> calls (:mod:`.method`)
        self.methods: Counter[str] = Counter()
        #: reads of a data-source wrapper (``ablated_view``, ...) under this run's condition (``[count]``)
        self.source_reads = [0]
        self._lock = threading.Lock()
        # id(tool) -> (tool, its proxy): a run calls the same tools again and again, and a
        # fresh proxy would recompute LangChain's per-instance caches on every call. Held
        # for this run only (the scope dies with it), so no tool is kept alive by graphtrail.
        self._proxies: dict[int, tuple[BaseTool, BaseTool]] = {}

    def proxy(self, tool: BaseTool, wrap: Callable[[BaseTool], BaseTool]) -> BaseTool:
        """``wrap(tool)``, made once per tool for this run."""
        found = self._proxies.get(id(tool))
        if found is not None and found[0] is tool:
            return found[1]
        wrapped = wrap(tool)
        with self._lock:
            self._proxies[id(tool)] = (tool, wrapped)
        return wrapped

    def over_filtered_call(self, tool: str, lost: list[str]) -> None:
        with self._lock:
            self.over_filtered[tool] += 1

    def note_method(self, method: str) -> None:
        with self._lock:
            self.methods[method] += 1

    def count(self, tool: str) -> None:
        with self._lock:
            self.routed[tool] += 1


#: The running replay's scope; :mod:`.interception` enters it and reads it directly on its hot path.
scope_var: contextvars.ContextVar[FilterScope | None] = contextvars.ContextVar("graphtrail_filter_scope", default=None)


def current_scope() -> FilterScope | None:
    """The replay run's :class:`FilterScope`, or ``None`` outside a filtered replay run."""
    return scope_var.get()
