"""Preparing the user's agent for replay: trace it, name it, and find its chat model.

Nothing here runs the agent. The model is found by walking a compiled graph's
nodes, so its name keys the cache and its ``deterministic`` flag decides whether
repeated trials may share one reuse store.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from ..errors import EvaluationError

__all__ = ["traced_agent", "agent_name", "find_model", "model_name", "is_deterministic"]


def _is_traced(agent: Any) -> bool:
    if hasattr(agent, "graphtrail_handler"):  # graphtrail.tracer.TracedRunnable
        return True
    from ...tracer import wrap as tracer_wrap

    code = getattr(agent, "__code__", None)
    return code is not None and code.co_filename == tracer_wrap.__file__


def traced_agent(agent: Any, citations: Any, answer_field: str | None = None, citations_field: str | None = None) -> Any:
    """``agent`` traced, with the given rules (if any) for reading its answer and citations."""
    from ...tracer import GraphTrailHandler, TracedRunnable, trace_agent
    from ...tracer.citations import check_citation_mode

    overrides: dict[str, Any] = {k: v for k, v in (("citations", citations), ("answer_field", answer_field),
                                                   ("citations_field", citations_field)) if v is not None}
    if citations is not None:
        try:
            check_citation_mode(citations)
        except ValueError as exc:
            raise EvaluationError(str(exc)) from None
    for label in ("answer_field", "citations_field"):
        value = overrides.get(label)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise EvaluationError(f"{label} must be a field name, got {value!r}")
    if not _is_traced(agent):
        return trace_agent(agent, **overrides)
    if not overrides:
        return agent
    handler = getattr(agent, "graphtrail_handler", None)
    if handler is None:
        given = ", ".join(f"{k}=" for k in overrides)
        raise EvaluationError(
            f"{given} cannot change a function already decorated with @trace_agent; pass {given} to trace_agent(...) instead"
        )
    options = dataclasses.replace(handler.options, **overrides)  # the user's other options stay
    return TracedRunnable(agent.__wrapped__, GraphTrailHandler(_options=options))


def agent_name(agent: Any) -> str:
    target = getattr(agent, "__wrapped__", None) or agent
    name = getattr(target, "name", None) or getattr(target, "__name__", None) or type(target).__name__
    return str(name)


def find_model(agent: Any) -> Any:
    """The agent's chat model if it can be found in the graph without running it, else ``None``."""
    from langchain_core.language_models import BaseChatModel

    target = getattr(agent, "__wrapped__", None) or agent
    for node in (getattr(target, "nodes", None) or {}).values():
        bound = getattr(node, "bound", None)
        for value in _closure_values(getattr(bound, "func", None)):
            model = getattr(value, "bound", value)
            if isinstance(model, BaseChatModel):
                return model
    return None


def model_name(model: Any) -> str:
    """The name of the chat model :func:`find_model` found, else ``"default"``."""
    if model is None:
        return "default"
    params = getattr(model, "_identifying_params", {}) or {}
    name = params.get("model_name") or params.get("model") or getattr(model, "model_name", None)
    return str(name or model._llm_type)


def is_deterministic(model: Any, declared: bool | None) -> bool:
    """Whether repeated trials are identical by construction: the user's word, else the model's own.

    A model declares it with a ``deterministic`` attribute that is ``True`` (graphtrail's
    offline model does when ``noise == 0``). Temperature 0 on a hosted LLM is *not*
    deterministic, so nothing is inferred from sampling parameters.
    """
    if declared is not None:
        return declared
    return getattr(model, "deterministic", None) is True


def _closure_values(fn: Any) -> Iterator[Any]:
    for cell in getattr(fn, "__closure__", None) or ():
        with contextlib.suppress(ValueError):
            yield cell.cell_contents
