"""The :class:`Report`: everything an evaluation found, as data that ``results.json`` holds in full.

A report is assembled (:mod:`.build`) from the tables scoring computed and is
only *read* from then on: :meth:`Report.write` hands it to the Markdown, HTML
and plot renderers, and :func:`load_report` reads a saved ``results.json`` back,
so the views re-render without the records. The schema is documented in
``docs/metrics.md`` ("results.json").
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..scoring.findings import findings
from ..scoring.judges import DEFAULT_CORRECTNESS
from ..scoring.tables import ConditionRow, EntityRow, QuestionRow, ReportError, Scores, Stats

__all__ = ["SCHEMA_VERSION", "TraversalNode", "Traversal", "Report", "load_report"]

#: Version of the results.json layout; bumped on incompatible changes.
SCHEMA_VERSION = "graphtrail.results/1"


class TraversalNode(BaseModel):
    id: str
    name: str | None = None
    cited: bool = False
    visited: bool = True
    influential: bool | None = None
    topic: bool = False
    answer: bool = False
    #: the run's first tool call that revealed the entity (1-based step, tool name); None when no tool did (a citation only)
    step: int | None = None
    tool: str | None = None


class Traversal(BaseModel):
    question_id: str
    question: str
    answer: str | None = None
    nodes: list[TraversalNode] = Field(default_factory=list)
    edges: list[list[str]] = Field(default_factory=list)  # [source, relation, target]


class Report(BaseModel):
    """Everything an evaluation found; ``write`` renders results.json, report.md, report.html and plots."""

    schema_version: str = SCHEMA_VERSION
    created: float = Field(default_factory=time.time)
    meta: dict[str, Any] = Field(default_factory=dict)
    conditions: list[ConditionRow] = Field(default_factory=list)
    scores: Scores = Field(default_factory=Scores)
    entities: list[EntityRow] = Field(default_factory=list)
    questions: list[QuestionRow] = Field(default_factory=list)
    stats: Stats = Field(default_factory=Stats)
    traversal: Traversal | None = None
    paper_reference: bool = True
    #: the judge that decides ``correct`` (hence ``accuracy``): a key of scoring.judges.JUDGE_TEXT or a user judge's name
    correctness: str = DEFAULT_CORRECTNESS
    #: no baseline run cited any entity: the citation conditions are NO_CITATIONS
    cited_nothing: bool = False
    #: tools whose outputs revealed no entity in any baseline run while other tools' did: influence not measured
    unread_tools: list[str] = Field(default_factory=list)

    def condition(self, name: str) -> ConditionRow | None:
        return next((c for c in self.conditions if c.condition == name), None)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    # One line in a REPL (everything is in ``to_dict()``), findings and accuracies in a notebook or rich.
    def __repr__(self) -> str:
        from ..._display import one_line, plural

        base = self.condition("baseline")
        return one_line(
            "Report", plural(self.stats.n_questions, "question"), plural(len(self.conditions), "condition"),
            f"baseline accuracy {base.accuracy:.0%}" if base is not None and base.accuracy is not None else None,
            f"{plural(self.scores.hidden_influence, 'hidden influencer')}" if self.scores.entities_scored else None,
        )

    __str__ = __repr__

    def _summary_rows(self) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [(k, v) for k, v in self.meta.items() if k in ("agent", "model", "trials")]
        for c in self.conditions:
            if c.accuracy is None:
                continue
            ci = f" [{c.ci_low:.0%}, {c.ci_high:.0%}]" if c.ci_low is not None and c.ci_high is not None else ""
            test = f", McNemar p = {c.mcnemar_p:.2g}" if c.mcnemar_p is not None else ""
            rows.append((c.label, f"{c.accuracy:.0%}{ci}{test}"))
        rows += [("finding", f) for f in findings(self)]
        return rows

    def _repr_html_(self) -> str:
        from ..._display import html_summary

        return html_summary(repr(self), self._summary_rows())

    def __rich__(self) -> Any:
        from ..._display import rich_summary

        return rich_summary(repr(self), self._summary_rows())

    def write(self, out_dir: str | Path, *, results: bool = True, html: bool = True) -> dict[str, Path]:
        """Write results.json, report.md, report.html (plots embedded as SVG) and the PNG plots into ``out_dir``.

        Returns ``{"results": ..., "markdown": ..., "html": ..., "<plot>": ...}``
        for the files written. ``results=False`` leaves results.json alone (re-rendering
        from a saved one must not rewrite it); ``html=False`` skips report.html.
        Existing report files in ``out_dir`` are replaced; nothing else is touched.
        """
        from ..._outdir import write_bytes, write_text
        from ...tracer.redact import redact
        from .plots import render_plot_formats
        from .render import render_html, render_markdown

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}
        # Every file below is written from one redacted copy (questions, answers, error texts
        # may quote credentials), atomically (temp file + os.replace: a link there is not followed).
        data = redact(self.to_dict())
        self = type(self).model_validate(data)  # noqa: PLW0642 - render the redacted copy
        if results:
            results_path = out / "results.json"
            write_text(results_path, json.dumps(data, indent=2, ensure_ascii=False))
            paths["results"] = results_path
        # PNG files beside report.md; report.html embeds SVG (sharp at any zoom, scaled to the screen).
        # A plot that cannot be drawn is left out, with a warning.
        drawn = render_plot_formats(self, ("png", "svg") if html else ("png",))
        plot_files: dict[str, str] = {}
        for name, files in drawn.items():
            if "png" not in files:  # the phone drawings are for report.html only
                continue
            path = out / f"{name}.png"
            write_bytes(path, files["png"])
            paths[name] = path
            plot_files[name] = path.name
        plots = {name: files["svg"] for name, files in drawn.items() if "svg" in files}
        # Each report file is written on its own: one that fails must not cost the others.
        steps: list[tuple[str, Path, Callable[[], str]]] = [("markdown", out / "report.md", lambda: render_markdown(self, plot_files))]
        if html:
            steps.append(("html", out / "report.html", lambda: render_html(self, plots)))
        failed: list[str] = []
        for key, path, render in steps:
            try:
                write_text(path, render())
            except OSError:
                raise
            except Exception as exc:  # noqa: BLE001 - reported below, after the other files are written
                failed.append(f"{path.name} ({type(exc).__name__}: {exc})")
            else:
                paths[key] = path
        if failed:
            written = ", ".join(p.name for p in paths.values()) or "nothing"
            raise ReportError(f"could not render {'; '.join(failed)}; written: {written}")
        return paths


def load_report(path: str | Path) -> Report:
    """Read a results.json written by :meth:`Report.write` (for re-rendering)."""
    p = Path(path)
    try:
        import stat

        if not stat.S_ISREG(p.stat().st_mode):  # a FIFO would block, /dev/zero fill memory
            raise ReportError(f"{p}: not a regular file; pass the results.json an evaluation wrote")
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"results file not found: {p}") from None
    except (OSError, ValueError, RecursionError, MemoryError) as exc:  # ValueError: bad JSON, not UTF-8, a 5,000-digit number
        raise ReportError(f"{p}: not a readable results.json ({type(exc).__name__}: {str(exc)[:200]})") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if not isinstance(version, str) or not version.startswith("graphtrail.results/"):
        raise ReportError(f"{p}: not a graphtrail results.json (schema_version={version!r})")
    if version.split("/")[-1] != SCHEMA_VERSION.split("/")[-1]:
        raise ReportError(f"{p}: schema {version} is not supported by this graphtrail ({SCHEMA_VERSION})")
    try:
        return Report.model_validate(data)
    except Exception as exc:
        raise ReportError(f"{p}: invalid results.json: {exc}") from None
