"""The over-filtering check: did the filter take away an entity the condition did not hide?

For each filtered tool call, the unfiltered output and the filtered one are at
hand. Every entity that was visible before (its id, or a known name, as whole
words in what the model reads: the content, not an artifact) and that the
condition neither hides nor masks nor text-blocks must still be visible after.
If not, the filter removed too much (a one-line prose reply dropped whole
because it named one hidden entity), the model saw less than the ablated graph
would show, and the condition's numbers would be wrong: the call is counted as
over-filtered and the coverage guard marks the condition invalid, naming the tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import ToolMessage

from ....kg.views import GraphFilter
from .leaks import normalize

__all__ = ["model_text", "lost_entities"]


def model_text(output: Any, content_and_artifact: bool = False) -> str:
    """The part of a tool's output the model reads, as text."""
    if isinstance(output, ToolMessage):
        output = output.content
    elif content_and_artifact and isinstance(output, tuple) and len(output) == 2:
        output = output[0]
    if isinstance(output, str):
        return output
    try:
        return json.dumps(output, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(output)


def _pattern(names: Mapping[str, str], graph_filter: GraphFilter) -> tuple[re.Pattern[str], dict[str, str]] | None:
    removed = graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked
    terms: dict[str, str] = {}
    for eid, name in names.items():
        if eid in removed:
            continue
        if len(eid) >= 2 and any(c.isalpha() for c in eid):
            terms.setdefault(normalize(eid), eid)
        if isinstance(name, str) and len(name) >= 3 and not name.isdigit():
            terms.setdefault(normalize(name), eid)
    if not terms:
        return None
    alternation = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
    return re.compile(r"(?<![\w-])(?:" + alternation + r")(?![\w-])"), terms


def lost_entities(before: str, after: str, names: Mapping[str, str], graph_filter: GraphFilter) -> list[str]:
    """Ids of entities visible in ``before`` and gone from ``after`` that ``graph_filter`` does not remove."""
    if before == after:
        return []
    built = _pattern(names, graph_filter)
    if built is None:
        return []
    pattern, terms = built
    seen_before = {terms[m.group(0)] for m in pattern.finditer(normalize(before))}
    if not seen_before:
        return []
    seen_after = {terms[m.group(0)] for m in pattern.finditer(normalize(after))}
    return sorted(seen_before - seen_after)
