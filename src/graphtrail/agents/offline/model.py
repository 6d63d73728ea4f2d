"""``OfflineChatModel``: the LangChain chat model around the offline policy (the package docstring says what it does).

The model is the LangChain face only: ``bind_tools`` records the tool names,
each call reads the conversation (memory.py), asks the policy (policy.py) for
the next message, and stamps token counts and response metadata as a provider
would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

from .memory import _read_conversation, _text, _word_count
from .policy import _Policy


class OfflineChatModel(BaseChatModel):
    """A deterministic (or seeded-noisy) heuristic tool-calling policy over graphtrail's graph tools.

    Not an LLM: it understands questions in a fixed grammar that name their
    topic entity and word their relations as the graph labels them (see the
    module docstring and docs/models.md), and answers "unknown" to anything
    else. Use it to run and test the pipeline offline, on any graph; use a real
    model to study real agents.
    """

    seed: int | None = None
    noise: float = Field(default=0.0, ge=0.0, le=1.0)
    model_name: str = "graphtrail-offline"
    cite: Literal["path", "endpoints", "answer"] = Field(
        default="path", description="which entities on the path it cites: all, topic+answer, or the answer only"
    )
    max_turns: int = Field(default=12, ge=2, description="after this many of its own turns it submits what it has")
    # A model that sometimes cites what it was never shown: drives the unsupported-citation signal (docs/production.md).
    unsupported: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="probability per question of also citing an entity id no tool showed it (a misremembered id)",
    )
    tool_names: tuple[str, ...] = ()
    # bind_tools results by (id of the model bound, tool names): see bind_tools
    _bound: dict[tuple[int, tuple[str, ...]], tuple[list[Any], "OfflineChatModel"]] = PrivateAttr(default_factory=dict)

    @property
    def deterministic(self) -> bool:
        """True when the same conversation always gets the same reply (``noise == 0``).

        The evaluators read this to reuse, rather than repeat, identical trials.
        """
        return self.noise == 0

    @property
    def _llm_type(self) -> str:
        return "graphtrail-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "seed": self.seed,
            "noise": self.noise,
            "cite": self.cite,
            "max_turns": self.max_turns,
            "unsupported": self.unsupported,
            "tools": list(self.tool_names),
        }

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> "OfflineChatModel":  # type: ignore[override]
        names = []
        for t in tools:
            name = getattr(t, "name", None) or convert_to_openai_tool(t)["function"]["name"]
            names.append(str(name))
        # LangChain's create_agent binds the tools again on every model call. A fresh copy each time
        # also serialises itself afresh for the callbacks (``_serialized``), a few percent of a replay
        # run; so the same model bound to the same tool names returns the same copy, as long as none of
        # its fields changed since.
        key, snapshot = (id(self), tuple(names)), list(self.__dict__.items())
        cached = self._bound.get(key)
        if cached is not None and cached[0] == snapshot:
            return cached[1]
        bound = self.model_copy(update={"tool_names": tuple(names)})
        if len(self._bound) >= 32:
            self._bound.clear()
        self._bound[key] = (snapshot, bound)
        return bound

    # ------------------------------------------------------------ generation
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._respond(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._respond(messages))])

    def _respond(self, messages: list[BaseMessage]) -> AIMessage:
        question, system, memory, turns = _read_conversation(messages)
        policy = _Policy(self, question, system, memory, turns)
        msg = policy.decide()
        in_words = sum(_word_count(_text(m.content)) for m in messages)
        out_words = len(_text(msg.content).split()) + sum(len(json.dumps(c["args"]).split()) + 1 for c in msg.tool_calls)
        msg.usage_metadata = {"input_tokens": in_words, "output_tokens": out_words, "total_tokens": in_words + out_words}
        msg.response_metadata = {"model_name": self.model_name, "finish_reason": "tool_calls" if msg.tool_calls else "stop"}
        return msg
