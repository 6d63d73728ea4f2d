"""``graphtrail history``: many evaluation folders as one static page (and Markdown) a team opens.

One evaluation answers "how grounded is this agent now?"; a history answers "how
has grounding moved over the last 20 merges?". :func:`build_history` reads each
folder's ``results.json`` (nothing is re-run), draws one trend plot per headline
score with its interval, and links every run's report and a comparison between
each pair of consecutive runs.
"""

from __future__ import annotations

from .api import build_history
from .runs import HistoryError, HistoryRun, read_runs

__all__ = ["build_history", "read_runs", "HistoryRun", "HistoryError"]
