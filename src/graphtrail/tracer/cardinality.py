"""Bounded metric labels: every attribute graphtrail puts on a metric has a cap on its distinct values.

Why: each distinct label set is a time series a backend stores and a
Prometheus scrape serves for as long as the process lives. A value that varies
per request (LangChain's ``run_name``, a provider's dated model string, an
exception class built on the fly) would add a series per request: 300 runs
named per request made a 13.6 MB ``/metrics``. So each label key admits its
first :data:`LABEL_BOUNDS` ``[key]`` distinct values as they come; later ones are
recorded as :data:`OTHER`. The counts stay right, only the split of the late
values is lost. docs/production.md lists the bounds.

A LangChain run name never becomes a label unless
``configure(metrics_run_names=N)`` lets the first ``N`` in (docs/production.md).

Cheap on the per-run path: a value already admitted costs one dict lookup; the
lock (and the redactor: a label is text leaving graphtrail) is met only the
first time a value is seen.
"""

from __future__ import annotations

import threading

from .redact import redact_text

__all__ = ["OTHER", "LABEL_BOUNDS", "MAX_LABEL_LENGTH", "MAX_RUN_NAMES", "LabelBound", "Labels"]

#: What a value past its label's bound is recorded as.
OTHER = "other"
#: Longest label value kept; longer ones are cut (a model string is an identifier, not a text).
MAX_LABEL_LENGTH = 128
#: Distinct values kept per metric attribute. The product bounds a metric's series.
LABEL_BOUNDS: dict[str, int] = {
    "gen_ai.agent.name": 64,  # names given in code: trace_agent(name=...), GraphTrailHandler(name=...), a decorated function
    "gen_ai.request.model": 32,
    "gen_ai.response.model": 32,
    "gen_ai.provider.name": 16,
    "gen_ai.tool.name": 64,
    "error.type": 32,
}
#: The most LangChain run names ``configure(metrics_run_names=...)`` may let in (they share the agent label's bound).
MAX_RUN_NAMES = LABEL_BOUNDS["gen_ai.agent.name"]


class LabelBound:
    """The values one label key has admitted; past ``limit`` distinct values, :data:`OTHER`."""

    __slots__ = ("limit", "seen", "lock")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen: dict[str, str] = {}  # value -> what is recorded for it (itself, possibly cut)
        self.lock = threading.Lock()

    def __call__(self, value: str | None) -> str | None:
        if value is None:
            return None
        got = self.seen.get(value)
        return got if got is not None else self._admit(value)

    def _admit(self, value: str) -> str:
        with self.lock:
            got = self.seen.get(value)
            if got is not None:
                return got
            if len(self.seen) >= self.limit:
                return OTHER  # not stored: memory stays bounded too
            # Through the redactor (a model string may carry a pasted key), once per distinct value.
            label = redact_text(str(value), MAX_LABEL_LENGTH)
            if len(label) > MAX_LABEL_LENGTH:
                label = label[: MAX_LABEL_LENGTH - 1] + "…"
            self.seen[value] = label
            return label


class Labels:
    """The bounds of one MeterProvider's labels (fresh ones with each ``configure()``)."""

    __slots__ = ("agent", "run_names", "request_model", "response_model", "provider", "tool", "error")

    def __init__(self, run_names: int = 0) -> None:
        self.agent = LabelBound(LABEL_BOUNDS["gen_ai.agent.name"])
        self.run_names = LabelBound(run_names)  # a run name must pass this bound, then the agent label's
        self.request_model = LabelBound(LABEL_BOUNDS["gen_ai.request.model"])
        self.response_model = LabelBound(LABEL_BOUNDS["gen_ai.response.model"])
        self.provider = LabelBound(LABEL_BOUNDS["gen_ai.provider.name"])
        self.tool = LabelBound(LABEL_BOUNDS["gen_ai.tool.name"])
        self.error = LabelBound(LABEL_BOUNDS["error.type"])

    def agent_name(self, name: str | None, from_run: bool) -> str:
        """The agent label of a run: a name given in code, or a LangChain run name only if let in."""
        if not name or (from_run and not self.run_names.limit):
            return OTHER
        if from_run:
            admitted = self.run_names(name)
            if admitted == OTHER:
                return OTHER
        return self.agent(name) or OTHER
