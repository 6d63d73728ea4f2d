"""``ablated(data, graph_filter)``: the user's own data with a condition's entities really gone.

One definition of each ablation (docs/ablations.md, "What an ablation does"), for every type:

- **hidden**: the entity is gone: its record, its edges, and every text attributed to it
  (a Document keyed by it goes whole).
- **masked**: id and edges stay; its name becomes ``"[masked entity] <id>"``, its text is
  withheld, and a lookup by its real name finds nothing.
- **text_blocked**: id, name, type and edges stay; its text is withheld.

Where the type allows, the result is a view or an overlay over ``data`` (nothing is
copied, the user's data is never changed): graphtrail's ``KnowledgeGraph`` (its own
filtered view), networkx graphs (:mod:`.nxgraph`), a ``dict`` of id -> record (a
read-only mapping overlay). A list of LangChain Documents is a new list of the same
Document objects; pandas tables are row selections (:mod:`.frames`).

Any other type plugs in with :func:`register_ablation`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ....kg.graph import KnowledgeGraph
from ....kg.relabel import keyed_by_name, masked_key
from ....kg.views import GraphFilter
from ...errors import EvaluationError

__all__ = ["Keys", "ablated", "register_ablation", "catalogue", "UnsupportedData", "withheld_text"]


class UnsupportedData(EvaluationError):
    """``ablated`` was given a type it has no ablation for (register one with ``register_ablation``)."""


@dataclass(frozen=True)
class Keys:
    """Where an entity's id, name and text live in the user's records (attributes, metadata keys, columns)."""

    id: str = "id"
    name: str = "name"
    text: tuple[str, ...] = ("description", "text", "summary")
    type: str = "type"


Ablation = Callable[..., Any]
Catalogue = Callable[..., KnowledgeGraph]


@dataclass(frozen=True)
class _Entry:
    ablate: Ablation
    catalogue: Catalogue | None
    with_keys: bool


_REGISTRY: dict[type, _Entry] = {}
_lock = threading.Lock()


def register_ablation(data_type: type, fn: Ablation, *, catalogue: Catalogue | None = None) -> None:
    """Teach :func:`ablated` a type: ``fn(data, graph_filter) -> data as the condition leaves it``.

    ``catalogue(data) -> KnowledgeGraph`` (optional) lists the entities of such data
    (ids, names, text), so the factory route can recognise them in tool outputs and
    draw controls from them; without it, pass ``kg=`` to ``evaluate`` as well.
    """
    with _lock:
        _REGISTRY[data_type] = _Entry(fn, catalogue, False)


def _builtin(data_type: type, fn: Ablation, catalogue_fn: Catalogue | None) -> None:
    _REGISTRY.setdefault(data_type, _Entry(fn, catalogue_fn, True))


def _entry(data: Any) -> _Entry:
    _load_builtins()
    for attempt in range(2):
        for klass in type(data).__mro__:
            entry = _REGISTRY.get(klass)
            if entry is not None:
                return entry
        from . import frames, nxgraph

        # networkx or pandas imported since the built-ins were loaded: their types are in now
        if attempt or not (nxgraph.register(_builtin) | frames.register(_builtin)):
            break
    raise UnsupportedData(
        f"graphtrail has no ablation for {type(data).__name__}; pass a KnowledgeGraph, a networkx graph, a list of "
        "LangChain Documents, a dict of id -> record or pandas tables, or register one with "
        "graphtrail.evaluators.register_ablation(type, fn)"
    )


def ablated(data: Any, graph_filter: GraphFilter | None, keys: Keys | None = None) -> Any:
    """``data`` as ``graph_filter`` leaves it (``data`` itself when the filter ablates nothing)."""
    if graph_filter is None or graph_filter.is_empty:
        return data
    entry = _entry(data)
    if entry.with_keys:
        return entry.ablate(data, graph_filter, keys or Keys())
    return entry.ablate(data, graph_filter)


def catalogue(data: Any, keys: Keys | None = None) -> KnowledgeGraph | None:
    """The entities of ``data`` as a KnowledgeGraph (ids, names, text, edges); ``None`` if the type has no catalogue."""
    entry = _entry(data)
    if entry.catalogue is None:
        return None
    return entry.catalogue(data, keys or Keys()) if entry.with_keys else entry.catalogue(data)


def withheld(graph_filter: GraphFilter) -> frozenset[str]:
    """Entities whose text the condition withholds: hidden, masked and text-blocked alike."""
    return graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked


def withheld_text(graph_filter: GraphFilter, eid: str) -> bool:
    return eid in graph_filter.hidden or eid in graph_filter.masked or eid in graph_filter.text_blocked


def _text_of(record: Mapping[str, Any], keys: Keys) -> str:
    return "\n".join(str(record[k]) for k in keys.text if isinstance(record.get(k), str) and record.get(k))


# ---------------------------------------------------------------- KnowledgeGraph: its own filtered view


def _kg(data: KnowledgeGraph, graph_filter: GraphFilter, keys: Keys) -> KnowledgeGraph:
    return data.filtered(graph_filter)


def _kg_catalogue(data: KnowledgeGraph, keys: Keys) -> KnowledgeGraph:
    return data


# ---------------------------------------------------------------- dict of id -> record: a read-only overlay


def shown_record(eid: str, record: Any, graph_filter: GraphFilter, keys: Keys,
                 renamed: Mapping[str, str] | None = None) -> Any:
    """One record as the condition shows it: masked renamed and stripped of text, text-blocked stripped of text,
    references to hidden entities dropped from its lists, references to a renamed key (``renamed``: a masked
    entity keyed by its name, old key -> new key) following it. A record that is a string is the entity's text."""
    renamed = renamed or {}
    if isinstance(record, str):
        return "" if withheld_text(graph_filter, eid) else record
    if isinstance(record, (list, tuple)):
        return _shown_references(record, graph_filter.hidden, renamed)
    if not isinstance(record, Mapping):
        return record
    hidden = graph_filter.hidden
    out: dict[str, Any] = {}
    for k, v in record.items():
        if withheld_text(graph_filter, eid) and k in keys.text:
            continue
        if isinstance(v, (list, tuple)):
            v = _shown_references(v, hidden, renamed)
        elif renamed and isinstance(v, str) and v in renamed and k not in keys.text:
            v = renamed[v]
        out[k] = v
    if eid in graph_filter.masked:
        # a key that was its name: the new key; an id that spells the name: a digest (GraphFilter.masked_name)
        out[keys.name] = renamed.get(eid) or graph_filter.masked_name(eid, record.get(keys.name))
        for alias_key in ("aliases", "alias"):
            out.pop(alias_key, None)
    return out


def _shown_references(values: list[Any] | tuple[Any, ...], hidden: frozenset[str],
                      renamed: Mapping[str, str]) -> list[Any] | tuple[Any, ...]:
    if not any(isinstance(x, str) and (x in hidden or x in renamed) for x in values):
        return values
    return type(values)(renamed.get(x, x) if isinstance(x, str) else x
                        for x in values if not (isinstance(x, str) and x in hidden))


def renamed_keys(data: Mapping[Any, Any], graph_filter: GraphFilter, keys: Keys) -> dict[str, str]:
    """The masked entities keyed by their name, old key -> the key the view shows them under.

    Such a key has no id apart from the name (a string key, and no name field or one equal to the key,
    as for networkx nodes): keeping it would keep the name, so ``view["Lise Meitner"]`` would still find
    her. The new key is :func:`~graphtrail.kg.relabel.masked_key` (the placeholder and a digest, which the factory route
    reads back as the entity)."""

    new: dict[str, str] = {}
    for eid in graph_filter.masked:
        if eid in graph_filter.hidden or eid not in data:
            continue
        record = data[eid]
        if keyed_by_name(eid, record if isinstance(record, Mapping) else {}, keys.name):
            key = masked_key(eid)
            while key in data:  # a digest that is some record's key already: lengthen it
                key += "~"
            new[eid] = key
    return new


class AblatedMapping(Mapping[str, Any]):
    """``{id: record}`` without hidden ids, masked and text-blocked records rewritten on read (nothing copied).

    A masked entity keyed by its name is shown under a new key (:func:`renamed_keys`); its old key finds nothing.
    """

    def __init__(self, data: Mapping[str, Any], graph_filter: GraphFilter, keys: Keys) -> None:
        self._data, self._filter, self._keys = data, graph_filter, keys
        self._touched = withheld(graph_filter)
        self._renamed = renamed_keys(data, graph_filter, keys) if graph_filter.masked else {}
        self._old = {v: k for k, v in self._renamed.items()}
        self._rewrite = bool(graph_filter.hidden or self._renamed)

    def __getitem__(self, key: str) -> Any:
        if str(key) in self._filter.hidden or key in self._renamed:
            raise KeyError(key)
        key = self._old.get(key, key)
        record = self._data[key]
        if str(key) in self._touched or (self._rewrite and isinstance(record, (Mapping, list, tuple))):
            return shown_record(str(key), record, self._filter, self._keys, self._renamed)
        return record

    def __iter__(self) -> Iterator[str]:
        hidden, renamed = self._filter.hidden, self._renamed
        return (renamed.get(k, k) for k in self._data if str(k) not in hidden)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        try:
            if key in self._renamed:
                return False
            key = self._old.get(key, key)
        except TypeError:  # an unhashable key is no record
            return False
        return str(key) not in self._filter.hidden and key in self._data


def _mapping(data: Mapping[str, Any], graph_filter: GraphFilter, keys: Keys) -> Mapping[str, Any]:
    return AblatedMapping(data, graph_filter, keys)


def _mapping_catalogue(data: Mapping[str, Any], keys: Keys) -> KnowledgeGraph:
    kg = KnowledgeGraph(name="records")
    for eid, record in data.items():
        if isinstance(record, Mapping):
            kg.add_entity(str(eid), record.get(keys.name), str(record.get(keys.type) or "entity"), _text_of(record, keys),
                          record.get("aliases") or ())
        elif isinstance(record, str):  # {name: text}
            kg.add_entity(str(eid), None, "entity", record)
        else:
            kg.add_entity(str(eid))
    ids = set(kg.entity_ids())
    for eid, record in data.items():
        if isinstance(record, Mapping):
            for k, v in record.items():
                if isinstance(v, (list, tuple)):
                    for x in v:
                        if isinstance(x, str) and x in ids and x != str(eid):
                            kg.add_relation(str(eid), str(k), x)
        elif isinstance(record, (list, tuple)):  # {key: [the keys it links to]}
            for x in record:
                if isinstance(x, str) and x in ids and x != str(eid):
                    kg.add_relation(str(eid), "related_to", x)
    return kg


# ---------------------------------------------------------------- LangChain Documents keyed by an id in metadata


def document_ids(doc: Any, keys: Keys) -> list[str]:
    """The entities a Document belongs to: ``metadata[keys.id]``, one id or a list."""
    value = (getattr(doc, "metadata", None) or {}).get(keys.id)
    if value is None:
        return []
    if isinstance(value, (list, tuple, set, frozenset)):
        return [str(v) for v in value]
    return [str(value)]


def _shown_document(doc: Any, graph_filter: GraphFilter, keys: Keys) -> Any:
    """``None`` when the Document goes (it belongs to a hidden, masked or text-blocked entity), else ``doc``."""
    if any(withheld_text(graph_filter, e) for e in document_ids(doc, keys)):
        return None
    return doc


def _documents(data: list[Any], graph_filter: GraphFilter, keys: Keys) -> list[Any]:
    out = []
    for doc in data:
        shown = _shown_document(doc, graph_filter, keys) if _is_document(doc) else doc
        if shown is not None:
            out.append(shown)
    return out


def _is_document(value: Any) -> bool:
    return hasattr(value, "page_content") and hasattr(value, "metadata")


def _list(data: list[Any], graph_filter: GraphFilter, keys: Keys) -> list[Any]:
    if data and all(_is_document(d) for d in data):
        return _documents(data, graph_filter, keys)
    raise UnsupportedData("a list is ablated only when it holds LangChain Documents (keyed by an id in their metadata)")


def _documents_catalogue(data: Sequence[Any], keys: Keys) -> KnowledgeGraph:
    kg = KnowledgeGraph(name="documents")
    texts: dict[str, list[str]] = {}
    for i, doc in enumerate(data):
        if not _is_document(doc):
            raise UnsupportedData("a list is ablated only when it holds LangChain Documents")
        ids = document_ids(doc, keys)
        meta = doc.metadata or {}
        for eid in ids:
            texts.setdefault(eid, []).append(doc.page_content)
            if eid not in kg:
                name = meta.get(keys.name) if len(ids) == 1 else None
                kg.add_entity(eid, name if isinstance(name, str) else None, str(meta.get(keys.type) or "entity"))
        kg.add_text_unit(str(getattr(doc, "id", None) or f"doc-{i}"), doc.page_content, ids)
    for eid, parts in texts.items():  # the text a condition withholds with the entity, for the model-input check
        record = kg.entity(eid)
        kg.add_entity(eid, record.name if record else None, record.type if record else "entity", "\n".join(parts))
    return kg


_loaded = False


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        _builtin(KnowledgeGraph, _kg, _kg_catalogue)
        _builtin(dict, _mapping, _mapping_catalogue)
        _builtin(list, _list, _documents_catalogue)
        from . import frames, nxgraph

        nxgraph.register(_builtin)
        frames.register(_builtin)
        _loaded = True
