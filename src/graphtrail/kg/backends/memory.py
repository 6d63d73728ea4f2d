"""The in-memory backend: :class:`~graphtrail.kg.graph.KnowledgeGraph` itself.

It is the reference implementation of :class:`~.base.GraphBackend`; the
database backends (:mod:`.cypher`) answer the same reads. Nothing to open or
close: load one with :func:`graphtrail.kg.load_kg`. This module only names it
among the backends.
"""

from __future__ import annotations

from ..graph import KnowledgeGraph

__all__ = ["KnowledgeGraph"]
