"""``trace_agent``: wrap a Runnable/compiled graph, or decorate a function; ``instrument()``.

A wrapped Runnable is a thin proxy: the run methods add a
:class:`GraphTrailHandler` to the call's ``config["callbacks"]``; everything else
(attributes, ``get_graph``, ``isinstance``) is the original object's.

Decorated functions get a root span of their own, and every LangChain run
started inside them (even by code that drops ``config``) joins that trace
through a LangChain configure hook bound to a ContextVar.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar, overload

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.tracers.context import register_configure_hook
from opentelemetry import trace

from ._content import ContentMode
from ._safety import warn_once
from .citations import CitationMode
from .extract import CitationParser, Extractor
from .handler import GraphTrailHandler, finish_function_root, start_function_root
from .options import TraceOptions, trace_options
from .scope import traced_call

T = TypeVar("T")

# A handler bound to the innermost decorated function's root (None outside one).
_scoped_handler: ContextVar[GraphTrailHandler | None] = ContextVar("graphtrail_scoped_handler", default=None)
# handle_class makes LangChain skip the hook when a GraphTrailHandler is already
# in the callbacks (e.g. passed by trace_agent), so nothing is traced twice.
register_configure_hook(_scoped_handler, inheritable=True, handle_class=GraphTrailHandler)

_RUN_METHODS = (
    "invoke", "ainvoke", "stream", "astream", "batch", "abatch",
    "batch_as_completed", "abatch_as_completed", "astream_events", "astream_log", "transform", "atransform",
)
# The legacy call style of langchain-classic chains (``chain.run(q)``, ``chain(inputs)``):
# they take ``callbacks=`` rather than ``config``, and end in ``invoke`` on the chain
# itself, which the proxy never sees; so the handler goes in through ``callbacks``.
_LEGACY_METHODS = ("run", "arun", "acall", "__call__")


def _with_handler(config: Any, handler: GraphTrailHandler) -> dict[str, Any]:
    """A copy of ``config`` whose callbacks include ``handler`` (unless one is there)."""
    config = dict(config or {})
    callbacks = config.get("callbacks")
    if callbacks is None:
        config["callbacks"] = [handler]
    elif isinstance(callbacks, BaseCallbackManager):
        if not any(isinstance(h, GraphTrailHandler) for h in callbacks.handlers):
            manager = callbacks.copy()
            manager.add_handler(handler, inherit=True)
            config["callbacks"] = manager
    else:
        callbacks = list(callbacks)
        if not any(isinstance(h, GraphTrailHandler) for h in callbacks):
            callbacks.append(handler)
        config["callbacks"] = callbacks
    return config


class TracedRunnable:
    """Proxy of a Runnable whose runs are traced; otherwise indistinguishable from it."""

    __slots__ = ("_gt_wrapped", "_gt_handler", "__weakref__")

    def __init__(self, wrapped: Any, handler: GraphTrailHandler) -> None:
        object.__setattr__(self, "_gt_wrapped", wrapped)
        object.__setattr__(self, "_gt_handler", handler)

    # isinstance(traced, CompiledStateGraph) and friends keep working.
    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: D105
        return type(self._gt_wrapped)

    @property
    def __wrapped__(self) -> Any:
        return self._gt_wrapped

    @property
    def graphtrail_handler(self) -> GraphTrailHandler:
        return self._gt_handler

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._gt_wrapped, name)
        if name in _RUN_METHODS and callable(attr):
            return self._traced_method(name, attr)
        if name in _LEGACY_METHODS and callable(attr):
            return self._legacy_method(name, attr)
        return attr

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        target = self._gt_wrapped
        if not callable(target):
            raise TypeError(f"{type(target).__name__!r} object is not callable")
        return self._legacy_method("__call__", target.__call__)(*args, **kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._gt_wrapped, name, value)

    def __repr__(self) -> str:
        # The wrapped graph's own repr is ``<... object at 0x...>``: name what it is and what its traces are called.
        name = getattr(getattr(self._gt_handler, "options", None), "name", None)
        kind = type(self._gt_wrapped).__name__
        return f"traced({kind}, name={name!r})" if name else f"traced({kind})"

    # Dunder methods are looked up on the type, so composition needs explicit forwarding;
    # the sequence keeps the proxy as its step, so composed runs stay traced.
    def __or__(self, other: Any) -> Any:
        from langchain_core.runnables.base import RunnableSequence, coerce_to_runnable

        return RunnableSequence(self, coerce_to_runnable(other))  # type: ignore[arg-type]

    def __ror__(self, other: Any) -> Any:
        from langchain_core.runnables.base import RunnableSequence, coerce_to_runnable

        return RunnableSequence(coerce_to_runnable(other), self)  # type: ignore[arg-type]

    def _config_for(self, config: Any) -> Any:
        if _scoped_handler.get() is not None:
            return config  # inside a traced function: join its trace
        if isinstance(config, (list, tuple)):
            return [_with_handler(c, self._gt_handler) for c in config]
        return _with_handler(config, self._gt_handler)

    def _legacy_method(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        """``method`` with the handler added to its ``callbacks=`` argument (legacy chain calls)."""
        try:
            takes_callbacks = "callbacks" in inspect.signature(method).parameters
        except (TypeError, ValueError):
            takes_callbacks = False
        if not takes_callbacks:
            warn_once(
                f"legacy:{name}",
                "graphtrail: %s.%s(...) is not traced: it takes no callbacks and LangChain gives no hook for it; "
                "call invoke()/ainvoke() on the traced agent instead",
                type(self._gt_wrapped).__name__, name,
            )
            return method
        handler = self._gt_handler

        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            if _scoped_handler.get() is None and not (name == "__call__" and len(args) >= 3):
                kwargs["callbacks"] = _with_handler({"callbacks": kwargs.get("callbacks")}, handler)["callbacks"]
            return method(*args, **kwargs)

        return call

    def _traced_method(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(input: Any, config: Any = None, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
            return method(input, self._config_for(config), *args, **kwargs)

        return call

    # Explicit so that the common calls skip __getattr__.
    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        with traced_call():
            return self._gt_wrapped.invoke(input, self._config_for(config), **kwargs)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        with traced_call():
            return await self._gt_wrapped.ainvoke(input, self._config_for(config), **kwargs)

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        return self._gt_wrapped.stream(input, self._config_for(config), **kwargs)

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        return self._gt_wrapped.astream(input, self._config_for(config), **kwargs)

    def batch(self, inputs: list[Any], config: Any = None, **kwargs: Any) -> Any:
        return self._gt_wrapped.batch(inputs, self._config_for(config), **kwargs)

    async def abatch(self, inputs: list[Any], config: Any = None, **kwargs: Any) -> Any:
        return await self._gt_wrapped.abatch(inputs, self._config_for(config), **kwargs)


def _question_arg(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    for key in ("question", "query", "input", "messages"):
        if key in kwargs:
            return kwargs[key] if key != "messages" else {"messages": kwargs[key]}
    for value in args:
        if isinstance(value, (str, dict)):
            return value
    return None


def _trace_function(fn: Callable[..., Any], options: TraceOptions) -> Callable[..., Any]:
    name = options.name or getattr(fn, "__name__", "agent")

    def begin(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[GraphTrailHandler, Any]:
        handler = GraphTrailHandler(_options=options)
        try:
            root = start_function_root(handler, name, _question_arg(fn, args, kwargs))
        except Exception:  # noqa: BLE001 - tracing never breaks the function
            return handler, None
        handler._bound = root
        return handler, root

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            handler, root = begin(args, kwargs)
            if root is None:
                return await fn(*args, **kwargs)
            token = _scoped_handler.set(handler)
            try:
                with trace.use_span(root.span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                    result = await fn(*args, **kwargs)
            except BaseException as exc:
                _scoped_handler.reset(token)
                finish_function_root(handler, root, None, exc)
                raise
            _scoped_handler.reset(token)
            finish_function_root(handler, root, result, None)
            return result

        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        handler, root = begin(args, kwargs)
        if root is None:
            return fn(*args, **kwargs)
        token = _scoped_handler.set(handler)
        try:
            with trace.use_span(root.span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                result = fn(*args, **kwargs)
        except BaseException as exc:
            _scoped_handler.reset(token)
            finish_function_root(handler, root, None, exc)
            raise
        _scoped_handler.reset(token)
        finish_function_root(handler, root, result, None)
        return result

    return wrapper


def _is_runnable(obj: Any) -> bool:
    return callable(getattr(obj, "invoke", None)) and callable(getattr(obj, "ainvoke", None))


@overload
def trace_agent(agent: T, *, name: str | None = ..., **kw: Any) -> T: ...
@overload
def trace_agent(agent: None = ..., *, name: str | None = ..., **kw: Any) -> Callable[[T], T]: ...


def trace_agent(
    agent: Any = None,
    *,
    name: str | None = None,
    extractors: Mapping[str, Extractor] | None = None,
    citation_pattern: str | re.Pattern[str] | None = None,
    citation_parser: CitationParser | None = None,
    content: ContentMode | None = None,
    conversation_key: str = "thread_id",
    node_spans: bool | None = None,
    citations: CitationMode = "names",
    answer_field: str | None = None,
    citations_field: str | None = None,
) -> Any:
    """Trace every run of ``agent`` as one OpenTelemetry trace and one :class:`Trajectory`.

    ``trace_agent(runnable, name="kg-agent")`` returns a proxy whose ``invoke``,
    ``ainvoke``, ``stream``, ``astream``, ``batch`` and ``abatch`` are traced;
    ``@trace_agent(name="qa")`` decorates a sync or async function that runs an
    agent (its return value, or the last inner run's output, gives the answer).

    - ``extractors``: ``{tool_name: fn(output, args)}`` entity extractors
      (see :func:`graphtrail.tracer.register_extractor`);
    - ``citation_pattern``: regex for text citation markers (group 1 = id(s));
      default ``[E:<id>]``; ``citation_parser``: ``fn(final_output)`` fallback;
    - ``content``: ``"full"``/``"ids-only"``/``"none"``, overriding ``configure``;
    - ``conversation_key``: the ``configurable`` key for ``gen_ai.conversation.id``;
    - ``node_spans``: one CHAIN span per LangGraph node execution (default:
      ``configure(node_spans=...)``, off; docs/spans.md says why);
    - ``citations``: how a free-text answer with no ``submit_answer`` call and no
      markers cites: ``"names"`` (default: names, aliases and ids of the entities
      the run visited, as whole words or in ``[Name]`` / ``(source: id)`` /
      ``Sources:`` forms), ``"markers"`` (it cites nothing), or
      ``fn(answer, {id: [name, *aliases]}) -> ids`` (docs/spans.md, "Answer and citations");
    - ``answer_field`` / ``citations_field``: the fields of a ``create_agent(response_format=...)``
      ``structured_response`` (or the final state's keys) holding the answer and its sources
      (default: ``answer``, and the first of ``sources``/``citations``/``evidence``).
    """
    options = trace_options(
        name=name,
        extractors=extractors,
        citation_pattern=citation_pattern,
        citation_parser=citation_parser,
        content=content,
        conversation_key=conversation_key,
        node_spans=node_spans,
        citations=citations,
        answer_field=answer_field,
        citations_field=citations_field,
    )

    def apply(target: Any) -> Any:
        if type(target) is TracedRunnable:  # re-wrapping replaces the options, never stacks handlers
            target = target._gt_wrapped
        if _is_runnable(target):
            if options.name is None:
                options.name = getattr(target, "name", None) or type(target).__name__
            return TracedRunnable(target, GraphTrailHandler(_options=options))
        if callable(target):
            return _trace_function(target, options)
        raise TypeError(f"trace_agent needs a Runnable, a compiled graph or a function, got {type(target).__name__}")

    if agent is None:
        return apply
    return apply(agent)


# ---------------------------------------------------------------- instrument()

_global_var: ContextVar[GraphTrailHandler | None] | None = None


def instrument(
    name: str | None = None,
    *,
    extractors: Mapping[str, Extractor] | None = None,
    citation_pattern: str | re.Pattern[str] | None = None,
    citation_parser: CitationParser | None = None,
    content: ContentMode | None = None,
    node_spans: bool | None = None,
    citations: CitationMode = "names",
    answer_field: str | None = None,
    citations_field: str | None = None,
) -> GraphTrailHandler:
    """Trace every LangChain/LangGraph run in the process, even where ``config`` is dropped.

    Each top-level run becomes its own trace. Runs that already carry a
    GraphTrailHandler (``trace_agent``) are not traced twice. Undo with
    :func:`uninstrument`. Returns the global handler.
    """
    global _global_var
    from langchain_core.tracers import context as lc_context

    uninstrument()
    handler = GraphTrailHandler(
        name,
        extractors=extractors,
        citation_pattern=citation_pattern,
        citation_parser=citation_parser,
        content=content,
        node_spans=node_spans,
        citations=citations,
        answer_field=answer_field,
        citations_field=citations_field,
    )
    # A ContextVar whose *default* is the handler is visible in every thread and task.
    var: ContextVar[GraphTrailHandler | None] = ContextVar("graphtrail_global_handler", default=handler)
    register_configure_hook(var, inheritable=True, handle_class=GraphTrailHandler)
    _global_var = var
    assert any(h[0] is var for h in lc_context._configure_hooks)
    return handler


def uninstrument() -> None:
    """Stop tracing runs globally (``trace_agent`` wrappers keep working)."""
    global _global_var
    if _global_var is None:
        return
    from langchain_core.tracers import context as lc_context

    # langchain_core has no public unregister; its hook list is a plain list.
    lc_context._configure_hooks[:] = [h for h in lc_context._configure_hooks if h[0] is not _global_var]
    _global_var = None


def is_instrumented() -> bool:
    return _global_var is not None
