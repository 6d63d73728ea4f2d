"""The working folder of an import: beside the target, found and removed even after a kill.

A LadybugDB import builds the database in a folder next to the target and
renames it into place when complete (so nothing half-written ever has the
target's name). If the import dies, that folder must not stay behind:

- on SIGTERM/SIGHUP (when the app has not set its own handler, and on the main
  thread) the import stops with ``SystemExit(128 + signal)`` and removes it;
- on SIGKILL nothing can run, so every import first sweeps its target folder:
  a working folder (named :data:`PREFIX` ``<pid>-<random>``) whose lock is
  free belongs to an import that is gone, and is removed. A running import
  holds an exclusive ``flock`` on the folder's lock file until it ends (where
  ``fcntl`` is missing, a folder whose pid is not alive counts as gone).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["PREFIX", "scratch_folder", "sweep"]

PREFIX = ".graphtrail-import-"
LOCK = ".lock"
_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _abandoned(folder: Path) -> bool:
    lock = folder / LOCK
    if fcntl is not None:
        try:
            fd = os.open(lock, os.O_RDWR)
        except OSError:
            return False  # no lock file yet (an import just starting) or not ours to judge
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # held: the import is running
        finally:
            os.close(fd)  # closing drops the lock we may have taken
        return True
    try:
        pid = int(folder.name[len(PREFIX):].split("-", 1)[0])
    except ValueError:
        return False
    return not _pid_alive(pid)


def sweep(parent: Path) -> list[Path]:
    """Remove the working folders in ``parent`` left by imports that were killed; returns them."""
    removed = []
    with contextlib.suppress(OSError):
        for folder in parent.iterdir():
            if folder.name.startswith(PREFIX) and folder.is_dir() and not folder.is_symlink() and _abandoned(folder):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _signals_stop_the_import() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}
    for sig in _SIGNALS:
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            previous[sig] = signal.signal(sig, _stop)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def scratch_folder(parent: Path) -> Iterator[Path]:
    """A new working folder in ``parent``, locked while in use, removed on exit, SIGTERM or a later sweep."""
    sweep(parent)
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        with _signals_stop_the_import():
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)
