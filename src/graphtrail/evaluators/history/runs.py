"""What one evaluation folder contributes to a history: a :class:`HistoryRun`, read from its results.json.

Only the saved report is read; the headline scores get the same kind of interval
the report gives them (a percentile bootstrap over questions, seeded), so the
trend plots show how much of a move is noise.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..report.model import Report, load_report
from ..scoring.stats import cluster_bootstrap
from ...tracer.redact import redact_text
from ..scoring.tables import ReportError

__all__ = ["HistoryError", "HistoryRun", "Score", "SCORES", "read_runs"]


class HistoryError(ReportError):
    """No history can be built: no folder given, or none holds a readable results.json (says which and why)."""


@dataclass(frozen=True)
class Score:
    """One headline score of one run: its value, interval (None when undefined) and the n behind it."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0


#: The headline scores, in the order the page shows them: key, title, whether higher is better.
SCORES: tuple[tuple[str, str, bool], ...] = (
    ("accuracy", "Baseline accuracy", True),
    ("source_support", "Source support", True),
    ("coverage", "Coverage", True),
    ("fidelity", "Trajectory fidelity", True),
    ("hidden_influence", "Hidden influencers", False),
)


@dataclass(frozen=True)
class HistoryRun:
    """One evaluation folder as a row of the history."""

    folder: Path
    label: str  # the folder's name, made unique among the runs
    created: float
    agent: str
    model: str
    graph: str  # the KG's content hash, shortened ("" when the evaluation had no KG)
    questions: int
    questions_hash: str
    digest: str  # sha256 of results.json: names cached comparison pages
    scores: dict[str, Score] = field(default_factory=dict)
    report_html: Path | None = None
    report_md: Path | None = None

    @property
    def date(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.gmtime(self.created))


def _question_values(report: Report, attr: str) -> list[list[float | bool | None]]:
    return [[getattr(q, attr)] for q in report.questions if getattr(q, attr) is not None]


def _interval(report: Report, attr: str, headline: float | None, seed: int) -> Score:
    """The report's own headline value (what report.md says) with a bootstrap interval over its questions."""
    values = _question_values(report, attr)
    if not values:
        return Score(headline)
    ci = cluster_bootstrap(values, n_boot=2000, seed=seed)
    return Score(ci.estimate if headline is None else headline, ci.low, ci.high, ci.n)


def _scores(report: Report) -> dict[str, Score]:
    base = report.condition("baseline")
    accuracy = Score(base.accuracy, base.ci_low, base.ci_high, base.n_questions) if base is not None else Score(None)
    seed = report.stats.seed
    hidden = report.scores.hidden_influence if report.scores.entities_scored else None
    return {
        "accuracy": accuracy,
        "source_support": _interval(report, "supported", report.scores.source_support, seed),
        "coverage": _interval(report, "coverage", report.scores.coverage, seed),
        "fidelity": _interval(report, "fidelity", report.scores.fidelity, seed),
        "hidden_influence": Score(None if hidden is None else float(hidden), n=report.scores.entities_scored),
    }


def _one_run(folder: Path, labels: set[str]) -> HistoryRun:
    path = folder / "results.json" if folder.is_dir() else folder
    if not path.is_file():
        raise ReportError(f"{folder}: no results.json (not an evaluation folder)")
    report = load_report(path)
    home = path.parent
    meta: dict[str, Any] = report.meta or {}
    fingerprint: dict[str, Any] = meta.get("fingerprint") if isinstance(meta.get("fingerprint"), dict) else {}
    label = home.resolve().name or str(home)
    unique, i = label, 2
    while unique in labels:
        unique, i = f"{label} ({i})", i + 1
    labels.add(unique)
    return HistoryRun(
        folder=home,
        label=redact_text(unique),
        created=float(report.created),
        # results.json may be hand-edited or older than this graphtrail: what it says is redacted again
        agent=redact_text(str(meta.get("agent") or "?")),
        model=redact_text(str(meta.get("model_name") or fingerprint.get("model") or meta.get("model") or "?")),
        graph=str(fingerprint.get("kg_hash") or "")[:12],
        questions=report.stats.n_questions,
        questions_hash=str(fingerprint.get("questions_hash") or ""),
        digest=hashlib.sha256(path.read_bytes()).hexdigest(),
        scores=_scores(report),
        report_html=home / "report.html" if (home / "report.html").is_file() else None,
        report_md=home / "report.md" if (home / "report.md").is_file() else None,
    )


def read_runs(folders: Iterable[str | Path]) -> tuple[list[HistoryRun], list[str]]:
    """Every readable evaluation among ``folders``, oldest first, and one line per folder left out.

    A folder that is not a readable evaluation is left out with its reason (a history of
    100 runs should not be lost to one broken folder); when none is readable, raises
    :class:`HistoryError` with the reasons.
    """
    given: Sequence[Path] = [Path(f) for f in folders]
    if not given:
        raise HistoryError("no evaluation folders given; pass the folders `graphtrail eval` wrote, e.g. runs/*")
    runs: list[HistoryRun] = []
    skipped: list[str] = []
    labels: set[str] = set()
    seen: set[Path] = set()
    for folder in given:
        key = folder.resolve()
        if key in seen:
            continue
        seen.add(key)
        try:
            runs.append(_one_run(folder, labels))
        except (ReportError, OSError) as exc:
            skipped.append(str(exc) if isinstance(exc, ReportError) else f"{folder}: {exc.strerror or exc}")
    if not runs:
        raise HistoryError("no readable evaluation among the folders given: " + "; ".join(skipped[:3])
                           + (f"; and {len(skipped) - 3} more" if len(skipped) > 3 else ""))
    runs.sort(key=lambda r: (r.created, r.label))
    return runs, skipped
