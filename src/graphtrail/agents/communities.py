"""Moved to graphtrail.kg.communities; kept so old imports work.

Patch louvain_communities there, where it is called.
"""

from __future__ import annotations

from ..kg.communities import CACHE_FORMAT, cache_path, lazy_communities, louvain_communities

__all__ = ["louvain_communities", "lazy_communities", "cache_path", "CACHE_FORMAT"]
