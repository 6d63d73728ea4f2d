"""Moved to graphtrail.kg.backends.ladybug; kept so old imports work."""

from __future__ import annotations

from ...kg.backends.ladybug import LADYBUG_SUFFIX, SCHEMA_VERSION, LadybugStore, open_ladybug, write_ladybug

__all__ = ["LadybugStore", "open_ladybug", "write_ladybug", "SCHEMA_VERSION", "LADYBUG_SUFFIX"]
