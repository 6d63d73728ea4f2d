"""Plain progress lines for logs and pipes, where a live progress bar cannot draw.

``graphtrail eval`` piped into ``tee`` or run in CI used to print nothing for the
whole evaluation. When the output is not a terminal, a :class:`Heartbeat`
writes one line to stderr every few seconds (and one when it stops)::

    graphtrail: ablations 48/170 runs (28%), 12 s elapsed

The line comes from a daemon thread, so it keeps coming while one slow model
call holds up every count. ``GRAPHTRAIL_PROGRESS_EVERY`` sets the interval in
seconds (default 5). The module imports nothing from graphtrail.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Heartbeat", "DEFAULT_EVERY"]

DEFAULT_EVERY = 5.0


def _interval() -> float:
    try:
        value = float(os.environ.get("GRAPHTRAIL_PROGRESS_EVERY", DEFAULT_EVERY))
    except ValueError:
        return DEFAULT_EVERY
    return value if value > 0 else DEFAULT_EVERY


class Heartbeat:
    """Counts finished items and reports them as a plain line every ``every`` seconds while running."""

    def __init__(self, label: str, total: int, *, unit: str = "runs", every: float | None = None,
                 stream: TextIO | None = None) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self._note = ""
        self.every = every if every is not None else _interval()
        self._stream = stream
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()  # the thread and phase() both write: one whole line at a time
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- counting
    def phase(self, label: str, total: int) -> None:
        """Start counting a new phase; the finished one gets its last line first."""
        if self._thread is not None and self.total:
            self.tick()
        with self._lock:
            self.label, self.total, self.done, self._note = label, total, 0, ""

    def note(self, text: str) -> None:
        """Say something more of the current phase, after its count (a new phase clears it)."""
        with self._lock:
            self._note = text

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self.done += n

    # ---------------------------------------------------------------- output
    def line(self) -> str:
        with self._lock:
            label, done, total, note = self.label, self.done, self.total, self._note
        share = f" ({done / total:.0%})" if total else ""
        note = f" · {note}" if note else ""
        return f"graphtrail: {label} {done}/{total} {self.unit}{share}{note}, {time.monotonic() - self._start:.0f} s elapsed"

    def tick(self) -> None:
        """Write the current line now (the thread calls this every ``every`` seconds)."""
        stream = self._stream or sys.stderr
        try:
            text = self.line() + "\n"
            with self._write_lock:  # print() writes text and newline apart; two writers could interleave them
                stream.write(text)
                stream.flush()
        except (OSError, ValueError):  # a closed pipe must not break the run
            pass

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.tick()

    def start(self) -> "Heartbeat":
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="graphtrail-heartbeat", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and write the final line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
            self.tick()

    def __enter__(self) -> "Heartbeat":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
