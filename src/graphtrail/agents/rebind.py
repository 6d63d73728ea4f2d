"""The reference agent compiled once per shape, then given each graph's tools: the factory route builds one per ablation.

``create_graphrag_agent(model, kg)`` compiles a LangGraph graph, a few milliseconds
of LangGraph reading node functions, type hints and state schemas; the factory
route (``evaluate(make_agent, questions, graph=G)``) calls it once per distinct
ablation, so at about one agent per two runs that was a quarter of a run's CPU.
Everything it compiles but the tools is the same for every graph: the model, the
prompt, graphtrail's middleware, the nodes and edges. So the first agent of a shape
(model, variant, step limit, prompt, name, tool limits) compiles a *template* over
an empty graph, and every agent of that shape is a copy of the template whose tool
node holds the graph tools of its own ``kg``: its own nodes dict, tool node and
tools, and everything else (the model, the middleware, the other nodes) shared as
one agent shares them between its runs.

Only a shape that nothing else can see the tools of is templated: graphtrail's own
tools and middleware only (a user's middleware could read the tools from a model
request), and a model graphtrail made from an ``"offline"`` spec or one the caller
passed as an instance (a full build shares that instance too). Anything else, and a
template whose tool node is not laid out as expected, is compiled in full as before.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode

__all__ = ["shape_key", "from_template"]

#: Templates kept at once (one per shape; the oldest used is dropped first).
MAX_TEMPLATES = 16

_templates: OrderedDict[Hashable, Any] = OrderedDict()
_lock = threading.Lock()


def shape_key(model: Any, *shape: Hashable) -> Hashable | None:
    """The template key of an agent of ``model`` and ``shape``, or ``None`` when it must be compiled in full."""
    if isinstance(model, BaseChatModel):
        return ("instance", id(model), *shape)  # the template holds the instance: its id is not reused meanwhile
    if isinstance(model, str) and model.strip().split(":", 1)[0] == "offline":
        return ("offline", model.strip(), *shape)
    return None


def from_template(key: Hashable, model: Any, compile_template: Callable[[], Any], tools: Sequence[BaseTool]) -> Any | None:
    """A copy of the template of ``key`` (compiled by ``compile_template()`` on first use) running ``tools``.

    ``None`` when the template's tool node is not one this copy knows how to give other tools
    (the caller then compiles the agent in full).
    """
    with _lock:
        entry = _templates.get(key)
        if entry is not None:
            _templates.move_to_end(key)
    if entry is None or (isinstance(model, BaseChatModel) and entry[0] is not model):
        entry = (model, compile_template())
        with _lock:
            _templates[key] = entry
            while len(_templates) > MAX_TEMPLATES:
                _templates.popitem(last=False)
    return with_tools(entry[1], tools)


def with_tools(template: Any, tools: Sequence[BaseTool]) -> Any | None:
    """``template`` (a compiled ``create_agent`` graph) with ``tools`` in its tool node in place of its own.

    The tools must be the template's by name and number (the model was bound to those names);
    the copy has its own nodes dict, tool-node entry and tool node, so giving it other tools
    later (the filter route wraps tools in place) leaves the template and other copies alone.
    """
    try:
        node = template.nodes["tools"]
        old = node.bound
        if type(old) is not ToolNode or old.func != old._func or old.afunc != old._afunc:
            return None
        by_name = {t.name: t for t in tools}
        if set(by_name) != set(old._tools_by_name) or len(by_name) != len(tools):
            return None
        tool_node = copy.copy(old)
        tool_node._tools_by_name = by_name
        tool_node.func, tool_node.afunc = tool_node._func, tool_node._afunc  # bound to the copy, not the template
        return template.copy({"nodes": {**template.nodes, "tools": node.copy({"bound": tool_node})}})
    except Exception:  # noqa: BLE001 - another LangGraph layout: compile in full
        return None


def clear() -> None:
    """Forget every template (tests; a process that changed a model instance's fields in place)."""
    with _lock:
        _templates.clear()
