"""Read the answer, citations and status out of an agent's result state.

Every graphtrail agent (agentic variants and baselines) returns
``{"messages": [...]}``. Per ``docs/architecture.md`` section 3, the answer is
the *last accepted* ``submit_answer`` call: one whose ``ToolMessage`` is not an
error. Runs without one are ``"no_answer"`` -- except a run that never tried to
submit and ended with a plain AI text: that text is the answer, with
``[E:<id>]`` markers as its citations (how a model without tools answers).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from ..tracer.extract import is_limit_message

__all__ = ["answer_from_result", "answer_from_messages", "Status"]

Status = Literal["ok", "no_answer"]
_MARKER = re.compile(r"\[E:([^\]\s]+)\]")


def answer_from_messages(messages: Sequence[BaseMessage]) -> tuple[str | None, list[str], Status]:
    """``(answer, citations, status)`` from a conversation."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    accepted: tuple[str, list[str]] | None = None
    attempted = False
    for msg in messages:
        if not isinstance(msg, AIMessage):
            continue
        for call in msg.tool_calls:
            if call["name"] != "submit_answer":
                continue
            attempted = True
            reply = results.get(call.get("id") or "")
            if reply is None or reply.status == "error":
                continue
            args = call.get("args") or {}
            citations = args.get("citations") or []
            if not isinstance(citations, list):
                citations = [citations]
            accepted = (str(args.get("answer", "")), [str(c) for c in citations])
    if accepted is not None:
        return accepted[0], accepted[1], "ok"
    last = messages[-1] if messages else None
    if not attempted and isinstance(last, AIMessage) and not last.tool_calls:
        text = last.text if isinstance(last.text, str) else str(last.content)
        if text.strip() and not is_limit_message(text):
            citations = list(dict.fromkeys(_MARKER.findall(text)))
            return _MARKER.sub("", text).strip(), citations, "ok"
    return None, [], "no_answer"


def answer_from_result(result: Mapping[str, Any] | Sequence[BaseMessage]) -> tuple[str | None, list[str], Status]:
    """``(answer, citations, status)`` from an agent result (``{"messages": [...]}``) or a message list."""
    messages = result.get("messages", []) if isinstance(result, Mapping) else result
    return answer_from_messages(list(messages))
