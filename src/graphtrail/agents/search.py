"""Moved to graphtrail.kg.search; kept so old imports work."""

from __future__ import annotations

from ..kg.search import (
    CODE_MAX_LEN,
    MIN_SCORE,
    RELATIVE_MARGIN,
    TRIGRAM_CANDIDATES,
    EntityIndex,
    Ref,
    code_hits,
    label_scores,
    rank_hits,
    scan_entities,
)

__all__ = [
    "MIN_SCORE",
    "RELATIVE_MARGIN",
    "CODE_MAX_LEN",
    "TRIGRAM_CANDIDATES",
    "Ref",
    "label_scores",
    "code_hits",
    "rank_hits",
    "scan_entities",
    "EntityIndex",
]
