"""Load a :class:`KnowledgeGraph` from the formats people already have.

:func:`load_kg` takes a bundled dataset name (see :func:`list_bundled`) or a
path, and picks the loader from the path:

- a folder: a Microsoft GraphRAG output folder (``entities.parquet`` ... or the
  older ``create_final_entities.parquet`` ...);
- ``.json`` / ``.json.gz``: node-link JSON (networkx's ``node_link_data``
  shape, ``edges`` or ``links``), optionally with ``text_units`` and
  ``communities`` lists beside the nodes (graphtrail's own format);
- ``.graphml`` / ``.xml``: GraphML;
- ``.tsv`` / ``.csv`` / ``.txt`` (anything else): triples, one
  ``head, relation, tail`` per line, with an optional entity table.

A graph database (``graph.lbug``, ``lbug:path``, ``bolt://user:pass@host:7687``)
is not loaded but read in place: see :mod:`graphtrail.agents.graphdb`.

Every loader raises :class:`~graphtrail.agents.kg.KGError` naming the file, the
line/column (or row, or JSON path) and what was expected, because a traceback
from deep inside a parser tells a user nothing about their file.
See docs/datasets.md for the formats with examples.
"""

from __future__ import annotations

import csv
import functools
import gzip
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

import networkx as nx

from .kg import KGError, KnowledgeGraph

__all__ = [
    "load_kg",
    "save_kg",
    "list_bundled",
    "BundledDataset",
    "MissingDependencyError",
    "detect_format",
    "load_triples",
    "load_node_link",
    "load_graphml",
    "load_graphrag",
    "bundled_resource",
]

PathLike = str | os.PathLike[str]
DEFAULT_RELATION = "related to"
ALIAS_SEPARATOR = ";"


class MissingDependencyError(KGError, ImportError):
    """An optional dependency a loader needs is not installed; the message says which extra to install."""


# --------------------------------------------------------------------------- bundled data


@dataclass(frozen=True)
class BundledDataset:
    """A knowledge graph and question set shipped inside the package (``graphtrail/data``)."""

    name: str
    description: str
    kg_file: str
    questions_file: str


_BUNDLED = {
    b.name: b
    for b in (
        BundledDataset(
            "countries",
            "Countries, capitals, regions, subregions, languages, currencies and borders "
            "(countryinfo, MIT), with 1-3 hop and comparison questions.",
            "countries.kg.json.gz",
            "countries.questions.jsonl",
        ),
        BundledDataset(
            "countries-demo",
            "The countries graph with a fixed dozen questions across kinds, for demos.",
            "countries.kg.json.gz",
            "countries-demo.questions.jsonl",
        ),
    )
}


def list_bundled() -> list[BundledDataset]:
    """The datasets that :func:`load_kg` and ``load_questions`` accept by name."""
    return list(_BUNDLED.values())


def bundled_resource(name: str, what: str) -> resources.abc.Traversable | None:
    """The packaged file for bundled dataset ``name`` (``what`` is ``"kg"`` or ``"questions"``), or ``None``."""
    dataset = _BUNDLED.get(name)
    if dataset is None:
        return None
    filename = dataset.kg_file if what == "kg" else dataset.questions_file
    return resources.files("graphtrail").joinpath("data", filename)


@functools.lru_cache(maxsize=4)
def _bundled_document(filename: str) -> dict[str, Any]:
    # Parsed once per process; every load_kg call still builds a fresh graph from it.
    resource = resources.files("graphtrail").joinpath("data", filename)
    try:
        raw = resource.read_bytes()
    except FileNotFoundError:  # pragma: no cover - a broken install
        raise KGError(f"bundled file {filename} is missing; rebuild it with scripts/build_bundled_kg.py") from None
    return _parse_json(_maybe_gunzip(raw, filename), filename)


# --------------------------------------------------------------------------- entry point


def detect_format(path: PathLike) -> str:
    """``"graphrag"``, ``"node-link"``, ``"graphml"`` or ``"triples"`` for an existing path."""
    p = Path(path)
    if p.is_dir():
        return "graphrag"
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    if last == ".json":
        return "node-link"
    if last in (".graphml", ".xml"):
        return "graphml"
    if last in (".tsv", ".csv", ".txt", ".tab"):
        return "triples"
    head = b""
    if p.is_file():
        with p.open("rb") as fh:
            head = fh.read(4096)
        if head[:2] == b"\x1f\x8b":
            try:
                with gzip.open(p) as fh:
                    head = fh.read(4096)
            except (OSError, EOFError):
                head = b""
    stripped = head.lstrip()
    if stripped.startswith(b"{"):
        return "node-link"
    if stripped.startswith(b"<"):
        return "graphml"
    return "triples"


def load_kg(
    source: PathLike | KnowledgeGraph,
    *,
    format: str | None = None,
    entities: PathLike | None = None,
    name: str | None = None,
    communities: bool = True,
    seed: int = 0,
    resolution: float = 1.0,
) -> KnowledgeGraph:
    """Load a knowledge graph from a bundled name or a path, detecting the format.

    ``source``: a bundled name (``"countries"``; bundled names win over a
    same-named file in the working directory — pass a :class:`~pathlib.Path`
    to force a path), a file, or a GraphRAG output folder. A
    :class:`KnowledgeGraph` is returned unchanged.
    ``format``: force ``"triples"``, ``"node-link"``, ``"graphml"`` or ``"graphrag"``.
    ``entities``: an entity table for triples (else a sibling file is looked for).
    ``communities``: compute seeded Louvain communities (``seed``,
    ``resolution``) when the source has none.
    """
    if isinstance(source, KnowledgeGraph):
        return source
    from .graphdb import CypherGraph, is_graph_database, open_graph_database

    if isinstance(source, CypherGraph):
        return source  # type: ignore[return-value]  # same read API, in a database
    if format is None and is_graph_database(source):
        return open_graph_database(source, name=name, community_seed=seed, community_resolution=resolution)  # type: ignore[return-value]
    if isinstance(source, str) and source in _BUNDLED and format is None:
        dataset = _BUNDLED[source]
        kg = _kg_from_document(_bundled_document(dataset.kg_file), dataset.kg_file)
        kg.name = name or kg.name
        return kg

    path = Path(source)
    if not path.exists():
        known = ", ".join(sorted(_BUNDLED))
        raise KGError(f"{source}: no such file or folder, and not a bundled dataset (bundled: {known})")
    fmt = format or detect_format(path)
    if fmt == "triples":
        kg = load_triples(path, entities=entities)
    elif fmt == "node-link":
        kg = load_node_link(path)
    elif fmt == "graphml":
        kg = load_graphml(path)
    elif fmt == "graphrag":
        kg = load_graphrag(path)
    else:
        raise KGError(f"{path}: unknown format {fmt!r}; expected triples, node-link, graphml or graphrag")
    kg.name = name or _stem(path)
    if communities and not kg.communities and len(kg):
        kg.compute_communities(seed=seed, resolution=resolution)
    return kg


def _stem(path: Path) -> str:
    stem = path.name
    for suffix in (".gz", ".json", ".graphml", ".xml", ".tsv", ".csv", ".txt", ".tab", ".kg"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem or path.name


def _maybe_gunzip(raw: bytes, filename: str = "input") -> bytes:
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise KGError(f"{filename}: damaged gzip data ({exc})") from None
    return raw


# --------------------------------------------------------------------------- triples

_HEAD_NAMES = {"head", "subject", "source", "src", "from", "h", "s", "head_id", "subject_id"}
_RELATION_NAMES = {"relation", "predicate", "rel", "r", "p", "label", "edge", "type", "relation_type"}
_TAIL_NAMES = {"tail", "object", "target", "dst", "to", "t", "o", "tail_id", "object_id"}


def _sniff_delimiter(path: Path, first_line: str) -> str:
    suffix = path.suffix.lower()
    if suffix in (".tsv", ".tab"):
        return "\t"
    for delimiter in ("\t", "|", ","):
        if delimiter in first_line:
            return delimiter
    return "\t" if suffix != ".csv" else ","


def _read_rows(path: Path, delimiter: str | None = None) -> tuple[list[tuple[int, list[str]]], str]:
    """Non-blank, non-comment rows with their 1-based line numbers."""
    try:
        text = _maybe_gunzip(path.read_bytes(), path.name).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = _maybe_gunzip(path.read_bytes())[: exc.start].count(b"\n") + 1
        raise KGError(f"{path.name} line {line}: expected UTF-8 text ({exc.reason})") from None
    lines = text.splitlines()
    first = next((ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")), "")
    delimiter = delimiter or _sniff_delimiter(path, first)
    quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    rows: list[tuple[int, list[str]]] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            cells = next(csv.reader([line], delimiter=delimiter, quoting=quoting))
        except csv.Error as exc:
            raise KGError(f"{path.name} line {lineno}: malformed {_delimiter_name(delimiter)} row ({exc})") from None
        rows.append((lineno, [c.strip() for c in cells]))
    return rows, delimiter


def _delimiter_name(delimiter: str) -> str:
    return {"\t": "tab-separated", ",": "comma-separated", "|": "pipe-separated"}.get(delimiter, repr(delimiter))


def _is_triples_header(cells: Sequence[str]) -> bool:
    low = [c.lower() for c in cells]
    return len(low) >= 3 and low[0] in _HEAD_NAMES and low[1] in _RELATION_NAMES and low[2] in _TAIL_NAMES


def find_entity_table(path: Path) -> Path | None:
    """The sibling entity table of a triples file: ``<stem>.entities.<tsv|csv>``, else ``entities.<tsv|csv>``."""
    stem = _stem(path)
    candidates = [path.with_name(f"{stem}.entities{ext}") for ext in (".tsv", ".csv", ".txt")]
    candidates += [path.with_name(f"entities{ext}") for ext in (".tsv", ".csv")]
    for candidate in candidates:
        if candidate.is_file() and candidate.resolve() != path.resolve():
            return candidate
    return None


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


def load_triples(path: PathLike, *, entities: PathLike | None = None, delimiter: str | None = None) -> KnowledgeGraph:
    """Triples ``head, relation, tail`` (tab, pipe or comma separated; header row optional).

    A fourth column is read as the relation's description. Heads and tails are
    entity ids when an entity table knows them (by id, else by unique name),
    otherwise the text itself is both id and name (as in MetaQA's ``kb.txt``).
    """
    path = Path(path)
    rows, delimiter = _read_rows(path, delimiter)
    kg = KnowledgeGraph(name=_stem(path))

    table_path = Path(entities) if entities is not None else find_entity_table(path)
    by_name: dict[str, str | None] = {}
    if table_path is not None:
        if not table_path.is_file():
            raise KGError(f"{table_path}: entity table not found")
        for record in _read_entity_table(table_path):
            kg.add_entity(record["id"], record["name"], record["type"], record["description"], record["aliases"])
            key = record["name"].casefold()
            by_name[key] = None if key in by_name else record["id"]  # None marks an ambiguous name

    def resolve(value: str) -> str:
        if value in kg.graph:
            return value
        found = by_name.get(value.casefold())
        return found if found else value

    columns = (0, 1, 2, 3)
    if rows and _is_triples_header(rows[0][1]):
        lineno, header = rows.pop(0)
        low = [c.lower() for c in header]
        description = next((i for i, c in enumerate(low) if c in ("description", "desc")), None)
        columns = (0, 1, 2, description if description is not None else -1)
    if not rows:
        raise KGError(f"{path.name}: no triples; expected lines of head, relation, tail")
    for lineno, cells in rows:
        if len(cells) < 3 or (columns == (0, 1, 2, 3) and len(cells) > 4):
            raise KGError(
                f"{path.name} line {lineno}: expected 3 columns (head, relation, tail)"
                f"{' or 4 with a description' if columns == (0, 1, 2, 3) else ''} separated by "
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


# --------------------------------------------------------------------------- node-link JSON


def _parse_json(raw: bytes, filename: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise KGError(f"{filename}: expected UTF-8 JSON ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise KGError(f"{filename} line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from None


def _first(mapping: dict[str, Any], keys: Iterable[str], default: Any = None) -> Any:
    for key in keys:
        value = mapping.get(key)
        if value is not None and value != "":
            return value
    return default


def _aliases(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                return [str(a) for a in json.loads(text)]
            except json.JSONDecodeError:
                pass
        return [a.strip() for a in text.split(ALIAS_SEPARATOR) if a.strip()]
    return [str(a) for a in value]


def _kg_from_document(doc: Any, filename: str) -> KnowledgeGraph:
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise KGError(f"{filename}: expected a JSON object with a 'nodes' list and an 'edges' (or 'links') list")
    edge_key = "edges" if "edges" in doc else "links"
    edges = doc.get(edge_key, [])
    if not isinstance(edges, list):
        raise KGError(f"{filename}: '{edge_key}' must be a list of {{source, target, relation}} objects")
    graph_attrs = doc.get("graph") if isinstance(doc.get("graph"), dict) else {}
    kg = KnowledgeGraph(name=str(graph_attrs.get("name") or _stem(Path(filename))))
    for i, node in enumerate(doc["nodes"]):
        if not isinstance(node, dict) or node.get("id") in (None, ""):
            raise KGError(f"{filename}: nodes[{i}]: expected an object with an 'id'")
        kg.add_entity(
            str(node["id"]),
            str(_first(node, ("name", "title", "label"), node["id"])),
            str(_first(node, ("type", "entity_type"), "entity")),
            str(_first(node, ("description",), "")),
            _aliases(node.get("aliases")),
        )
    for i, edge in enumerate(edges):
        if not isinstance(edge, dict) or edge.get("source") in (None, "") or edge.get("target") in (None, ""):
            raise KGError(f"{filename}: {edge_key}[{i}]: expected an object with 'source' and 'target'")
        relation = _first(edge, ("relation", "label", "predicate", "type"))
        if relation is None and isinstance(edge.get("key"), str):
            relation = edge["key"]
        kg.add_relation(str(edge["source"]), str(relation or DEFAULT_RELATION), str(edge["target"]), str(edge.get("description") or ""))
    for i, unit in enumerate(doc.get("text_units") or []):
        if not isinstance(unit, dict) or "id" not in unit or not isinstance(unit.get("text"), str):
            raise KGError(f"{filename}: text_units[{i}]: expected an object with 'id' and 'text'")
        kg.add_text_unit(str(unit["id"]), unit["text"], [str(e) for e in unit.get("entity_ids") or []])
    for i, com in enumerate(doc.get("communities") or []):
        if not isinstance(com, dict) or "id" not in com or not isinstance(com.get("entity_ids"), list):
            raise KGError(f"{filename}: communities[{i}]: expected an object with 'id' and an 'entity_ids' list")
        kg.add_community(
            str(com["id"]), str(com.get("title") or com["id"]), com["entity_ids"], str(com.get("summary") or ""), int(com.get("level") or 0)
        )
    return kg


def load_node_link(path: PathLike) -> KnowledgeGraph:
    """networkx node-link JSON (``edges`` or ``links``), gzip allowed, with optional text units and communities."""
    path = Path(path)
    return _kg_from_document(_parse_json(_maybe_gunzip(path.read_bytes(), path.name), path.name), path.name)


def kg_to_document(kg: KnowledgeGraph) -> dict[str, Any]:
    """graphtrail's node-link document: what :func:`load_node_link` reads back."""
    return {
        "directed": True,
        "multigraph": True,
        "graph": {"name": kg.name},
        "nodes": [
            {"id": e.id, "name": e.name, "type": e.type, "description": e.description, "aliases": list(e.aliases)}
            for e in kg.entities()
        ],
        "edges": [{"source": r.source, "target": r.target, "relation": r.relation, "description": r.description} for r in kg.relations()],
        "text_units": [{"id": u.id, "text": u.text, "entity_ids": list(u.entity_ids)} for u in kg.text_units.values()],
        "communities": [
            {"id": c.id, "title": c.title, "entity_ids": list(c.entity_ids), "summary": c.summary, "level": c.level}
            for c in kg.communities.values()
        ],
    }


def save_kg(kg: KnowledgeGraph, path: PathLike) -> Path:
    """Write ``kg`` as node-link JSON (``.json``, gzip if ``.gz``) or GraphML (``.graphml``)."""
    path = Path(path)
    if path.suffix.lower() == ".graphml":
        g = nx.MultiDiGraph()
        for e in kg.entities():
            g.add_node(e.id, name=e.name, type=e.type, description=e.description, aliases=ALIAS_SEPARATOR.join(e.aliases))
        for r in kg.relations():
            g.add_edge(r.source, r.target, key=r.relation, relation=r.relation, description=r.description)
        nx.write_graphml(g, path)
        return path
    data = json.dumps(kg_to_document(kg), ensure_ascii=False, indent=None).encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix.lower() == ".gz" else data)
    return path


# --------------------------------------------------------------------------- GraphML


def load_graphml(path: PathLike) -> KnowledgeGraph:
    """GraphML with node attributes name/title/label, type, description, aliases and edge relation/label."""
    path = Path(path)
    try:
        g = nx.read_graphml(path, force_multigraph=True)
    except ParseError as exc:
        line, column = exc.position
        raise KGError(f"{path.name} line {line} column {column + 1}: invalid GraphML (XML parse error: {exc.msg if hasattr(exc, 'msg') else exc})") from None
    except (nx.NetworkXError, ValueError, KeyError) as exc:
        raise KGError(f"{path.name}: invalid GraphML: {exc}") from None
    kg = KnowledgeGraph(name=_stem(path))
    for node, data in g.nodes(data=True):
        kg.add_entity(
            str(node),
            str(_first(data, ("name", "title", "label"), node)),
            str(_first(data, ("type", "entity_type"), "entity")),
            str(_first(data, ("description",), "")),
            _aliases(data.get("aliases")),
        )
    for source, target, key, data in g.edges(keys=True, data=True):
        relation = _first(data, ("relation", "label", "predicate", "type"))
        if relation is None and isinstance(key, str) and not key.isdigit() and not key.startswith("e"):
            relation = key
        kg.add_relation(str(source), str(relation or DEFAULT_RELATION), str(target), str(data.get("description") or ""))
    return kg


# --------------------------------------------------------------------------- Microsoft GraphRAG output

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
            eid = by_title.get(value) or (value if value in kg.graph else None)
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
            linked = [e for e in linked if e in kg.graph] or units_from_entities.get(uid, [])
            kg.add_text_unit(uid, str(_cell(row.get("text")) or ""), linked)

    if "communities" in files:
        reports: dict[str, dict[str, Any]] = {}
        if "community_reports" in files:
            report_frame = _read_parquet(pd, files["community_reports"], [("community",)])
            reports = {str(r["community"]): r for r in report_frame.to_dict("records")}
        coms = _read_parquet(pd, files["communities"], [("community", "id")])
        for row in coms.to_dict("records"):
            cid = str(_cell(row.get("community")) if _cell(row.get("community")) is not None else row["id"])
            members = [e for e in _id_list(row.get("entity_ids")) if e in kg.graph]
            if not members:
                members = sorted({end for r in _id_list(row.get("relationship_ids")) for end in rel_ends.get(r, ())})
            report = reports.get(cid, {})
            title = _cell(report.get("title")) or _cell(row.get("title")) or f"Community {cid}"
            level = _cell(row.get("level"))
            kg.add_community(cid, str(title), members, str(_cell(report.get("summary")) or ""), int(level) if level is not None else 0)
    return kg
