"""Documents without the keys that differ from run to run by design (timings, ids), for comparing runs."""

from __future__ import annotations

from typing import Any


def without(value: Any, keys: set[str] | frozenset[str]) -> Any:
    """``value`` (JSON-like) with every dict entry whose key is in ``keys`` dropped, at any depth."""
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value
