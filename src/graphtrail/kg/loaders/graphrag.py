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
from .bulk import add_triples
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


def _text_column(pd: Any, frame: Any, column: str, default: str, n: int) -> list[str]:
    """A column as strings, ``default`` where it is missing, null or empty (as ``str(_cell(v) or default)``)."""
    if column not in frame.columns:
        return [default] * n
    values = frame[column]
    return [str(v) if v is not None and v == v and v != "" else default for v in values.tolist()]


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
    ids_col, titles_col = entities["id"], entities[title_col]
    if not (ids_col.isna() | titles_col.isna()).any() and not ids_col.astype(str).duplicated().any():
        # The common case, in columns: distinct ids, every title present.
        ids = ids_col.astype(str).tolist()
        titles = titles_col.astype(str).tolist()
        kg._store.add_entities(
            ids, titles, _text_column(pd, entities, "type", "entity", len(ids)), _text_column(pd, entities, "description", "", len(ids)),
            [()] * len(ids),
        )
        for eid, title in zip(ids, titles):
            by_title.setdefault(title, eid)
        if "text_unit_ids" in entities.columns:
            for eid, units in zip(ids, entities["text_unit_ids"].tolist()):
                for uid in _id_list(units):
                    units_from_entities.setdefault(uid, []).append(eid)
    else:  # row by row, so the first bad row is the one named
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
    known = kg._store.index
    resolved = []
    for column in ("source", "target"):
        raw = relationships[column]
        values = raw.where(raw.notna(), "").astype(str)
        by_id = values.where(values.isin(list(known)))
        resolved.append((values, values.map(by_title).fillna(by_id)))
    unresolved = resolved[0][1].isna() | resolved[1][1].isna()
    if unresolved.any():
        row_no = int(unresolved.to_numpy().argmax())
        column, (values, ends) = next((c, r) for c, r in zip(("source", "target"), resolved) if pd.isna(r[1].iloc[row_no]))
        raise KGError(
            f"{files['relationships'].name} row {row_no + 1}, column '{column}': {values.iloc[row_no]!r} is not an entity "
            f"title in {files['entities'].name}"
        )
    heads, tails = resolved[0][1].tolist(), resolved[1][1].tolist()
    descriptions = _text_column(pd, relationships, "description", "", len(heads))
    if heads and not add_triples(kg, heads, [DEFAULT_RELATION] * len(heads), tails, descriptions if any(descriptions) else None):
        for head, tail, description in zip(heads, tails, descriptions):  # pragma: no cover - astronomically large graphs
            kg.add_relation(head, DEFAULT_RELATION, tail, description)
    rel_ends: dict[str, tuple[str, str]] = {}
    if "id" in relationships.columns:
        for rid, head, tail in zip(relationships["id"].tolist(), heads, tails):
            if _cell(rid) is not None:
                rel_ends[str(rid)] = (head, tail)

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
