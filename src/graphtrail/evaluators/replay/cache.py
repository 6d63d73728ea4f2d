"""The on-disk run cache: one JSON line per finished replay run, so nothing computed is lost.

Each :class:`~graphtrail.evaluators.records.RunRecord` is appended and flushed the
moment its run finishes. A resumed evaluation loads the file, skips every key it
already holds, and carries on. A line torn by a kill mid-write is skipped (and
rewritten when that run is redone). Runs that ended in an error are kept on disk
but not treated as done, so a resume retries them; the last record for a key wins.

Layout of ``out_dir`` (see docs/ablations.md): ``runs.jsonl`` (records) and
``reuse.jsonl`` (the prefix-reuse store, :class:`~graphtrail.evaluators.replay.reuse.ReuseStore`).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from pydantic import ValidationError

from ..._outdir import append_text
from ...tracer.redact import redact
from ..records import RunKey, RunRecord

__all__ = ["RunCache", "RUNS_FILE", "REUSE_FILE", "load_records"]

RUNS_FILE = "runs.jsonl"
REUSE_FILE = "reuse.jsonl"


def load_records(path: str | Path) -> list[RunRecord]:
    """Every parseable record in a ``runs.jsonl``, the last one per key, in file order."""
    by_key: dict[RunKey, RunRecord] = {}
    path = Path(path)
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                record = RunRecord.model_validate_json(line)
            except (ValidationError, ValueError):
                continue  # torn line from an interrupted write
            by_key.pop(record.key, None)
            by_key[record.key] = record
    return list(by_key.values())


class RunCache:
    """Finished runs by :class:`RunKey`, mirrored to ``<out_dir>/runs.jsonl`` when ``out_dir`` is set.

    ``resume=False`` on a directory that already holds runs moves the old file
    aside (``runs.<timestamp>.jsonl``) rather than overwriting it.
    """

    def __init__(self, out_dir: str | Path | None = None, *, resume: bool = False) -> None:
        self.path = Path(out_dir) / RUNS_FILE if out_dir is not None else None
        self._records: dict[RunKey, RunRecord] = {}
        self._lock = threading.Lock()
        self.moved_aside: Path | None = None
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume:
            for record in load_records(self.path):
                self._records[record.key] = record
        elif self.path.exists() and self.path.stat().st_size > 0:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            target = self.path.with_name(f"runs.{stamp}.jsonl")
            n = 1
            while target.exists():
                target = self.path.with_name(f"runs.{stamp}-{n}.jsonl")
                n += 1
            self.path.rename(target)
            self.moved_aside = target
        self._ensure_line_start()

    def _ensure_line_start(self) -> None:
        # A torn last line has no newline; start the next record on a fresh line.
        if self.path is None or not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb") as fh:
            fh.seek(-1, 2)
            last = fh.read(1)
        if last != b"\n":
            append_text(self.path, "\n")

    def done(self, key: RunKey) -> RunRecord | None:
        """The finished record for ``key``, or ``None`` if it must (still) run."""
        record = self._records.get(key)
        if record is None or record.status == "error":
            return None
        return record

    def get(self, key: RunKey) -> RunRecord | None:
        return self._records.get(key)

    def add(self, record: RunRecord) -> None:
        with self._lock:
            self._records[record.key] = record
            if self.path is not None:
                # Redacted like every file graphtrail writes: a run's question, answer and error text.
                append_text(self.path, json.dumps(redact(record.model_dump(mode="json")), ensure_ascii=False) + "\n")

    def records(self) -> list[RunRecord]:
        return list(self._records.values())

    def __len__(self) -> int:
        return len(self._records)
