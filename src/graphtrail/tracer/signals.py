"""The glue between a finished run and its provenance signals and metrics.

The handler keeps a :class:`RunFacts` per run (two one-line hooks where model
and tool spans are built) and makes one :func:`finish_run` call where the root
span ends. Keeping this apart from the handler keeps the handler about spans,
and keeps this logic in one place whatever shape the handler takes.

Never breaks the traced app: any failure here is one warning and costs the
signals, never the span, the Trajectory or the agent's result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ._safety import warn_once
from .citations import known_names
from .metrics import metrics_enabled, record_run
from .provenance import ProvenanceSignals, provenance_signals, signals_attributes
from .scope import active_annotations

__all__ = ["RunFacts", "finish_run"]

#: The answer tool of graphtrail's agents (docs/architecture.md §3): a step, but not a hop through the graph.
SUBMIT_TOOL = "submit_answer"


class RunFacts:
    """What the metrics need from a run beyond its root span: per model call and per tool call, a tuple.

    Kept as plain tuples appended while spans are built (cheap on every run);
    they are read once when the run ends.
    """

    __slots__ = ("replay", "chats", "tools", "answer_steps")

    def __init__(self) -> None:
        ann = active_annotations()
        self.replay = bool(ann is not None and ann.replay)
        # (operation, request model, response model, provider, input tokens, output tokens, seconds, error type)
        self.chats: list[tuple[str, str | None, str | None, str | None, int | None, int | None, float, str | None]] = []
        self.tools: list[tuple[str, float, str | None]] = []  # (tool name, seconds, error type)
        self.answer_steps: set[int] = set()  # steps that submitted the answer: no graph lookup, not a hop

    def chat(self, operation: str, request_model: str | None, response_model: str | None, provider: str | None,
             input_tokens: int | None, output_tokens: int | None, start_ns: int, end_ns: int, error: str | None) -> None:
        self.chats.append((operation, request_model, response_model, provider, input_tokens, output_tokens,
                           max(0, end_ns - start_ns) / 1e9, error))

    def tool(self, step: int, name: str, start_ns: int, end_ns: int, error: str | None) -> None:
        self.tools.append((name, max(0, end_ns - start_ns) / 1e9, error))
        if name == SUBMIT_TOOL:
            self.answer_steps.add(step)

    @property
    def tool_errors(self) -> int:
        return sum(1 for _, _, err in self.tools if err)

    def observed_model(self) -> tuple[str | None, str | None]:
        """(model, provider) of the run's first model call: the model the agent actually used."""
        for _, request, response, provider, *_ in self.chats:
            if request or response:
                return request or response, provider
        return None, None


def finish_run(
    span: Any,
    facts: RunFacts,
    *,
    agent: str,
    agent_from_run: bool = False,
    citations: Sequence[str],
    rows: Iterable[tuple[int, list[str], str | None]],
    revealed: Iterable[Iterable[Any]],
    answer: str | None,
    question: str | None,
    status: str,
    error_type: str | None,
    start_ns: int,
    end_ns: int,
    span_attributes: dict[str, Any] | None = None,
) -> ProvenanceSignals | None:
    """Compute the run's signals, put them on the root ``span`` and record the run's metrics.

    ``span_attributes``: more root attributes the caller has ready, set in the same call as
    the signals' (each ``set_attributes`` takes the span's lock and checks the mapping again).

    ``agent_from_run``: ``agent`` is LangChain's run name, not a name given in code
    (a metric label only if the user let run names in). ``rows``: per finished tool call ``(step, entity ids, span id)``; ``revealed``:
    the entity refs (with names) the calls revealed, for ``answer_revealed``.
    Returns the signals for the Trajectory, or None if computing them failed.
    """
    try:
        names = known_names(e for ents in revealed for e in ents)
        signals = provenance_signals(
            citations,
            (ids for index, ids, _ in sorted(rows, key=lambda r: r[0]) if index not in facts.answer_steps),
            answer=answer if status == "ok" else None,
            names=names,
            question=question,
            tool_errors=facts.tool_errors,
        )
    except Exception as exc:  # noqa: BLE001
        warn_once("signals:compute", "graphtrail: could not compute a run's provenance signals (%r); the agent is unaffected", exc)
        _set_quietly(span, span_attributes)
        return None
    try:
        attrs = signals_attributes(signals)
        if span_attributes:
            attrs.update(span_attributes)
        span.set_attributes(attrs)
    except Exception as exc:  # noqa: BLE001 - a span processor's hook may raise
        warn_once("signals:span", "graphtrail: could not set the provenance attributes (%r)", exc)
        _set_quietly(span, span_attributes)
    if metrics_enabled():
        try:
            record_run(facts, signals, agent=agent, agent_from_run=agent_from_run, status=status, error_type=error_type, duration_s=max(0, end_ns - start_ns) / 1e9)
        except Exception as exc:  # noqa: BLE001
            warn_once("metrics:record", "graphtrail: could not record a run's metrics (%r); the agent is unaffected", exc)
    return signals


def _set_quietly(span: Any, attributes: dict[str, Any] | None) -> None:
    """The caller's attributes when the signals' could not be set: they do not depend on them."""
    if attributes:
        try:
            span.set_attributes(attributes)
        except Exception:  # noqa: BLE001 - already warned
            pass
