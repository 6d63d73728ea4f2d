"""GraphRAG entities and relationships read by whole columns (pyarrow), declining whenever the strict reader must decide.

:mod:`.graphrag` reads every cell through :class:`~.cells.Cell`, which names
the file, row and column of anything wrong, at a Python call per cell (the
cost of a million relationships). This reader checks each column once with
pyarrow instead: its type (text, or whole numbers for ids), its nulls and empty
values, and that every relationship end names an entity. Whenever a column is
anything else (numbers where text belongs, lists, bytes, a repeated entity id,
an unknown title), it returns ``None`` and the strict reader reads the folder
from the start, so a wrong cell is reported exactly as before and an unusual
but valid one (UTF-8 bytes, whole-number floats) means what it meant.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..fields import DEFAULT_RELATION
from ..graph import KnowledgeGraph
from .bulk import add_triples
from .lookup import positions_in

__all__ = ["read_entities_and_relationships", "RelationEnds"]


class RelationEnds:
    """Relationship id -> (source id, target id), built on first use (only old outputs' communities need it)."""

    def __init__(self, build: Callable[[], dict[str, tuple[str, str]]]) -> None:
        self._build, self._ends = build, None

    def get(self, rid: str, default: Any = None) -> Any:
        if self._ends is None:
            self._ends = self._build()
        return self._ends.get(rid, default)


def _table(path: Path, wanted: tuple[str, ...]) -> Any:
    """The columns of ``wanted`` that the file has, or ``None`` when pyarrow cannot read it (the strict reader reports that)."""
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
        return pq.read_table(path, columns=[c for c in wanted if c in names])
    except Exception:  # noqa: BLE001 - any failure: the strict reader names it
        return None


def _end_rows(relationships: Any, titles: Any, ids: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """The relationships' sources and targets as entity rows: the first entity with that title, else the entity with that id.

    ``None`` when a cell needs the strict reader (missing, empty, not text or a
    whole number, or naming no entity). Both columns are looked up at once
    (:func:`~.lookup.positions_in`), which gives a value's first place in a value set that repeats it,
    which is the first entity with a title. Reading the ends as parquet's own
    dictionaries measured 3x slower (writers fall back to plain pages past 1 MB of dictionary).
    """
    import pyarrow as pa

    sources = _text(relationships, "source", nulls=False, empty=False, ids=True)
    targets = _text(relationships, "target", nulls=False, empty=False, ids=True)
    if sources is None or targets is None:
        return None
    ends = pa.chunked_array(sources.chunks + targets.chunks, type=sources.type)
    rows = positions_in(ends, titles)
    missing = np.flatnonzero(rows < 0)
    if len(missing):
        rows[missing] = positions_in(ends.take(pa.array(missing)), ids)
        if (rows < 0).any():
            return None
    return rows[: len(sources)], rows[len(sources) :]


def _text(table: Any, name: str, *, nulls: bool, empty: bool, ids: bool = False) -> Any:
    """Column ``name`` as one string array, or ``None`` when a cell needs the strict reader.

    Text columns must be strings; id columns may also be integers (GraphRAG
    numbers some ids), written as decimal text exactly as the strict reader does.
    ``nulls``/``empty``: whether a missing / empty cell is acceptable here.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    column = table.column(name)
    kind = column.type
    if pa.types.is_null(kind):
        return pa.chunked_array([pa.array([""] * len(column), type=pa.large_string())]) if nulls and empty else None
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or (ids and pa.types.is_integer(kind))):
        return None
    if kind != pa.large_string():  # one string type for every column, so they compare and combine
        column = column.cast(pa.large_string())
    if column.null_count and not nulls:
        return None
    if not empty and len(column) and pc.any(pc.equal(pc.utf8_length(column), 0)).as_py():
        return None
    return column


def _filled(column: Any, default: str) -> Any:
    """``column`` with missing and empty cells replaced by ``default``."""
    import pyarrow.compute as pc

    blank = pc.or_kleene(pc.is_null(column), pc.equal(pc.utf8_length(column), 0))
    return pc.if_else(pc.fill_null(blank, True), default, column)


def _id_lists(table: Any, name: str) -> Any:
    """A list column of ids (text or integers) as ``(flat strings, parent rows)``, or ``None`` for the strict reader."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = table.column(name).combine_chunks()
    kind = column.type
    if pa.types.is_null(kind):
        return pa.array([], type=pa.large_string()), np.zeros(0, dtype=np.int64)
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
        return None
    inner = kind.value_type
    if not (pa.types.is_string(inner) or pa.types.is_large_string(inner) or pa.types.is_integer(inner)):
        return None
    flat, parent = pc.list_flatten(column), pc.list_parent_indices(column)
    flat = flat.cast(pa.large_string())
    keep = pc.and_kleene(pc.is_valid(flat), pc.not_equal(pc.utf8_length(flat), 0))
    keep = pc.fill_null(keep, False)
    return flat.filter(keep), parent.filter(keep).to_numpy(zero_copy_only=False)


def read_entities_and_relationships(kg: KnowledgeGraph, files: dict[str, Path]) -> tuple[dict[str, list[str]], RelationEnds] | None:
    """Add the entities and relationships to the empty ``kg``; ``None`` (``kg`` untouched) when the strict reader must decide.

    Returns what the rest of the folder needs: text unit id -> entity ids (from
    the entities' ``text_unit_ids``) and the relationships' ends by id.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    entities = _table(files["entities"], ("id", "title", "name", "type", "description", "text_unit_ids"))
    relationships = _table(files["relationships"], ("id", "source", "target", "description"))
    if entities is None or relationships is None or "id" not in entities.column_names:
        return None
    title_col = "title" if "title" in entities.column_names else "name"
    if title_col not in entities.column_names or not {"source", "target"} <= set(relationships.column_names):
        return None
    ids = _text(entities, "id", nulls=False, empty=False, ids=True)
    titles = _text(entities, title_col, nulls=False, empty=False)
    if ids is None or titles is None or pc.count_distinct(ids).as_py() < len(ids):
        return None  # a repeated id: the strict reader's add_entity keeps the last attributes at the first place
    types = _text(entities, "type", nulls=True, empty=True) if "type" in entities.column_names else None
    descriptions = _text(entities, "description", nulls=True, empty=True) if "description" in entities.column_names else None
    if ("type" in entities.column_names and types is None) or ("description" in entities.column_names and descriptions is None):
        return None
    unit_lists = _id_lists(entities, "text_unit_ids") if "text_unit_ids" in entities.column_names else None
    if "text_unit_ids" in entities.column_names and unit_lists is None:
        return None

    # Relationship ends: an entity title (its first entity), else an entity id; as entity rows, in columns.
    ends = _end_rows(relationships, titles.combine_chunks(), ids.combine_chunks())
    if ends is None:
        return None
    rel_ids = _text(relationships, "id", nulls=True, empty=True, ids=True) if "id" in relationships.column_names else None
    rel_descriptions = _text(relationships, "description", nulls=True, empty=True) if "description" in relationships.column_names else None
    if ("id" in relationships.column_names and rel_ids is None) or ("description" in relationships.column_names and rel_descriptions is None):
        return None

    n = len(ids)
    # The graph's Python lists are built when first read: a graph walk needs none of them.
    kg._store.adopt_columns(n, {
        "ids": ids.to_pylist,
        "names": titles.to_pylist,
        "types": (lambda: _filled(types, "entity").to_pylist()) if types is not None else (lambda: ["entity"] * n),
        "descriptions": (lambda: _filled(descriptions, "").to_pylist()) if descriptions is not None else (lambda: [""] * n),
        "aliases": lambda: [()] * n,
    })
    if len(ends[0]):
        described = _filled(rel_descriptions, "") if rel_descriptions is not None else None
        if not add_triples(kg, None, DEFAULT_RELATION, None, described, coded=(ends[0], ends[1])):
            id_list = kg._store.ids
            for s, t, d in zip(ends[0].tolist(), ends[1].tolist(), described.to_pylist() if described is not None else [""] * len(ends[0])):
                kg.add_relation(id_list[s], DEFAULT_RELATION, id_list[t], d)  # pragma: no cover - astronomically large graphs

    units_from_entities: dict[str, list[str]] = {}
    if unit_lists is not None and "text_units" in files:
        id_list = kg._store.ids
        for uid, row in zip(unit_lists[0].to_pylist(), unit_lists[1].tolist()):
            units_from_entities.setdefault(uid, []).append(id_list[row])

    def relation_ends() -> dict[str, tuple[str, str]]:
        if rel_ids is None:
            return {}
        id_list = ids.to_pylist()
        found: dict[str, tuple[str, str]] = {}
        for rid, s, t in zip(rel_ids.to_pylist(), ends[0].tolist(), ends[1].tolist()):
            if rid is not None:
                found[rid] = (id_list[s], id_list[t])
        return found

    return units_from_entities, RelationEnds(relation_ends)
