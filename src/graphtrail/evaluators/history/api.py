"""``build_history(folders, out)``: read the runs, compare consecutive ones, draw the trends, write the page.

Comparison pages are cached in ``OUT/compare/`` under the two runs' results.json
digests, so rebuilding the history after each merge compares only the new pair:
a team's page of 100 runs is rebuilt in the time of one comparison.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..._outdir import OutDirError, claim, lock, write_bytes, write_text
from ...tracer.redact import redact
from .render import render_html, render_markdown
from .runs import HistoryError, HistoryRun, read_runs
from .trends import trend_plots

__all__ = ["build_history", "HISTORY_SCHEMA"]

HISTORY_SCHEMA = "graphtrail.history/1"
_COMPARE_DIR = "compare"


def _pair_key(base: HistoryRun, new: HistoryRun) -> str:
    return f"{base.digest[:12]}-{new.digest[:12]}"


def _summary(comparison: Any) -> str:
    moved = [c for c in comparison.changes if c.significant]
    if not moved:
        return "no significant change"
    return f"{len(moved)} significant change{'s' if len(moved) != 1 else ''}"


def _loaded(run: HistoryRun, label: str, reports: dict[Path, Any]) -> Any:
    """``run``'s report, read once for both comparisons it takes part in (as NEW, then as BASE)."""
    from ..comparison.pairing import load_evaluation

    if run.folder not in reports:
        reports[run.folder] = load_evaluation(run.folder, label)[0]
    return reports[run.folder]


def _change(base: HistoryRun, new: HistoryRun, out: Path, reports: dict[Path, Any]) -> dict[str, Any]:
    """The comparison of two consecutive runs: its page (made once, then cached) and a one-line summary.

    ``reports`` holds the reports of the pair compared last; only this pair's are kept.
    """
    from ..comparison import CompareError, compare

    key = _pair_key(base, new)
    page = out / _COMPARE_DIR / f"{key}.html"
    meta_path = out / _COMPARE_DIR / f"{key}.json"
    if page.is_file() and meta_path.is_file() and not meta_path.is_symlink():
        try:
            cached = json.loads(meta_path.read_text(encoding="utf-8"))
            if isinstance(cached, dict) and isinstance(cached.get("summary"), str):
                return {"summary": cached["summary"], "page": cached.get("page")}
        except (OSError, ValueError):
            pass  # made again below
    for folder in [f for f in reports if f not in (base.folder, new.folder)]:
        del reports[folder]
    try:
        comparison = compare(_loaded(base, "BASE", reports), _loaded(new, "NEW", reports))
    except CompareError as exc:
        result: dict[str, Any] = {"summary": "not comparable: " + str(exc).split(";")[0][:160], "page": None}
    else:
        write_text(page, comparison.to_html(plot=False))
        result = {"summary": _summary(comparison), "page": f"{_COMPARE_DIR}/{page.name}"}
    write_text(meta_path, json.dumps(result))
    return result


def _progress(enabled: bool, total: int) -> Any:
    if not enabled or total < 4:
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    bar = Progress(TextColumn("comparing consecutive runs"), BarColumn(), MofNCompleteColumn(), console=console,
                   transient=True, disable=not console.is_terminal)
    return bar


def build_history(folders: Iterable[str | Path], out: str | Path, *, force: bool = False,
                  progress: bool = False) -> dict[str, Path]:
    """Write ``history.html``, ``history.md``, ``history.json`` and the trend PNGs into ``out``; return their paths.

    ``folders`` are evaluation folders (or their results.json files), in any order: runs are
    ordered by the time their report was made. A folder that is not a readable evaluation is
    left out and named on the page; none readable raises :class:`HistoryError`. ``out`` follows
    the output-folder rules (a folder graphtrail did not make, or an evaluation folder, is refused
    unless ``force``; a locked one is refused).
    """
    runs, skipped = read_runs(folders)
    out_path = Path(out)
    if (out_path / "results.json").exists() and not force:
        raise HistoryError(f"{out_path} holds an evaluation (results.json); write the history to its own folder, "
                           "e.g. --out history")
    claim(out_path, force=force)
    with lock(out_path):
        (out_path / _COMPARE_DIR).mkdir(exist_ok=True)
        changes: list[dict[str, Any]] = [{"summary": "first run", "page": None}]
        bar = _progress(progress, len(runs) - 1)
        reports: dict[Path, Any] = {}
        task = bar.add_task("compare", total=len(runs) - 1) if bar is not None else None
        if bar is not None:
            bar.start()
        try:
            for prev, cur in zip(runs, runs[1:]):
                changes.append(_change(prev, cur, out_path, reports))
                if bar is not None:
                    bar.advance(task)
        finally:
            if bar is not None:
                bar.stop()
        plots = trend_plots(runs, {"wide": ("svg", "png"), "narrow": ("svg",)})
        paths: dict[str, Path] = {}
        plot_files: dict[str, str] = {}
        for key, drawn in plots.items():
            path = out_path / f"trend-{key}.png"
            write_bytes(path, drawn["wide"]["png"])
            plot_files[key] = path.name
            paths[f"trend-{key}"] = path
        html_changes = [(c["page"], c["summary"]) for c in changes]
        safe_skipped = [redact(s) for s in skipped]
        paths["html"] = write_text(out_path / "history.html", render_html(runs, plots, html_changes, safe_skipped, out_path))
        paths["markdown"] = write_text(out_path / "history.md",
                                       render_markdown(runs, plot_files, html_changes, safe_skipped, out_path))
        data = {
            "schema_version": HISTORY_SCHEMA,
            "runs": [
                {"number": i, "folder": str(r.folder), "label": r.label, "created": r.created, "date": r.date,
                 "agent": r.agent, "model": r.model, "graph": r.graph, "questions": r.questions,
                 "scores": {k: vars(s) for k, s in r.scores.items()}, "change": c}
                for i, (r, c) in enumerate(zip(runs, changes), start=1)
            ],
            "skipped": safe_skipped,
        }
        paths["json"] = write_text(out_path / "history.json", json.dumps(redact(data), indent=2, ensure_ascii=False))
    return paths


__all__ += ["HistoryError", "OutDirError"]
