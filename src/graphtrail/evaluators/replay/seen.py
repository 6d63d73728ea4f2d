"""What the model was given in one replay run: every model call's input, as LangChain handed it over.

The ablation filter changes tool outputs; whether the model then saw the
ablated graph is another question. A caching middleware can hand it the
baseline's tool results, a ``@dynamic_prompt`` can put graph facts in the
system prompt, a node can add a message of its own. So each replay run of an
ablation records the inputs of its model calls, and :mod:`.leaks` reads them.

:class:`SeenInputs` is a LangChain callback handler attached to every run
started inside :func:`recording` through a configure hook (the same way
LangSmith's tracer is attached), so it reaches whatever the agent runs, traced
or not, and needs nothing from the tracer. It only keeps references: the
message lists LangChain passes (already built, shared with the model), the
tool-call ids of the tool runs, and what the model calls said about the model
(provider, name, parameters). Nothing is copied or parsed while the agent runs.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook

__all__ = ["SeenInputs", "recording"]

#: invocation parameters that say nothing about which model answered or how
_NOT_MODEL_PARAMS = frozenset({"tools", "tool_choice", "functions", "function_call", "stream", "_type", "stop",
                               "parallel_tool_calls", "response_format", "ls_structured_output_format"})


class SeenInputs(BaseCallbackHandler):
    """The model-call inputs and tool runs of one replay run (see the module docstring)."""

    run_inline = True
    raise_error = False
    ignore_chain = True
    ignore_agent = False  # LangChain sends tool events only to handlers that do not ignore "agent" events
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True
    ignore_llm = False
    ignore_chat_model = False

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[list[Any]] = []  # one list per chat-model call
        self.prompts: list[str] = []  # completion-model prompts
        self.tool_call_ids: set[str] = set()  # tool runs of this run, by the call id LangChain gave them
        self.tool_names: Counter[str] = Counter()  # ... and by name (a hand-written node passes no call id)
        self.models: dict[str, int] = {}  # "provider/model {params}" -> calls seen
        self._lock = threading.Lock()

    def _note_model(self, serialized: Mapping[str, Any] | None, metadata: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> None:
        params = kwargs.get("invocation_params") or {}
        meta = metadata or {}
        provider = meta.get("ls_provider") or params.get("_type") or (serialized or {}).get("name") or "unknown"
        name = meta.get("ls_model_name") or params.get("model_name") or params.get("model") or "unknown"
        shown = {k: v for k, v in sorted(params.items()) if k not in _NOT_MODEL_PARAMS and k not in ("model", "model_name")
                 and isinstance(v, (str, int, float, bool)) and v is not None}
        label = f"{provider}/{name}" + (" " + " ".join(f"{k}={v}" for k, v in shown.items()) if shown else "")
        with self._lock:
            self.models[label] = self.models.get(label, 0) + 1

    def on_chat_model_start(self, serialized: Any, messages: list[list[Any]], *, metadata: Any = None, **kwargs: Any) -> None:
        with self._lock:
            self.messages.extend(messages)
        self._note_model(serialized, metadata, kwargs)

    def on_llm_start(self, serialized: Any, prompts: list[str], *, metadata: Any = None, **kwargs: Any) -> None:
        with self._lock:
            self.prompts.extend(prompts)
        self._note_model(serialized, metadata, kwargs)

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        call_id = kwargs.get("tool_call_id")
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        with self._lock:
            if isinstance(call_id, str):
                self.tool_call_ids.add(call_id)
            self.tool_names[str(name)] += 1


_seen: ContextVar[SeenInputs | None] = ContextVar("graphtrail_seen_inputs", default=None)
register_configure_hook(_seen, inheritable=True)


@contextlib.contextmanager
def recording() -> Iterator[SeenInputs]:
    """Record the model inputs of every LangChain run started inside the block (in this context)."""
    seen = SeenInputs()
    token = _seen.set(seen)
    try:
        yield seen
    finally:
        _seen.reset(token)
