"""Microsoft GraphRAG output folders: entities, relationships, text units, communities and their reports (parquet).

Needs pandas and pyarrow (``graphtrail[graphrag]``), imported only when such a
folder is loaded.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import KGError, MissingDependencyError
from ..fields import DEFAULT_RELATION
from ..graph import KnowledgeGraph
from .cells import Cell
from .graphrag_columns import read_entities_and_relationships
from .paths import PathLike

__all__ = ["load_graphrag"]

_GRAPHRAG_TABLES = ("entities", "relationships", "text_units", "communities", "community_reports")


def _graphrag_files(folder: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    roots = [folder, folder / "output", folder / "artifacts"]
    for table in _GRAPHRAG_TABLES:
        for root in roots:
            hit = next((root / n for n in (f"{table}.parquet", f"create_final_{table}.parquet") if (root / n).is_file()), None)
            if hit is not None:
                found[table] = hit
                break
    return found


def _import_pandas() -> Any:
    try:
        import pandas as pd  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            f"reading a GraphRAG output folder needs pandas and pyarrow ({exc.name} is missing): "
            "pip install 'graphtrail[graphrag]'"
        ) from exc
    return pd


def _read_parquet(pd: Any, path: Path, required: Sequence[Sequence[str]]) -> Any:
    """The table, after checking each group in ``required`` has at least one column present."""
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise KGError(f"{path.name}: not a readable parquet file ({type(exc).__name__}: {exc})") from None
    for alternatives in required:
        if not any(c in frame.columns for c in alternatives):
            wanted = " or ".join(repr(c) for c in alternatives)
            raise KGError(f"{path.name}: expected a column {wanted}; found columns {list(frame.columns)}")
    return frame


def _rows(frame: Any, path: Path) -> Iterator[tuple[int, dict[str, Cell]]]:
    """``(row number, {column: Cell})`` for every row, each cell knowing its file, row and column."""
    columns = [str(c) for c in frame.columns]
    for row_no, row in enumerate(frame.itertuples(index=False, name=None), start=1):
        yield row_no, {c: Cell(v, f"{path.name} row {row_no}, column {c!r}") for c, v in zip(columns, row)}


_MISSING = Cell(None, "")


def _read_entities_and_relationships_strictly(kg: KnowledgeGraph, pd: Any, files: dict[str, Path]) -> tuple[dict[str, list[str]], dict[str, tuple[str, str]]]:
    """Entities and relationships cell by cell: each wrong cell is reported with its file, row and column."""
    path = files["entities"]
    entities = _read_parquet(pd, path, [("id",), ("title", "name")])
    title_col = "title" if "title" in entities.columns else "name"
    by_title: dict[str, str] = {}
    units_from_entities: dict[str, list[str]] = {}
    for _, row in _rows(entities, path):
        eid = row["id"].ident(required=True)
        title = row[title_col].text()
        if not title:
            raise KGError(f"{row[title_col].where}: empty (every entity needs a {title_col})")
        assert eid is not None
        kg.add_entity(
            eid, title, row.get("type", _MISSING).text() or "entity", row.get("description", _MISSING).text(default="") or ""
        )
        by_title.setdefault(title, eid)
        for uid in row.get("text_unit_ids", _MISSING).ids():
            units_from_entities.setdefault(uid, []).append(eid)

    path = files["relationships"]
    relationships = _read_parquet(pd, path, [("source",), ("target",)])
    rel_ends: dict[str, tuple[str, str]] = {}
    for _, row in _rows(relationships, path):
        ends = []
        for column in ("source", "target"):
            value = row[column].ident() or ""
            eid = by_title.get(value) or (value if value in kg else None)
            if eid is None:
                raise KGError(f"{row[column].where}: {value[:80]!r} is not an entity title in {files['entities'].name}")
            ends.append(eid)
        kg.add_relation(ends[0], DEFAULT_RELATION, ends[1], row.get("description", _MISSING).text(default="") or "")
        rid = row.get("id", _MISSING).ident()
        if rid is not None:
            rel_ends[rid] = (ends[0], ends[1])

    return units_from_entities, rel_ends


def load_graphrag(folder: PathLike) -> KnowledgeGraph:
    """A Microsoft GraphRAG output folder: entities, relationships, text units, communities (+ reports).

    GraphRAG relationships name their ends by entity *title*; they become
    edges labelled ``related to`` carrying GraphRAG's description. Community
    members come from ``entity_ids`` (or, in old outputs, from the ends of the
    community's ``relationship_ids``); community report summaries are attached
    when ``community_reports`` is present.
    """
    folder = Path(folder)
    files = _graphrag_files(folder)
    missing = [t for t in ("entities", "relationships") if t not in files]
    if missing:
        raise KGError(
            f"{folder}: not a GraphRAG output folder: no {' or '.join(missing)} table "
            f"(looked for {missing[0]}.parquet and create_final_{missing[0]}.parquet, also under output/)"
        )
    pd = _import_pandas()
    kg = KnowledgeGraph(name=folder.name)
    import pyarrow as pa

    try:
        read = read_entities_and_relationships(kg, files)
    except pa.ArrowException:  # a column shape the vectorised checks did not foresee: the strict reader decides
        read = None
    if read is None:
        kg = KnowledgeGraph(name=folder.name)
        read = _read_entities_and_relationships_strictly(kg, pd, files)
    units_from_entities, rel_ends = read
    if "text_units" in files:
        path = files["text_units"]
        units = _read_parquet(pd, path, [("id",), ("text",)])
        for _, row in _rows(units, path):
            uid = row["id"].ident(required=True)
            assert uid is not None
            linked = [e for e in row.get("entity_ids", _MISSING).ids() if e in kg] or units_from_entities.get(uid, [])
            kg.add_text_unit(uid, row["text"].text(default="") or "", linked)

    if "communities" in files:
        reports: dict[str, dict[str, Cell]] = {}
        if "community_reports" in files:
            path = files["community_reports"]
            report_frame = _read_parquet(pd, path, [("community",)])
            for _, row in _rows(report_frame, path):
                reports[row["community"].ident(required=True) or ""] = row
        path = files["communities"]
        coms = _read_parquet(pd, path, [("community", "id")])
        for _, row in _rows(coms, path):
            cid = row.get("community", _MISSING).ident()
            if cid is None:
                if "id" not in row:
                    raise KGError(f"{row['community'].where}: missing, and the table has no 'id' column to stand in")
                cid = row["id"].ident(required=True)
            assert cid is not None
            members = [e for e in row.get("entity_ids", _MISSING).ids() if e in kg]
            if not members:
                members = sorted({end for r in row.get("relationship_ids", _MISSING).ids() for end in rel_ends.get(r, ())})
            report = reports.get(cid, {})
            title = report.get("title", _MISSING).text() or row.get("title", _MISSING).text() or f"Community {cid}"
            summary = report.get("summary", _MISSING).text(default="") or ""
            kg.add_community(cid, title, members, summary, row.get("level", _MISSING).whole())
    return kg
