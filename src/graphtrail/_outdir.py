"""Output folders: claim one, lock it, and write into it without harming anything else.

Every command and ``evaluate(out_dir=...)`` writes through here, so that:

- a folder graphtrail did not make is not written into when it already holds
  something (``--force`` or ``--resume`` says the user means it); graphtrail marks
  the folders it makes with a ``.graphtrail`` file;
- a folder that holds an earlier result of the same kind (``holds``: an evaluation's
  ``results.json`` or ``runs.jsonl``) is refused too, graphtrail's own or not, unless
  ``force`` (replace it) or ``resume`` (continue it): :class:`OutDirHoldsResults`;
- two processes never write one folder at once: a lock file (``.graphtrail.lock``,
  made with ``O_EXCL``, holding the owner's pid) is taken for the whole command; a
  lock whose process is gone is stale and taken over;
- a symlink planted inside the folder is never followed: files are written to a
  temporary name and moved into place with ``os.replace`` (which replaces a link, not
  its target), and files appended to are opened with ``O_NOFOLLOW``;
- a failed write (disk full, read-only) says in one line which file it was.

The library raises :class:`OutDirError` (a subclass per case); the CLI prints it as
one line and exits 2.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "MARKER",
    "LOCK",
    "OutDirError",
    "OutDirNotEmpty",
    "OutDirLocked",
    "OutDirHoldsResults",
    "WriteFailed",
    "check",
    "claim",
    "lock",
    "write_text",
    "write_bytes",
    "open_output",
    "write_output",
    "open_append",
    "append_text",
]

MARKER = ".graphtrail"
LOCK = ".graphtrail.lock"


class OutDirError(Exception):
    """An output folder graphtrail may not, or could not, write to (the message says which, and what to do)."""


class OutDirNotEmpty(OutDirError):
    """The folder holds files and graphtrail did not make it."""


class OutDirHoldsResults(OutDirNotEmpty):
    """The folder holds an earlier result (an evaluation) that this write would replace."""


class OutDirLocked(OutDirError):
    """Another live process is writing to the folder."""


class WriteFailed(OutDirError):
    """Writing one file failed (disk full, read-only, no permission): names the file."""


def describe_os_error(exc: OSError, path: str | Path | None = None) -> str:
    """One line: what failed, and on which file."""
    where = path if path is not None else (exc.filename or "?")
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOSPC:
        reason = "no space left on the device"
    elif exc.errno == errno.EROFS:
        reason = "the file system is read-only"
    return f"cannot write {where}: {reason}"


def _has_content(out: Path) -> bool:
    with os.scandir(out) as it:
        return any(True for _ in it)


def check(out: str | Path, *, force: bool = False, resume: bool = False, holds: Iterable[str] = ()) -> Path:
    """Refuse ``out`` if it is a file, or a non-empty folder without graphtrail's marker (unless
    ``force`` or ``resume``), or a folder holding any of the files ``holds`` names (an earlier
    result, same condition), or locked by a live process; create nothing."""
    path = Path(out)
    if path.is_symlink() and not path.is_dir():
        raise OutDirError(f"output path {path} is a symbolic link to no folder; remove it or choose another folder")
    if path.exists() and not path.is_dir():
        raise OutDirError(f"output path {path} is a file, not a directory; pass a directory")
    earlier = [name for name in holds if path.is_dir() and ((path / name).exists() or (path / name).is_symlink())]
    if earlier and not (force or resume):
        raise OutDirHoldsResults(
            f"{path} holds an earlier evaluation ({', '.join(earlier)}); pass --force (force=True) to replace it, "
            "--resume (resume=True) to continue it, or choose a new folder"
        )
    if path.is_dir() and not (path / MARKER).exists() and _has_content(path) and not (force or resume):
        raise OutDirNotEmpty(
            f"{path} is not empty and was not made by graphtrail; choose an empty or new folder, "
            "or pass --force to write into it anyway"
        )
    if path.is_dir():
        pid = _read_pid(path / LOCK)
        if pid != os.getpid() and _alive(pid):
            raise OutDirLocked(f"another graphtrail (pid {pid}) is writing to {path}; wait for it to finish or choose another --out")
    return path


def claim(out: str | Path, *, force: bool = False, resume: bool = False, holds: Iterable[str] = ()) -> Path:
    """Make ``out`` (or accept it) as a graphtrail output folder, marked as such; return it.

    Refuses what :func:`check` refuses.
    """
    path = check(out, force=force, resume=resume, holds=holds)
    try:
        path.mkdir(parents=True, exist_ok=True)
        marker = path / MARKER
        if not marker.exists() and not marker.is_symlink():
            write_text(marker, "This folder holds graphtrail output.\n")
    except OSError as exc:
        raise WriteFailed(describe_os_error(exc)) from None
    return path


# ----------------------------------------------------------------- lock
_held: dict[Path, int] = {}  # lock path -> depth, for this process (a command that calls evaluate() locks twice)
_held_guard = threading.Lock()


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _read_pid(path: Path) -> int:
    try:
        return int(path.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return -1


@contextlib.contextmanager
def lock(out: str | Path) -> Iterator[Path]:
    """Hold ``out``'s lock for the block; a second process gets :class:`OutDirLocked` at once."""
    lock_path = Path(out).resolve() / LOCK
    with _held_guard:
        if lock_path in _held:
            _held[lock_path] += 1
            reentered = True
        else:
            reentered = False
    if not reentered:
        _acquire(lock_path)
        with _held_guard:
            _held[lock_path] = 1
    try:
        yield lock_path
    finally:
        with _held_guard:
            _held[lock_path] -= 1
            last = _held[lock_path] == 0
            if last:
                del _held[lock_path]
        if last:
            with contextlib.suppress(OSError):
                if _read_pid(lock_path) == os.getpid():
                    lock_path.unlink()


def _acquire(lock_path: Path) -> None:
    for _ in range(3):
        try:
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            pid = _read_pid(lock_path)
            if pid == -1 and _young(lock_path):  # its owner is writing its pid this instant
                raise OutDirLocked(
                    f"another graphtrail is writing to {lock_path.parent}; wait for it to finish or choose another --out"
                ) from None
            if _alive(pid):
                raise OutDirLocked(
                    f"another graphtrail (pid {pid}) is writing to {lock_path.parent}; wait for it to finish or choose another --out"
                ) from None
            with contextlib.suppress(FileNotFoundError):
                lock_path.unlink()  # stale: its process is gone
            continue
        except OSError as exc:
            raise WriteFailed(describe_os_error(exc, lock_path)) from None
        try:
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        except OSError as exc:
            os.close(fd)
            with contextlib.suppress(OSError):
                lock_path.unlink()
            raise WriteFailed(describe_os_error(exc, lock_path)) from None
        os.close(fd)
        return
    raise OutDirLocked(f"could not take the lock {lock_path}; another graphtrail keeps taking it")


def _young(path: Path) -> bool:
    import time

    try:
        return time.time() - path.stat().st_mtime < 2.0
    except OSError:
        return False


# ----------------------------------------------------------------- writing
def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + ``os.replace``); a symlink at ``path`` is replaced, not followed."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    except OSError as exc:
        raise WriteFailed(describe_os_error(exc, target)) from None
    return target


def write_text(path: str | Path, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


@contextlib.contextmanager
def open_output(path: str | Path) -> Iterator[IO[str]]:
    """:func:`write_output` for text written as it is produced (a conversion streamed trace by trace).

    The text goes to a temporary file in the folder, whose lock is held meanwhile, and is
    moved into place only when the block ends without an error: a failed or interrupted
    write leaves the old file (or none), and a symlink at ``path`` is replaced, never written through.
    """
    target = _output_file(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with lock(target.parent):
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as exc:
            raise WriteFailed(describe_os_error(exc, target)) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                yield fh
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise WriteFailed(describe_os_error(exc, target)) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def write_output(path: str | Path, data: str | bytes) -> Path:
    """One file a command was told to write (``--output PATH``, ``--json PATH``, ``--html PATH``).

    Its folder is made if missing, and its lock held while writing, so a live
    graphtrail writing there refuses this one (:class:`OutDirLocked`); the file is
    written atomically, a symlink at ``path`` replaced, never written through.
    """
    target = _output_file(path)
    with lock(target.parent):
        return write_bytes(target, data.encode("utf-8") if isinstance(data, str) else data)


def _output_file(path: str | Path) -> Path:
    """``path`` as a file a command may write: not a folder, its folder made if missing."""
    target = Path(path)
    if target.is_dir():
        raise OutDirError(f"{target} is a directory; pass a file path")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteFailed(describe_os_error(exc, target.parent)) from None
    return target


def write_lines(path: str | Path, lines: Iterable[str]) -> Path:
    """Each of ``lines`` plus a newline, atomically."""
    return write_text(path, "".join(line + "\n" for line in lines))


def _append_fd(target: Path) -> int:
    """A descriptor of ``target`` opened for appending (created if absent); a symlink there is refused (``O_NOFOLLOW``)."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise WriteFailed(f"cannot write {target}: it is a symbolic link, which graphtrail does not follow; remove it") from None
        raise WriteFailed(describe_os_error(exc, target)) from None
    return fd


def open_append(path: str | Path) -> IO[Any]:
    """``path`` opened for appending text; a symlink there is refused (``O_NOFOLLOW``), a failure names the file."""
    return os.fdopen(_append_fd(Path(path)), "a", encoding="utf-8")


def append_text(path: str | Path, text: str) -> None:
    """Append ``text`` to ``path`` (``O_APPEND``, unbuffered, a symlink refused); a failed write names the file."""
    target = Path(path)
    data = text.encode("utf-8")
    fd = _append_fd(target)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise WriteFailed(describe_os_error(exc, target)) from None
    finally:
        os.close(fd)
