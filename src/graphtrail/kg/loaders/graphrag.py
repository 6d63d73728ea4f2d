"""Microsoft GraphRAG output folders: entities, relationships, text units, communities and their reports (parquet).

Needs pandas and pyarrow (``graphtrail[graphrag]``), imported only when such a
folder is loaded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import KGError, MissingDependencyError
from ..fields import DEFAULT_RELATION
from ..graph import KnowledgeGraph
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


def _cell(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _id_list(value: Any) -> list[str]:
    value = _cell(value)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in list(value)]


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

    entities = _read_parquet(pd, files["entities"], [("id",), ("title", "name")])
    title_col = "title" if "title" in entities.columns else "name"
    by_title: dict[str, str] = {}
    units_from_entities: dict[str, list[str]] = {}
    for row_no, row in enumerate(entities.to_dict("records"), start=1):
        eid, title = _cell(row.get("id")), _cell(row.get(title_col))
        if eid is None or title is None:
            raise KGError(f"{files['entities'].name} row {row_no}: expected non-empty 'id' and '{title_col}'")
        eid = str(eid)
        kg.add_entity(eid, str(title), str(_cell(row.get("type")) or "entity"), str(_cell(row.get("description")) or ""))
        by_title.setdefault(str(title), eid)
        for uid in _id_list(row.get("text_unit_ids")):
            units_from_entities.setdefault(uid, []).append(eid)

    relationships = _read_parquet(pd, files["relationships"], [("source",), ("target",)])
    rel_ends: dict[str, tuple[str, str]] = {}
    for row_no, row in enumerate(relationships.to_dict("records"), start=1):
        ends = []
        for column in ("source", "target"):
            value = _cell(row.get(column))
            value = str(value) if value is not None else ""
            eid = by_title.get(value) or (value if value in kg else None)
            if eid is None:
                raise KGError(
                    f"{files['relationships'].name} row {row_no}, column '{column}': {value!r} is not an entity "
                    f"title in {files['entities'].name}"
                )
            ends.append(eid)
        kg.add_relation(ends[0], DEFAULT_RELATION, ends[1], str(_cell(row.get("description")) or ""))
        if _cell(row.get("id")) is not None:
            rel_ends[str(row["id"])] = (ends[0], ends[1])

    if "text_units" in files:
        units = _read_parquet(pd, files["text_units"], [("id",), ("text",)])
        for row in units.to_dict("records"):
            uid = str(row["id"])
            linked = _id_list(row.get("entity_ids")) if "entity_ids" in units.columns else []
            linked = [e for e in linked if e in kg] or units_from_entities.get(uid, [])
            kg.add_text_unit(uid, str(_cell(row.get("text")) or ""), linked)

    if "communities" in files:
        reports: dict[str, dict[str, Any]] = {}
        if "community_reports" in files:
            report_frame = _read_parquet(pd, files["community_reports"], [("community",)])
            reports = {str(r["community"]): r for r in report_frame.to_dict("records")}
        coms = _read_parquet(pd, files["communities"], [("community", "id")])
        for row in coms.to_dict("records"):
            cid = str(_cell(row.get("community")) if _cell(row.get("community")) is not None else row["id"])
            members = [e for e in _id_list(row.get("entity_ids")) if e in kg]
            if not members:
                members = sorted({end for r in _id_list(row.get("relationship_ids")) for end in rel_ends.get(r, ())})
            report = reports.get(cid, {})
            title = _cell(report.get("title")) or _cell(row.get("title")) or f"Community {cid}"
            level = _cell(row.get("level"))
            kg.add_community(cid, str(title), members, str(_cell(report.get("summary")) or ""), int(level) if level is not None else 0)
    return kg
