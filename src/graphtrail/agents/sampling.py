"""Which repeated sample (trial) of a run is in progress, for models that simulate sampling.

A real LLM at temperature > 0 answers the same conversation differently each
time it is asked. graphtrail's offline model is a pure function of the
conversation, so to behave like a sampled model across an evaluation's
``trials`` it mixes the trial index into its seeded randomness. The evaluators
set the index here, in a :class:`contextvars.ContextVar`, so that concurrent
replays of different trials never see each other's index and results stay
reproducible (same seed + same trial = same sample).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

__all__ = ["current_trial", "use_trial"]

_TRIAL: contextvars.ContextVar[int] = contextvars.ContextVar("graphtrail_trial", default=0)


def current_trial() -> int:
    """The trial index in force in this context (0 outside an evaluation)."""
    return _TRIAL.get()


@contextlib.contextmanager
def use_trial(trial: int) -> Iterator[int]:
    """Run the body as sample number ``trial``."""
    token = _TRIAL.set(int(trial))
    try:
        yield trial
    finally:
        _TRIAL.reset(token)
