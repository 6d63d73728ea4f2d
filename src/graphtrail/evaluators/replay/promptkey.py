"""A cheap prompt string for the prefix-reuse key, in place of LangChain's full serialisation.

LangChain looks a chat call up in the global LLM cache by ``dumps(messages)``:
every message through the ``Serializable`` machinery (``to_json``, field by
field, with escaping), about a sixth of a replay run's CPU. The reuse cache
(:mod:`.reuse`) only needs a string that tells two conversations apart exactly
when their messages differ in something other than ids and metadata, so inside
a reuse scope the prompt is built here instead: each message's class and its
fields but the volatile ones, as sorted JSON. :func:`.reuse.prompt_key` hashes
it as it is.

:func:`install` wraps ``BaseChatModel._generate_with_cache`` /
``_agenerate_with_cache`` once per process. The wrapper only marks the call
when the model uses the global cache and that cache is a :class:`.reuse.PrefixReuseCache`
with a replay run's scope open in this context (its ``graphtrail_prompt_mode()`` says so); the patched ``dumps`` of
``langchain_core.language_models.chat_models`` serves the first serialisation
of that call (the prompt) and hands every other call to LangChain's. A model
with its own cache, a call outside a replay run, or a LangChain version
without these names keeps LangChain's prompt, unchanged.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.globals import get_llm_cache
from langchain_core.messages import BaseMessage

__all__ = ["MARK", "install", "canonical_prompt", "current"]

#: Starts every prompt built here: :func:`.reuse.prompt_key` uses it as is.
MARK = "graphtrail-prompt-v1:"

#: Message fields that vary between otherwise identical conversations (see :mod:`.reuse`).
VOLATILE = frozenset({"id", "usage_metadata", "response_metadata"})


class _Pending:
    """One chat call's claim on the fast prompt: the first ``dumps`` of the call uses it."""

    __slots__ = ("naive", "used", "release", "outer")

    def __init__(self, naive: bool, outer: "_Pending | None" = None) -> None:
        self.naive = naive  # reuse off: the prompt is never read, so any string serves
        self.used = False
        self.release: Any = None  # the model slot this call holds (.slots.ModelSlots), freed when the call ends
        self.outer = outer  # the chat call this one runs inside (a model that calls a model), if any

    def covered(self) -> bool:
        """Whether an enclosing call already holds a model slot (a nested call must not wait for a second)."""
        outer = self.outer
        while outer is not None:
            if outer.release is not None:
                return True
            outer = outer.outer
        return False

    def done(self) -> None:
        release, self.release = self.release, None
        if release is not None:
            release()


_pending: ContextVar[_Pending | None] = ContextVar("graphtrail_fast_prompt", default=None)


def _default(value: Any) -> Any:
    """What JSON cannot hold: LangChain objects by their fields, anything else by type and repr (as ``dumps`` does)."""
    if isinstance(value, BaseMessage):
        return _fields(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return [type(value).__qualname__, dump()]
    return [type(value).__qualname__, repr(value)]


@functools.lru_cache(maxsize=64)
def _names(cls: type) -> tuple[str, ...]:
    return tuple(sorted(n for n in getattr(cls, "model_fields", {}) if n not in VOLATILE))


def _fields(message: BaseMessage) -> list[Any]:
    cls = type(message)
    return [cls.__module__, cls.__qualname__, [[n, getattr(message, n, None)] for n in _names(cls)]]


def canonical_prompt(messages: Sequence[BaseMessage]) -> str:
    """The messages' classes and non-volatile fields as sorted JSON, after :data:`MARK`."""
    rows = [_fields(m) for m in messages]
    return MARK + json.dumps(rows, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default)


def current() -> _Pending | None:
    """The chat call under way in this context, if a reuse cache's replay scope is open (see :func:`install`)."""
    return _pending.get()


def _claim(model: Any) -> _Pending | None:
    """A claim when this call's cache lookup goes to a reuse cache inside one of its replay scopes."""
    global_cache = get_llm_cache()
    mode = getattr(global_cache, "graphtrail_prompt_mode", None)  # a reuse cache says (no import of .reuse)
    wanted = mode() if callable(mode) else None
    if wanted is None:
        return None
    cache = getattr(model, "cache", None)
    if cache is False or isinstance(cache, BaseCache):
        global_cache.graphtrail_ungated()  # no caching, or the model's own: the reuse cache never sees this call
        return None  # LangChain's prompt
    return _Pending(naive=wanted == "naive", outer=_pending.get())


_originals: dict[str, Any] = {}
_lock = threading.Lock()


def install() -> None:
    """Patch once per process (idempotent); inert outside a replay run's reuse scope."""
    with _lock:
        if _originals:
            return
        from langchain_core.language_models import BaseChatModel
        from langchain_core.language_models import chat_models

        dumps = getattr(chat_models, "dumps", None)
        sync, async_ = (getattr(BaseChatModel, n, None) for n in ("_generate_with_cache", "_agenerate_with_cache"))
        if dumps is None or sync is None or async_ is None:
            _originals["absent"] = True  # another LangChain layout: keep its own prompt
            return

        @functools.wraps(dumps)
        def graphtrail_dumps(obj: Any, *args: Any, **kwargs: Any) -> str:
            pending = _pending.get()
            if pending is None or pending.used or args or kwargs or not isinstance(obj, list):
                return dumps(obj, *args, **kwargs)
            pending.used = True
            if pending.naive:
                return MARK
            if not all(isinstance(m, BaseMessage) for m in obj):
                return dumps(obj)
            return canonical_prompt(obj)

        @functools.wraps(sync)
        def generate_with_cache(self: Any, *args: Any, **kwargs: Any) -> Any:
            claim = _claim(self)
            token = _pending.set(claim)
            try:
                return sync(self, *args, **kwargs)
            finally:
                _pending.reset(token)
                if claim is not None:
                    claim.done()

        @functools.wraps(async_)
        async def agenerate_with_cache(self: Any, *args: Any, **kwargs: Any) -> Any:
            claim = _claim(self)
            token = _pending.set(claim)
            try:
                return await async_(self, *args, **kwargs)
            finally:
                _pending.reset(token)
                if claim is not None:
                    claim.done()

        _originals.update(dumps=dumps, sync=sync, async_=async_)
        chat_models.dumps = graphtrail_dumps  # type: ignore[attr-defined]
        BaseChatModel._generate_with_cache = generate_with_cache  # type: ignore[method-assign]
        BaseChatModel._agenerate_with_cache = agenerate_with_cache  # type: ignore[method-assign]
