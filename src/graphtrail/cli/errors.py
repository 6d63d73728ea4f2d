"""How the CLI turns bad input into one clear line and exit code 2.

A user who points graphtrail at a missing file or a malformed graph should see
*what* is wrong and *what to do*, never a traceback. Genuine bugs stay visible:
they exit 1 with a pointer to ``--debug``, which re-raises them.
"""

from __future__ import annotations

__all__ = ["InputError", "EXIT_OK", "EXIT_BUG", "EXIT_INPUT", "EXIT_INTERRUPTED", "input_error_types", "is_input_error"]

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


#: graphtrail's exception classes for bad input, by name. Matched on the raised
#: exception's class hierarchy rather than imported, so an error path never loads
#: the agents or the evaluators (seconds) just to classify what they raised, and a
#: class that moves between subpackages is still recognised.
INPUT_ERROR_NAMES = frozenset(
    {"KGError", "QuestionsError", "ModelResolutionError", "EvaluationError", "AblationError", "ReportError", "OutDirError"}
)


def is_input_error(exc: BaseException) -> bool:
    """Bad input (graphtrail's typed errors, OS-level file errors, undecodable text), not a bug."""
    if isinstance(exc, (InputError, OSError, UnicodeDecodeError)):
        return True
    return any(cls.__name__ in INPUT_ERROR_NAMES and cls.__module__.startswith("graphtrail.") for cls in type(exc).__mro__)


def input_error_types() -> tuple[type[BaseException], ...]:
    """The input-error classes already imported (those that can have been raised)."""
    import sys

    types: list[type[BaseException]] = [InputError, OSError, UnicodeDecodeError]
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("graphtrail."):
            for name in INPUT_ERROR_NAMES:
                exc = getattr(module, name, None)
                if isinstance(exc, type) and issubclass(exc, BaseException) and exc not in types:
                    types.append(exc)
    return tuple(types)
