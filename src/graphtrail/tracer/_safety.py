"""Tracing must never break the traced app: failures become one warning per kind."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from .._secret_log import install_log_filter
from .._secrets import scan_text as _core_scan

logger = logging.getLogger("graphtrail")

_warned: set[str] = set()
_warned_lock = threading.Lock()

F = TypeVar("F", bound=Callable[..., Any])


# The built-in text rule until redact.py installs its own (the same rules): a warning is
# never written unredacted, whichever module logs first. And every record logged on the
# "graphtrail" logger is redacted by a filter (graphtrail._secret_log).
install_log_filter()
_redact_text: Callable[[str], str] = _core_scan


def set_message_redactor(fn: Callable[[str], str]) -> None:
    """The text rule applied to every argument of a warning (redact.py sets it)."""
    global _redact_text
    _redact_text = fn


def warn_once(kind: str, message: str, *args: Any) -> None:
    """Log ``message`` at WARNING the first time ``kind`` happens in this process.

    A tracer that logs on every step of every run would drown the app's logs,
    so each kind of failure is reported once; later ones go to DEBUG.
    """
    with _warned_lock:
        first = kind not in _warned
        _warned.add(kind)
    # A message is bytes graphtrail writes: its arguments (an endpoint, an exception) are redacted
    # (redact.py installs its text rule here; it imports this module, not the other way round).
    safe = tuple(a if isinstance(a, (int, float)) else _redact_text(a if isinstance(a, str) else repr(a)) for a in args)
    logger.log(logging.WARNING if first else logging.DEBUG, message.replace("%r", "%s"), *safe)


def reset_warnings() -> None:
    """Forget which warnings were logged (for tests)."""
    with _warned_lock:
        _warned.clear()


def guarded(kind: str) -> Callable[[F], F]:
    """Decorate a callback so that a bug in graphtrail never reaches the app."""

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the whole point
                warn_once(f"handler:{kind}", "graphtrail: tracing failed in %s (%r); the agent is unaffected", kind, exc)
                return None

        return wrapper  # type: ignore[return-value]

    return deco
