"""Prefix reuse: replays reuse model responses while their conversation matches an earlier run.

An ablation replay starts exactly like its baseline: same question, same first
model call. Until a tool returns something different (because the filter hid or
masked an entity the tool would have shown), the model sees the same messages as
in the baseline, so calling it again is wasted money. :class:`PrefixReuseCache`
answers those calls from the responses already seen and only lets calls after the
first divergent tool response reach the model.

Mechanism: LangChain chat models consult the global LLM cache
(:func:`langchain_core.globals.set_llm_cache`) on every call, keyed by the
serialized prompt and the model's parameters, and still fire their callbacks on a
hit, so the tracer keeps its chat spans. :func:`installed` puts a
:class:`PrefixReuseCache` there for the duration of an evaluation and restores
what was there before. The cache only acts inside :func:`reuse_scope` (one per
replay run); anywhere else (an LLM judge, the user's own code) it defers to the
previous global cache, or does nothing.

Stores are partitioned by a *namespace*: ``(agent, model, question, trial)``.
Trial *k* of every condition shares baseline trial *k*'s responses: common
random numbers for sampled models (see docs/ablations.md).

Keys ignore what LangChain varies between otherwise identical conversations:
message ids, ``usage_metadata`` and ``response_metadata`` (a cache hit adds
``total_cost: 0`` to usage), so a conversation rebuilt from reused responses
keys the same as the original. Inside a replay run the prompt string is built
by :mod:`.promptkey` (LangChain's full serialisation costs a sixth of a run).

Concurrent runs: a call whose prompt another run of the same namespace is
sending to the model right now waits for that response instead of sending it
again (single flight), so a run never misses a reusable prefix because its
sibling is still running. If that run ends without a response (its call
failed), the waiter calls the model itself. Synchronous calls made on a thread
that runs an event loop never wait (that could block the call they wait for).

Limits: a model constructed with ``cache=False`` or its own cache instance
bypasses the global cache, so it is never reused (counts then come from the
trajectory); only completed calls are counted.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import hashlib
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.globals import get_llm_cache, set_llm_cache
from langchain_core.messages import message_to_dict, messages_from_dict
from langchain_core.outputs import ChatGeneration, Generation

from ..._outdir import append_text
from ...tracer.redact import redact
from . import promptkey

__all__ = [
    "PrefixReuseCache",
    "ReuseStore",
    "RunCounters",
    "reuse_scope",
    "installed",
    "prompt_key",
    "REUSED_MARK",
]

#: Set to ``True`` in the ``response_metadata`` of a reused response, so traces can tell.
REUSED_MARK = "graphtrail_reused"

_VOLATILE = {"id", "usage_metadata", "response_metadata"}

#: Longest wait (seconds) for another run's in-flight response before calling the model anyway.
INFLIGHT_TIMEOUT_S = 600.0


@dataclass
class RunCounters:
    """Model calls of one replay run: how many reached the model, how many were reused."""

    model_calls: int = 0
    reused_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    divergence_step: int | None = None  # 1-based index of the first call that reached the model

    @property
    def calls(self) -> int:
        return self.model_calls + self.reused_calls


@dataclass(frozen=True)
class _Scope:
    cache: "PrefixReuseCache"
    namespace: str
    counters: RunCounters


_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("graphtrail_reuse_scope", default=None)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        kwargs = value.get("kwargs")
        if value.get("lc") == 1 and value.get("type") == "constructor" and isinstance(kwargs, dict):
            return {**value, "kwargs": {k: _strip(v) for k, v in kwargs.items() if k not in _VOLATILE}}
        return {k: _strip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


@functools.lru_cache(maxsize=4096)  # lookup and update of one call pass the same strings
def prompt_key(prompt: str, llm_string: str) -> str:
    """A digest of the conversation and model parameters, blind to ids and usage metadata."""
    if prompt.startswith(promptkey.MARK):
        canonical = prompt  # already canonical (:mod:`.promptkey`)
    else:
        try:
            canonical = json.dumps(_strip(json.loads(prompt)), sort_keys=True, separators=(",", ":"))
        except ValueError:
            canonical = prompt
    return hashlib.sha256(f"{canonical}\x00{llm_string}".encode()).hexdigest()


def _dump_generations(generations: Sequence[Generation]) -> list[dict[str, Any]] | None:
    out = []
    for gen in generations:
        if not isinstance(gen, ChatGeneration):
            return None  # completion-style LLMs are not reused
        out.append({"message": message_to_dict(gen.message), "generation_info": gen.generation_info})
    return out


def _load_generations(dumped: list[dict[str, Any]]) -> list[Generation]:
    gens: list[Generation] = []
    for item in dumped:
        (message,) = messages_from_dict([item["message"]])
        message.response_metadata = {**(message.response_metadata or {}), REUSED_MARK: True}
        message.id = None
        gens.append(ChatGeneration(message=message, generation_info=item.get("generation_info")))
    return gens


class ReuseStore:
    """Model responses by ``(namespace, prompt key)``, optionally appended to a JSONL file.

    The file lets a resumed evaluation keep reusing the responses of runs that
    finished before the interruption. A torn last line is ignored.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._data: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    row = json.loads(line)
                    self._data[(row["ns"], row["key"])] = row["generations"]
                except (ValueError, KeyError, TypeError):
                    continue  # torn write from an interrupted run

    def __len__(self) -> int:
        return len(self._data)

    def get(self, namespace: str, key: str) -> list[Generation] | None:
        dumped = self._data.get((namespace, key))
        return None if dumped is None else _load_generations(dumped)

    def put(self, namespace: str, key: str, generations: Sequence[Generation]) -> None:
        dumped = _dump_generations(generations)
        if dumped is None:
            return
        with self._lock:
            if (namespace, key) in self._data:
                return  # first response wins: later identical prompts replay it
            self._data[(namespace, key)] = dumped
            if self.path is not None:
                row = {"ns": namespace, "key": key, "generations": dumped}
                if redact(row) != row:
                    # A reply that spells a credential (a tool call's password argument) is reused in
                    # memory only: written redacted it would replay differently, written whole it leaks.
                    return
                self.path.parent.mkdir(parents=True, exist_ok=True)
                append_text(self.path, json.dumps(row, default=str) + "\n")


def _usage(generations: Sequence[Generation]) -> tuple[int, int]:
    tin = tout = 0
    for gen in generations:
        usage = getattr(getattr(gen, "message", None), "usage_metadata", None) or {}
        tin += int(usage.get("input_tokens") or 0)
        tout += int(usage.get("output_tokens") or 0)
    return tin, tout


class PrefixReuseCache(BaseCache):
    """A LangChain LLM cache that reuses responses inside a :func:`reuse_scope` and counts calls.

    With ``reuse=False`` it never answers a lookup but still counts the calls
    and tokens that reach the model, so naive replay is measured the same way.
    Outside any scope of its own it delegates to ``fallback`` (the global cache
    that was installed before), so code outside the replay is unaffected.
    """

    def __init__(self, store: ReuseStore | None = None, *, reuse: bool = True, fallback: BaseCache | None = None):
        self.store = store if store is not None else ReuseStore()
        self.reuse = reuse
        self.fallback = fallback
        # (namespace, key) -> (the scope whose call is at the model, resolved when it is stored or dropped)
        self._inflight: dict[tuple[str, str], tuple[_Scope, concurrent.futures.Future[None]]] = {}
        self._inflight_lock = threading.Lock()
        #: The suite's limit on calls at the model (:class:`.slots.ModelSlots`); None: calls are not limited here.
        self.model_slots: Any = None

    def graphtrail_ungated(self) -> None:
        """For :mod:`.promptkey`: a replay's call reached a model whose calls this cache never sees."""
        if self.model_slots is not None:
            self.model_slots.ungated()

    def _call_to_gate(self, blocking: bool) -> Any:
        """The chat call about to reach the model that must take one of the suite's model slots, if any."""
        slots = self.model_slots
        if slots is None:
            return None
        call = promptkey.current()
        if call is None or (blocking and _loop_running()):
            slots.ungated()  # not a chat call promptkey wraps, or a blocking call on the loop's thread
            return None
        return None if call.covered() else call  # a nested call rides on its parent's slot

    def _gate(self) -> None:
        """A call is about to reach the model: hold a model slot until it ends (worker threads)."""
        call = self._call_to_gate(blocking=True)
        if call is not None:
            self.model_slots.acquire_blocking()
            call.release = self.model_slots.release

    async def _agate(self) -> None:
        """As :meth:`_gate`, waiting on the event loop."""
        call = self._call_to_gate(blocking=False)
        if call is not None:
            await self.model_slots.acquire()
            call.release = self.model_slots.release

    def _claim(self, scope: _Scope, key: str) -> tuple[list[Generation] | None, concurrent.futures.Future[None] | None]:
        """A stored response; else the future of another run's in-flight call to wait for; else claim the call."""
        with self._inflight_lock:
            hit = self.store.get(scope.namespace, key)
            if hit is not None:
                return hit, None
            entry = self._inflight.get((scope.namespace, key))
            if entry is not None and entry[0] is not scope:
                return None, entry[1]
            if entry is None:
                self._inflight[(scope.namespace, key)] = (scope, concurrent.futures.Future())
            return None, None

    def _settle(self, namespace: str, key: str) -> None:
        with self._inflight_lock:
            entry = self._inflight.pop((namespace, key), None)
        if entry is not None:
            entry[1].set_result(None)

    def release(self, scope: _Scope) -> None:
        """Drop the in-flight claims of a run that ended (its calls failed): waiters then call the model."""
        with self._inflight_lock:
            mine = [k for k, (owner, _) in self._inflight.items() if owner is scope]
            futures = [self._inflight.pop(k)[1] for k in mine]
        for fut in futures:
            fut.set_result(None)

    def _hit(self, scope: _Scope, hit: list[Generation] | None) -> list[Generation] | None:
        if hit is not None:
            scope.counters.reused_calls += 1
        return hit

    def _scope(self) -> _Scope | None:
        scope = _SCOPE.get()
        return scope if scope is not None and scope.cache is self else None

    def graphtrail_prompt_mode(self) -> str | None:
        """For :mod:`.promptkey`: ``"reuse"``/``"naive"`` inside a scope of this cache, else None."""
        if self._scope() is None:
            return None
        return "reuse" if self.reuse else "naive"

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        scope = self._scope()
        if scope is None:
            return self.fallback.lookup(prompt, llm_string) if self.fallback is not None else None
        if not self.reuse:
            self._gate()
            return None
        key = prompt_key(prompt, llm_string)
        hit, pending = self._claim(scope, key)
        if pending is not None and not _loop_running():
            deadline = time.monotonic() + INFLIGHT_TIMEOUT_S
            while pending is not None and (left := deadline - time.monotonic()) > 0:
                try:
                    pending.result(timeout=left)
                except concurrent.futures.TimeoutError:
                    break
                hit, pending = self._claim(scope, key)  # stored, or claimed by us, or by another waiter
        if hit is None:
            self._gate()
        return self._hit(scope, hit)

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        scope = self._scope()
        if scope is None:
            if self.fallback is not None:
                self.fallback.update(prompt, llm_string, return_val)
            return
        counters = scope.counters
        counters.model_calls += 1
        if counters.divergence_step is None:
            counters.divergence_step = counters.calls
        tin, tout = _usage(return_val)
        counters.input_tokens += tin
        counters.output_tokens += tout
        if self.reuse:
            key = prompt_key(prompt, llm_string)
            self.store.put(scope.namespace, key, return_val)
            self._settle(scope.namespace, key)

    # The defaults hop to an executor; these are cheap dict operations, so stay on the loop.
    async def alookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        scope = self._scope()
        if scope is None:
            return await self.fallback.alookup(prompt, llm_string) if self.fallback is not None else None
        if not self.reuse:
            await self._agate()
            return None
        key = prompt_key(prompt, llm_string)
        hit, pending = self._claim(scope, key)
        deadline = time.monotonic() + INFLIGHT_TIMEOUT_S
        while pending is not None and (left := deadline - time.monotonic()) > 0:
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(pending)), left)
            except asyncio.TimeoutError:
                break
            hit, pending = self._claim(scope, key)  # stored, or claimed by us, or by another waiter
        if hit is None:
            await self._agate()
        return self._hit(scope, hit)

    async def aupdate(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        if self._scope() is None and self.fallback is not None:
            await self.fallback.aupdate(prompt, llm_string, return_val)
            return
        self.update(prompt, llm_string, return_val)

    def clear(self, **kwargs: Any) -> None:
        """Leaves the reuse store alone: it is the evaluation's, not a user's cache."""


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def namespace_for(agent: str, model: str, question_id: str, trial: int) -> str:
    """The store partition shared by trial ``trial`` of every condition of one question."""
    return json.dumps([agent, model, question_id, trial])


@contextlib.contextmanager
def reuse_scope(cache: PrefixReuseCache, namespace: str) -> Iterator[RunCounters]:
    """Count (and, if enabled, reuse) the model calls made in this context under ``namespace``."""
    counters = RunCounters()
    scope = _Scope(cache, namespace, counters)
    token = _SCOPE.set(scope)
    try:
        yield counters
    finally:
        _SCOPE.reset(token)
        cache.release(scope)


@contextlib.contextmanager
def installed(cache: PrefixReuseCache) -> Iterator[PrefixReuseCache]:
    """Make ``cache`` the global LangChain LLM cache for the block, then restore the previous one."""
    promptkey.install()  # the cheap prompt string inside replay runs
    previous = get_llm_cache()
    if cache.fallback is None and previous is not cache:
        cache.fallback = previous
    set_llm_cache(cache)
    try:
        yield cache
    finally:
        set_llm_cache(previous)
