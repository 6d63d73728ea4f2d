"""A concurrency limit that serves its waiters by priority, then by arrival.

Why not :class:`asyncio.Semaphore`: it wakes waiters in arrival order, so a
question's conditions queued behind everything that arrived before them. The suite
gives baselines the first slots (each one unlocks a question's conditions) and
then the conditions expected to run longest, so the last runs of an evaluation are
short ones and the model is not left waiting on one long tail.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import heapq
import itertools
import threading
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["Slots", "ModelSlots", "CALL_PRIORITY"]

#: The priority of the replay a model call belongs to: model slots go to the lowest first, as replay slots do.
CALL_PRIORITY: contextvars.ContextVar[Any] = contextvars.ContextVar("graphtrail_call_priority", default=0)


class Slots:
    """At most ``n`` holders at once; a freed slot goes to the waiter with the lowest ``priority``."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError(f"concurrency must be >= 1, got {n}")
        self._free = self._capacity = n
        self._waiters: list[tuple[Any, int, asyncio.Future[None]]] = []
        self._arrival = itertools.count()

    @contextlib.asynccontextmanager
    async def hold(self, priority: Any = 0) -> AsyncIterator[None]:
        """Hold one slot for the block, waiting behind waiters of lower (or equal, earlier) priority."""
        if self._free > 0 and not self._waiters:
            self._free -= 1
        else:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiters, (priority, next(self._arrival), waiter))
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._release()  # the slot was handed over as we were cancelled: pass it on
                else:
                    waiter.cancel()  # skipped when its turn comes
                raise
        try:
            yield
        finally:
            self._release()

    def limit(self, n: int) -> None:
        """Lower the limit to ``n``: holders above it finish, and no one new starts until they have."""
        self._free -= self._capacity - n
        self._capacity = n

    def _release(self) -> None:
        if self._free < 0:  # over a lowered limit: this slot is gone
            self._free += 1
            return
        while self._waiters:
            _, _, waiter = heapq.heappop(self._waiters)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1


class ModelSlots:
    """At most ``n`` calls at the model at once, across the event loop and worker threads.

    Why apart from :class:`Slots`: a replay waiting for the model holds no CPU, so
    counting whole replays against the limit leaves the CPU idle while every slot
    waits at the model. The suite limits what costs the user (calls at the model,
    which prefix-reuse hits and single-flight waits are not) and lets more replays
    run their tools and graphtrail's work meanwhile. ``on_ungated`` is called once, on
    the loop, when a call reaches a model this limit cannot hold (a model with its own
    cache or none, a synchronous call on the event loop's thread): the suite then
    falls back to counting replays.
    """

    def __init__(self, n: int, on_ungated: Any = None) -> None:
        if n < 1:
            raise ValueError(f"concurrency must be >= 1, got {n}")
        self._lock = threading.Lock()
        self._free = n
        self._waiters: list[tuple[Any, int, asyncio.AbstractEventLoop | None, Any]] = []  # a heap, as in Slots
        self._arrival = itertools.count()
        self._loop = asyncio.get_running_loop()
        self._on_ungated = on_ungated
        self.ungated_seen = False

    def _take(self, loop: asyncio.AbstractEventLoop | None, waiter: Any) -> bool:
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return True
            heapq.heappush(self._waiters, (CALL_PRIORITY.get(), next(self._arrival), loop, waiter))
            return False

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        if self._take(loop, waiter):
            return
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed over as we were cancelled: pass it on
            else:
                waiter.cancel()  # skipped when its turn comes
            raise

    def acquire_blocking(self) -> None:
        """From a worker thread (never the event loop's: it would block the calls it waits for)."""
        event = threading.Event()
        if not self._take(None, event):
            event.wait()

    def release(self) -> None:
        with self._lock:
            while self._waiters:
                _, _, loop, waiter = heapq.heappop(self._waiters)
                if loop is None:
                    waiter.set()
                    return
                if not waiter.done():
                    loop.call_soon_threadsafe(self._hand, waiter)
                    return
            self._free += 1

    def _hand(self, waiter: asyncio.Future[None]) -> None:
        if waiter.done():  # cancelled on its way: the slot goes to the next
            self.release()
        else:
            waiter.set_result(None)

    def ungated(self) -> None:
        """A call reached a model this limit does not hold: tell the suite, once."""
        if self.ungated_seen:
            return
        self.ungated_seen = True
        if self._on_ungated is not None:
            self._loop.call_soon_threadsafe(self._on_ungated)
