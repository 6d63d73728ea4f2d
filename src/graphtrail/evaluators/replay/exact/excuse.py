"""The factory route's excuse, indexed once: which withheld entities the ablated data itself still shows.

A withheld entity that reaches the model is no leak when the ablated data shows it
(a visible passage naming a hidden colleague, read from the data as given). Reading
the whole ablated data for names and description spans per condition costs the
data's size every time (seconds at 100k edges). Here the catalogue's strings are read
once: for each string, the entities it could show (:class:`~..filtered.leaks.EntityNames`
matches and :class:`~..filtered.textleaks.DescriptionSpans` spans), kept by entity.
A condition then reads only the strings that could show one of its withheld
entities, asks the filtered view whether each is still there (a record's name,
description or alias as the view shows it; a text unit the view keeps; a relation
whose ends are both visible) and applies the condition's own rules to what they show:
exactly what reading every string of the view would give, at the cost of the
withheld entities' mentions. Strings only the user's own data holds (attributes and
cells the catalogue does not carry, :func:`data_strings`) are still read per
condition, each string analysed once (:class:`Analyses`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ....kg.views import GraphFilter
from ..filtered.leaks import EntityNames, _leaked

__all__ = ["Analyses", "CatalogueShown", "data_strings"]

#: (name matches, description spans, every entity either could show) of one string.
Analysis = tuple[tuple[Any, ...], tuple[tuple[str, frozenset[str]], ...], frozenset[str]]
_NOTHING: Analysis = ((), (), frozenset())

#: At most this many strings are read from the ablated data for the excuse (a large store is read in part).
_MAX_STRINGS = 200_000


def _version(names: EntityNames) -> tuple[int, int]:
    return id(names), len(names._ids)  # ensure() adds ids: strings may then match more


class Analyses:
    """Each distinct string read once against ``names``: what it could show, whatever the condition."""

    def __init__(self, names: EntityNames) -> None:
        self.names, self.version = names, _version(names)
        self._seen: dict[str, Analysis] = {}

    def of(self, text: str) -> Analysis:
        found = self._seen.get(text)
        if found is None:
            matches = self.names.matches(text)
            spans = self.names.spans.found(text)
            could = frozenset(e for m in matches for e, _ in m) | frozenset(o for _, owners in spans for o in owners)
            found = (matches, spans, could) if could else _NOTHING
            if len(self._seen) >= _MAX_STRINGS:
                self._seen.clear()
            self._seen[text] = found
        return found


def shows(analysis: Analysis, graph_filter: GraphFilter, withheld: frozenset[str]) -> set[str]:
    """The withheld entities one analysed string shows under ``graph_filter`` (as ``leaks.shown_in`` reads it)."""
    matches, spans, could = analysis
    if not (could & withheld):
        return set()
    out: set[str] = set()
    for _, owners in spans:
        if owners <= withheld:
            out |= owners
    if graph_filter.hidden or graph_filter.masked:
        for match in matches:
            out |= _leaked(match, graph_filter)
    return out


class CatalogueShown:
    """The catalogue's strings by the entities they could show, read once (the module docstring)."""

    def __init__(self, kg: Any, analyses: Analyses) -> None:
        self.analyses = analyses
        self._where: dict[str, list[tuple[Any, ...]]] = {}
        for record in kg.entities():
            self._add(record.name, ("name", record.id))
            self._add(record.description, ("description", record.id))
            for alias in record.aliases:
                self._add(alias, ("alias", record.id))
        for uid, unit in kg.text_units.items():
            self._add(unit.text, ("unit", uid))
        for relation in kg.relations():
            if relation.description:
                self._add(relation.description, ("relation", relation.source, relation.target))

    def _add(self, text: str | None, where: tuple[Any, ...]) -> None:
        if not text:
            return
        analysis = self.analyses.of(text)
        for eid in analysis[2]:
            self._where.setdefault(eid, []).append((*where, text))

    def shown(self, view: Any, graph_filter: GraphFilter) -> set[str]:
        """The withheld entities the strings ``view`` (the catalogue under ``graph_filter``) still holds show."""
        withheld = graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked
        places = {p for eid in withheld for p in self._where.get(eid, ())}
        found: set[str] = set()
        for place in places:
            text = place[-1]
            if _still_there(view, graph_filter, place):
                found |= shows(self.analyses.of(text), graph_filter, withheld)
        return found


def _still_there(view: Any, graph_filter: GraphFilter, place: tuple[Any, ...]) -> bool:
    kind, text = place[0], place[-1]
    if kind == "unit":
        return view.text_unit(place[1]) is not None
    if kind == "relation":
        return place[1] not in graph_filter.hidden and place[2] not in graph_filter.hidden
    record = view.entity(place[1])
    if record is None:
        return False
    if kind == "name":
        return record.name == text
    if kind == "description":
        return record.description == text
    return text in record.aliases


def data_strings(data: Any, limit: int = _MAX_STRINGS) -> list[str]:
    """Every string the ablated data holds, whatever its type: Documents' text and metadata, mapping and
    sequence values, a networkx graph's node and edge attributes, a DataFrame's cells.

    What the agent can read from the data it was built on is never a leak, so the model-input
    check excuses it; the catalogue KG alone misses text that only the data's own records carry
    (a visible passage that names a hidden entity).
    """
    out: list[str] = []
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack and len(out) < limit:
        obj, depth = stack.pop()
        if isinstance(obj, str):
            out.append(obj)
        elif depth > 6 or obj is None or isinstance(obj, (int, float, bool, bytes)):
            continue
        elif hasattr(obj, "page_content"):  # a LangChain Document
            stack += [(obj.page_content, depth + 1), (getattr(obj, "metadata", None), depth + 1)]
        elif isinstance(obj, Mapping):
            stack += [(v, depth + 1) for v in obj.values()]
        elif hasattr(obj, "nodes") and hasattr(obj, "edges") and callable(getattr(obj, "nodes", None)):  # networkx
            stack += [(attrs, depth + 1) for _, attrs in obj.nodes(data=True)]
            stack += [(str(n), depth + 1) for n in obj.nodes]
            stack += [(e[-1], depth + 1) for e in obj.edges(data=True)]
        elif hasattr(obj, "to_numpy") and hasattr(obj, "columns"):  # a pandas DataFrame
            out += [str(v) for v in obj.to_numpy().ravel() if isinstance(v, str)][: limit - len(out)]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack += [(v, depth + 1) for v in obj]
        elif hasattr(obj, "__dataclass_fields__"):  # EntityTables and the like
            stack += [(getattr(obj, f), depth + 1) for f in obj.__dataclass_fields__]
    return out


def data_shown(strings: Iterable[str], analyses: Analyses, graph_filter: GraphFilter) -> set[str]:
    """The withheld entities ``strings`` (the ablated data's own) show, each distinct string analysed once."""
    withheld = graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked
    found: set[str] = set()
    for text in dict.fromkeys(t for t in strings if t):
        found |= shows(analyses.of(text), graph_filter, withheld)
    return found
