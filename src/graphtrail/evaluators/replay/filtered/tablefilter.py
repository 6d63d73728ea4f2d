"""Filtering tables in a tool's text: the row holding a hidden entity goes, the header and separator stay.

The smallest unit of a table that holds an entity is its row. A Markdown row or
a fixed-width line (``DataFrame.to_string()``) in which a cell names a hidden
entity, by id or by a name the evaluation knows, is dropped whole; every other
line of the table is kept as it was (masked names in cells are replaced by
:func:`.names.mask_everywhere` before this runs). Cells are read with the
model-input check's own phrase matcher (:class:`~.leaks.EntityNames`: whole
words, Unicode-normalised, longest name first), so what this filter removes and
what that check looks for are the same names. A name that an entity the
condition keeps also bears does not drop the row (the ablated graph shows it too).

If the row also named an entity the condition keeps (a film's row naming its
hidden director), dropping it removes that entity as well: the over-filtering
check (:mod:`.overfilter`) then marks the condition invalid rather than guess
whether the real tool would have dropped the row or emptied the cell.
"""

from __future__ import annotations

from collections.abc import Mapping

from ....kg.views import GraphFilter
from ....tracer.tables import find_tables
from .leaks import EntityNames, _leaked
from .scope import current_scope

__all__ = ["table_lines"]


def _matcher(names: Mapping[str, str]) -> EntityNames:
    scope = current_scope()
    known = getattr(scope, "entity_names", None) if scope is not None else None
    if known is None:
        known = EntityNames(revealed={eid: [name] for eid, name in names.items() if isinstance(name, str)})
    return known


def _names_hidden(cell: str, graph_filter: GraphFilter, matcher: EntityNames) -> bool:
    """Whether ``cell`` names a hidden entity outside the kept entities' own descriptions (which name whom they like)."""
    def hit(text: str) -> bool:
        return any(_leaked(match, graph_filter) & graph_filter.hidden for match in matcher.matches(text))

    if not hit(cell):
        return False
    from .withheld import without_kept_descriptions

    stripped = without_kept_descriptions(cell, graph_filter, matcher)
    return stripped == cell or hit(stripped)


def table_lines(text: str, graph_filter: GraphFilter, names: Mapping[str, str]) -> dict[int, bool] | None:
    """``{line number: drop it}`` for every line of every table in ``text``; ``None`` when it holds no table."""
    tables = find_tables(text)
    if not tables:
        return None
    matcher = _matcher(names)
    matcher.ensure(graph_filter.hidden)
    hidden = graph_filter.hidden
    out: dict[int, bool] = {}
    for table in tables:
        for line in table.frame_lines:
            out[line] = False
        for line, row in zip(table.row_lines, table.rows):
            # by value: a cell that is a hidden entity's id, whatever its column; else a name the matcher reads,
            # outside the cells' own descriptions of kept entities (which name whom they like)
            out[line] = any(cell.strip() in hidden or _names_hidden(cell, graph_filter, matcher) for cell in row.values() if cell)
    return out
