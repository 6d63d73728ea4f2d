"""How a filter-route run's numbers were obtained: ``exact``, ``filtered`` or ``estimated`` (docs/ablations.md, "Routes").

- ``exact``: the tool read the ablated data itself: graphtrail's own graph tools
  (a filtered view of the KnowledgeGraph), or a tool over a data-source wrapper
  (``ablated_view``, ``ablated_driver``, ``ablated_connection``) that consulted
  the run's condition during the call. (The factory route is exact throughout.)
- ``filtered``: the output filter recognised entities by id in structured output
  (JSON text, dicts, lists), or a filter the user registered for the tool decided.
- ``estimated``: the output was plain text, so the filter could only cut lines,
  rows or sentences naming entities, and replace names: a heuristic.

A run is as weak as its weakest tool call; a condition as weak as its weakest run.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import ToolMessage

from ...records import weakest_method as weakest
from .filters import is_registered

__all__ = ["EXACT", "FILTERED", "ESTIMATED", "weakest", "call_method"]

EXACT, FILTERED, ESTIMATED = "exact", "filtered", "estimated"

def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(str(b.get("text", "")) for b in content)
    return None


def _structured(text: str) -> bool:
    """JSON text, or one JSON object/array per line: what the filter reads by id."""
    stripped = text.strip()
    if not stripped:
        return True
    for chunk in ([stripped] if stripped[0] in "[{" else []) + [None]:
        if chunk is None:
            break
        try:
            return isinstance(json.loads(chunk), (dict, list))
        except ValueError:
            break
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    try:
        return all(line[0] in "[{" and isinstance(json.loads(line), (dict, list)) for line in lines)
    except ValueError:
        return False


def call_method(tool_name: str, output: Any, content_and_artifact: bool, read_source: bool) -> str:
    """The method of one filtered tool call, from what the tool returned (before filtering)."""
    if read_source:
        return EXACT
    if is_registered(tool_name):
        return FILTERED
    if isinstance(output, ToolMessage):
        content = output.content
    elif content_and_artifact and isinstance(output, tuple) and len(output) == 2:
        content = output[0]
    else:
        content = output
    text = _text(content)
    if text is None:
        return FILTERED  # dicts and lists: read by id
    return FILTERED if _structured(text) else ESTIMATED
