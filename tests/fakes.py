"""A deterministic tool-calling chat model for tests.

langchain_core's fake chat models raise ``NotImplementedError`` on
``bind_tools``, so agents built with ``create_agent`` cannot use them. This one
is the *model* only; everything around it (LangGraph, tools, OTel) is real.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

Policy = Callable[[list[BaseMessage]], AIMessage]


def tool_call(name: str, args: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """A tool-call dict as an AIMessage carries it."""
    return {"name": name, "args": args, "id": call_id or f"call_{name}", "type": "tool_call"}


class ScriptedChatModel(BaseChatModel):
    """Answers from a policy over the conversation, or from a fixed script.

    - ``policy(messages) -> AIMessage`` sees the whole conversation, so it can
      react to tool results like a real model would.
    - ``script``: a list of AIMessages returned in turn, chosen by the number
      of AI messages already in the conversation (so it is safe under
      concurrency: each run indexes its own conversation).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    policy: Policy | None = None
    script: Sequence[AIMessage] = Field(default_factory=list)
    model_name: str = "scripted-model"
    calls: list[int] = Field(default_factory=list)  # one entry per call, shared across bind_tools copies
    input_tokens: int = 10
    output_tokens: int = 5

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:  # type: ignore[override]
        # As real providers do: bind the tools' schemas to *this* instance (a RunnableBinding),
        # so that LangChain's per-model work is what it is for a real model, and ``calls``
        # counts every call made through the binding.
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _respond(self, messages: list[BaseMessage]) -> AIMessage:
        self.calls.append(1)
        if self.policy is not None:
            msg = self.policy(messages)
        else:
            turn = sum(1 for m in messages if isinstance(m, AIMessage))
            if turn >= len(self.script):
                msg = AIMessage(content="done")
            else:
                msg = self.script[turn]
        msg = msg.model_copy()
        msg.usage_metadata = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
        }
        msg.response_metadata = {**(msg.response_metadata or {}), "model_name": self.model_name}
        return msg

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


_ids = itertools.count()


def unique_id(prefix: str = "call") -> str:
    return f"{prefix}_{next(_ids)}"
