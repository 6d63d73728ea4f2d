"""A filter on graphtrail's logger that redacts every record (the rules of :mod:`graphtrail._secrets`).

Apart from the rules so that answering a usage error (which uses the rules, not the
logger) does not import :mod:`logging`. The tracer installs it on import
(:mod:`graphtrail.tracer._safety`), and every module that logs imports the tracer.
"""

from __future__ import annotations

import logging

from ._secrets import scan_text

__all__ = ["RedactingFilter", "install_log_filter"]



class RedactingFilter(logging.Filter):
    """Redacts every record logged on graphtrail's logger: its message and its arguments.

    A filter on the ``graphtrail`` logger sees every record graphtrail logs (all of it
    goes through that one logger), before any handler formats it, whoever configured
    the handlers. The record is changed in place; it is never dropped.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
            clean = scan_text(text)
            if clean != text:  # else the record stays as it is, for the filters after this one
                record.msg, record.args = clean, None
            if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
                import traceback

                record.exc_text = scan_text("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        except Exception:  # noqa: BLE001 - a message that cannot be formatted is replaced, not leaked
            record.msg, record.args = "graphtrail: a log message could not be redacted and was dropped", None
        return True


_filter = RedactingFilter()


def install_log_filter(logger_name: str = "graphtrail") -> None:
    """Put :class:`RedactingFilter` first on graphtrail's logger (once; cheap to call again)."""
    log = logging.getLogger(logger_name)
    if _filter not in log.filters:
        log.filters.insert(0, _filter)
