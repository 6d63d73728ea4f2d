"""Moved to graphtrail.kg.loaders.delimited; kept so old imports work."""

from __future__ import annotations

from ..kg.loaders.delimited import (
    PY_WHITESPACE,
    Records,
    delimiter_name,
    fast_columns,
    read_bytes,
    read_records,
    read_text,
    sniff_delimiter,
)

__all__ = [
    "read_text",
    "read_bytes",
    "sniff_delimiter",
    "read_records",
    "fast_columns",
    "delimiter_name",
    "Records",
    "PY_WHITESPACE",
]
