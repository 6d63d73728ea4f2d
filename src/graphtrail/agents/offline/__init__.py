"""The offline deterministic chat model (``OfflineChatModel``); see policy.py."""

from .policy import UNKNOWN_ANSWER, OfflineChatModel

__all__ = ["OfflineChatModel", "UNKNOWN_ANSWER"]
