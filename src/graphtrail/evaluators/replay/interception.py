"""Ablation filtering at the one point every LangChain tool call passes through.

Agents call tools in many ways: LangGraph's ``ToolNode`` (``create_agent``,
``create_react_agent``), a hand-written node doing ``tools_by_name[name].invoke(args)``
as in the LangGraph tutorial, ``tool.run(...)``, ``await tool.ainvoke(...)``,
tools called from a subgraph, from plain Python, or in parallel. Walking the
graph for known node shapes misses most of these. What they all share is
:meth:`BaseTool.run` / :meth:`BaseTool.arun`: ``invoke``/``ainvoke`` (of every
tool class langchain-core ships) end there.

So :func:`install` patches those two methods once. The patch is inert (one
ContextVar read) unless a replay run entered :func:`filtering`, which only
the evaluator's replay runner does. Inside such a run, a user's tool runs as
a :class:`~.user_tools.FilteredTool` proxy: one tool run, the same callbacks,
and the output is filtered *before* ``on_tool_end``, so the model and the
tracer both see the ablated graph.

The scope also counts, per tool name, the calls that went through a filter
and those whose filtered output still named a hidden id. The replay runner
compares those counts with the tool steps the tracer recorded
(:func:`coverage_of`): a traced tool call that never reached a filter ran in
a context the evaluation could not reach (a bare thread, a tool overriding
``run``), and the coverage guard (:mod:`.coverage`) says so.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import re
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from ...agents.views import GraphFilter, active_filter

__all__ = ["install", "installed", "filtering", "FilterScope", "coverage_of", "current_scope"]


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

    def proxy(self, tool: BaseTool) -> BaseTool:
        from .filters import FilteredTool

        found = self._proxies.get(id(tool))
        if found is not None and found[0] is tool:
            return found[1]
        wrapped = FilteredTool.wrap(tool)
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
    from .filters import _endpoints, _entity_id, _parse_json

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


_scope: contextvars.ContextVar[FilterScope | None] = contextvars.ContextVar("graphtrail_filter_scope", default=None)


def current_scope() -> FilterScope | None:
    """The replay run's :class:`FilterScope`, or ``None`` outside a filtered replay run."""
    return _scope.get()


@contextlib.contextmanager
def filtering(graph_filter: GraphFilter, names: Mapping[str, str] | None = None) -> Iterator[FilterScope]:
    """Route every tool call started inside the block through ``graph_filter`` (installs the patch)."""
    install()
    scope = FilterScope(graph_filter, names)
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


def _route(tool: BaseTool) -> BaseTool:
    """The tool to run in place of ``tool`` in the current context (``tool`` itself when not filtering)."""
    scope = _scope.get()
    if scope is None:
        return tool
    graph_filter = active_filter()
    if graph_filter is None or graph_filter.is_empty:
        return tool
    from .filters import FilteredTool, _is_graphtrail_tool

    scope.count(tool.name)
    if isinstance(tool, FilteredTool) or _is_graphtrail_tool(tool):
        return tool  # filters itself (the proxy's _run, or graphtrail's KG view)
    return scope.proxy(tool)


_originals: dict[str, Any] = {}
_install_lock = threading.Lock()


def install() -> None:
    """Patch :meth:`BaseTool.run` and :meth:`BaseTool.arun` (once per process; idempotent)."""
    with _install_lock:
        if _originals:
            return
        run, arun = BaseTool.run, BaseTool.arun

        @functools.wraps(run)
        def graphtrail_run(self: BaseTool, *args: Any, **kwargs: Any) -> Any:
            if _scope.get() is None:
                return run(self, *args, **kwargs)
            return run(_route(self), *args, **kwargs)

        @functools.wraps(arun)
        async def graphtrail_arun(self: BaseTool, *args: Any, **kwargs: Any) -> Any:
            if _scope.get() is None:
                return await arun(self, *args, **kwargs)
            return await arun(_route(self), *args, **kwargs)

        _originals.update(run=run, arun=arun)
        BaseTool.run = graphtrail_run  # type: ignore[method-assign]
        BaseTool.arun = graphtrail_arun  # type: ignore[method-assign]


def installed() -> bool:
    return bool(_originals)


def coverage_of(scope: FilterScope | None, trajectory: Any) -> dict[str, dict[str, int]] | None:
    """Per tool name: ``{"filtered": n, "unfiltered": m}`` for one replay run.

    ``unfiltered`` counts the tool steps the tracer recorded beyond the calls
    that went through a filter, plus filtered calls whose output still named a
    hidden id. ``None`` when the run was not filtered (nothing to guard).
    """
    if scope is None:
        return None
    steps: Counter[str] = Counter(step.tool for step in getattr(trajectory, "steps", None) or [])
    out: dict[str, dict[str, int]] = {}
    for tool in sorted(set(steps) | set(scope.routed)):
        routed, leaked = scope.routed[tool], scope.leaked[tool]
        out[tool] = {"filtered": routed - leaked, "unfiltered": max(steps[tool] - routed, 0) + leaked}
    return out
