"""What ``evaluate`` raises: shared by the replay side (bad inputs) and the API (invalid conditions).

Kept apart from :mod:`.api` so that :mod:`.replay` can raise them without
importing the entry point that imports it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EvaluationError", "CoverageError"]


class EvaluationError(ValueError):
    """``evaluate`` was given something it cannot run; the message says what and how to fix it."""


class CoverageError(EvaluationError):
    """``evaluate(strict=True)``: a condition's filter did not reach a tool that mattered (see :mod:`.scoring.coverage`).

    The report was still built (and written to ``out_dir``) and is on ``.report``,
    with the invalid conditions marked.
    """

    def __init__(self, message: str, report: Any = None) -> None:
        super().__init__(message)
        self.report = report
