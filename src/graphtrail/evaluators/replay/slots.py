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
import heapq
import itertools
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["Slots"]


class Slots:
    """At most ``n`` holders at once; a freed slot goes to the waiter with the lowest ``priority``."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError(f"concurrency must be >= 1, got {n}")
        self._free = n
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

    def _release(self) -> None:
        while self._waiters:
            _, _, waiter = heapq.heappop(self._waiters)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1
