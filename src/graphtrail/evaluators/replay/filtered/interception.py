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
a :class:`~.tools.FilteredTool` proxy: one tool run, the same callbacks,
and the output is filtered *before* ``on_tool_end``, so the model and the
tracer both see the ablated graph.

The scope also counts, per tool name, the calls that went through a filter. The replay runner
compares those counts with the tool steps the tracer recorded
(:func:`coverage_of`): a traced tool call that never reached a filter ran in
a context the evaluation could not reach (a bare thread, a tool overriding
``run``), and the coverage guard (:mod:`graphtrail.evaluators.scoring.coverage`) says so.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.tools import BaseTool

from ....kg.views import GraphFilter, active_filter, counting_source_reads
from .scope import FilterScope, current_scope, scope_var
from .tools import FilteredTool, is_graphtrail_tool

__all__ = ["install", "installed", "filtering", "FilterScope", "coverage_of", "current_scope"]


@contextlib.contextmanager
def filtering(graph_filter: GraphFilter, names: Mapping[str, str] | None = None) -> Iterator[FilterScope]:
    """Route every tool call started inside the block through ``graph_filter`` (installs the patch)."""
    install()
    scope = FilterScope(graph_filter, names)
    token = scope_var.set(scope)
    try:
        with counting_source_reads(scope.source_reads):
            yield scope
    finally:
        scope_var.reset(token)


def _route(tool: BaseTool) -> BaseTool:
    """The tool to run in place of ``tool`` in the current context (``tool`` itself when not filtering)."""
    scope = scope_var.get()
    if scope is None:
        return tool
    graph_filter = active_filter()
    if graph_filter is None or graph_filter.is_empty:
        return tool
    scope.count(tool.name)
    if is_graphtrail_tool(tool):
        scope.note_method("exact")  # reads the KnowledgeGraph's filtered view: the ablated graph itself
        return tool
    if isinstance(tool, FilteredTool):
        return tool  # filters itself (the proxy's _run, or graphtrail's KG view)
    return scope.proxy(tool, FilteredTool.wrap)


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
            if scope_var.get() is None:
                return run(self, *args, **kwargs)
            return run(_route(self), *args, **kwargs)

        @functools.wraps(arun)
        async def graphtrail_arun(self: BaseTool, *args: Any, **kwargs: Any) -> Any:
            if scope_var.get() is None:
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
    that went through a filter. ``None`` when the run was not filtered (nothing
    to guard). Whether a hidden entity reached the model anyway is the
    model-input check's job (:mod:`.leaks`).
    """
    if scope is None:
        return None
    steps: Counter[str] = Counter(step.tool for step in getattr(trajectory, "steps", None) or [])
    out: dict[str, dict[str, int]] = {}
    for tool in sorted(set(steps) | set(scope.routed) | set(scope.over_filtered)):
        routed = scope.routed[tool]
        out[tool] = {"filtered": routed, "unfiltered": max(steps[tool] - routed, 0)}
        if scope.over_filtered[tool]:
            out[tool]["over_filtered"] = scope.over_filtered[tool]
    return out
