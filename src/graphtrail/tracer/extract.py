"""Which entities and edges a tool call revealed, and what the answer cited.

Entity extraction order (docs/architecture.md §2): the tool's artifact in
graphtrail's shape -> a registered per-tool extractor -> a generic fallback over
JSON/dict/list outputs, Python reprs, Cypher-style rows, tables with an id column and
``Name (id: X)`` text.
Whatever the route, an edge's endpoints count as revealed by that call too.
Citation order (§3): an accepted ``submit_answer`` call -> ``[E:<id>]``-style
text markers -> a user callable -> (in ``citations="names"`` mode, resolved in
:mod:`.citations` once the run's entities are known) names in the answer text.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ._safety import warn_once
from .tables import table_rows
from .trajectory import Edge, Entity

Extractor = Callable[[Any, dict[str, Any]], Any]
"""``fn(output, args)`` -> ``{"entities": [...], "edges": [...]}``.

``output`` is the tool's result content (a ``str`` for most tools, the raw
return value when the tool was not called through a tool call); ``args`` the
call's arguments. Entities may be :class:`Entity`, dicts with ``id``/``name``/
``type``, or plain id strings; edges :class:`Edge`, dicts with ``source``/
``relation``/``target``, or ``[source, relation, target]`` lists. A pair
``(entities, edges)`` is accepted too.
"""

CitationParser = Callable[[Any], Any]
"""``fn(final_output)`` -> ``(answer, citations)``, ``{"answer", "citations"}``, or ``None``."""

_registry: dict[str, Extractor] = {}

DEFAULT_CITATION_PATTERN = r"\[E:\s*([^\]]*?)\s*\]"
ANSWER_TOOL = "submit_answer"
_ID_KEYS = ("id", "entity_id", "node_id", "elementId", "element_id", "@id")  # "@id": JSON-LD
_NAME_KEYS = ("name", "label", "title")
#: Keys that name a graph record when nothing carries an id (Cypher rows: ``{"p.name": ...}``
#: or ``{"p": {"name": ...}}``): tried only when the id-keyed walk found nothing.
_ROW_ID_PROPS = ("id", "elementId", "element_id", "name", "title")
_REPR_LIMIT = 200_000  # characters: a longer Python repr is not parsed (ast.literal_eval is not free)
_TEXT_LIMIT = 200_000  # characters of plain text scanned for ``Name (id: X)``
#: ``Christopher Nolan (id: p1)``, ``Inception (ID=m1)``: a name, then its id in parentheses.
#: Found by the parenthesis alone (one linear scan); the name is read backwards from it.
_ID_PAREN = re.compile(r"\(\s*(?:id|element_?id|node_?id)\s*[:=]\s*([^\s(),;]+)\s*\)", re.IGNORECASE)
_NAME_STOP = re.compile(r"[\n()\[\]{}:;,.!?]")
_SOURCE_KEYS = ("source", "subject", "head", "src")
_TARGET_KEYS = ("target", "object", "tail", "dst")
_RELATION_KEYS = ("relation", "predicate", "rel", "type", "label")
_FALLBACK_BUDGET = 5000  # dict/list nodes visited at most per output


def register_extractor(tool_name: str) -> Callable[[Extractor], Extractor]:
    """Register ``fn(output, args)`` as the entity extractor of tool ``tool_name``.

    Used for tools whose output is not in graphtrail's artifact shape. An
    ``extractors={...}`` argument of :func:`trace_agent` wins over this registry.
    """

    def deco(fn: Extractor) -> Extractor:
        _registry[tool_name] = fn
        return fn

    return deco


def unregister_extractor(tool_name: str) -> None:
    _registry.pop(tool_name, None)


def _scalar_id(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int)):
        text = str(value)
        return text or None
    return None


def _opt_str(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value)


class EntityRef(NamedTuple):
    """An entity as extraction found it. A plain tuple: cheap enough to make on every
    tool call of every traced run; it becomes a pydantic :class:`Entity` only in a
    Trajectory that someone reads (``capture()``)."""

    id: str
    name: str | None = None
    type: str | None = None
    aliases: tuple[str, ...] = ()  # read for citations by name; not stored in a Trajectory

    def to_model(self) -> Entity:
        return Entity(id=self.id, name=self.name, type=self.type)


class EdgeRef(NamedTuple):
    """An edge as extraction found it (see :class:`EntityRef`)."""

    source: str
    relation: str
    target: str

    def to_model(self) -> Edge:
        return Edge(source=self.source, relation=self.relation, target=self.target)


def _aliases(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value if isinstance(v, str) and v)
    return ()


def to_entity(item: Any) -> EntityRef | None:
    if type(item) is dict:  # fast path for plain dicts with string fields; same result as below
        eid = item.get("id")
        if eid is None:
            eid = item.get("entity_id")
            if eid is None:
                eid = item.get("node_id")
        name, etype = item.get("name"), item.get("type")
        if type(eid) is str and eid and type(name) is str and (etype is None or type(etype) is str) and "aliases" not in item:
            return EntityRef(eid, name, etype)
    if type(item) is EntityRef:
        return item
    if isinstance(item, Entity):
        return EntityRef(item.id, item.name, item.type)
    if isinstance(item, Mapping):
        for key in _ID_KEYS:
            eid = _scalar_id(item.get(key))
            if eid is not None:
                name = next((_opt_str(item[k]) for k in _NAME_KEYS if item.get(k) is not None), None)
                return EntityRef(eid, name, _opt_str(item.get("type")), _aliases(item.get("aliases")))
        return None
    eid = _scalar_id(item)
    return EntityRef(eid) if eid is not None else None


_SOURCE_KEYSET = frozenset(_SOURCE_KEYS)


def to_edge(item: Any) -> EdgeRef | None:
    if type(item) is dict:  # fast paths for plain dicts; same results as below
        src, rel, tgt = item.get("source"), item.get("relation"), item.get("target")
        if type(src) is str and src and type(rel) is str and rel and type(tgt) is str and tgt:
            return EdgeRef(src, rel, tgt)
        if item.keys().isdisjoint(_SOURCE_KEYSET):  # most dicts in a JSON output are no edge
            return None
    if type(item) is EdgeRef:
        return item
    if isinstance(item, Edge):
        return EdgeRef(item.source, item.relation, item.target)
    if isinstance(item, Mapping):
        src = next((_scalar_id(item.get(k)) for k in _SOURCE_KEYS if _scalar_id(item.get(k))), None)
        tgt = next((_scalar_id(item.get(k)) for k in _TARGET_KEYS if _scalar_id(item.get(k))), None)
        if src is None or tgt is None:
            return None
        rel = next((str(item[k]) for k in _RELATION_KEYS if isinstance(item.get(k), (str, int)) and item.get(k) != ""), "related_to")
        return EdgeRef(src, rel, tgt)
    if isinstance(item, (list, tuple)) and len(item) == 3 and all(_scalar_id(x) for x in item):
        return EdgeRef(str(item[0]), str(item[1]), str(item[2]))
    return None


@dataclass(slots=True)
class Found:
    entities: list[EntityRef] = field(default_factory=list)
    edges: list[EdgeRef] = field(default_factory=list)

    def add_entity(self, entity: EntityRef | None, seen: set[str]) -> None:
        if entity is not None and entity.id not in seen:
            seen.add(entity.id)
            self.entities.append(entity)


def _normalize(result: Any) -> Found:
    if result is None:
        return Found()
    if isinstance(result, Found):
        return result
    if isinstance(result, tuple) and len(result) == 2:
        raw_entities, raw_edges = result
    elif type(result) is dict or isinstance(result, Mapping):
        raw_entities, raw_edges = result.get("entities") or [], result.get("edges") or []
    else:
        raw_entities, raw_edges = getattr(result, "entities", None) or [], getattr(result, "edges", None) or []
    found, seen = Found(), set()
    for item in raw_entities if type(raw_entities) is list or (
            isinstance(raw_entities, Iterable) and not isinstance(raw_entities, (str, bytes))) else []:
        found.add_entity(to_entity(item), seen)
    edge_seen: set[tuple[str, str, str]] = set()
    for item in raw_edges if type(raw_edges) is list or (
            isinstance(raw_edges, Iterable) and not isinstance(raw_edges, (str, bytes))) else []:
        edge = to_edge(item)
        if edge is not None and (key := (edge.source, edge.relation, edge.target)) not in edge_seen:
            edge_seen.add(key)
            found.edges.append(edge)
    return found


def is_artifact_shape(artifact: Any) -> bool:
    return (type(artifact) is dict or (artifact is not None and isinstance(artifact, Mapping))) and (
        isinstance(artifact.get("entities"), list) or isinstance(artifact.get("edges"), list)
    )


def _output_text(output: Any) -> str | None:
    """A tool output as text: a ``str``, or the text of a list of content blocks."""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and output and all(isinstance(p, dict) and "text" in p for p in output):
        return "".join(str(p["text"]) for p in output)
    return None


def _parse_json_text(output: Any) -> Any:
    text = _output_text(output)
    if text is None:
        return output
    text = text.strip()
    if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
        try:
            return json.loads(text)
        except ValueError:
            return None
    return None


def _parse_repr(text: str) -> Any:
    """A Python repr (``str(rows)``: single quotes, ``None``, tuples) read with ``ast.literal_eval``.

    Never ``eval``: ``literal_eval`` only builds literals. Outputs longer than
    ``_REPR_LIMIT`` are not parsed, and anything that is not a literal yields ``None``.
    """
    text = text.strip()
    if not (text[:1] in ("{", "[", "(") and text[-1:] in ("}", "]", ")")) or len(text) > _REPR_LIMIT:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (dict, list, tuple)) else None


def generic_extract(output: Any) -> Found:
    """Entities and edges found in a tool output with no artifact and no registered extractor.

    Cheapest first, and a costlier reader only when the cheaper ones found nothing:

    1. JSON text, dicts and lists: dicts with ``id``/``entity_id``/``node_id``/
       ``elementId``/``element_id`` are entities, dicts that read as edges are
       edges (depth-first, in document order, at most 8 levels deep and
       ``_FALLBACK_BUDGET`` dicts and lists in all);
    2. a Python repr (``return str(rows)``), parsed with ``ast.literal_eval``, then as in 1;
    3. Cypher-style rows with no id key: ``{"p": {"name": ...}}`` or ``{"p.name": ...}``
       name an entity whose id is its ``name`` (or ``title``);
    4. text: Markdown and fixed-width tables (:mod:`.tables`) whose rows have an id column,
       as in 1; and ``Christopher Nolan (id: p1)``, which names entity ``p1``.
    """
    data = _parse_json_text(output)
    text: str | None = None
    if data is None:
        text = _output_text(output)
        if text is not None:
            data = _parse_repr(text)
    found = Found()
    if isinstance(data, (dict, list, tuple)):
        _visit(data, 0, found, set(), set(), [_FALLBACK_BUDGET])
        if not found.entities and not found.edges:
            _visit_rows(data, 0, found, set(), [_FALLBACK_BUDGET])
    elif text is not None and len(text) <= _TEXT_LIMIT:
        _visit(table_rows(text), 0, found, set(), set(), [_FALLBACK_BUDGET])  # Markdown/fixed-width rows with an id column
        _text_entities(text, found)
    return found


def _visit(node: Any, depth: int, found: Found, seen: set[str], edge_seen: set[tuple[str, str, str]], budget: list[int]) -> None:
    # A module-level function, not a closure: a recursive closure is a reference
    # cycle, i.e. garbage only the cyclic GC can free, on every tool call.
    if budget[0] <= 0:
        return
    budget[0] -= 1
    if type(node) is dict or (type(node) is not list and isinstance(node, Mapping)):
        edge = to_edge(node)
        if edge is None:
            found.add_entity(to_entity(node), seen)
        elif (key := (edge.source, edge.relation, edge.target)) not in edge_seen:
            edge_seen.add(key)
            found.edges.append(edge)
        children: Any = node.values()
    else:
        children = node
    if depth < 8:
        for child in children:
            if isinstance(child, (dict, list, tuple)):
                _visit(child, depth + 1, found, seen, edge_seen, budget)


def _row_entity(props: Mapping[str, Any]) -> EntityRef | None:
    """A record named by ``id``-like keys, else by its ``name``/``title`` (which then is its id)."""
    for key in _ROW_ID_PROPS:
        eid = _scalar_id(props.get(key))
        if eid is not None:
            name = next((_opt_str(props[k]) for k in _NAME_KEYS if props.get(k) is not None), None)
            return EntityRef(eid, name, _opt_str(props.get("type")))
    return None


def _visit_rows(node: Any, depth: int, found: Found, seen: set[str], budget: list[int]) -> None:
    """The Cypher-row pass: dicts named by ``name``/``title``, and ``alias.prop`` columns."""
    if budget[0] <= 0:
        return
    budget[0] -= 1
    if isinstance(node, Mapping):
        found.add_entity(_row_entity(node), seen)
        columns: dict[str, dict[str, Any]] = {}
        for key, value in node.items():
            if isinstance(key, str) and "." in key:
                alias, _, prop = key.rpartition(".")
                if prop in _ROW_ID_PROPS:
                    columns.setdefault(alias, {})[prop] = value
        for props in columns.values():
            found.add_entity(_row_entity(props), seen)
        children: Any = node.values()
    else:
        children = node
    if depth < 8:
        for child in children:
            if isinstance(child, (dict, list, tuple)):
                _visit_rows(child, depth + 1, found, seen, budget)


_CONNECTORS = frozenset({"of", "the", "and", "de", "la", "le", "von", "van", "der", "du", "del", "da", "y", "&"})


def _name_before(segment: str) -> str | None:
    """The entity name at the end of ``segment``: its trailing run of capitalised words
    ("directed by Christopher Nolan" -> "Christopher Nolan", "Lord of the Rings" kept whole)."""
    words = segment.strip(" \t-*•>#|'\"").split()
    if not words:
        return None
    if not any(w[:1].isupper() or w[:1].isdigit() for w in words):
        return " ".join(words) if len(words) <= 5 else None
    start = len(words)
    for i in range(len(words) - 1, -1, -1):
        word = words[i]
        if word[:1].isupper() or word[:1].isdigit():
            start = i
        elif word.lower() not in _CONNECTORS:
            break
    name = words[start:]
    while name and name[0].lower() in _CONNECTORS and not name[0][:1].isupper():
        name = name[1:]
    return " ".join(name) or None


def _text_entities(text: str, found: Found) -> None:
    """``Name (id: X)`` mentions in plain text."""
    if "(" not in text:
        return
    seen = {e.id for e in found.entities}
    for match in _ID_PAREN.finditer(text):
        before = text[max(0, match.start() - 80): match.start()]
        stops = list(_NAME_STOP.finditer(before))
        segment = before[stops[-1].end():] if stops else before
        found.add_entity(EntityRef(match.group(1), _name_before(segment)), seen)


def with_endpoints(found: Found) -> Found:
    """``found`` with every edge endpoint among its entities: an edge names both ends,
    so the call revealed them (an entity known only by id gets no name)."""
    if found.edges:
        seen = {e.id for e in found.entities}
        for edge in found.edges:
            for eid in (edge.source, edge.target):
                if eid not in seen:
                    seen.add(eid)
                    found.entities.append(EntityRef(eid))
    return found


def extract_entities(
    tool: str,
    output: Any,
    args: dict[str, Any],
    artifact: Any,
    extractors: Mapping[str, Extractor] | None,
) -> Found:
    """Entities and edges a tool call revealed, edge endpoints included. Never raises."""
    if is_artifact_shape(artifact):
        try:
            return with_endpoints(_normalize(artifact))
        except Exception as exc:  # noqa: BLE001
            warn_once(f"artifact:{tool}", "graphtrail: unreadable artifact from tool %r (%r)", tool, exc)
    extractor = (extractors or {}).get(tool) or _registry.get(tool)
    if extractor is not None:
        try:
            return with_endpoints(_normalize(extractor(output, args)))
        except Exception as exc:  # noqa: BLE001
            warn_once(f"extractor:{tool}", "graphtrail: extractor for tool %r raised %r; using the generic fallback", tool, exc)
    try:
        return with_endpoints(generic_extract(output))
    except Exception as exc:  # noqa: BLE001
        warn_once(f"fallback:{tool}", "graphtrail: could not read output of tool %r (%r)", tool, exc)
        return Found()


# ---------------------------------------------------------------- citations


@dataclass(slots=True)
class AnswerResult:
    answer: str | None
    citations: list[str]
    status: str  # "ok" | "no_answer"
    #: where the answer came from: "tool_call", "markers", "parser" or "text" (free text:
    #: its citations, if any, are read from names once the run's entities are known), "structured"
    source: str = "text"
    reason: str | None = None  # why a "no_answer" found no answer, when it can say (tracer/structured.py)


def _unique(ids: Iterable[Any]) -> list[str]:
    out: dict[str, None] = {}
    for raw in ids:
        if raw is None or isinstance(raw, (dict, list)):
            continue
        text = str(raw).strip()
        if text:
            out.setdefault(text, None)
    return list(out)


def _citation_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return _unique(re.split(r"[,;\s]+", value))
    if isinstance(value, (list, tuple)):
        return _unique(value)
    return _unique([value])


def compile_pattern(pattern: str | re.Pattern[str] | None) -> re.Pattern[str]:
    if pattern is None:
        return re.compile(DEFAULT_CITATION_PATTERN)
    return pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)


def text_citations(text: str, pattern: re.Pattern[str]) -> tuple[str, list[str]]:
    """Ids in the markers of ``text`` (a marker may list several: ``[E:E1, E2]``) and the text without them."""
    ids: list[str] = []
    for match in pattern.finditer(text):
        captured = match.group(1) if pattern.groups else match.group(0)
        ids.extend(re.split(r"[,;]\s*", captured or ""))
    if not ids:
        return text.strip(), []
    stripped = re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", pattern.sub("", text))).strip()
    return stripped, _unique(ids)


def _messages_of(output: Any) -> list[Any] | None:
    if isinstance(output, Mapping):
        msgs = output.get("messages")
        return list(msgs) if isinstance(msgs, (list, tuple)) else None
    if isinstance(output, (list, tuple)) and output and all(hasattr(m, "type") for m in output):
        return list(output)
    return None


def _is_answer_call(call: Mapping[str, Any]) -> bool:
    args = call.get("args")
    return call.get("name") == ANSWER_TOOL or (isinstance(args, Mapping) and "answer" in args and "citations" in args)


#: The keys a chain's output dict holds its answer under, in the order they are tried:
#: ``RetrievalQA``/``GraphQAChain``/``GraphCypherQAChain`` (``result``), agents and
#: ``AgentExecutor`` (``output``), QA-with-sources chains (``answer``), ``LLMChain`` (``text``).
CHAIN_ANSWER_KEYS = ("result", "output", "answer", "text")


def chain_text(output: Mapping[str, Any]) -> str | None:
    """The answer text of a chain's output dict (first of :data:`CHAIN_ANSWER_KEYS` holding text)."""
    for key in CHAIN_ANSWER_KEYS:
        value = output.get(key)
        if isinstance(value, str):
            return value
        content = getattr(value, "content", None)  # a chain returning an AIMessage under the key
        if isinstance(content, str):
            return content
    return None


def extract_answer(
    output: Any,
    pattern: re.Pattern[str],
    parser: CitationParser | None = None,
) -> AnswerResult | None:
    """Answer and citations of a run's final output; ``None`` if the output says nothing.

    1. the last ``submit_answer``-style tool call whose ``ToolMessage`` is not
       ``status="error"`` (all rejected -> ``no_answer``);
    2. ``[E:<id>]``-style markers in the last AI message text (or a ``str`` output,
       or a chain output's ``result``/``output``/``answer``/``text`` value);
    3. ``parser(output)``, if given;
    4. the last AI message text with no citations.
    """
    messages = _messages_of(output)
    text: str | None = None
    if messages is not None:
        errored: set[str] = set()
        for msg in messages:
            if getattr(msg, "type", None) == "tool" and getattr(msg, "status", None) == "error":
                errored.add(getattr(msg, "tool_call_id", None) or "")
        submissions = 0
        for msg in reversed(messages):
            for call in reversed(getattr(msg, "tool_calls", None) or []):
                if not isinstance(call, Mapping) or not _is_answer_call(call):
                    continue
                submissions += 1
                if call.get("id") in errored:
                    continue
                args = call.get("args") or {}
                answer = args.get("answer")
                return AnswerResult(
                    answer=None if answer is None else str(answer),
                    citations=_citation_list(args.get("citations")),
                    status="ok",
                    source="tool_call",
                )
        if submissions:
            return AnswerResult(answer=None, citations=[], status="no_answer")
        last_ai = next((m for m in reversed(messages) if getattr(m, "type", None) == "ai"), None)
        if last_ai is not None:
            from ._content import to_text

            text = to_text(getattr(last_ai, "content", ""))
    elif isinstance(output, str):
        text = output
    elif isinstance(output, Mapping):
        text = chain_text(output)
        cites = output.get("citations")
        if text is not None and isinstance(cites, (list, tuple)) and cites:
            return AnswerResult(answer=text, citations=_citation_list(cites), status="ok")
    if text is not None and text.strip():
        stripped, ids = text_citations(text, pattern)
        if ids:
            return AnswerResult(answer=stripped, citations=ids, status="ok", source="markers")
    if parser is not None:
        try:
            parsed = parser(output)
        except Exception as exc:  # noqa: BLE001
            warn_once("citation_parser", "graphtrail: citation_parser raised %r", exc)
            parsed = None
        if parsed is not None:
            if isinstance(parsed, Mapping):
                answer, cites = parsed.get("answer"), parsed.get("citations")
            else:
                answer, cites = parsed
            return AnswerResult(answer=None if answer is None else str(answer), citations=_citation_list(cites), status="ok", source="parser")
    if text is not None and text.strip() and not is_limit_message(text):
        return AnswerResult(answer=text.strip(), citations=[], status="ok")
    if messages is not None:
        return AnswerResult(answer=None, citations=[], status="no_answer")
    return None


#: How LangChain's call-limit middleware ends a run (``ModelCallLimitMiddleware`` /
#: ``ToolCallLimitMiddleware`` with ``exit_behavior="end"``): its last AI message
#: reports the limit. That is the agent giving up, not an answer.
_LIMIT_MESSAGE = re.compile(r"^(?:Model call limits exceeded:|(?:'[^']*' tool|Tool) call limit reached:)")


def is_limit_message(text: str) -> bool:
    """True when ``text`` is a LangChain call-limit notice rather than an answer."""
    return bool(_LIMIT_MESSAGE.match(text.strip()))
