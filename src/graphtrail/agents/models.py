"""Turn what a user passes as ``model`` into a LangChain chat model.

``resolve_model`` accepts:

- a :class:`~langchain_core.language_models.BaseChatModel`: returned unchanged;
- ``"offline"`` (optionally ``"offline:seed=3,noise=0.2,cite=endpoints"``, or ``seed=``/``noise=``
  keyword arguments): graphtrail's embedded heuristic policy,
  :class:`~graphtrail.agents.offline.OfflineChatModel`; no key, no network;
- any other string: passed to :func:`langchain.chat_models.init_chat_model`,
  e.g. ``"openai:gpt-4o-mini"``. Extra keyword arguments go through, which is
  how to reach an OpenAI-compatible server (vLLM, Ollama, llama.cpp server)::

      resolve_model("openai:qwen2.5-7b-instruct", base_url="http://127.0.0.1:8000/v1", api_key="none")

  (``pip install 'graphtrail[openai]'`` for ``langchain-openai``). See docs/models.md.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

__all__ = ["resolve_model", "ModelResolutionError", "parse_offline_spec"]


class ModelResolutionError(ValueError):
    """The model spec names no usable chat model; the message says why and what to install or write."""


_OFFLINE_OPTIONS: dict[str, Any] = {"seed": int, "noise": float, "cite": str, "unsupported": float}


def parse_offline_spec(spec: str) -> dict[str, Any]:
    """``"offline:seed=3,noise=0.2,cite=endpoints"`` -> ``{"seed": 3, "noise": 0.2, "cite": "endpoints"}``."""
    _, _, params = spec.partition(":")
    out: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in params.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in _OFFLINE_OPTIONS:
            raise ModelResolutionError(
                f"bad offline model option {part!r} in {spec!r}; expected seed=<int>, noise=<float>, cite=path|endpoints|answer, unsupported=<float>"
            )
        try:
            out[key] = _OFFLINE_OPTIONS[key](value.strip())
        except ValueError:
            raise ModelResolutionError(f"bad value for {key} in {spec!r}: {value!r}") from None
    return out


def resolve_model(model: BaseChatModel | str | None = "offline", **kwargs: Any) -> BaseChatModel:
    """A chat model for ``model``: an instance, ``"offline[:seed=..,noise=..]"``, or an ``init_chat_model`` string.

    Raises :class:`ModelResolutionError` for an unknown provider, a missing
    integration package (e.g. ``langchain-openai``), or bad options.
    """
    if isinstance(model, BaseChatModel):
        if kwargs:
            raise ModelResolutionError("keyword arguments apply only to model strings, not to a chat model instance")
        return model
    if model is None:
        model = "offline"
    if not isinstance(model, str):
        raise ModelResolutionError(f"model must be a chat model or a string, not {type(model).__name__}")
    spec = model.strip()
    if spec == "offline" or spec.startswith("offline:"):
        from .offline import OfflineChatModel

        params = {**parse_offline_spec(spec), **kwargs}
        unknown = set(params) - set(_OFFLINE_OPTIONS)
        if unknown:
            raise ModelResolutionError(f"the offline model takes seed, noise, cite and unsupported, not {', '.join(sorted(unknown))}")
        try:
            return OfflineChatModel(**params)
        except ValueError as exc:  # pydantic validation: e.g. noise out of [0, 1], unknown cite style
            raise ModelResolutionError(f"bad offline model options in {spec!r}: {exc.errors()[0]['msg'] if hasattr(exc, 'errors') else exc}") from None
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(spec, **kwargs)
    except ImportError as exc:
        raise ModelResolutionError(
            f"cannot load model {spec!r}: {exc}. Install the provider's integration, "
            "e.g. pip install 'graphtrail[openai]' for openai:..."
        ) from exc
    except ValueError as exc:
        raise ModelResolutionError(
            f"cannot load model {spec!r}: {exc}. Use 'offline', a chat model instance, or "
            "'<provider>:<model>' such as 'openai:gpt-4o-mini'."
        ) from exc
