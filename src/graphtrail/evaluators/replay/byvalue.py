"""Entities recognised by value: with a KG, a string in a tool's JSON output that *is* a KG id names that entity.

The tracer reads entities from the keys it knows (``id``, ``entity_id``,
``node_id``, JSON-LD ``@id``) because it knows no graph. The evaluation knows
the KG, and an id is an id whatever the key holding it is called
(``person_id``, ``uid``, ``colleague``) and however deep it sits: any string
value, or dict key, of a step's JSON output (a document, one per line, or a
Python repr) that equals a KG id is that entity. Only ids that look like ids
(two characters or more, a letter among them) are read: a bare number is more
often a count than an id.

Read by :func:`.tabular.read_table_entities` with the table cells, on every run
of an evaluation with a KG, so the visited entities, the citations read by name
and the conditions built from them are those of what the tools really showed.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["value_entities"]

#: Nodes (dicts, lists, strings) read at most per output: an input bound.
_BUDGET = 20_000
_MAX_CHARS = 1_000_000


def _documents(text: str) -> list[Any]:
    text = text.strip()
    if not text or text[0] not in "[{(":
        return []
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line[:1] in ("{", "["):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    if out:
        return out
    from ...tracer.extract import _parse_repr

    value = _parse_repr(text)
    return [value] if value is not None else []


def _is_id(value: str) -> bool:
    return 2 <= len(value) <= 200 and any(c.isalpha() for c in value)


def value_entities(text: str | None, kg: Any) -> list[str]:
    """Ids of KG entities ``text``'s JSON names by value (string values and keys equal to a KG id), in order."""
    if kg is None or not text or len(text) > _MAX_CHARS:
        return []
    found: dict[str, None] = {}
    budget = _BUDGET
    stack: list[Any] = list(reversed(_documents(text)))
    while stack and budget > 0:
        value = stack.pop()
        budget -= 1
        if isinstance(value, str):
            if _is_id(value) and value in kg:
                found.setdefault(value, None)
        elif isinstance(value, dict):
            children: list[Any] = []
            for key, child in value.items():
                children += [key, child] if isinstance(key, str) else [child]
            stack.extend(reversed(children))
        elif isinstance(value, (list, tuple)):
            stack.extend(reversed(value))
    return list(found)
