"""Moved to graphtrail.kg.views; kept so old imports work."""

from __future__ import annotations

from ..kg.views import MASK_PLACEHOLDER, GraphFilter, active_filter, use_filter

__all__ = ["GraphFilter", "active_filter", "use_filter", "MASK_PLACEHOLDER"]
