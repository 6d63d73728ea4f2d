"""Triples files (``head, relation, tail`` per line) and their optional entity tables.

Two readers give one graph: the exact reader (:func:`~.delimited.read_records`,
which names the line of any error) and, for files of :data:`FAST_PATH_BYTES` or
more, a columnar reader that declines whenever the exact one must decide. The
columnar reader splits tab- and pipe-separated files into cell bounds with numpy
(:mod:`.splitcells`) where that gives pyarrow's cells, else uses pyarrow's CSV reader.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import KGError, KGWarning
from ..fields import ALIAS_SEPARATOR
from ..graph import KnowledgeGraph
from .delimited import (
    PY_WHITESPACE, delimiter_name, fast_columns, leading_line, mapped_bytes, read_bytes, read_records, read_text, sniff_delimiter,
)
from .bulk import RepeatedId, add_triples, gc_paused
from .paths import PathLike, graph_name
from .splitcells import CellColumn, arrow_of, first_cell, split_cells
from .textcolumns import alias_tuples, casefold

__all__ = ["load_triples", "find_entity_table", "FAST_PATH_BYTES"]

_HEAD_NAMES = {"head", "subject", "source", "src", "from", "h", "s", "head_id", "subject_id"}
_RELATION_NAMES = {"relation", "predicate", "rel", "r", "p", "label", "edge", "type", "relation_type"}
_TAIL_NAMES = {"tail", "object", "target", "dst", "to", "t", "o", "tail_id", "object_id"}


def _read_rows(path: Path, delimiter: str | None = None) -> tuple[list[tuple[int, list[str]]], str]:
    """Non-blank, non-comment records with the 1-based line each starts on (see :mod:`.delimited`)."""
    text = read_text(path)
    delimiter = delimiter or sniff_delimiter(path, text)
    return read_records(path, text, delimiter), delimiter


def _delimiter_name(delimiter: str) -> str:
    return delimiter_name(delimiter)


def _is_triples_header(cells: Sequence[str]) -> bool:
    low = [c.lower() for c in cells]
    return len(low) >= 3 and low[0] in _HEAD_NAMES and low[1] in _RELATION_NAMES and low[2] in _TAIL_NAMES


def find_entity_table(path: Path) -> Path | None:
    """The sibling entity table of a triples file: ``<stem>.entities.<tsv|csv>``, else ``entities.<tsv|csv>``."""
    stem = graph_name(path)
    candidates = [path.with_name(f"{stem}.entities{ext}") for ext in (".tsv", ".csv", ".txt")]
    candidates += [path.with_name(f"entities{ext}") for ext in (".tsv", ".csv")]
    for candidate in candidates:
        if candidate.is_file() and candidate.resolve() != path.resolve():
            return candidate
    return None


_ENTITY_COLUMNS = ("id", "name", "type", "description", "aliases")


def _warn_unread_columns(path: Path, lineno: int, header: Sequence[str], used: Sequence[int], reads: str) -> None:
    unread = [f"{c!r}" for i, c in enumerate(header) if i not in used]
    if unread:
        warnings.warn(
            f"{path.name} line {lineno}: column{'s' if len(unread) > 1 else ''} {', '.join(unread)} not loaded "
            f"(graphtrail reads {reads})",
            KGWarning,
            stacklevel=3,
        )


def _entity_table_fast(path: Path) -> dict[str, Any] | None:
    """The entity table's columns read in columns (:mod:`.splitcells`, else pyarrow), or ``None`` when the exact reader must decide.

    Declines (and the exact reader then names the line) on anything it would
    have to report: a missing id column, an empty id, ragged rows. A repeated
    id is found later, while the triples' ends are looked up among the ids
    (:class:`~.bulk.RepeatedId`, or by the id index the exact reader builds), saving a pass over them.
    Returns ``n`` (the number of entities), ``arrow_ids`` and ``arrow_names``
    (for resolving triples in columns; the names a builder of the Arrow array)
    and the five columns the graph stores, each as a builder of its Python
    list: the graph builds them when first read. Split cells are kept in a copy
    of the file's bytes and copied out and stripped when first read, the ids only now.
    """
    with mapped_bytes(path) as raw:
        if len(raw) < FAST_PATH_BYTES:
            return None
        text_head = read_text(path, raw[:65536].rsplit(b"\n", 1)[0] if len(raw) > 65536 else raw[:])
        delimiter = sniff_delimiter(path, text_head)
        columns: list[Any] | None = split_cells(raw, delimiter)
        if columns is not None:  # the same cells over a copy of the file: the map is closed below
            columns = _over_copy(columns)
        else:
            columns = fast_columns(raw, delimiter)
        header_line = leading_line(raw)
    if columns is None:
        return None
    import pyarrow.compute as pc

    header = [first_cell(c).strip() for c in columns]
    names = [h.lower() for h in header]
    if "id" not in names or len(set(names)) < len(names):
        return None
    body = {n: c.slice(1) for n, c in zip(names, columns) if n in _ENTITY_COLUMNS}

    def column(name: str) -> Any:
        """The column's stripped cells as an Arrow array (``None``: the table has no such column)."""
        found = body.get(name)
        if isinstance(found, CellColumn):
            found = pc.utf8_trim(arrow_of(found), characters=PY_WHITESPACE)
        return found

    ids = column("id")
    n = len(ids)
    if n == 0 or pc.min(pc.utf8_length(ids)).as_py() == 0:
        return None
    _warn_unread_columns(path, header_line, header, [i for i, n in enumerate(names) if n in _ENTITY_COLUMNS], ", ".join(_ENTITY_COLUMNS))

    def filled(name: str, default: Any) -> Any:
        values = column(name)
        if values is None:
            return default
        return pc.if_else(pc.equal(pc.utf8_length(values), 0), default, values)

    def column_list(name: str, default: str) -> Any:
        if name not in body:
            return lambda: [default] * n
        return lambda: filled(name, default).to_pylist()

    @functools.cache
    def arrow_names() -> Any:
        return filled("name", ids)

    return {
        "n": n,
        "arrow_ids": ids,
        "arrow_names": arrow_names,
        "id": ids.to_pylist,
        "name": lambda: arrow_names().to_pylist(),
        "type": column_list("type", "entity"),
        "description": column_list("description", ""),
        "aliases": (lambda: alias_tuples(column("aliases"))) if "aliases" in body else (lambda: [()] * n),
    }


def _over_copy(columns: list[CellColumn]) -> list[CellColumn]:
    """The same cells over a copy of their file's bytes (the lazy columns outlive the file's memory map)."""
    import pyarrow as pa

    copy = np.array(columns[0].data)
    buffer = pa.py_buffer(copy)
    return [CellColumn(copy, buffer, c.starts, c.ends) for c in columns]


def _name_resolver(names: Any) -> Any:
    """Distinct triple values (an Arrow array) -> the row of the one entity whose name they casefold to (-1: none, or several).

    ``names``: the table's names, in row order (an Arrow array or a list, or a builder of the array).
    """

    def resolve(values: Any) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        table = names() if callable(names) else names
        folded = casefold(table if not isinstance(table, list) else pa.array(table, type=pa.large_string()))
        wanted = pc.dictionary_encode(casefold(values).cast(folded.type))  # two values may fold alike
        # The names are looked up among the few distinct wanted values (a small hash table, probed once per
        # name), not hashed together with them: a third of the time at 200k names and 40k values.
        of_names = pc.index_in(folded, value_set=wanted.dictionary).fill_null(-1).to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(of_names >= 0)  # the names some value folds to, in row order
        hit = of_names[rows]
        alone = np.bincount(hit, minlength=len(wanted.dictionary))[hit] == 1  # one entity has the name
        row = np.full(len(wanted.dictionary), -1, dtype=np.int64)
        row[hit[alone]] = rows[alone]
        return row[wanted.indices.to_numpy(zero_copy_only=False)]

    return resolve


def _names_bycasefold(ids: list[str], names: list[str]) -> dict[str, str | None]:
    """Casefolded name -> id (``None``: ambiguous), for the exact reader's one lookup per row."""
    by_name: dict[str, str | None] = {}
    for eid, name in zip(ids, names):
        key = name.casefold()
        by_name[key] = None if key in by_name else eid  # None marks an ambiguous name
    return by_name


def _add_entity_table(kg: KnowledgeGraph, path: Path) -> dict[str, Any] | None:
    """Add the table's entities to the (empty) graph; returns the fast reader's columns (``None``: the exact reader read it)."""
    columns = _entity_table_fast(path)
    if columns is None:
        records = _read_entity_table(path)
        table = {k: [r[k] for r in records] for k in _ENTITY_COLUMNS}
        table["aliases"] = [tuple(a) for a in table["aliases"]]
        kg._store.add_entities(table["id"], table["name"], table["type"], table["description"], table["aliases"])
        return None
    kg._store.adopt_columns(columns["n"], {"ids": columns["id"], "names": columns["name"], "types": columns["type"],
                                           "descriptions": columns["description"], "aliases": columns["aliases"]})
    return columns


def _read_entity_table(path: Path) -> list[dict[str, Any]]:
    rows, _ = _read_rows(path)
    if not rows:
        raise KGError(f"{path.name}: empty entity table; expected a header row with an 'id' column")
    lineno, header = rows[0]
    columns = [c.lower() for c in header]
    if "id" not in columns:
        raise KGError(
            f"{path.name} line {lineno}: expected a header row with an 'id' column "
            f"(and optionally name, type, description, aliases), got {header!r}"
        )
    _warn_unread_columns(path, lineno, header, [i for i, c in enumerate(columns) if c in _ENTITY_COLUMNS], ", ".join(_ENTITY_COLUMNS))
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for lineno, cells in rows[1:]:
        if len(cells) > len(columns):
            raise KGError(f"{path.name} line {lineno}: expected at most {len(columns)} columns ({', '.join(columns)}), got {len(cells)}")
        record = dict(zip(columns, cells))
        eid = record.get("id", "")
        if not eid:
            raise KGError(f"{path.name} line {lineno}: column 1 (id) is empty")
        if eid in seen:
            raise KGError(f"{path.name} line {lineno}: duplicate entity id {eid!r} (first on line {seen[eid]})")
        seen[eid] = lineno
        aliases = [a.strip() for a in record.get("aliases", "").split(ALIAS_SEPARATOR) if a.strip()]
        out.append(
            {
                "id": eid,
                "name": record.get("name") or eid,
                "type": record.get("type") or "entity",
                "description": record.get("description", ""),
                "aliases": aliases,
            }
        )
    return out


#: Triples files at least this large try the pyarrow reader first (see :mod:`.delimited`).
FAST_PATH_BYTES = 1 << 20


def load_triples(
    path: PathLike, *, entities: PathLike | None = None, delimiter: str | None = None, fast: bool | None = None
) -> KnowledgeGraph:
    """Triples ``head, relation, tail`` (tab, pipe or comma separated; header row optional).

    A fourth column is read as the relation's description (with a header: the
    column named ``description``; other extra columns are reported with a
    :class:`KGWarning`). Heads and tails are entity ids when an entity table
    knows them (by id, else by unique name), otherwise the text itself is both
    id and name (as in MetaQA's ``kb.txt``). ``fast``: use the pyarrow reader
    (default: for files of :data:`FAST_PATH_BYTES` or more); it gives the same
    graph, and falls back to the exact reader whenever it cannot.
    """
    path = Path(path)
    kg = KnowledgeGraph(name=graph_name(path))
    table_path = Path(entities) if entities is not None else find_entity_table(path)
    table: dict[str, Any] | None = None
    if table_path is not None:
        if not table_path.is_file():
            raise KGError(f"entity table not found: {table_path}")
        with gc_paused():
            table = _add_entity_table(kg, table_path)

    with mapped_bytes(path) as raw:
        if fast if fast is not None else len(raw) >= FAST_PATH_BYTES:
            text_head = read_text(path, raw[:65536].rsplit(b"\n", 1)[0] if len(raw) > 65536 else raw[:])
            if table_path is None:  # no entity table: every value is its own id
                known, by_name = None, None
            elif table is not None:
                known, by_name = table["arrow_ids"], _name_resolver(table["arrow_names"])
            else:  # the exact reader read the table
                known, by_name = None, _name_resolver(kg._store.names)
            with gc_paused():  # many strings and tuples, no cycles
                try:
                    loaded = _load_triples_fast(kg, path, raw, delimiter or sniff_delimiter(path, text_head), known, by_name, table is not None)
                except RepeatedId:
                    _read_entity_table(table_path)  # type: ignore[arg-type]  # names the repeated id's lines
                    raise KGError(f"{table_path}: an entity id is repeated") from None  # pragma: no cover - the exact reader raised
            if loaded:
                return kg
        raw = raw if isinstance(raw, bytes) else read_bytes(path)  # the exact reader decodes it
    known_ids = kg._store.index
    if table is not None and len(known_ids) < kg._store.n_entities():  # the fast table reader left repeats to be found
        _read_entity_table(table_path)  # type: ignore[arg-type]  # names the repeated id's lines
    names = _names_bycasefold(kg._store.ids, kg._store.names) if table_path is not None else {}

    def resolve(value: str) -> str:
        if value in known_ids:
            return value
        found = names.get(value.casefold())
        return found if found else value

    text = read_text(path, raw)
    delimiter = delimiter or sniff_delimiter(path, text)
    rows = read_records(path, text, delimiter)

    columns = (0, 1, 2, 3)
    has_header = bool(rows) and _is_triples_header(rows[0][1])
    if has_header:
        lineno, header = rows.pop(0)
        columns = _header_columns(path, lineno, header)
    if not rows:
        raise KGError(f"{path.name}: no triples; expected lines of head, relation, tail")
    for lineno, cells in rows:
        if len(cells) < 3 or (not has_header and len(cells) > 4):
            raise KGError(
                f"{path.name} line {lineno}: expected 3 columns (head, relation, tail)"
                f"{' or 4 with a description' if not has_header else ''} separated by "
                f"{_delimiter_name(delimiter)[:-len('-separated')]}s, got {len(cells)}"
            )
        for index, label in zip(columns[:3], ("head", "relation", "tail")):
            if not cells[index]:
                raise KGError(f"{path.name} line {lineno}: column {index + 1} ({label}) is empty")
        head, relation, tail = (cells[i] for i in columns[:3])
        desc_col = columns[3]
        description = cells[desc_col] if 0 <= desc_col < len(cells) else ""
        kg.add_relation(resolve(head), relation, resolve(tail), description)
    return kg


def _header_columns(path: Path, lineno: int, header: Sequence[str], warn: bool = True) -> tuple[int, int, int, int]:
    low = [c.lower() for c in header]
    description = next((i for i, c in enumerate(low) if c in ("description", "desc")), None)
    used = [0, 1, 2] + ([description] if description is not None else [])
    if warn:
        _warn_unread_columns(path, lineno, header, used, "head, relation, tail and description")
    return (0, 1, 2, description if description is not None else -1)


def _load_triples_fast(kg: KnowledgeGraph, path: Path, raw: Any, delimiter: str, known: Any, by_name: Any, check_known: bool = False) -> bool:
    """Load with pyarrow, in columns; ``False`` (no triple added) whenever the exact reader must decide or pyarrow is missing."""
    try:
        import pyarrow.compute as pc
    except ImportError:  # pyarrow is optional (graphtrail[graphrag]): the exact reader loads it, slower
        return False
    # heads, relations, tails: stripped by their distinct values; cells of the file where it can be split without pyarrow
    columns = split_cells(raw, delimiter) or fast_columns(raw, delimiter, strip=False)
    if columns is None or len(columns) < 3:
        return False
    first = [first_cell(c).strip() for c in columns]
    desc_col = 3
    skip = 0
    if _is_triples_header(first):
        header_line = leading_line(raw)
        _, _, _, desc_col = _header_columns(path, header_line, first, warn=False)
        skip = 1
    elif len(columns) > 4:
        return False
    n = len(columns[0]) - skip
    if n <= 0:
        return False
    heads, relations, tails = (columns[i].slice(skip) for i in range(3))
    relations = arrow_of(relations)
    descriptions = None
    if 0 <= desc_col < len(columns):
        descriptions = pc.utf8_trim(arrow_of(columns[desc_col].slice(skip)), characters=PY_WHITESPACE)
    if not add_triples(kg, heads, relations, tails, descriptions, known=known, by_name=by_name, strip=True, check_known=check_known):
        return False  # an empty cell (the exact reader names its line), or no pyarrow
    if skip:
        _header_columns(path, header_line, first)  # warns about columns it does not read
    return True
