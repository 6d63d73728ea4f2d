"""Read the answer, citations and status out of an agent's result state.

Every graphtrail agent (agentic variants and baselines) returns
``{"messages": [...]}``. Per ``docs/architecture.md`` section 3, the answer is
the *last accepted* ``submit_answer`` call: one whose ``ToolMessage`` is not an
error; runs whose submissions were all rejected are ``"no_answer"``. A run that
never tried to submit and ended with a plain AI text answers with that text,
with ``[E:<id>]`` markers as its citations (how a model without tools answers),
unless the text is LangChain's call-limit notice.

This is exactly the tracer's rule (:func:`graphtrail.tracer.extract.extract_answer`),
so an agent's result and its trajectory always agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import BaseMessage

from ..tracer.extract import compile_pattern, extract_answer

__all__ = ["answer_from_result", "answer_from_messages", "Status"]

Status = Literal["ok", "no_answer"]
_MARKERS = compile_pattern(None)


def answer_from_messages(messages: Sequence[BaseMessage]) -> tuple[str | None, list[str], Status]:
    """``(answer, citations, status)`` from a conversation."""
    found = extract_answer(list(messages), _MARKERS)
    if found is None or found.status != "ok":
        return None, [], "no_answer"
    return found.answer, list(found.citations), "ok"


def answer_from_result(result: Mapping[str, Any] | Sequence[BaseMessage]) -> tuple[str | None, list[str], Status]:
    """``(answer, citations, status)`` from an agent result (``{"messages": [...]}``) or a message list."""
    messages = result.get("messages", []) if isinstance(result, Mapping) else result
    return answer_from_messages(list(messages))
