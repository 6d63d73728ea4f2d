"""What a user's tool returns under an ablation: output filtering rules, per tool or generic.

graphtrail's graph tools read :func:`~graphtrail.agents.active_filter` themselves.
A user's tools do not, so the evaluator filters their *outputs* inside the tool
run, before LangChain's ``on_tool_end`` fires: the model and the tracer both see
the filtered response, exactly as if the graph were different.

Three routes, in the order :func:`filter_tool_output` tries them:

1. a per-tool filter registered with :func:`register_tool_filter`
   (``fn(output, graph_filter) -> output``): exact, for any output shape;
2. the generic filter (:func:`generic_filter`) for JSON text, dicts and lists
   whose items carry ``id`` / ``entity_id`` / ``node_id`` (entities) or
   ``source``/``target`` (edges); see docs/ablations.md for the exact rules;
3. plain text: the smallest unit naming a hidden entity (by id, or by a name
   the artifact or the baseline revealed) is cut: a table row (Markdown or
   fixed-width, :mod:`.tablefilter`), else a line, sentence or list item; masked
   names are replaced. This is a heuristic; register a filter for plain-text tools.

These are plain functions of (output, filter); :mod:`.tools` runs them inside a
tool call and :mod:`.interception` routes every tool call of a replay run there.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import ToolMessage

from ...._lines import split_lines
from ....kg.relabel import placeholder
from ....kg.views import GraphFilter

__all__ = [
    "register_tool_filter",
    "unregister_tool_filter",
    "filter_tool_output",
    "generic_filter",
    "ToolFilter",
    "NOT_FOUND",
]

ToolFilter = Callable[[Any, GraphFilter], Any]

_REGISTRY: dict[str, ToolFilter] = {}

ID_KEYS = ("id", "entity_id", "node_id", "elementId", "element_id", "@id")
#: Any other key that names its record by value: ``person_id``, ``uid``, ``personId``, ``ID``.
_ID_LIKE = re.compile(r"(?:uid|ID|Id|.*[_\-.@]id|.*[a-z]Id)$", re.IGNORECASE)
#: What names a Cypher-style row with no id key: the tracer then takes its name as its id
#: (tracer/extract.py), so the filter must too.
ROW_NAME_KEYS = ("name", "title")
EDGE_KEYS = (("source", "target"), ("src", "dst"), ("head", "tail"), ("subject", "object"))
NAME_KEYS = ("name", "title", "label")
TEXT_KEYS = ("description", "text", "summary", "content", "aliases", "snippet")
MENTION_KEYS = ("entity_ids", "entities", "mentions")

#: What a lookup of a hidden entity returns through the generic filter.
NOT_FOUND = {"error": "entity not found"}


def register_tool_filter(tool_name: str, fn: ToolFilter) -> None:
    """Filter ``tool_name``'s outputs with ``fn(output, graph_filter)`` during ablation replays."""
    if not callable(fn):
        raise TypeError(f"tool filter for {tool_name!r} must be callable, got {type(fn).__name__}")
    _REGISTRY[tool_name] = fn


def is_registered(tool_name: str) -> bool:
    """Whether ``tool_name`` has a registered filter (which then decides alone what the tool shows)."""
    return tool_name in _REGISTRY


def unregister_tool_filter(tool_name: str) -> None:
    _REGISTRY.pop(tool_name, None)


# ---------------------------------------------------------------- generic filter


def _entity_id(obj: dict[str, Any]) -> str | None:
    for key in ID_KEYS:
        value = obj.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
    for key, value in obj.items():  # by value: whatever the id key is called
        if isinstance(key, str) and _ID_LIKE.match(key) and isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
    return None


def _id_values(obj: dict[str, Any]) -> list[str]:
    """Every value of ``obj`` under an id-like key: a record naming a hidden entity by id, whatever the key, goes."""
    return [str(v) for k, v in obj.items()
            if isinstance(k, str) and (k in ID_KEYS or _ID_LIKE.match(k)) and isinstance(v, (str, int)) and not isinstance(v, bool)]


def _row_ids(obj: dict[str, Any]) -> list[str]:
    """Ids a Cypher-style row names without an id key: its ``name``/``title``, and ``alias.id``/``alias.name`` columns."""
    out = []
    if _entity_id(obj) is None:
        for key in ROW_NAME_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and value:
                out.append(value)
                break
    for key, value in obj.items():
        if isinstance(key, str) and "." in key and key.rpartition(".")[2] in (*ID_KEYS, *ROW_NAME_KEYS):
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                out.append(str(value))
    return out


def _endpoints(obj: dict[str, Any]) -> tuple[str, str] | None:
    for a, b in EDGE_KEYS:
        if a in obj and b in obj:
            return str(obj[a]), str(obj[b])
    return None


def _mentions(obj: dict[str, Any]) -> list[str]:
    for key in MENTION_KEYS:
        value = obj.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return value
    return []


def _drops(obj: Any, f: GraphFilter) -> bool:
    """Whether ``obj`` (an item of a list) must vanish under ``f``."""
    if isinstance(obj, str):
        return obj in f.hidden
    if isinstance(obj, list):
        # a relationship tuple as a driver's record.data() gives it, [node, "TYPE", node] or ["TYPE", node]:
        # one match, which goes whole when a node in it is hidden (a bare "TYPE" left behind is no row)
        return (f.hidden and any(isinstance(x, str) for x in obj)
                and any(isinstance(x, dict) and _drops(x, f) for x in obj))
    if not isinstance(obj, dict):
        metadata = getattr(obj, "metadata", None)  # a retriever's Document: whose it is, its metadata says
        if not isinstance(metadata, dict) or not isinstance(getattr(obj, "page_content", None), str):
            return False
        owner = _entity_id(metadata)  # its text is its owner's: a masked or text-blocked owner's goes whole too
        return _drops(metadata, f) or (owner is not None and (owner in f.masked or owner in f.text_blocked))
    eid = _entity_id(obj)
    if eid is not None and eid in f.hidden:
        return True
    if f.hidden and any(v in f.hidden for v in _id_values(obj)):
        return True
    if f.hidden and any(r in f.hidden for r in _row_ids(obj)):
        return True
    # a Cypher row {"p": {...}, "m": {...}} is one match: it goes when a node in it is hidden
    if f.hidden and eid is None:
        for value in obj.values():
            if isinstance(value, dict) and (_entity_id(value) in f.hidden or any(r in f.hidden for r in _row_ids(value))):
                return True
    ends = _endpoints(obj)
    if ends is not None and (ends[0] in f.hidden or ends[1] in f.hidden):
        return True
    # a text unit (text + the entities it mentions) goes when any mention is filtered
    if any(k in obj for k in ("text", "content")) and eid is None:
        withheld = f.hidden | f.masked | f.text_blocked
        if any(m in withheld for m in _mentions(obj)):
            return True
    return False


def _filter_value(obj: Any, f: GraphFilter) -> Any:
    if isinstance(obj, list):
        return [_filter_value(item, f) for item in obj if not _drops(item, f)]
    if not isinstance(obj, dict):
        return obj
    # a value that is a hidden entity (its id, or a record of it) is a reference to what is gone: the key goes
    out = {k: _filter_value(v, f) for k, v in obj.items()
           if not (f.hidden and ((isinstance(v, str) and v in f.hidden) or (isinstance(v, dict) and _drops(v, f))))}
    eid = _entity_id(obj)
    if eid is not None and eid in f.masked:
        for key in NAME_KEYS:
            if key in out:
                out[key] = placeholder(f, eid, obj.get(key))  # an id that is the name: a digest, not the name
        for key in TEXT_KEYS:
            if key in out:
                out[key] = [] if isinstance(out[key], list) else ""
    elif eid is not None and eid in f.text_blocked:
        for key in TEXT_KEYS:
            if key in out and key != "aliases":
                out[key] = [] if isinstance(out[key], list) else ""
    return out


def generic_filter(output: Any, graph_filter: GraphFilter) -> Any:
    """Filter a JSON-ish tool output: dicts/lists, or a string holding JSON.

    Items whose ``id``/``entity_id``/``node_id`` is hidden are dropped from
    lists, as are edges with a hidden endpoint, bare hidden ids, and text units
    mentioning a filtered entity. Masked entities keep their id but their
    names become the placeholder and their text is emptied; text-blocked ones
    lose their text. A top-level hidden entity becomes :data:`NOT_FOUND`.
    JSON text stays JSON text (one object per line is kept line by line).
    Anything else comes back unchanged.
    """
    f = graph_filter
    if isinstance(output, (dict, list)):
        if isinstance(output, dict) and _drops(output, f):
            return dict(NOT_FOUND)
        return _filter_value(output, f)
    if isinstance(output, str):
        parsed = _parse_json(output)
        if parsed is not None:
            return json.dumps(generic_filter(parsed, f), ensure_ascii=False)
        literal = _parse_repr(output)
        if literal is not None:  # ``return str(rows)``: filtered, and a repr again
            return str(generic_filter(literal, f))
        lines = split_lines(output, keepends=True)
        parsed_lines = [_parse_json(line) for line in lines]
        if any(p is not None for p in parsed_lines):
            kept = []
            for line, p in zip(lines, parsed_lines):
                if p is None:
                    kept.append(line)
                elif not (isinstance(p, dict) and _drops(p, f)):
                    end = "\n" if line.endswith("\n") else ""
                    kept.append(json.dumps(_filter_value(p, f), ensure_ascii=False) + end)
            return "".join(kept)
    return output


def _parse_repr(text: str) -> Any:
    """A Python repr of a list/dict, as the tracer reads it (``ast.literal_eval``, never ``eval``)."""
    from ....tracer.extract import _parse_repr as parse

    value = parse(text)
    if isinstance(value, tuple):
        value = list(value)
    return value if isinstance(value, (dict, list)) else None


def _parse_json(text: str) -> Any:
    text = text.strip()
    if not text or text[0] not in "[{":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def _artifact_names(artifact: Any) -> dict[str, str]:
    names: dict[str, str] = {}

    def visit(obj: Any) -> None:
        if isinstance(obj, list):
            for item in obj:
                visit(item)
        elif isinstance(obj, dict):
            eid = _entity_id(obj)
            name = obj.get("name")
            if eid is not None and isinstance(name, str) and name:
                names[eid] = name
            for value in obj.values():
                visit(value)

    visit(artifact)
    return names


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _cut(line: str, names_hidden: Any) -> str:
    """``line`` without its smallest units naming a hidden entity: sentences, then "; "/", " items after a "head: "."""
    body = line.rstrip("\r\n")
    end = line[len(body):]
    kept_sentences = []
    for sentence in _SENTENCE_END.split(body):
        if not names_hidden(sentence):
            kept_sentences.append(sentence)
            continue
        head, colon, rest = sentence.partition(": ")
        if not colon:
            head, rest = "", sentence
        if names_hidden(head):
            continue  # the sentence is about the hidden entity: it goes whole
        stop = rest[-1] if rest[-1:] in ".!?" else ""
        rest = rest[: len(rest) - len(stop)]
        sep = "; " if "; " in rest else ", "
        items = [item for item in rest.split(sep) if not names_hidden(item)]
        if items:
            kept_sentences.append(head + colon + sep.join(items) + stop)
    kept = " ".join(kept_sentences)
    return kept + end if kept.strip() else ""


def _filter_plain_text(text: str, f: GraphFilter, names: Mapping[str, str], known: Any = None,
                       gone_pages: list[str] | None = None) -> str:
    """Heuristic for free text: cut each hidden entity's attribution unit (its Document, its passage), then the
    smallest unit naming a hidden entity (table row, line, sentence, list item); mask names."""
    def pattern(term: str) -> re.Pattern[str]:
        return re.compile(rf"(?<!\w){re.escape(term)}(?!\w)")

    hidden_terms = [pattern(t) for e in f.hidden for t in (e, names.get(e)) if t]
    if known is not None and f.hidden:
        from .withheld import without_kept_descriptions

        def names_hidden(part: str) -> bool:  # a kept entity's own description naming a hidden one is no reason to cut
            return any(p.search(part) for p in hidden_terms) and any(
                p.search(without_kept_descriptions(part, f, known)) for p in hidden_terms)
    else:
        def names_hidden(part: str) -> bool:
            return any(p.search(part) for p in hidden_terms)

    from .passages import cut_passages
    from .tablefilter import table_lines

    text = _without_passages(text, gone_pages or [], hidden_terms)
    out = cut_passages(text, f, names, known)  # passages each headed by one entity: their unit is the passage
    if out is None:
        table = table_lines(text, f, names) or {}  # a table's unit is its row: dropped whole, header kept
        out = "".join(("" if table[i] else line) if i in table else (_cut(line, names_hidden) if names_hidden(line) else line)
                      for i, line in enumerate(split_lines(text, keepends=True)))
    for eid in f.masked:
        name = names.get(eid)
        if name:
            out = pattern(name).sub(placeholder(f, eid, name).replace("\\", "\\\\"), out)
    return out


_BLOCKS = re.compile(r"(\n[ \t]*\n+)")
_ID_MENTION = re.compile(r"\(\s*(?:id|element_?id|node_?id)\s*[:=][^)]*\)", re.IGNORECASE)


def _without_passages(text: str, gone_pages: list[str], hidden_terms: list[re.Pattern[str]]) -> str:
    """``text`` without the passages of hidden entities: each hidden Document's text, and each blank-line-separated
    passage whose heading (first line) is a hidden entity's name or id and nothing else.

    A passage is its entity's attribution unit: with the entity gone, its other
    lines ("Colleague: Otto Hahn") go with it, not only the line naming it.
    """
    original = text
    for page in sorted({p for p in gone_pages if p.strip()}, key=len, reverse=True):
        text = text.replace(page, "")
    if hidden_terms and "\n" in text:
        parts = _BLOCKS.split(text)
        kept: list[str] = []
        for i in range(0, len(parts), 2):
            block = parts[i]
            lines = block.strip("\n").splitlines()
            if len(lines) >= 2 and _is_heading_of_hidden(lines[0], hidden_terms):
                continue
            kept.append(block)
        text = "\n\n".join(b for b in kept if b.strip()) if len(kept) < (len(parts) + 1) // 2 else text
    if text != original:
        text = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
    return text


def _is_heading_of_hidden(line: str, hidden_terms: list[re.Pattern[str]]) -> bool:
    """Whether ``line`` names a hidden entity and says nothing else: ``Lise Meitner (id: p1)``, ``## Lise Meitner``."""
    if not any(p.search(line) for p in hidden_terms):
        return False
    rest = _ID_MENTION.sub(" ", line)
    for p in hidden_terms:
        rest = p.sub(" ", rest)
    return not re.search(r"\w", rest)


def _document_pages(artifact: Any, f: GraphFilter) -> list[str]:
    """The texts of the retriever Documents in ``artifact`` that go (:func:`_drops`: a hidden entity's by a metadata
    value; a masked or text-blocked owner's)."""
    if f.is_empty or not isinstance(artifact, (list, tuple)):
        return []
    return [d.page_content for d in artifact if not isinstance(d, (dict, list, str)) and _drops(d, f)]


def _filter_content(content: Any, f: GraphFilter, names: Mapping[str, str], known: Any = None,
                    gone_pages: list[str] | None = None) -> Any:
    filtered = generic_filter(content, f)
    if isinstance(content, str) and filtered is content:
        return _filter_plain_text(content, f, names, known, gone_pages)
    return filtered


def filter_tool_output(
    tool_name: str,
    output: Any,
    graph_filter: GraphFilter | None,
    *,
    content_and_artifact: bool = False,
    names: Mapping[str, str] | None = None,
    known: Any = None,
) -> Any:
    """What ``tool_name`` should return under ``graph_filter`` (registered filter, else generic).

    ``names`` (entity id -> name, e.g. what the baseline run saw) lets the
    plain-text heuristic drop lines that name a hidden entity without its id.
    ``known`` (the evaluation's :class:`~.leaks.EntityNames`) gives the
    descriptions: withheld ones are removed wherever they appear verbatim
    (:mod:`.withheld`), kept ones are no reason to cut.
    """
    if graph_filter is None or graph_filter.is_empty:
        return output
    registered = _REGISTRY.get(tool_name)
    if registered is not None:
        return registered(output, graph_filter)
    known_names = dict(names or {})
    if known is not None:  # withheld text goes wherever it appears, before names are masked inside it
        from .withheld import remove_withheld

        output = remove_withheld(output, graph_filter, known)
    if graph_filter.masked:  # masked names go everywhere, nested values included (names.mask_everywhere)
        from .names import mask_everywhere

        artifact = output.artifact if isinstance(output, ToolMessage) else (
            output[1] if content_and_artifact and isinstance(output, tuple) and len(output) == 2 else None)
        output = mask_everywhere(output, graph_filter, {**_artifact_names(artifact), **known_names})
    if isinstance(output, ToolMessage):
        names = {**known_names, **_artifact_names(output.artifact)}
        return output.model_copy(
            update={
                "content": _filter_content(output.content, graph_filter, names, known,
                                           _document_pages(output.artifact, graph_filter)),
                "artifact": generic_filter(copy.deepcopy(output.artifact), graph_filter),
            }
        )
    if content_and_artifact and isinstance(output, tuple) and len(output) == 2:
        content, artifact = output
        names = {**known_names, **_artifact_names(artifact)}
        return (_filter_content(content, graph_filter, names, known, _document_pages(artifact, graph_filter)),
                generic_filter(artifact, graph_filter))
    return _filter_content(output, graph_filter, known_names, known)
