"""Call the reference agents' tool-call hook directly when LangSmith is not recording.

``create_agent`` wraps every middleware's ``awrap_tool_call`` in LangSmith's
``traceable``, which, even with LangSmith tracing off, runs its setup and its
teardown in the default thread pool: two thread hops around every tool call of
every run (about a tenth of a replay run's CPU on the bundled graph, issue 19).
The hook itself is graphtrail's (:class:`~.graphrag.GraphRulesMiddleware`), so
when LangSmith is off the tool node calls it as is; when LangSmith is recording
(``LANGSMITH_TRACING``, a ``tracing_context``, a parent run) it still goes through
the traced wrapper, so LangSmith shows the same spans as before. Only a tool node
whose one wrapper is graphtrail's hook is touched; with a user's tool-wrapping
middleware in the chain nothing changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.prebuilt import ToolNode

__all__ = ["call_hook_directly"]


def _recording() -> bool:
    try:
        from langsmith.utils import tracing_is_enabled
    except ImportError:  # pragma: no cover - langsmith comes with langchain
        return False
    try:
        return bool(tracing_is_enabled())
    except Exception:  # noqa: BLE001 - when in doubt, keep LangSmith's wrapper
        return True


def _direct_async(traced: Callable[..., Awaitable[Any]], plain: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def awrap_tool_call(request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        if _recording():
            return await traced(request, handler)
        return await plain(request, handler)

    return awrap_tool_call


def _direct_sync(traced: Callable[..., Any], plain: Callable[..., Any]) -> Callable[..., Any]:
    def wrap_tool_call(request: Any, handler: Callable[[Any], Any]) -> Any:
        if _recording():
            return traced(request, handler)
        return plain(request, handler)

    return wrap_tool_call


def call_hook_directly(agent: Any, middleware: Any) -> None:
    """Let ``agent``'s tool node call ``middleware``'s tool hooks without LangSmith's wrapper while LangSmith is off.

    Does nothing unless the node's only tool wrapper is ``middleware``'s (as ``create_agent`` built it).
    """
    node = getattr(getattr(agent, "nodes", {}).get("tools"), "bound", None)
    if not isinstance(node, ToolNode):
        return
    hooks = (("_awrap_tool_call", "awrap_tool_call", _direct_async), ("_wrap_tool_call", "wrap_tool_call", _direct_sync))
    for attr, method, direct in hooks:
        traced = getattr(node, attr, None)
        plain = getattr(middleware, method)
        if traced is None or getattr(traced, "__wrapped__", None) != plain:
            return
    for attr, method, direct in hooks:
        setattr(node, attr, direct(getattr(node, attr), getattr(middleware, method)))
