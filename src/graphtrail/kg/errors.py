"""What goes wrong when a knowledge graph is built, loaded or opened.

Kept apart from the loaders and the backends so that both raise the same
exceptions without importing each other: a database backend that misses its
driver raises :class:`MissingDependencyError` just as the GraphRAG loader does.
"""

from __future__ import annotations

__all__ = ["KGError", "MissingDependencyError", "KGWarning"]


class KGError(ValueError):
    """A knowledge graph could not be built or loaded; the message says where and why."""


class MissingDependencyError(KGError, ImportError):
    """An optional dependency a loader needs is not installed; the message says which extra to install."""


class KGWarning(UserWarning):
    """Something in a graph file was not loaded (e.g. columns graphtrail does not read); the message says what."""
