"""pandas entity and relation tables, ablated as row selections (pandas has no cheap views that rewrite cells).

:class:`EntityTables` names the two tables and their columns. Hidden entities'
rows go, and every relation row with a hidden end; masked rows keep their id
with the name column set to the placeholder and the text columns blanked;
text-blocked rows keep their name with the text columns blanked. A masked row
whose id is its name (no name column, an empty name, or one equal to the id) would
keep the name in its id: its id becomes the placeholder key of
:func:`~graphtrail.kg.relabel.masked_key`, in the relation table too, as for networkx
graphs and dicts keyed by names. A lone ``DataFrame`` is an entity table. The user's frames are never changed: the
result is a new frame (rows selected, then the few rewritten cells).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ....kg.graph import KnowledgeGraph
from ....kg.relabel import keyed_by_name, masked_key
from ....kg.views import GraphFilter

__all__ = ["EntityTables", "register"]


@dataclass(frozen=True)
class EntityTables:
    """An entity table and (optionally) a relation table, with the columns that hold ids, names and text.

    ``id``/``name``/``text`` default to the ``Keys`` given to ``ablated`` (``"id"``, ``"name"``,
    ``("description", "text", "summary")``); ``source``/``target`` are the relation table's end columns.
    """

    entities: Any
    relations: Any = None
    source: str = "source"
    target: str = "target"
    relation: str = "relation"
    id: str | None = None
    name: str | None = None
    text: tuple[str, ...] | None = field(default=None)


def _renamed(frame: Any, graph_filter: GraphFilter, id_col: str, name_col: str) -> dict[str, str]:
    """Masked rows keyed by their name: id -> the placeholder key they are shown under."""
    masked = graph_filter.masked - graph_filter.hidden
    if not masked:
        return {}
    ids = frame[id_col].astype(str)
    names = frame[name_col] if name_col in frame.columns else None
    taken = set(ids)
    out: dict[str, str] = {}
    for i in ids.index[ids.isin(masked)]:
        eid = ids[i]
        name = names[i] if names is not None else None
        if keyed_by_name(eid, {"name": name if isinstance(name, str) else None}, "name"):
            key = masked_key(eid)
            while key in taken:  # a digest that is some row's id already: lengthen it
                key += "~"
            out[eid] = key
    return out


def _entity_frame(frame: Any, graph_filter: GraphFilter, id_col: str, name_col: str, text_cols: tuple[str, ...],
                  renamed: dict[str, str] | None = None) -> Any:
    ids = frame[id_col].astype(str)
    out = frame[~ids.isin(graph_filter.hidden)] if graph_filter.hidden else frame
    touched = graph_filter.masked | graph_filter.text_blocked
    if not touched:
        return out if out is not frame else frame.copy(deep=False)
    out = out.copy()
    kept = out[id_col].astype(str)
    blank = kept.isin(touched)
    for col in text_cols:
        if col in out.columns:
            out.loc[blank, col] = ""
    masked = kept.isin(graph_filter.masked)
    renamed = renamed or {}
    if name_col in out.columns and masked.any():
        out[name_col] = out[name_col].astype(object)
        out.loc[masked, name_col] = [renamed.get(e) or graph_filter.masked_name(e, n)
                                     for e, n in zip(kept[masked], out.loc[masked, name_col])]
    if renamed:  # the id that spelled the name goes too (its name is its new id)
        moved = kept.isin(renamed)
        out[id_col] = out[id_col].astype(object)
        out.loc[moved, id_col] = [renamed[e] for e in kept[moved]]
    return out


def _relation_frame(frame: Any, graph_filter: GraphFilter, tables: EntityTables,
                    renamed: dict[str, str] | None = None) -> Any:
    if frame is None or not (graph_filter.hidden or renamed):
        return frame
    if graph_filter.hidden:
        gone = frame[tables.source].astype(str).isin(graph_filter.hidden) | frame[tables.target].astype(str).isin(graph_filter.hidden)
        frame = frame[~gone]
    if renamed:
        frame = frame.copy()
        for col in (tables.source, tables.target):
            ends = frame[col].astype(str)
            moved = ends.isin(renamed)
            if moved.any():
                frame[col] = frame[col].astype(object)
                frame.loc[moved, col] = [renamed[e] for e in ends[moved]]
    return frame


def _columns(tables: EntityTables, keys: Any) -> tuple[str, str, tuple[str, ...]]:
    return tables.id or keys.id, tables.name or keys.name, tables.text if tables.text is not None else keys.text


def ablated_tables(tables: EntityTables, graph_filter: GraphFilter, keys: Any) -> EntityTables:
    id_col, name_col, text_cols = _columns(tables, keys)
    renamed = _renamed(tables.entities, graph_filter, id_col, name_col)
    return replace(tables, entities=_entity_frame(tables.entities, graph_filter, id_col, name_col, text_cols, renamed),
                   relations=_relation_frame(tables.relations, graph_filter, tables, renamed))


def tables_catalogue(tables: EntityTables, keys: Any) -> KnowledgeGraph:
    id_col, name_col, text_cols = _columns(tables, keys)
    kg = KnowledgeGraph(name="tables")
    for row in tables.entities.to_dict("records"):
        text = "\n".join(str(row[c]) for c in text_cols if isinstance(row.get(c), str) and row.get(c))
        name = row.get(name_col)
        kg.add_entity(str(row[id_col]), name if isinstance(name, str) else None, str(row.get(keys.type) or "entity"), text)
    if tables.relations is not None:
        for row in tables.relations.to_dict("records"):
            kg.add_relation(str(row[tables.source]), str(row.get(tables.relation) or "related_to"), str(row[tables.target]))
    return kg


def _frame(frame: Any, graph_filter: GraphFilter, keys: Any) -> Any:
    return ablated_tables(EntityTables(frame), graph_filter, keys).entities


def _frame_catalogue(frame: Any, keys: Any) -> KnowledgeGraph:
    return tables_catalogue(EntityTables(frame), keys)


def register(add: Callable[..., None]) -> bool:
    """Register the tables, and ``DataFrame`` once pandas is imported (a DataFrame to ablate means it is;
    importing it for data of another type cost the first evaluation 0.4 s). Whether DataFrame is in."""
    add(EntityTables, ablated_tables, tables_catalogue)
    pd = sys.modules.get("pandas")
    if pd is None or not hasattr(pd, "DataFrame"):  # pandas is optional, and not imported yet
        return False
    add(pd.DataFrame, _frame, _frame_catalogue)
    return True
