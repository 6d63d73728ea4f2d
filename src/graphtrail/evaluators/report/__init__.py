"""graphtrail.evaluators.report: the :class:`Report` and its views (results.json, report.md, report.html, PNG plots).

Holds:

- :mod:`.model`: the :class:`Report` data, :meth:`Report.write` and :func:`load_report`;
- :mod:`.build`: :func:`build_report` / :func:`assemble_report`, a ``Report`` from
  scored tables, with the drawing data of one traversal;
- :mod:`.render` (Markdown, HTML), :mod:`.plots` and :mod:`.plotfonts`: renderers
  that only *read* a ``Report``.

May import :mod:`graphtrail.evaluators.scoring` and
:mod:`graphtrail.evaluators.records`; never :mod:`graphtrail.evaluators.replay` or
the API. Scoring never imports this package: the findings and the coverage
banner read a report through :class:`~graphtrail.evaluators.scoring.tables.ReportTables`.

The names below are the ones ``graphtrail.evaluators.report`` offered when it was
one module, so old imports keep working.
"""

from ..records import CITATION_CONDITIONS, NO_CITATIONS
from ..scoring.judges import JUDGE_TEXT
from ..scoring.tables import (
    CONDITION_LABELS,
    PAPER_TABLE2,
    ConditionRow,
    EntityRow,
    QuestionRow,
    ReportError,
    Scores,
    Stats,
)
from .build import assemble_report, build_report
from .model import SCHEMA_VERSION, Report, Traversal, TraversalNode, load_report

__all__ = [
    "SCHEMA_VERSION",
    "PAPER_TABLE2",
    "CONDITION_LABELS",
    "JUDGE_TEXT",
    "ConditionRow",
    "EntityRow",
    "QuestionRow",
    "Scores",
    "Stats",
    "Traversal",
    "TraversalNode",
    "Report",
    "ReportError",
    "build_report",
    "assemble_report",
    "load_report",
    "CITATION_CONDITIONS",
    "NO_CITATIONS",
]
