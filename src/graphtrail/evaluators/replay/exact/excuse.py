"""The factory route's excuse, indexed once: which withheld entities the ablated data itself still shows.

A withheld entity that reaches the model is no leak when the ablated data shows it
(a visible passage naming a hidden colleague, read from the data as given). Reading
every string of the ablated data for names and description spans, per condition,
costs the data's size every time (seconds at 100k edges). Here the catalogue's
strings are normalised once into one searchable text (their words, one string per
line). A condition asks only about the entities the model-input check found: for
each, the strings that hold one of its phrases (a name, an alias, its id, a span of
its description: the phrases the check itself reads) are found by substring search,
the filtered view says whether each string is still there (a record's name,
description or alias as the view shows it, a text unit the view keeps, a relation
whose ends are both visible), and the check's own reader decides what it shows:
what reading every string of the view would give, at the cost of those entities'
mentions. Strings only the user's own data holds (attributes and cells the catalogue
does not carry, :func:`data_strings`) are read per condition, each distinct string
analysed once (:class:`Analyses`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from typing import Any

from ....kg.views import GraphFilter
from ..filtered.leaks import EntityNames, _leaked
from ..filtered.textleaks import words

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
    """The catalogue's strings, normalised once into one searchable text (the module docstring)."""

    def __init__(self, kg: Any) -> None:
        self._places: list[tuple[Any, ...]] = []  # (kind, owner or unit id [, target], text)
        for record in kg.entities():
            self._place(record.name, ("name", record.id))
            self._place(record.description, ("description", record.id))
            for alias in record.aliases:
                self._place(alias, ("alias", record.id))
        for uid, unit in kg.text_units.items():
            self._place(unit.text, ("unit", uid))
        described = getattr(kg, "described_relations", None)  # a KnowledgeGraph skips its undescribed edges unbuilt
        for relation in described() if described is not None else kg.relations():
            if relation.description:
                self._place(relation.description, ("relation", relation.source, relation.target))
        # each string's words (as names and spans are read), one per line: a phrase's hits are found by
        # substring search (a superset of its whole-word hits, which the reader then decides)
        lines = [" ".join(words(place[-1])) for place in self._places]
        self._blob = "\n".join(lines)
        self._starts: list[int] = []
        at = 0
        for line in lines:
            self._starts.append(at)
            at += len(line) + 1
        self._phrases: tuple[tuple[int, int], dict[str, list[str]]] | None = None

    def _place(self, text: str | None, where: tuple[Any, ...]) -> None:
        if text:
            self._places.append((*where, text))

    def _phrases_of(self, names: EntityNames) -> dict[str, list[str]]:
        """entity -> every phrase (name, alias, id, description span) that could show it, in the blob's words."""
        version = _version(names)
        if self._phrases is None or self._phrases[0] != version:
            by_entity: dict[str, list[str]] = {}
            for phrases in names.index():
                for phrase, match in phrases.items():
                    for eid, _ in match:
                        by_entity.setdefault(eid, []).append(phrase.casefold())
            for span, owners in names.spans.index().items():
                for eid in owners:
                    by_entity.setdefault(eid, []).append(span)
            self._phrases = (version, by_entity)
        return self._phrases[1]

    def _candidates(self, phrases: list[str]) -> set[int]:
        """Indices of the strings whose words hold one of ``phrases`` as a substring."""
        found: set[int] = set()
        blob, starts = self._blob, self._starts
        for phrase in dict.fromkeys(phrases):
            if not phrase:
                continue
            at = blob.find(phrase)
            while at >= 0:
                i = bisect.bisect_right(starts, at) - 1
                found.add(i)
                nxt = starts[i + 1] if i + 1 < len(starts) else len(blob)
                at = blob.find(phrase, nxt)  # the next string: this one is read whole anyway
        return found

    def shown(self, view: Any, graph_filter: GraphFilter, analyses: Analyses, entities: Iterable[str]) -> set[str]:
        """Which of ``entities`` (withheld by ``graph_filter``) the strings ``view`` still holds show."""
        withheld = graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked
        phrases = self._phrases_of(analyses.names)
        found: set[str] = set()
        for eid in entities:
            if eid in found or eid not in withheld:
                continue
            for i in self._candidates(phrases.get(eid, [])):
                place = self._places[i]
                if _still_there(view, graph_filter, place):
                    shown = shows(analyses.of(place[-1]), graph_filter, withheld)
                    found |= shown
                    if eid in shown:
                        break
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
