"""Ablation filters for a user's own tools, installed without changing the user's agent code.

graphtrail's graph tools read :func:`~graphtrail.agents.active_filter` themselves.
A user's tools do not, so the evaluator filters their *outputs* inside the tool
run, before LangChain's ``on_tool_end`` fires: the model and the tracer both see
the filtered response, exactly as if the graph were different.

Three routes, in the order :func:`filter_tool_output` tries them:

1. a per-tool filter registered with :func:`register_tool_filter`
   (``fn(output, graph_filter) -> output``): exact, for any output shape;
2. the generic filter (:func:`generic_filter`) for JSON text, dicts and lists
   whose items carry ``id`` / ``entity_id`` / ``node_id`` (entities) or
   ``source``/``target`` (edges); see docs/ablations.md for the exact rules;
3. plain text: lines naming a hidden entity (by id, or by a name the artifact
   revealed) are dropped and masked names replaced. This is a heuristic;
   register a filter for plain-text tools.

Installation: none needed under ``evaluate``/``replay``: :mod:`.interception`
runs every LangChain tool call of a filtered replay run as a
:class:`FilteredTool`, however the agent calls it. :func:`wrap_agent_tools`
(swap the tools of every ``ToolNode`` for proxies), :class:`AblationMiddleware`
and :func:`wrap_tool` remain for users who want the proxies in place
explicitly. All are no-ops unless a filter is active, idempotent, and safe
under concurrency (the filter is read from a ContextVar on every call).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.tools.base import _get_runnable_config_param

from ..._lines import split_lines
from ...agents.views import GraphFilter, active_filter

__all__ = [
    "register_tool_filter",
    "unregister_tool_filter",
    "filter_tool_output",
    "generic_filter",
    "FilteredTool",
    "wrap_tool",
    "wrap_agent_tools",
    "AblationMiddleware",
    "ToolFilter",
    "NOT_FOUND",
]

ToolFilter = Callable[[Any, GraphFilter], Any]

_REGISTRY: dict[str, ToolFilter] = {}

ID_KEYS = ("id", "entity_id", "node_id", "elementId", "element_id")
#: What names a Cypher-style row with no id key: the tracer then takes its name as its id
#: (tracer/extract.py), so the filter must too.
ROW_NAME_KEYS = ("name", "title")
EDGE_KEYS = (("source", "target"), ("src", "dst"), ("head", "tail"), ("subject", "object"))
NAME_KEYS = ("name", "title", "label")
TEXT_KEYS = ("description", "text", "summary", "content", "aliases", "snippet")
MENTION_KEYS = ("entity_ids", "entities", "mentions")

#: What a lookup of a hidden entity returns through the generic filter.
NOT_FOUND = {"error": "entity not found"}


def register_tool_filter(tool_name: str, fn: ToolFilter) -> None:
    """Filter ``tool_name``'s outputs with ``fn(output, graph_filter)`` during ablation replays."""
    if not callable(fn):
        raise TypeError(f"tool filter for {tool_name!r} must be callable, got {type(fn).__name__}")
    _REGISTRY[tool_name] = fn


def unregister_tool_filter(tool_name: str) -> None:
    _REGISTRY.pop(tool_name, None)


# ---------------------------------------------------------------- generic filter


def _entity_id(obj: dict[str, Any]) -> str | None:
    for key in ID_KEYS:
        value = obj.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
    return None


def _row_ids(obj: dict[str, Any]) -> list[str]:
    """Ids a Cypher-style row names without an id key: its ``name``/``title``, and ``alias.id``/``alias.name`` columns."""
    out = []
    if _entity_id(obj) is None:
        for key in ROW_NAME_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and value:
                out.append(value)
                break
    for key, value in obj.items():
        if isinstance(key, str) and "." in key and key.rpartition(".")[2] in (*ID_KEYS, *ROW_NAME_KEYS):
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                out.append(str(value))
    return out


def _endpoints(obj: dict[str, Any]) -> tuple[str, str] | None:
    for a, b in EDGE_KEYS:
        if a in obj and b in obj:
            return str(obj[a]), str(obj[b])
    return None


def _mentions(obj: dict[str, Any]) -> list[str]:
    for key in MENTION_KEYS:
        value = obj.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return value
    return []


def _drops(obj: Any, f: GraphFilter) -> bool:
    """Whether ``obj`` (an item of a list) must vanish under ``f``."""
    if isinstance(obj, str):
        return obj in f.hidden
    if not isinstance(obj, dict):
        return False
    eid = _entity_id(obj)
    if eid is not None and eid in f.hidden:
        return True
    if f.hidden and any(r in f.hidden for r in _row_ids(obj)):
        return True
    # a Cypher row {"p": {...}, "m": {...}} is one match: it goes when a node in it is hidden
    if f.hidden and eid is None:
        for value in obj.values():
            if isinstance(value, dict) and (_entity_id(value) in f.hidden or any(r in f.hidden for r in _row_ids(value))):
                return True
    ends = _endpoints(obj)
    if ends is not None and (ends[0] in f.hidden or ends[1] in f.hidden):
        return True
    # a text unit (text + the entities it mentions) goes when any mention is filtered
    if any(k in obj for k in ("text", "content")) and eid is None:
        withheld = f.hidden | f.masked | f.text_blocked
        if any(m in withheld for m in _mentions(obj)):
            return True
    return False


def _filter_value(obj: Any, f: GraphFilter) -> Any:
    if isinstance(obj, list):
        return [_filter_value(item, f) for item in obj if not _drops(item, f)]
    if not isinstance(obj, dict):
        return obj
    out = {k: _filter_value(v, f) for k, v in obj.items()}
    eid = _entity_id(obj)
    if eid is not None and eid in f.masked:
        for key in NAME_KEYS:
            if key in out:
                out[key] = f.masked_name(eid)
        for key in TEXT_KEYS:
            if key in out:
                out[key] = [] if isinstance(out[key], list) else ""
    elif eid is not None and eid in f.text_blocked:
        for key in TEXT_KEYS:
            if key in out and key != "aliases":
                out[key] = [] if isinstance(out[key], list) else ""
    return out


def generic_filter(output: Any, graph_filter: GraphFilter) -> Any:
    """Filter a JSON-ish tool output: dicts/lists, or a string holding JSON.

    Items whose ``id``/``entity_id``/``node_id`` is hidden are dropped from
    lists, as are edges with a hidden endpoint, bare hidden ids, and text units
    mentioning a filtered entity. Masked entities keep their id but their
    names become the placeholder and their text is emptied; text-blocked ones
    lose their text. A top-level hidden entity becomes :data:`NOT_FOUND`.
    JSON text stays JSON text (one object per line is kept line by line).
    Anything else comes back unchanged.
    """
    f = graph_filter
    if isinstance(output, (dict, list)):
        if isinstance(output, dict) and _drops(output, f):
            return dict(NOT_FOUND)
        return _filter_value(output, f)
    if isinstance(output, str):
        parsed = _parse_json(output)
        if parsed is not None:
            return json.dumps(generic_filter(parsed, f), ensure_ascii=False)
        literal = _parse_repr(output)
        if literal is not None:  # ``return str(rows)``: filtered, and a repr again
            return str(generic_filter(literal, f))
        lines = split_lines(output, keepends=True)
        parsed_lines = [_parse_json(line) for line in lines]
        if any(p is not None for p in parsed_lines):
            kept = []
            for line, p in zip(lines, parsed_lines):
                if p is None:
                    kept.append(line)
                elif not (isinstance(p, dict) and _drops(p, f)):
                    end = "\n" if line.endswith("\n") else ""
                    kept.append(json.dumps(_filter_value(p, f), ensure_ascii=False) + end)
            return "".join(kept)
    return output


def _parse_repr(text: str) -> Any:
    """A Python repr of a list/dict, as the tracer reads it (``ast.literal_eval``, never ``eval``)."""
    from ...tracer.extract import _parse_repr as parse

    value = parse(text)
    if isinstance(value, tuple):
        value = list(value)
    return value if isinstance(value, (dict, list)) else None


def _parse_json(text: str) -> Any:
    text = text.strip()
    if not text or text[0] not in "[{":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def _artifact_names(artifact: Any) -> dict[str, str]:
    names: dict[str, str] = {}

    def visit(obj: Any) -> None:
        if isinstance(obj, list):
            for item in obj:
                visit(item)
        elif isinstance(obj, dict):
            eid = _entity_id(obj)
            name = obj.get("name")
            if eid is not None and isinstance(name, str) and name:
                names[eid] = name
            for value in obj.values():
                visit(value)

    visit(artifact)
    return names


def _filter_plain_text(text: str, f: GraphFilter, names: Mapping[str, str]) -> str:
    """Heuristic for free text: drop lines naming a hidden entity, replace masked names."""
    def pattern(term: str) -> re.Pattern[str]:
        return re.compile(rf"(?<!\w){re.escape(term)}(?!\w)")

    hidden_terms = [pattern(t) for e in f.hidden for t in (e, names.get(e)) if t]
    kept = [line for line in split_lines(text, keepends=True) if not any(p.search(line) for p in hidden_terms)]
    out = "".join(kept)
    for eid in f.masked:
        name = names.get(eid)
        if name:
            out = pattern(name).sub(f.masked_name(eid), out)
    return out


def _filter_content(content: Any, f: GraphFilter, names: Mapping[str, str]) -> Any:
    filtered = generic_filter(content, f)
    if isinstance(content, str) and filtered is content:
        return _filter_plain_text(content, f, names)
    return filtered


def filter_tool_output(
    tool_name: str,
    output: Any,
    graph_filter: GraphFilter | None,
    *,
    content_and_artifact: bool = False,
    names: Mapping[str, str] | None = None,
) -> Any:
    """What ``tool_name`` should return under ``graph_filter`` (registered filter, else generic).

    ``names`` (entity id -> name, e.g. what the baseline run saw) lets the
    plain-text heuristic drop lines that name a hidden entity without its id.
    """
    if graph_filter is None or graph_filter.is_empty:
        return output
    registered = _REGISTRY.get(tool_name)
    if registered is not None:
        return registered(output, graph_filter)
    known = dict(names or {})
    if isinstance(output, ToolMessage):
        names = {**known, **_artifact_names(output.artifact)}
        return output.model_copy(
            update={
                "content": _filter_content(output.content, graph_filter, names),
                "artifact": generic_filter(copy.deepcopy(output.artifact), graph_filter),
            }
        )
    if content_and_artifact and isinstance(output, tuple) and len(output) == 2:
        content, artifact = output
        names = {**known, **_artifact_names(artifact)}
        return _filter_content(content, graph_filter, names), generic_filter(artifact, graph_filter)
    return _filter_content(output, graph_filter, known)


# ---------------------------------------------------------------- the tool proxy


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


def _is_graphtrail_tool(tool: BaseTool) -> bool:
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
        if isinstance(tool, FilteredTool) or _is_graphtrail_tool(tool):
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

    def _apply(self, output: Any) -> Any:
        from .interception import current_scope

        scope = current_scope()
        filtered = filter_tool_output(
            self.name,
            output,
            active_filter(),
            content_and_artifact=self.response_format == "content_and_artifact",
            names=scope.names if scope is not None else None,
        )
        if scope is not None:
            scope.check_leak(self.name, filtered)
        return filtered

    def _run(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        fn = self.inner._run
        return self._apply(fn(*args, **_inner_kwargs(fn, kwargs, config, run_manager)))

    async def _arun(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        fn = self.inner._arun
        return self._apply(await fn(*args, **_inner_kwargs(fn, kwargs, config, run_manager)))


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
