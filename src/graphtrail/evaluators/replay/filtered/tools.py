"""The tool proxy: a user's tool whose output goes through the ablation filter, and ways to put it in place.

:class:`FilteredTool` runs the inner tool's own ``_run``/``_arun`` (one tool run,
one span) and filters the result with :func:`.filters.filter_tool_output` before
LangChain reports it, so the model and the tracer both see the ablated graph.

Installation: none needed under ``evaluate``/``replay``: :mod:`.interception`
runs every LangChain tool call of a filtered replay run as a
:class:`FilteredTool`, however the agent calls it. :func:`wrap_agent_tools`
(swap the tools of every ``ToolNode`` for proxies), :class:`AblationMiddleware`
and :func:`wrap_tool` remain for users who want the proxies in place
explicitly. All are no-ops unless a filter is active, idempotent, and safe
under concurrency (the filter is read from a ContextVar on every call).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.tools.base import _get_runnable_config_param

from ....kg.views import active_filter
from .filters import _artifact_names, filter_tool_output, is_registered
from .method import call_method
from .names import absent_arguments, restore
from .overfilter import lost_entities, model_text
from .passages import cut_passages
from .scope import current_scope
from .withheld import remove_withheld

__all__ = ["FilteredTool", "wrap_tool", "wrap_agent_tools", "AblationMiddleware", "is_graphtrail_tool"]



@functools.lru_cache(maxsize=512)
def _wanted_params(fn: Callable[..., Any]) -> tuple[bool, str | None]:
    """Whether ``fn`` takes ``run_manager``, and its RunnableConfig parameter (per function, cached)."""
    import inspect

    return inspect.signature(fn).parameters.get("run_manager") is not None, _get_runnable_config_param(fn)


def _inner_kwargs(fn: Callable[..., Any], kwargs: dict[str, Any], config: RunnableConfig, run_manager: Any) -> dict[str, Any]:
    """Pass ``run_manager``/config exactly as ``BaseTool.run`` would have passed them to ``fn``."""
    func = getattr(fn, "__func__", None)
    try:
        wants_manager, config_param = _wanted_params(func) if func is not None else _wanted_params.__wrapped__(fn)
    except TypeError:  # an unhashable callable
        wants_manager, config_param = _wanted_params.__wrapped__(fn)
    out = dict(kwargs)
    if wants_manager:
        out["run_manager"] = run_manager
    if config_param:
        out[config_param] = config
    return out


def is_graphtrail_tool(tool: BaseTool) -> bool:
    """graphtrail's own tools filter through the KG view already."""
    fn = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    return bool(fn is not None and getattr(fn, "__module__", "").startswith("graphtrail.agents"))


class FilteredTool(BaseTool):
    """A proxy for ``inner`` whose output is filtered by the active graph filter.

    It has the inner tool's name, schema and description, runs the inner
    tool's own ``_run``/``_arun`` (one tool run, one span), and filters the
    result before LangChain reports it. Without an active filter it returns
    the inner output untouched.
    """

    inner: BaseTool

    @classmethod
    def wrap(cls, tool: BaseTool) -> BaseTool:
        """``tool`` behind the filter; already-wrapped tools and graphtrail's own are returned as is."""
        if isinstance(tool, FilteredTool) or is_graphtrail_tool(tool):
            return tool
        return cls(
            inner=tool,
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            return_direct=tool.return_direct,
            response_format=tool.response_format,
            handle_tool_error=tool.handle_tool_error,
            handle_validation_error=tool.handle_validation_error,
            metadata=tool.metadata,
            tags=tool.tags,
            callbacks=tool.callbacks,
            verbose=tool.verbose,
            extras=getattr(tool, "extras", None),
        )

    def _to_args_and_kwargs(self, tool_input: str | dict[str, Any], tool_call_id: str | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return self.inner._to_args_and_kwargs(tool_input, tool_call_id)

    def _apply(self, output: Any, reads_before: int | None = None) -> Any:
        scope = current_scope()
        graph_filter = active_filter()
        pair = self.response_format == "content_and_artifact"
        known = scope.entity_names if scope is not None else None
        if scope is not None and graph_filter is not None and not graph_filter.is_empty:  # how this call was ablated
            read = reads_before is not None and scope.source_reads[0] > reads_before
            scope.note_method(call_method(self.name, output, pair, read))
        filtered = filter_tool_output(
            self.name,
            output,
            graph_filter,
            content_and_artifact=pair,
            names=scope.names if scope is not None else None,
            known=known,
        )
        if scope is not None and graph_filter is not None and filtered is not output:
            # the over-filtering check: nothing the condition keeps may vanish from what the model reads, beyond
            # the text the ablation itself withholds (a withheld description naming a kept entity goes in the real data too)
            names = {**scope.names, **_artifact_names(output[1] if pair and isinstance(output, tuple) else
                                                      getattr(output, "artifact", None))}
            before = remove_withheld(output, graph_filter, known) if known is not None else output
            shown = model_text(before, pair)
            cut = cut_passages(shown, graph_filter, names, known)  # a withheld entity's passage goes whole
            shown = shown if cut is None else cut
            lost = lost_entities(shown, model_text(filtered, pair), names, graph_filter)
            if lost:
                scope.over_filtered_call(self.name, lost)
        return filtered

    def _absent(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any], list[str]]:
        """Arguments naming a hidden entity made absent (:mod:`.names`): the tool answers as if it were gone."""
        scope = current_scope()
        graph_filter = active_filter()
        if scope is None or graph_filter is None or is_registered(self.name):
            return args, kwargs, []
        found = absent_arguments(args, kwargs, graph_filter, scope.names, scope.entity_names)
        return found if found is not None else (args, kwargs, [])

    def _run(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        fn = self.inner._run
        args, kwargs, replaced = self._absent(args, kwargs)
        before = _reads()
        filtered = self._apply(fn(*args, **_inner_kwargs(fn, kwargs, config, run_manager)), before)
        return restore(filtered, replaced) if replaced else filtered  # the tool's echo of what it was asked

    async def _arun(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        fn = self.inner._arun
        args, kwargs, replaced = self._absent(args, kwargs)
        before = _reads()
        filtered = self._apply(await fn(*args, **_inner_kwargs(fn, kwargs, config, run_manager)), before)
        return restore(filtered, replaced) if replaced else filtered  # the tool's echo of what it was asked


def _reads() -> int | None:
    """Data-source reads of the run so far (``None`` outside a filtered run): a call that adds one read the ablated data."""
    scope = current_scope()
    return scope.source_reads[0] if scope is not None else None


def wrap_tool(tool: BaseTool) -> BaseTool:
    """``tool`` behind the ablation filter (for agents without a ToolNode: wrap before building)."""
    return FilteredTool.wrap(tool)


def _tool_nodes(graph: Any, seen: set[int] | None = None) -> list[Any]:
    from langgraph.prebuilt import ToolNode

    seen = set() if seen is None else seen
    if id(graph) in seen:
        return []
    seen.add(id(graph))
    found = []
    nodes = getattr(graph, "nodes", None)
    if not isinstance(nodes, dict):
        return found
    for node in nodes.values():
        bound = getattr(node, "bound", node)
        if isinstance(bound, ToolNode):
            found.append(bound)
        elif hasattr(bound, "nodes") and hasattr(bound, "get_graph"):
            found.extend(_tool_nodes(bound, seen))  # a compiled subgraph
    return found


def wrap_agent_tools(agent: Any) -> int:
    """Put every tool of every ``ToolNode`` in ``agent`` behind the ablation filter.

    Returns how many tools were wrapped by this call (0 when the agent has no
    ToolNode, or all its tools were wrapped before or are graphtrail's own).
    The proxies stay in place afterwards; without an active filter they pass
    outputs through untouched.
    """
    count = 0
    target = getattr(agent, "__wrapped__", None) or agent
    for node in _tool_nodes(target) or _tool_nodes(agent):
        tools = node.tools_by_name  # the ToolNode's own dict: replace entries in place
        for name, tool in list(tools.items()):
            wrapped = FilteredTool.wrap(tool)
            if wrapped is not tool:
                tools[name] = wrapped
                count += 1
    return count


class AblationMiddleware(AgentMiddleware):
    """``create_agent`` middleware that puts the agent's tools behind the ablation filter.

    ``create_agent(model, tools, middleware=[AblationMiddleware()])``. Equivalent
    to the automatic wrapping :func:`graphtrail.evaluators.evaluate` does, for
    users who prefer to declare it.
    """

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        if active_filter() is not None and request.tool is not None:
            request = request.override(tool=FilteredTool.wrap(request.tool))
        return handler(request)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        if active_filter() is not None and request.tool is not None:
            request = request.override(tool=FilteredTool.wrap(request.tool))
        return await handler(request)
