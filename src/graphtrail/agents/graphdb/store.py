"""Moved to graphtrail.kg.backends.store; kept so old imports work."""

from __future__ import annotations

from ...kg.backends.store import Dialect, GraphStore

__all__ = ["GraphStore", "Dialect"]
