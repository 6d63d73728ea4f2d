"""Triples files (``head, relation, tail`` per line) and their optional entity tables.

Two readers give one graph: the exact reader (:func:`~.delimited.read_records`,
which names the line of any error) and, for files of :data:`FAST_PATH_BYTES` or
more, a pyarrow reader that declines whenever the exact one must decide.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import KGError, KGWarning
from ..fields import ALIAS_SEPARATOR
from ..graph import KnowledgeGraph
from .delimited import delimiter_name, fast_columns, read_bytes, read_records, read_text, sniff_delimiter
from .bulk import add_triples
from .paths import PathLike, graph_name

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


def _entity_table_fast(path: Path) -> dict[str, list[Any]] | None:
    """The entity table's columns read with pyarrow, or ``None`` when the exact reader must decide.

    Declines (and the exact reader then names the line) on anything it would
    have to report: a missing id column, an empty or repeated id, ragged rows.
    """
    raw = read_bytes(path)
    if len(raw) < FAST_PATH_BYTES:
        return None
    text_head = read_text(path, raw[:65536].rsplit(b"\n", 1)[0] if len(raw) > 65536 else raw)
    columns = fast_columns(raw, sniff_delimiter(path, text_head))
    if columns is None:
        return None
    import pyarrow.compute as pc

    header = [c[0].as_py() for c in columns]
    names = [h.lower() for h in header]
    if "id" not in names or len(set(names)) < len(names):
        return None
    body = {n: c.slice(1) for n, c in zip(names, columns) if n in _ENTITY_COLUMNS}
    ids = body["id"]
    if len(ids) == 0 or pc.min(pc.utf8_length(ids)).as_py() == 0 or pc.count_distinct(ids).as_py() < len(ids):
        return None
    header_line = raw[: len(raw) - len(raw.lstrip(b"\r\n"))].count(b"\n") + 1
    _warn_unread_columns(path, header_line, header, [i for i, n in enumerate(names) if n in _ENTITY_COLUMNS], ", ".join(_ENTITY_COLUMNS))

    def filled(name: str, default: Any) -> list[str]:
        column = body.get(name)
        if column is None:
            return [default] * len(ids) if isinstance(default, str) else ids.to_pylist()
        empty = pc.equal(pc.utf8_length(column), 0)
        return pc.if_else(empty, default, column).to_pylist()

    aliases: list[tuple[str, ...]] = [()] * len(ids)
    if "aliases" in body:
        aliases = [tuple(a.strip() for a in v.split(ALIAS_SEPARATOR) if a.strip()) if v else () for v in body["aliases"].to_pylist()]
    return {
        "id": ids.to_pylist(),
        "name": filled("name", ids),
        "type": filled("type", "entity"),
        "description": body["description"].to_pylist() if "description" in body else [""] * len(ids),
        "aliases": aliases,
    }


def _add_entity_table(kg: KnowledgeGraph, path: Path) -> dict[str, str | None]:
    """Add the table's entities to the (empty) graph; returns casefolded name -> id (``None``: ambiguous)."""
    columns = _entity_table_fast(path)
    if columns is None:
        records = _read_entity_table(path)
        columns = {k: [r[k] for r in records] for k in _ENTITY_COLUMNS}
        columns["aliases"] = [tuple(a) for a in columns["aliases"]]
    kg._store.add_entities(columns["id"], columns["name"], columns["type"], columns["description"], columns["aliases"])
    by_name: dict[str, str | None] = {}
    for eid, name in zip(columns["id"], columns["name"]):
        key = name.casefold()
        by_name[key] = None if key in by_name else eid  # None marks an ambiguous name
    return by_name


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
    by_name: dict[str, str | None] = {}
    if table_path is not None:
        if not table_path.is_file():
            raise KGError(f"entity table not found: {table_path}")
        by_name = _add_entity_table(kg, table_path)
    known = kg._store.index

    def resolve(value: str) -> str:
        if value in known:
            return value
        found = by_name.get(value.casefold())
        return found if found else value

    raw = read_bytes(path)
    if fast if fast is not None else len(raw) >= FAST_PATH_BYTES:
        text_head = read_text(path, raw[:65536].rsplit(b"\n", 1)[0] if len(raw) > 65536 else raw)
        plain = table_path is None  # no entity table: every value is its own id
        if _load_triples_fast(kg, path, raw, delimiter or sniff_delimiter(path, text_head), None if plain else resolve):
            return kg
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


def _load_triples_fast(kg: KnowledgeGraph, path: Path, raw: bytes, delimiter: str, resolve: Any) -> bool:
    """Load with pyarrow; ``False`` (nothing loaded) whenever the exact reader must decide or pyarrow is missing."""
    try:
        import pyarrow.compute as pc
    except ImportError:  # pyarrow is optional (graphtrail[graphrag]): the exact reader loads it, slower
        return False
    columns = fast_columns(raw, delimiter)
    if columns is None or len(columns) < 3:
        return False
    first = [c[0].as_py() for c in columns]
    desc_col = 3
    skip = 0
    if _is_triples_header(first):
        header_line = raw[: len(raw) - len(raw.lstrip(b"\r\n"))].count(b"\n") + 1
        _, _, _, desc_col = _header_columns(path, header_line, first, warn=False)
        skip = 1
    elif len(columns) > 4:
        return False
    n = len(columns[0]) - skip
    if n <= 0:
        return False
    heads, relations, tails = (columns[i].slice(skip) for i in range(3))
    for column in (heads, relations, tails):
        if pc.min(pc.utf8_length(column)).as_py() == 0:  # an empty cell: the exact reader names its line
            return False
    if not add_triples(kg, heads, relations, tails, columns[desc_col].slice(skip) if 0 <= desc_col < len(columns) else None, resolve):
        return False
    if skip:
        _header_columns(path, header_line, first)  # warns about columns it does not read
    return True
