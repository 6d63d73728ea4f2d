"""GraphML of the plain shape read by one regular expression into columns; anything else goes to the expat stream.

Even expat's smallest Python callbacks cost four times ``pandas.read_csv`` of
the same graph at a million edges. Most GraphML files are one flat list of
``<node id="..">`` and ``<edge source=".." target="..">`` elements whose only
children are ``<data key="..">text</data>``, written by one tool in one
layout. For those, one compiled pattern over the text of the graph's body
yields a row of strings per element (C code, no Python call per element), and
each key's values arrive as one column.

Exactness first: the pattern accepts only a strict subset of well-formed XML
(named elements, attributes in a fixed order, double quotes, data in the keys'
declared order, text without markup, the five XML entities and character
references); the file's head (declaration, keys, ``<graph>``) is read by
:mod:`.graphml_stream`'s expat reader, so its checks (DOCTYPE, key types,
undirected graphs ...) apply. Anything else in the body (a comment, CDATA, a
``<desc>``, a port, a nested graph, an attribute more or in another order,
single quotes, a carriage return, a node after the edges) is caught as a
character the pattern did not take, and :class:`Unusual` hands the file to the
stream reader, which reproduces networkx or hands it on to networkx.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from .graphml_stream import _BOOL, Unusual, read_graphml_columns
from .textcolumns import replace_where

__all__ = ["PlainGraphML", "read_graphml_plain"]

_WS = "[ \t\n]"  # XML white space without the carriage return (files with one go to the stream reader)
# Possessive repeats (Python 3.11+) keep no backtracking points: each class stops where its delimiter starts,
# so they match what the plain repeat matches, ~10% sooner.
_MANY, _SOME = ("*+", "++") if sys.version_info >= (3, 11) else ("*", "+")
_REF = "&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);"
_DECLARATION = re.compile(rb"""<\?xml[ \t\n]+version=(["'])1\.[0-9]+\1(?:[ \t\n]+encoding=(["'])[uU][tT][fF]-8\2)?"""
                          rb"""(?:[ \t\n]+standalone=(["'])(?:yes|no)\3)?[ \t\n]*\?>""")
_GRAPH_TAG = re.compile(rb"<graph[ \t\n][^>]*>")
_TAIL = re.compile(rb"</graph[ \t\n]*>[ \t\n]*</graphml[ \t\n]*>[ \t\n]*\Z")
_NOT_XML = "\x00-\x08\x0b-\x1f\ufffe\uffff"  # C0 controls (the carriage return too), the two non-characters
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_REFERENCE = re.compile(_REF)
_REST = r"[\s\S]*"  # the rest of the text, whatever it holds


@dataclass
class PlainGraphML:
    """The columns of a plain GraphML file, in document order.

    ``nodes``/``edges`` map a data attribute's name to one value per node/edge:
    the text for string keys, the converted value for typed ones; ``""`` (string
    keys) or ``None`` (typed keys) where an element has no such data or empty text
    (networkx then sets no attribute). ``edge_ids``: each edge's ``id`` (``""`` where
    it has none), or ``None`` when the file writes no edge ids. ``typed``: the
    attribute names whose key is not a string key.
    """

    node_ids: list[str]
    nodes: dict[str, list[Any]]
    sources: list[str]
    targets: list[str]
    edge_ids: list[str] | None
    edges: dict[str, list[Any]]
    typed: frozenset[str]


def _unescape(text: str) -> str:
    """The text an XML parser gives for ``text`` (entity and character references replaced)."""

    def replace(match: re.Match[str]) -> str:
        name = match.group()[1:-1]
        if name in _ENTITIES:
            return _ENTITIES[name]
        code = int(name[2:], 16) if name[1] == "x" else int(name[1:])
        if not (code in (9, 10, 13) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF):
            raise Unusual("a character reference to a character XML does not allow")
        return chr(code)

    return _REFERENCE.sub(replace, text)


def _head(raw: bytes) -> tuple[dict[str, Any], int, int]:
    """The keys and scopes of the file's head, and the body's byte range (between ``<graph ..>`` and ``</graph>``)."""
    if raw[:1] != b"<" or (raw.startswith(b"<?xml") and not _DECLARATION.match(raw)):
        raise Unusual("an encoding other than UTF-8, or an unusual declaration")  # the body is decoded as UTF-8
    graph = _GRAPH_TAG.search(raw)
    tail = _TAIL.search(raw, max(len(raw) - 256, graph.end() if graph else 0))  # the file ends with the graph's end
    if graph is None or tail is None:
        raise Unusual("no single graph element")
    end = tail.start()
    header: dict[str, Any] = {}
    read_graphml_columns(raw[: graph.end()] + raw[end:], header)  # expat: the head's checks, and the keys
    if header.get("graph_at") != graph.start():  # the tag found is not the graph's (inside a comment, say)
        raise Unusual("graph element elsewhere")
    return header, graph.end(), end


def _data_pattern(names: list[tuple[str, list[str]]], text: str) -> str:
    """Optional ``<data>`` children, one per attribute name in declaration order, each capturing its text."""
    parts = []
    for _, key_ids in names:
        ids = "|".join(re.escape(k) for k in key_ids)
        parts.append(f'(?:<data{_WS}{_SOME}key="(?:{ids})"{_WS}{_MANY}(?:>({text})</data{_WS}{_MANY}>|/>){_WS}{_MANY})?')
    return "".join(parts)


def _names(header: dict[str, Any], scopes: tuple[str, ...], sample: str) -> list[tuple[str, list[str]]]:
    """Attribute names with their key ids, for keys declared for ``scopes``, in the order their data
    first appears in ``sample`` (the start of the elements), the others after in declaration order."""
    names: dict[str, list[str]] = {}
    for key_id, (name, _) in header["keys"].items():
        if header["scope"][key_id] in scopes:
            if re.search(r"[&<>\"'\s]", key_id):
                raise Unusual("a key id that needs escaping")
            names.setdefault(name, []).append(key_id)

    def first_seen(item: tuple[str, list[str]]) -> int:
        places = [sample.find(f'key="{k}"') for k in item[1]]
        return min((p for p in places if p >= 0), default=len(sample))

    return sorted(names.items(), key=first_seen)  # stable: declaration order among the unseen


def _converter(header: dict[str, Any], key_ids: list[str]) -> Any:
    kinds = {header["keys"][k][1] for k in key_ids}
    if len(kinds) > 1:
        raise Unusual("one attribute name with several types")
    return kinds.pop()


def _values(column: tuple[str, ...], kind: Any, escaped: bool) -> list[Any]:
    """A captured column as networkx's values: unescaped, typed, empty text as absent."""
    values = replace_where(list(column), "&", _unescape) if escaped else list(column)
    if kind is str:
        return values
    try:
        if kind is bool:
            return [_BOOL[v.lower()] if v else None for v in values]
        return [kind(v) if v else None for v in values]
    except (KeyError, ValueError) as exc:  # networkx names the value
        raise Unusual(str(exc)) from None


def read_graphml_plain(raw: bytes) -> PlainGraphML:
    """The columns of ``raw``, a GraphML file of the plain shape; :class:`Unusual` for any other file."""
    header, start, end = _head(raw)
    try:
        body = raw[start:end].decode("utf-8")
    except UnicodeDecodeError:
        raise Unusual("not UTF-8") from None
    if "]" in body and "]]>" in body:  # not allowed in text; the pattern's character classes leave out the rest
        raise Unusual("]]> in the body")
    escaped = "&" in body
    attr, text = f'[^"<&\t\n{_NOT_XML}]', f"[^<&{_NOT_XML}]"  # every character of the body is in a match, or junk
    attr = f"{attr}{_MANY}(?:{_REF}{attr}{_MANY})*" if escaped else f"{attr}{_MANY}"
    text = f"{text}{_MANY}(?:{_REF}{text}{_MANY})*" if escaped else f"{text}{_MANY}"
    first_edge = body.find("<edge")
    first_edge = len(body) if first_edge < 0 else first_edge
    sample = 1 << 16  # the data order of the first elements (one writer writes one order)
    node_names = _names(header, ("node", "all"), body[:min(first_edge, sample)])
    edge_names = _names(header, ("edge", "all"), body[first_edge:first_edge + sample])
    id_first = re.match(f"<edge{_WS}+id=", body[first_edge:first_edge + 20]) is not None  # one layout per file
    try:
        node = re.compile(f'{_WS}{_MANY}(?:<node{_WS}{_SOME}id="({attr})"{_WS}{_MANY}(?:/>|>{_WS}{_MANY}{_data_pattern(node_names, text)}</node{_WS}{_MANY}>)|([^ \t\n]{_REST}))')
        ends = f'source="({attr})"{_WS}{_SOME}target="({attr})"'
        head = f'<edge{_WS}{_SOME}id="({attr})"{_WS}{_SOME}{ends}' if id_first else f'<edge{_WS}{_SOME}{ends}(?:{_WS}{_SOME}id="({attr})")?'
        edge = re.compile(f"{_WS}{_MANY}(?:{head}{_WS}{_MANY}(?:/>|>{_WS}{_MANY}{_data_pattern(edge_names, text)}</edge{_WS}{_MANY}>)|([^ \t\n]{_REST}))")
        # The last group takes a character no element took, and with it the rest of the text: one row, not one a character.
    except re.error:  # too many keys for one pattern, say
        raise Unusual("no pattern") from None
    node_rows = node.findall(body, 0, first_edge)
    if node_rows and node_rows[-1][-1]:  # a character no element took (with the rest): the stream reader decides
        raise Unusual("markup the pattern does not take")
    edge_rows = edge.findall(body, first_edge)
    if edge_rows and edge_rows[-1][-1]:
        raise Unusual("markup the pattern does not take")
    node_columns = list(zip(*node_rows)) if node_rows else [()] * (len(node_names) + 2)
    edge_columns = list(zip(*edge_rows)) if edge_rows else [()] * (len(edge_names) + 4)
    if any(node_columns[-1]) or any(edge_columns[-1]):  # only the last row can hold the rest; a guard
        raise Unusual("markup the pattern does not take")
    if body.count("<node", 0, first_edge) != len(node_rows) or body.count("<edge", first_edge) != len(edge_rows):
        raise Unusual("element counts differ")  # a guard: every element start was taken as one row
    if id_first:
        edge_ids, sources, targets = edge_columns[:3]
    else:
        sources, targets, edge_ids = edge_columns[:3]
    node_ids = _values(node_columns[0], str, escaped)
    if len(set(node_ids)) < len(node_ids):
        raise Unusual("a repeated node id")  # networkx merges the node's attributes
    return PlainGraphML(
        node_ids=node_ids,
        nodes={name: _values(node_columns[1 + i], _converter(header, ids), escaped) for i, (name, ids) in enumerate(node_names)},
        sources=_values(sources, str, escaped),
        targets=_values(targets, str, escaped),
        edge_ids=_values(edge_ids, str, escaped) if any(edge_ids) else None,
        edges={name: _values(edge_columns[3 + i], _converter(header, ids), escaped) for i, (name, ids) in enumerate(edge_names)},
        typed=frozenset(name for name, ids in node_names + edge_names if _converter(header, ids) is not str),
    )
