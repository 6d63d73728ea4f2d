"""Progress of a replay: a rich bar on a terminal; elsewhere (pipes, CI logs) a plain line on stderr every few seconds."""

from __future__ import annotations

from typing import Any

from ..records import RunRecord

__all__ = ["ReplayProgress"]


class ReplayProgress:
    """Counts finished runs, and the model calls they made or reused, per phase (baseline, ablations)."""

    def __init__(self, enabled: bool) -> None:
        self._bar: Any = None
        self._beat: Any = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            console = Console()
            if console.is_terminal:
                self._bar = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("model calls {task.fields[calls]}, reused {task.fields[reused]}"),
                    TimeElapsedColumn(),
                    console=console,
                    transient=False,
                )
            else:
                from ..._heartbeat import Heartbeat

                self._beat = Heartbeat("replay", 0)
        self._task: Any = None
        self._label = ""
        self._calls = self._reused = 0
        self._ahead = 0  # condition runs finished early (speculate.py), counted in their phase once kept

    def __enter__(self) -> "ReplayProgress":
        if self._bar is not None:
            self._bar.__enter__()
        if self._beat is not None:
            self._beat.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
        if self._beat is not None:
            self._beat.stop()

    def phase(self, description: str, total: int) -> None:
        self._label = description
        if self._beat is not None:
            self._beat.phase(description, total)
        if self._bar is not None:
            self._task = self._bar.add_task(description, total=total, calls=self._calls, reused=self._reused)

    def done(self, record: RunRecord, from_cache: bool) -> None:
        if not from_cache:
            self._calls += record.model_calls
            self._reused += record.reused_calls
        if self._beat is not None:
            self._beat.advance()
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=1, calls=self._calls, reused=self._reused)

    def ahead(self) -> None:
        """One condition run finished early, while baselines still run (:mod:`.speculate`).

        Said beside the baseline count ("baseline 30/36 runs (83%) · 14 ablation runs done early"),
        not counted in it; the ablations phase counts such a run once the end keeps it. Runs that
        finish early after the baselines are done are counted there, so they are not said twice.
        """
        if self._label != "baseline":
            return
        self._ahead += 1
        note = f"{self._ahead} ablation run{'s' if self._ahead != 1 else ''} done early"
        if self._beat is not None:
            self._beat.note(note)
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=f"{self._label} · {note}")
