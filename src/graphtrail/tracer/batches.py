"""Parallel tool calls of one model message are numbered in the order the model asked for them.

LangGraph runs the tool calls of one AIMessage concurrently (ToolNode on
threads, create_agent's one task per call, asyncio tasks), so their tools
finish in whatever order timing gives. Numbering those steps by finishing
order, as the tracer does for every other tool run, would let two runs of the
same agent on the same input swap step numbers, and trajectories compared
across replays would differ for no reason.

So when a model's message asks for two or more calls (distinct
``tool_call_id``\\s), the handler registers a ``CallBatch``: the ids in request
order. A tool run whose ``tool_call_id`` is in a batch takes its step number
only once every call requested before it has finished (or will not run);
until then it is *held*: finished, but without a number and, in live mode,
without a span (spans.build_runs skips it). Runs with no matching id (a tool
the agent calls itself) keep the finishing order: nothing is guessed.

A call that has not started may never start (ToolNode answers a call of an
unknown tool without running anything). It is given up when a model call
starts after some of its batch's calls ran and while none of them is running
(LangGraph starts the next model call only once every tool task of the step
has ended: the agent has moved on), or when the run ends. A model call before
any of them started (a node between the model and its tools, e.g. a guard
model) gives nothing up. A model call that starts while one of the
batch's calls runs may be that tool's own (a sub-agent; LangChain makes it the
tool's child, or its sibling when the tool passes on its injected config), so
it gives nothing up. A given-up call that starts anyway is numbered like an
unbatched run. Everything here runs under ``root.lock`` and costs nothing for
runs whose model never asks for parallel calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .records import RootRecord, RunRecord

__all__ = ["CallBatch", "note_requested_calls", "join_batch", "finish_batched", "close_batches"]

# Per requested call: not started, running, finished with a step (held until numbered),
# finished without one (stopped by control flow), or settled (numbered or given up).
_WAITING, _RUNNING, _HELD, _NO_STEP, _SETTLED = range(5)


class CallBatch:
    """The tool calls one model message asked for, in request order, and how far their numbering got."""

    __slots__ = ("ids", "positions", "runs", "states", "next")

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = tuple(ids)
        self.positions = {cid: i for i, cid in enumerate(self.ids)}
        self.runs: list[RunRecord | None] = [None] * len(self.ids)
        self.states = [_WAITING] * len(self.ids)
        self.next = 0  # the first call not settled yet: later ones wait for it


def note_requested_calls(root: RootRecord, response: Any) -> None:
    """A chat model's response: register its tool calls as a batch if it asks for two or more."""
    generations = getattr(response, "generations", None)
    if not generations or not generations[0]:
        return
    calls = getattr(getattr(generations[0][0], "message", None), "tool_calls", None)
    if not calls or len(calls) < 2:
        return
    ids = [c.get("id") if isinstance(c, dict) else None for c in calls]
    if not all(isinstance(cid, str) and cid for cid in ids) or len(set(ids)) != len(ids):
        return  # calls without ids, or ids used twice: which run is which call cannot be told
    batch = CallBatch(ids)  # type: ignore[arg-type]
    with root.lock:
        if root.finished:
            return
        if root.calls is None:
            root.calls, root.batches = {}, []
        for cid in batch.ids:
            root.calls[cid] = batch
        root.batches.append(batch)


def join_batch(run: RunRecord, call_id: str) -> None:
    """A tool run started: if the model asked for its call in a batch, it is numbered in the batch's order."""
    root = run.root
    with root.lock:
        batch = root.calls.get(call_id) if root.calls is not None else None
        if batch is None:
            return
        pos = batch.positions[call_id]
        if pos < batch.next or batch.states[pos] != _WAITING:
            return  # given up on, or a second run with the same id: finishing order
        batch.runs[pos] = run
        batch.states[pos] = _RUNNING
        run.batch = batch


def finish_batched(run: RunRecord, step: bool) -> None:
    """A batched tool run ended (``step``: it counts as a step); number what can be numbered now."""
    root = run.root
    with root.lock:
        batch = run.batch
        if batch is None:  # released while it ran (its batch closed at the end of the run)
            if step:
                run.index = next(root.step_seq)
            return
        pos = batch.positions[run.params]
        batch.states[pos] = _HELD if step else _NO_STEP
        _advance(root, batch, give_up_waiting=False, give_up_running=False)


def close_batches(root: RootRecord, final: bool) -> bool:
    """A model call started (the agent may have moved on) or the run ended (``final``): calls not
    started are given up in every batch some of whose calls ran and none still runs, and at the
    end in all, with the running ones. True if any held run got its number."""
    with root.lock:
        if not root.batches:
            return False
        released = False
        for batch in list(root.batches):
            states = batch.states
            if final or (_RUNNING not in states and states.count(_WAITING) < len(states)):
                released |= _advance(root, batch, give_up_waiting=True, give_up_running=final)
        if final:
            root.calls, root.batches = None, []
        return released


def _advance(root: RootRecord, batch: CallBatch, *, give_up_waiting: bool, give_up_running: bool) -> bool:
    """Number the batch's held runs from ``batch.next`` on, in request order, up to the first call
    still waiting or running (unless given up). True if a held run was numbered."""
    states, runs = batch.states, batch.runs
    released = False
    n = len(states)
    while batch.next < n:
        pos = batch.next
        state = states[pos]
        run = runs[pos]
        if state == _HELD:
            run.index = next(root.step_seq)  # type: ignore[union-attr]
            released = True
        elif state == _WAITING and not give_up_waiting or state == _RUNNING and not give_up_running:
            break
        if run is not None:
            run.batch = None
        states[pos] = _SETTLED
        batch.next = pos + 1
    if batch.next == n and batch in root.batches:
        root.batches.remove(batch)
        if root.calls is not None:
            for cid in batch.ids:
                if root.calls.get(cid) is batch:
                    del root.calls[cid]
    return released
