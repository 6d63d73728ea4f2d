"""How graph sources spell two shared fields: alias lists, and the label of an edge that names no relation.

Every loader and every database backend reads aliases and unlabelled edges the
same way, so the rules live here, below both: the backends import this module,
not the loaders.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["DEFAULT_RELATION", "ALIAS_SEPARATOR", "parse_aliases"]

#: The relation of an edge whose source names none (GraphRAG relationships, unlabelled node-link edges).
DEFAULT_RELATION = "related to"
#: Separates aliases stored in one text cell (entity tables, GraphML attributes).
ALIAS_SEPARATOR = ";"


def parse_aliases(value: Any) -> list[str]:
    """Aliases from a cell: ``None``/NaN, a JSON list in a string, a ``;``-separated string, or any iterable."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                return [str(a) for a in json.loads(text)]
            except json.JSONDecodeError:
                pass
        return [a.strip() for a in text.split(ALIAS_SEPARATOR) if a.strip()]
    return [str(a) for a in value]
