"""Node-link JSON: networkx's ``node_link_data`` shape, and graphtrail's own format (the same plus text units and communities).

Reads ``edges`` or ``links``, gzip allowed; every malformed field is reported
with its JSON path. :func:`save_node_link` writes what :func:`load_node_link`
reads back.
"""

from __future__ import annotations

import gzip
import json
import math
import operator
import zlib
from contextvars import ContextVar
from itertools import chain, repeat
from operator import itemgetter, methodcaller
from pathlib import Path
from typing import Any

import numpy as np

from ..._jsonread import JSONInputError
from ..._jsonread import loads as json_loads
from ..errors import KGError
from ..fields import DEFAULT_RELATION, parse_aliases
from ..graph import KnowledgeGraph
from .bulk import add_triples, gc_paused
from .paths import PathLike, graph_name

__all__ = ["load_node_link", "kg_to_document", "save_node_link", "kg_from_document", "parse_json", "maybe_gunzip"]


def maybe_gunzip(raw: bytes, filename: str = "input") -> bytes:
    """``raw`` unzipped when it starts with the gzip magic bytes, else unchanged."""
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise KGError(f"{filename}: damaged gzip data ({exc})") from None
    return raw


class _InexactNumber(Exception):
    """A float met in a document orjson parsed: it may be an integer too long for 64 bits (orjson reads those as floats)."""


#: False while building from an orjson-parsed document, whose floats may be rounded long integers.
_floats_exact: ContextVar[bool] = ContextVar("graphtrail_nodelink_floats_exact", default=True)


def _parse_fast(raw: bytes) -> Any:
    """The document parsed by orjson (C, several times faster than ``json``), or ``None``: then ``json`` reads it.

    orjson refuses what ``json`` accepts beyond RFC 8259 (NaN, a byte-order
    mark, lone surrogates, integers past 64 bits read as floats: see
    :class:`_InexactNumber`); ``json`` then reads the file, so a document means
    the same and an error reads the same either way.
    """
    try:
        import orjson
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def parse_json(raw: bytes, filename: str) -> Any:
    """The JSON document in ``raw``; a decoding or syntax error becomes a :class:`KGError` naming the place."""
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
        if isinstance(value, float) and not _floats_exact.get():
            raise _InexactNumber
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
        return parse_aliases(value)
    if not isinstance(value, list):
        raise KGError(f"{filename}: {where}: expected a list of strings, got {_kind(value)}")
    return [_text(v, f"{where}[{i}]", filename) for i, v in enumerate(value)]


def _level(value: Any, where: str, filename: str) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, float) and not _floats_exact.get():
        raise _InexactNumber
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 10:
        return int(value)
    raise KGError(f"{filename}: {where}: expected a non-negative whole number, got {value!r}"[:300])


def _node_row(node: Any, i: int, filename: str) -> tuple[Any, ...]:
    """One node's (id, name, type, description, aliases), checked field by field."""
    where = f"nodes[{i}]"
    if not isinstance(node, dict) or node.get("id") in (None, ""):
        raise KGError(f"{filename}: {where}: expected an object with an 'id'")
    node_id = _text(node["id"], f"{where}.id", filename)
    return (
        node_id,
        _text_or(node, ("name", "title", "label"), node_id, where, filename),
        _text_or(node, ("type", "entity_type"), "entity", where, filename),
        _text_or(node, ("description",), "", where, filename),
        tuple(_text_list(node.get("aliases"), f"{where}.aliases", filename)),
    )


def _edge_row(edge: Any, where: str, filename: str) -> tuple[str, str, str, str]:
    """One edge's (source, relation, target, description), checked field by field."""
    if not isinstance(edge, dict) or edge.get("source") in (None, "") or edge.get("target") in (None, ""):
        raise KGError(f"{filename}: {where}: expected an object with 'source' and 'target'")
    relation = _text_or(edge, ("relation", "label", "predicate", "type"), "", where, filename) or None
    if relation is None and isinstance(edge.get("key"), str):
        relation = edge["key"]
    return (
        _text(edge["source"], f"{where}.source", filename),
        relation or DEFAULT_RELATION,
        _text(edge["target"], f"{where}.target", filename),
        _text_or(edge, ("description",), "", where, filename),
    )


# Whole columns first, then the exact row readers above only for the rows that need a decision.
# A column is pulled out with one C-level map per field (``dict.get`` through methodcaller); a row is
# "plain" when every field is already what the row reader would return (a non-empty string; an id
# may be an int). Only the other rows go through the row reader, in document order, so the first bad
# row is reported with the same message as before and a million plain rows cost a few C-speed passes.
_IDS = (str, int)
_NONE = type(None)


def _field(rows: list[Any], key: str) -> list[Any]:
    return list(map(methodcaller("get", key), rows))


def _rows_of_type(values: list[Any], kind: type) -> list[int]:
    """The rows whose value's type is exactly ``kind`` (found in C)."""
    return np.flatnonzero(np.fromiter(map(operator.is_, map(type, values), repeat(kind)), dtype=bool, count=len(values))).tolist()


def _odd_rows(values: list[Any], allowed: tuple[type, ...], empty_ok: bool) -> set[int]:
    """Rows whose value is not one of the ``allowed`` types (exactly; bool is not int) or is empty."""
    kinds = set(map(type, values))
    odd: set[int] = set()
    for kind in kinds - set(allowed):
        odd.update(_rows_of_type(values, kind))
    if not empty_ok and "" in values:
        odd.update(np.flatnonzero(np.fromiter(map(operator.eq, values, repeat("")), dtype=bool, count=len(values))).tolist())
    return odd


def _as_text(values: list[Any]) -> list[str]:
    return values if set(map(type, values)) <= {str} else list(map(str, values))


def _or_empty(values: list[Any]) -> list[Any]:
    """``v or ""`` per value, in C when every value is a string or null (other rows are odd, and read again)."""
    if set(map(type, values)) <= {str, _NONE}:
        return list(map({None: ""}.get, values, values))
    return [v or "" for v in values]


def _alias_column(aliases: list[Any], odd: set[int]) -> list[tuple[str, ...]]:
    """Each node's aliases as a tuple (null or missing: none); rows holding anything but a list of strings join ``odd``."""
    n = len(aliases)
    kinds = set(map(type, aliases))
    if kinds <= {_NONE}:
        return [()] * n
    column = np.fromiter(aliases, dtype=object, count=n)
    for kind in kinds - {list}:  # null: no aliases; anything else: the row reader decides
        rows = _rows_of_type(aliases, kind)
        if kind is not _NONE:
            odd.update(rows)
        empty = np.empty(len(rows), dtype=object)
        empty.fill(())
        column[rows] = empty
    values = column.tolist()
    if not set(map(type, chain.from_iterable(values))) <= {str}:
        odd.update(i for i, v in enumerate(values) if any(type(a) is not str for a in v))
    return list(map(tuple, values))


def _node_columns(nodes: list[Any], filename: str) -> tuple[list[Any], ...]:
    try:
        ids = list(map(itemgetter("id"), nodes))
        names, types, descriptions, aliases = (_field(nodes, key) for key in ("name", "type", "description", "aliases"))
    except (KeyError, TypeError, AttributeError):  # a node that is not an object, or has no id
        ids = []
    if len(ids) != len(nodes):
        return tuple(map(list, zip(*(_node_row(n, i, filename) for i, n in enumerate(nodes))))) or ([], [], [], [], [])
    odd = _odd_rows(ids, _IDS, False) | _odd_rows(names, (str,), False) | _odd_rows(types, (str,), False)
    odd |= _odd_rows(descriptions, (str, _NONE), True)
    alias_tuples = _alias_column(aliases, odd)
    ids = _as_text(ids)
    descriptions = _or_empty(descriptions)
    for i in sorted(odd):
        ids[i], names[i], types[i], descriptions[i], alias_tuples[i] = _node_row(nodes[i], i, filename)
    return ids, names, types, descriptions, alias_tuples


def _edge_columns(edges: list[Any], edge_key: str, filename: str) -> tuple[list[str], ...]:
    try:
        sources, targets = list(map(itemgetter("source"), edges)), list(map(itemgetter("target"), edges))
        relations, descriptions = _field(edges, "relation"), _field(edges, "description")
    except (KeyError, TypeError, AttributeError):
        sources = []
    if len(sources) != len(edges):
        rows = (_edge_row(e, f"{edge_key}[{i}]", filename) for i, e in enumerate(edges))
        return tuple(map(list, zip(*rows))) or ([], [], [], [])
    odd = _odd_rows(sources, _IDS, False) | _odd_rows(targets, _IDS, False) | _odd_rows(relations, (str,), False)
    odd |= _odd_rows(descriptions, (str, _NONE), True)
    sources, targets = _as_text(sources), _as_text(targets)
    descriptions = _or_empty(descriptions)
    for i in sorted(odd):
        sources[i], relations[i], targets[i], descriptions[i] = _edge_row(edges[i], f"{edge_key}[{i}]", filename)
    return sources, relations, targets, descriptions


def kg_from_document(doc: Any, filename: str) -> KnowledgeGraph:
    """The graph a parsed node-link document describes (``filename`` names it in errors)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise KGError(f"{filename}: expected a JSON object with a 'nodes' list and an 'edges' (or 'links') list")
    edge_key = "edges" if "edges" in doc else "links"
    edges = doc.get(edge_key, [])
    if not isinstance(edges, list):
        raise KGError(f"{filename}: '{edge_key}' must be a list of {{source, target, relation}} objects")
    graph_attrs = doc.get("graph") if isinstance(doc.get("graph"), dict) else {}
    name = graph_attrs.get("name")
    kg = KnowledgeGraph(name=_text(name, "graph.name", filename) if name else graph_name(Path(filename)))
    columns = _node_columns(doc["nodes"], filename)
    index = dict(zip(columns[0], range(len(columns[0]))))
    if len(index) == len(columns[0]):
        kg._store.add_entities(*columns, index=index)
    else:  # a repeated node: the last one's attributes, at the first one's place (as add_entity does)
        for values in zip(*columns):
            kg.add_entity(*values)
    ends = _edge_columns(edges, edge_key, filename)
    if ends[0] and not add_triples(kg, ends[0], ends[1], ends[2], ends[3] if any(ends[3]) else None):
        for source, relation, target, description in zip(*ends):  # pragma: no cover - astronomically large graphs, or no pyarrow
            kg.add_relation(source, relation, target, description)
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
    raw = maybe_gunzip(path.read_bytes(), path.name)
    with gc_paused():
        doc = _parse_fast(raw)
        if doc is not None:
            token = _floats_exact.set(False)
            try:
                return kg_from_document(doc, path.name)
            except _InexactNumber:  # a float where text or a number belongs: read it again exactly
                doc = None
            finally:
                _floats_exact.reset(token)
        return kg_from_document(parse_json(raw, path.name), path.name)


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


def save_node_link(kg: KnowledgeGraph, path: Path) -> Path:
    """Write ``kg`` as node-link JSON, gzip-compressed (reproducibly: no mtime) when the name ends in ``.gz``."""
    data = json.dumps(kg_to_document(kg), ensure_ascii=False, indent=None).encode("utf-8")
    from ..._outdir import write_bytes  # atomic: a reader never sees half a graph, a planted symlink is replaced

    write_bytes(path, gzip.compress(data, mtime=0) if path.suffix.lower() == ".gz" else data)
    return path
