"""GenAI semantic-convention values: provider names and message content as backends read them.

Jaeger UI's GenAI tab and other GenAI-aware viewers read ``gen_ai.input.messages``
/ ``gen_ai.output.messages`` on model spans and ``gen_ai.tool.call.arguments`` /
``gen_ai.tool.call.result`` on tool spans, as JSON in the semconv message format
(``[{"role", "parts": [{"type": "text", "content"}, {"type": "tool_call", ...}]}]``).
graphtrail writes them only in ``content="full"``.

Cost matters here (the tracer's overhead budget): a conversation's messages are
encoded once per agent run (``MessageCache``), however many model calls resend
them, and every attribute has a size cap so payloads cannot grow with the
conversation's length squared.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._content import ContentMode, clean_args, clean_text, dumps, to_text, truncate

_enc = json.encoder.encode_basestring  # a str as a JSON string literal, in C

__all__ = [
    "provider_name",
    "clean_content",
    "content_text",
    "MessageCache",
    "input_messages",
    "output_messages",
    "prompt_messages",
    "completion_messages",
    "capped_json",
    "messages_cap",
]

# LangChain's ``ls_provider`` labels (and what its class-name fallback gives for
# common classes) -> the GenAI semconv's well-known ``gen_ai.provider.name`` values.
# Labels not listed pass through unchanged (the spec allows other values).
_PROVIDERS: dict[str, str] = {
    "openai": "openai",
    "azure": "azure.ai.openai",
    "azure_openai": "azure.ai.openai",
    "azureopenai": "azure.ai.openai",
    "azure_ai": "azure.ai.inference",
    "azureaiinference": "azure.ai.inference",
    "azure_ai_inference": "azure.ai.inference",
    "anthropic": "anthropic",
    "amazon_bedrock": "aws.bedrock",
    "bedrock": "aws.bedrock",
    "bedrockconverse": "aws.bedrock",
    "aws_bedrock": "aws.bedrock",
    "google_vertexai": "gcp.vertex_ai",
    "vertexai": "gcp.vertex_ai",
    "google_anthropic_vertex": "gcp.vertex_ai",
    "anthropicvertex": "gcp.vertex_ai",
    "google_genai": "gcp.gemini",
    "googlegenerativeai": "gcp.gemini",
    "google_gemini": "gcp.gemini",
    "gemini": "gcp.gemini",
    "mistral": "mistral_ai",
    "mistralai": "mistral_ai",
    "mistral_ai": "mistral_ai",
    "groq": "groq",
    "ollama": "ollama",
    "deepseek": "deepseek",
    "perplexity": "perplexity",
    "xai": "x_ai",
    "x_ai": "x_ai",
    "cohere": "cohere",
    "ibm": "ibm.watsonx.ai",
    "watsonx": "ibm.watsonx.ai",
    "ibm_watsonx": "ibm.watsonx.ai",
}
_provider_cache: dict[str, str] = {}


def provider_name(label: str) -> str:
    """``gen_ai.provider.name`` for a LangChain provider label (``AzureChatOpenAI``'s ``"azure"`` -> ``"azure.ai.openai"``)."""
    known = _provider_cache.get(label)
    if known is None:
        key = label.strip().lower().replace("-", "_").replace(" ", "_")
        known = _PROVIDERS.get(key) or _PROVIDERS.get(key.replace("_", "")) or label
        if len(_provider_cache) < 256:
            _provider_cache[label] = known
    return known


# The two functions below are the only way message content and tool-call arguments
# reach these attributes; both go through redact.py's rules (via _content).


def clean_content(value: Any, mode: ContentMode, limit: int) -> Any:
    """Message content or tool-call arguments as recorded.

    Dicts (tool-call arguments) get what ``graphtrail.step.args`` gets
    (secret-looking keys redacted, text per content mode); anything else becomes
    text (:func:`content_text`). Callers only emit in ``full`` mode.
    """
    if type(value) is dict:  # clean_args copies as it cleans: no copy needed first (nor an ABC check)
        return clean_args(value, mode, limit)
    if isinstance(value, Mapping):
        return clean_args(dict(value), mode, limit)
    return content_text(value if isinstance(value, str) else to_text(value), limit)


def content_text(text: str, limit: int) -> str:
    """Message text as recorded: secrets redacted (redact.py), truncated to ``limit``."""
    return clean_text(text, limit)


def messages_cap(limit: int) -> int:
    """Size cap (characters) of one messages/arguments/result attribute: 4x ``max_value_length``."""
    return 4 * limit


def capped_json(text: str, cap: int) -> str:
    """A JSON attribute cut to ``cap`` characters (it then stops being JSON, and says so)."""
    return truncate(text, cap)


_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant", "system": "system",
          "tool": "tool", "function": "tool", "developer": "system"}


def _text_parts(content: Any, mode: ContentMode, limit: int) -> list[dict[str, Any]]:
    if content is None or content == "" or content == []:
        return []
    return [{"type": "text", "content": clean_content(content, mode, limit)}]


def _tool_call_parts(message: Any, mode: ContentMode, limit: int) -> list[dict[str, Any]]:
    parts = []
    for call in getattr(message, "tool_calls", None) or ():
        if isinstance(call, Mapping):
            parts.append({
                "type": "tool_call",
                "id": call.get("id"),
                "name": str(call.get("name") or ""),
                "arguments": clean_content(call.get("args") or {}, mode, limit),
            })
    return parts


def message_dict(message: Any, mode: ContentMode, limit: int) -> dict[str, Any]:
    """One LangChain message as a semconv ``ChatMessage`` (``{"role", "parts"}``)."""
    kind = getattr(message, "type", None)
    if kind is None and isinstance(message, str):
        return {"role": "user", "parts": _text_parts(message, mode, limit)}
    if kind == "chat":  # ChatMessage(role=...)
        role = _ROLES.get(str(getattr(message, "role", "")), str(getattr(message, "role", "user")))
    else:
        role = _ROLES.get(str(kind), str(kind or "user"))
    content = getattr(message, "content", message)
    if role == "tool":
        return {"role": "tool", "parts": [{
            "type": "tool_call_response",
            "id": getattr(message, "tool_call_id", None),
            "response": clean_content(content, mode, limit),
        }]}
    parts = _text_parts(content, mode, limit)
    if role == "assistant":
        parts += _tool_call_parts(message, mode, limit)
    return {"role": role, "parts": parts}


class MessageCache:
    """Encoded messages of one agent run: each model call resends the whole history,
    but each message is encoded once. Holds the message objects, so ids stay unique."""

    __slots__ = ("mode", "limit", "_encoded")

    def __init__(self, mode: ContentMode, limit: int) -> None:
        self.mode = mode
        self.limit = limit
        self._encoded: dict[int, tuple[Any, str]] = {}

    def encode(self, message: Any) -> str:
        entry = self._encoded.get(id(message))
        if entry is None or entry[0] is not message:
            entry = (message, _encode_message(message, self.mode, self.limit))
            self._encoded[id(message)] = entry
        return entry[1]

    def encode_all(self, messages: Sequence[Any]) -> list[str]:
        """``[encode(m) for m in messages]`` in one call: a model call resends the whole
        history, so all but its newest messages are found here, and a lookup is cheaper
        than the method call around it."""
        encoded = self._encoded
        out = []
        for message in messages:
            entry = encoded.get(id(message))
            out.append(entry[1] if entry is not None and entry[0] is message else self.encode(message))
        return out


def _encode_message(message: Any, mode: ContentMode, limit: int) -> str:
    """``dumps(message_dict(message))``, written out for the common message shapes (2-3x faster)."""
    kind = getattr(message, "type", None)
    content = getattr(message, "content", None)
    if kind in ("human", "system", "ai") and type(content) is str:
        text = '{"type":"text","content":' + _enc(content_text(content, limit)) + "}" if content else ""
        if kind != "ai":
            return '{"role":"' + ("user" if kind == "human" else "system") + '","parts":[' + text + "]}"
        calls = getattr(message, "tool_calls", None)
        if calls:
            encoded = ",".join(
                '{"type":"tool_call","id":' + ("null" if c.get("id") is None else _enc(str(c.get("id"))))
                + ',"name":' + _enc(str(c.get("name") or "")) + ',"arguments":' + dumps(clean_content(c.get("args") or {}, mode, limit)) + "}"
                for c in calls if type(c) is dict or isinstance(c, Mapping)
            )
            text = text + "," + encoded if text else encoded
        return '{"role":"assistant","parts":[' + text + "]}"
    if kind == "tool" and type(content) is str:
        call_id = getattr(message, "tool_call_id", None)
        return ('{"role":"tool","parts":[{"type":"tool_call_response","id":' + ("null" if call_id is None else _enc(str(call_id)))
                + ',"response":' + _enc(content_text(content, limit)) + "}]}")
    return dumps(message_dict(message, mode, limit))


def _join_capped(encoded: Sequence[str], cap: int) -> tuple[str, int]:
    """``[m0, ..., mn]`` within ``cap`` characters: the first message (the instructions or the
    question) and as many of the newest as fit; returns the JSON and how many were left out."""
    total = sum(map(len, encoded)) + len(encoded) + 1
    if total <= cap or len(encoded) <= 1:
        text = "[" + ",".join(encoded) + "]"
        return (text, 0) if len(text) <= cap else (capped_json(text, cap), 0)
    budget = cap - 2 - len(encoded[0]) - 1
    kept: list[str] = []
    for enc in reversed(encoded[1:]):
        if len(enc) + 1 > budget:
            break
        kept.append(enc)
        budget -= len(enc) + 1
    if not kept:  # the newest message alone does not fit beside the first: keep the newest only
        return capped_json("[" + encoded[-1] + "]", cap), len(encoded) - 1
    kept.reverse()
    return "[" + ",".join([encoded[0], *kept]) + "]", len(encoded) - 1 - len(kept)


def input_messages(messages: Sequence[Any], cache: MessageCache, cap: int) -> tuple[str, int]:
    """``gen_ai.input.messages`` JSON for a chat model call, and the number of messages left out to fit ``cap``."""
    return _join_capped(cache.encode_all(messages), cap)


def prompt_messages(prompt: str, mode: ContentMode, limit: int) -> str:
    """``gen_ai.input.messages`` of a text-completion call: its prompt as one user message."""
    return dumps([{"role": "user", "parts": _text_parts(prompt, mode, limit)}])


def _finish_reason(message: Any, generation: Any) -> str:
    for source in (getattr(message, "response_metadata", None), getattr(generation, "generation_info", None)):
        if type(source) is dict or (source is not None and isinstance(source, Mapping)):
            reason = source.get("finish_reason") or source.get("stop_reason") or source.get("done_reason")
            if isinstance(reason, str) and reason:
                return reason
    return "tool_call" if getattr(message, "tool_calls", None) else "stop"


def output_messages(message: Any, generation: Any, cache: MessageCache, cap: int) -> str:
    """``gen_ai.output.messages`` JSON for a chat model's reply (``finish_reason`` is required there).

    The reply is the message the next model call resends: encoded once, through ``cache``.
    """
    encoded = cache.encode(message)
    if not encoded.startswith('{"role":"assistant",'):  # an odd message class: say it is the assistant's
        out = json.loads(encoded)
        out["role"] = "assistant"
        encoded = dumps(out)
    return capped_json("[" + encoded[:-1] + ',"finish_reason":' + _enc(_finish_reason(message, generation)) + "}]", cap)


def completion_messages(generation: Any, mode: ContentMode, limit: int, cap: int) -> str:
    """``gen_ai.output.messages`` of a text-completion call."""
    text = getattr(generation, "text", "") or ""
    return capped_json(dumps([{
        "role": "assistant", "parts": _text_parts(text, mode, limit), "finish_reason": _finish_reason(None, generation),
    }]), cap)
