"""Moved to graphtrail.kg.backends.base; kept so old imports work."""

from __future__ import annotations

from ..kg.backends.base import GraphBackend

__all__ = ["GraphBackend"]
