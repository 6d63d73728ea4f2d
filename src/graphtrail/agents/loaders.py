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

import functools
import gzip
import json
import math
import os
import zlib
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

import networkx as nx

from .._jsonread import JSONInputError
from .._jsonread import loads as json_loads
from .communities import lazy_communities
from .delimited import delimiter_name, fast_columns, read_bytes, read_records, read_text, sniff_delimiter
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
    if last:  # a suffix no format has (README.md): say so, rather than fail to read it as triples
        raise KGError(f"{p.name}: unknown graph format ({last}): expected one of .tsv, .csv, .txt, .tab, .json, "
                      ".json.gz, .graphml, .xml, .lbug, or a GraphRAG output folder")
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
    cache_communities: bool = True,
) -> KnowledgeGraph:
    """Load a knowledge graph from a bundled name or a path, detecting the format.

    ``source``: a bundled name (``"countries"``; bundled names win over a
    same-named file in the working directory — pass a :class:`~pathlib.Path`
    to force a path), a file, or a GraphRAG output folder. A
    :class:`KnowledgeGraph` is returned unchanged.
    ``format``: force ``"triples"``, ``"node-link"``, ``"graphml"`` or ``"graphrag"``.
    ``entities``: an entity table for triples (else a sibling file is looked for).
    ``communities``: when the source has none, seeded Louvain communities
    (``seed``, ``resolution``) are computed the first time something reads
    them, and cached beside the file (``cache_communities``); see
    :mod:`graphtrail.agents.communities`.
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
        raise KGError(f"knowledge graph not found: {source} (and not a bundled dataset: {known})")
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
        kg._store.community_source = lazy_communities(path if cache_communities else None, seed=seed, resolution=resolution)
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
        except (OSError, EOFError, zlib.error) as exc:
            raise KGError(f"{filename}: damaged gzip data ({exc})") from None
    return raw


# --------------------------------------------------------------------------- triples

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
    stem = _stem(path)
    candidates = [path.with_name(f"{stem}.entities{ext}") for ext in (".tsv", ".csv", ".txt")]
    candidates += [path.with_name(f"entities{ext}") for ext in (".tsv", ".csv")]
    for candidate in candidates:
        if candidate.is_file() and candidate.resolve() != path.resolve():
            return candidate
    return None


_ENTITY_COLUMNS = ("id", "name", "type", "description", "aliases")


class KGWarning(UserWarning):
    """Something in a graph file was not loaded (e.g. columns graphtrail does not read); the message says what."""


def _warn_unread_columns(path: Path, lineno: int, header: Sequence[str], used: Sequence[int], reads: str) -> None:
    unread = [f"{c!r}" for i, c in enumerate(header) if i not in used]
    if unread:
        warnings.warn(
            f"{path.name} line {lineno}: column{'s' if len(unread) > 1 else ''} {', '.join(unread)} not loaded "
            f"(graphtrail reads {reads})",
            KGWarning,
            stacklevel=3,
        )


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
    kg = KnowledgeGraph(name=_stem(path))
    table_path = Path(entities) if entities is not None else find_entity_table(path)
    by_name: dict[str, str | None] = {}
    if table_path is not None:
        if not table_path.is_file():
            raise KGError(f"entity table not found: {table_path}")
        for record in _read_entity_table(table_path):
            kg.add_entity(record["id"], record["name"], record["type"], record["description"], record["aliases"])
            key = record["name"].casefold()
            by_name[key] = None if key in by_name else record["id"]  # None marks an ambiguous name

    def resolve(value: str) -> str:
        if value in kg:
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


def _first_appearance_codes(heads: Any, tails: Any) -> tuple[Any, Any, list[str]]:
    """Integer codes for the values of two string columns, numbered in order of first appearance
    in head, tail, head, tail, ... order (the order add_relation would create the nodes in)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(heads)
    encoded = pc.dictionary_encode(pa.chunked_array(heads.chunks + tails.chunks)).combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    values = encoded.dictionary
    first = np.full(len(values), np.iinfo(np.int64).max, dtype=np.int64)
    for part, offset in ((codes[:n], 0), (codes[n:], 1)):
        uniq, at = np.unique(part, return_index=True)
        first[uniq] = np.minimum(first[uniq], 2 * at + offset)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[codes[:n]], rank[codes[n:]], values.take(pa.array(order)).to_pylist()


def _load_triples_fast(kg: KnowledgeGraph, path: Path, raw: bytes, delimiter: str, resolve: Any) -> bool:
    """Load with pyarrow; ``False`` (nothing loaded) whenever the exact reader must decide or pyarrow is missing."""
    import numpy as np

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
    src, dst, ids = _first_appearance_codes(heads, tails)
    rel_encoded = pc.dictionary_encode(relations).combine_chunks()
    rel_codes = rel_encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    rel_labels = rel_encoded.dictionary.to_pylist()
    descriptions = columns[desc_col].slice(skip).to_pylist() if 0 <= desc_col < len(columns) else None
    if resolve is not None:
        # Two raw values may name the same entity (its id and its name): number the resolved ids again.
        ids = [resolve(v) for v in ids]
        renumber: dict[str, int] = {}
        node_of = np.fromiter((renumber.setdefault(e, len(renumber)) for e in ids), dtype=np.int64, count=len(ids))
        u, v, n_nodes = node_of[src], node_of[dst], len(renumber)
    else:
        u, v, n_nodes = src, dst, len(ids)
    n_rel = max(len(rel_labels), 1)
    if n_nodes and n_nodes * n_nodes * n_rel < 2**62:
        key = (u * n_rel + rel_codes) * n_nodes + v
        _, first_at = np.unique(key, return_index=True)
        duplicates = len(first_at) < n
    else:  # pragma: no cover - astronomically large graphs
        first_at, duplicates = None, True
    if duplicates:
        if first_at is None:
            return False
        # The same triple more than once: like add_relation, keep the first edge and the last description.
        first_at = np.sort(first_at)
        if descriptions is not None:
            last: dict[int, int] = {}
            for i, k in enumerate(key.tolist()):
                last[k] = i
            descriptions = [descriptions[last[k]] for k in key[first_at].tolist()]
        src, dst, rel_codes = src[first_at], dst[first_at], rel_codes[first_at]
    kg.add_relations_bulk(ids, src, dst, rel_labels, rel_codes, descriptions)
    if skip:
        _header_columns(path, header_line, first)  # warns about columns it does not read
    return True


# --------------------------------------------------------------------------- node-link JSON


def _parse_json(raw: bytes, filename: str) -> Any:
    try:
        return json_loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise KGError(f"{filename}: expected UTF-8 JSON ({exc.reason} at byte {exc.start})") from None
    except JSONInputError as exc:
        raise KGError(f"{exc.where(filename)}: {exc.reason}") from None


# What a node-link document may hold where graphtrail expects text: a string, or a
# number (ids are often integers). Anything else (objects, lists, booleans) is a
# mistake in the file, reported with the field's path rather than stringified.
def _text(value: Any, where: str, filename: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            raise KGError(f"{filename}: {where}: expected a string or a finite number, got {value!r}")
        return str(value)
    raise KGError(f"{filename}: {where}: expected a string or a number, got {_kind(value)}")


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", bool: "a boolean", type(None): "null"}.get(type(value), type(value).__name__)


def _text_or(node: dict[str, Any], keys: tuple[str, ...], default: str, where: str, filename: str) -> str:
    for key in keys:
        value = node.get(key)
        if value is not None and value != "":
            return _text(value, f"{where}.{key}", filename)
    return default


def _text_list(value: Any, where: str, filename: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return _aliases(value)
    if not isinstance(value, list):
        raise KGError(f"{filename}: {where}: expected a list of strings, got {_kind(value)}")
    return [_text(v, f"{where}[{i}]", filename) for i, v in enumerate(value)]


def _level(value: Any, where: str, filename: str) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 10:
        return int(value)
    raise KGError(f"{filename}: {where}: expected a non-negative whole number, got {value!r}"[:300])


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
    name = graph_attrs.get("name")
    kg = KnowledgeGraph(name=_text(name, "graph.name", filename) if name else _stem(Path(filename)))
    for i, node in enumerate(doc["nodes"]):
        where = f"nodes[{i}]"
        if not isinstance(node, dict) or node.get("id") in (None, ""):
            raise KGError(f"{filename}: {where}: expected an object with an 'id'")
        node_id = _text(node["id"], f"{where}.id", filename)
        kg.add_entity(
            node_id,
            _text_or(node, ("name", "title", "label"), node_id, where, filename),
            _text_or(node, ("type", "entity_type"), "entity", where, filename),
            _text_or(node, ("description",), "", where, filename),
            _text_list(node.get("aliases"), f"{where}.aliases", filename),
        )
    for i, edge in enumerate(edges):
        where = f"{edge_key}[{i}]"
        if not isinstance(edge, dict) or edge.get("source") in (None, "") or edge.get("target") in (None, ""):
            raise KGError(f"{filename}: {where}: expected an object with 'source' and 'target'")
        relation = _text_or(edge, ("relation", "label", "predicate", "type"), "", where, filename) or None
        if relation is None and isinstance(edge.get("key"), str):
            relation = edge["key"]
        kg.add_relation(
            _text(edge["source"], f"{where}.source", filename),
            relation or DEFAULT_RELATION,
            _text(edge["target"], f"{where}.target", filename),
            _text_or(edge, ("description",), "", where, filename),
        )
    units = doc.get("text_units") or []
    if not isinstance(units, list):
        raise KGError(f"{filename}: text_units: expected a list of objects, got {_kind(units)}")
    for i, unit in enumerate(units):
        if not isinstance(unit, dict) or "id" not in unit or not isinstance(unit.get("text"), str):
            raise KGError(f"{filename}: text_units[{i}]: expected an object with 'id' and 'text'")
        kg.add_text_unit(
            _text(unit["id"], f"text_units[{i}].id", filename), unit["text"],
            _text_list(unit.get("entity_ids"), f"text_units[{i}].entity_ids", filename),
        )
    communities = doc.get("communities") or []
    if not isinstance(communities, list):
        raise KGError(f"{filename}: communities: expected a list of objects, got {_kind(communities)}")
    for i, com in enumerate(communities):
        where = f"communities[{i}]"
        if not isinstance(com, dict) or "id" not in com or not isinstance(com.get("entity_ids"), list):
            raise KGError(f"{filename}: {where}: expected an object with 'id' and an 'entity_ids' list")
        com_id = _text(com["id"], f"{where}.id", filename)
        kg.add_community(
            com_id,
            _text_or(com, ("title",), com_id, where, filename),
            _text_list(com["entity_ids"], f"{where}.entity_ids", filename),
            _text_or(com, ("summary",), "", where, filename),
            _level(com.get("level"), f"{where}.level", filename),
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
