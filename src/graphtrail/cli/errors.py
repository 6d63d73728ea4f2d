"""How the CLI turns bad input into one clear line and exit code 2.

A user who points graphtrail at a missing file or a malformed graph should see
*what* is wrong and *what to do*, never a traceback. Genuine bugs stay visible:
they exit 1 with a pointer to ``--debug``, which re-raises them.
"""

from __future__ import annotations

__all__ = ["InputError", "EXIT_OK", "EXIT_BUG", "EXIT_INPUT", "EXIT_INTERRUPTED", "input_error_types"]

EXIT_OK = 0
EXIT_BUG = 1
EXIT_INPUT = 2
EXIT_INTERRUPTED = 130


class InputError(Exception):
    """Bad command-line input; the message says what is wrong and what to do."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message


def input_error_types() -> tuple[type[BaseException], ...]:
    """graphtrail's typed exceptions for bad input, plus OS-level file errors.

    Imported lazily (and tolerantly) so that start-up stays fast and a missing
    optional piece never turns an input error into a crash.
    """
    types: list[type[BaseException]] = [InputError, OSError, UnicodeDecodeError]
    for module, name in (
        ("graphtrail.agents", "KGError"),
        ("graphtrail.agents", "QuestionsError"),
        ("graphtrail.agents.models", "ModelResolutionError"),
        ("graphtrail.evaluators", "EvaluationError"),
        ("graphtrail.evaluators", "AblationError"),
        ("graphtrail.evaluators.report", "ReportError"),
        ("graphtrail._outdir", "OutDirError"),
        ("graphtrail.agents.question_stream", "QuestionTooLong"),
    ):
        try:
            mod = __import__(module, fromlist=[name])
            exc = getattr(mod, name)
        except Exception:  # noqa: BLE001 - a piece that is absent cannot raise
            continue
        if isinstance(exc, type) and issubclass(exc, BaseException):
            types.append(exc)
    return tuple(types)
