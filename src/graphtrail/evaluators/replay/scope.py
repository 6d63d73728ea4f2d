"""One filtered replay run's bookkeeping: which tools were routed through the filter, which leaked.

A :class:`FilterScope` lives for one replay run (:func:`.interception.filtering`
enters it). It counts, per tool name, the calls that went through a filter and
those whose filtered output still named a hidden id, and holds the run's tool
proxies. :class:`~.tools.FilteredTool` reports to it through :func:`current_scope`;
the replay runner turns the counts into ``RunRecord.tool_coverage``.
"""

from __future__ import annotations

import contextvars
import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from ...kg.views import GraphFilter
from .filters import _endpoints, _entity_id, _parse_json

__all__ = ["FilterScope", "current_scope", "scope_var"]


class FilterScope:
    """One replay run's filter bookkeeping: names known for hidden entities, and call counts."""

    def __init__(self, graph_filter: GraphFilter, names: Mapping[str, str] | None = None) -> None:
        self.graph_filter = graph_filter
        #: id -> name of entities the baseline run saw; lets the plain-text filter drop lines naming them.
        self.names = dict(names or {})
        self.routed: Counter[str] = Counter()
        self.leaked: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._leak_pattern: re.Pattern[str] | None = None
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

    def count(self, tool: str) -> None:
        with self._lock:
            self.routed[tool] += 1

    def check_leak(self, tool: str, output: Any) -> None:
        """Count ``output`` as leaked when a hidden entity is still in it after filtering.

        Structured parts (dicts, lists, JSON text) are walked: an entity or edge
        with a hidden id, or a bare hidden id in a list, is a leak. The text is
        also searched for hidden ids as whole tokens, but only for ids that
        contain a letter and are at least two characters long: ``1`` or ``42``
        would match counts and years, and report leaks that are not there.
        """
        hidden = self.graph_filter.hidden
        if not hidden:
            return
        if self._leak_pattern is None:
            ids = sorted((e for e in hidden if len(e) >= 2 and any(c.isalpha() for c in e)), key=len, reverse=True)
            self._leak_pattern = (
                re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, ids)) + r")(?![\w-])") if ids else _NEVER
            )
        text = _as_text(output)
        if self._leak_pattern.search(text) or _structured_leak(output, hidden):
            with self._lock:
                self.leaked[tool] += 1


_NEVER = re.compile(r"(?!)")


def _structured_leak(output: Any, hidden: frozenset[str]) -> bool:
    if isinstance(output, ToolMessage):
        return _structured_leak(output.content, hidden) or _structured_leak(output.artifact, hidden)
    if isinstance(output, tuple):
        return any(_structured_leak(part, hidden) for part in output)
    if isinstance(output, str):
        parsed = _parse_json(output)
        return parsed is not None and _structured_leak(parsed, hidden)
    stack = [output]
    while stack:
        obj = stack.pop()
        if isinstance(obj, dict):
            eid = _entity_id(obj)
            ends = _endpoints(obj)
            if (eid is not None and eid in hidden) or (ends is not None and (ends[0] in hidden or ends[1] in hidden)):
                return True
            stack.extend(obj.values())
        elif isinstance(obj, list):
            if any(isinstance(item, (str, int)) and not isinstance(item, bool) and str(item) in hidden for item in obj):
                return True
            stack.extend(obj)
    return False


def _as_text(output: Any) -> str:
    if isinstance(output, ToolMessage):
        return _as_text(output.content) + "\n" + _as_text(output.artifact)
    if isinstance(output, str):
        return output
    try:
        return json.dumps(output, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(output)


#: The running replay's scope; :mod:`.interception` enters it and reads it directly on its hot path.
scope_var: contextvars.ContextVar[FilterScope | None] = contextvars.ContextVar("graphtrail_filter_scope", default=None)


def current_scope() -> FilterScope | None:
    """The replay run's :class:`FilterScope`, or ``None`` outside a filtered replay run."""
    return scope_var.get()
