"""Moved to graphtrail.kg.backends.mapping; kept so old imports work."""

from __future__ import annotations

from ...kg.backends.mapping import GraphMapping, quote_name

__all__ = ["GraphMapping", "quote_name"]
