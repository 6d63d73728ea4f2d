"""The model-input check: did a hidden (or masked) entity reach the model in an ablation run?

The filter works on tool outputs by reading their shape; this check does not
trust it. It reads what the model was actually given (:mod:`.seen`) and looks
for each hidden entity's id, name and aliases, and each masked entity's name
and aliases (a mask keeps the id by design), as whole words after Unicode
normalisation (NFKD, accents dropped, case folded). A hit is a leak, reported
by the channel it came through:

- ``tool 'name'``: a tool that ran in this run returned it (the filter missed it);
- ``cached tool result 'name'``: a tool message no tool run of this run produced
  (a caching middleware, or a tool run the evaluation could not see);
- ``system prompt``: e.g. a ``@dynamic_prompt`` that writes graph facts;
- ``message from a node that is not a tool``: any other message a node added;
- ``prompt``: a completion model's prompt.

Not read: the model's own messages (what it wrote, including tool-call
arguments, is not graph access), the question text, and in a tool message the
tool call's own string arguments (a tool answering "no film named Inception"
echoes the question, it reveals nothing). Artifacts the model never reads are
not read either, nor (for names) a visible entity's own description, in any
shape (a ``"description"`` field, a line, a cell: :mod:`.withheld`).
A withheld entity's description is looked for too (:mod:`.textleaks`): an
8-word span of it, or the whole of a 3- to 7-word one, in what the model was
given is a leak of that entity. Ids shorter than
two characters or without a letter, names shorter than three characters and bare
numbers are not matched: they would hit counts and years. Codes and short names
match with their case. Text is read as words against one index of every known
phrase (KG names and aliases, baseline-revealed names, ids), longest phrase first,
so a visible name containing a hidden one ("Chinese Yuan", "Chinese") is read as
the visible one; a name that a kept entity also bears is no leak.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ....kg.views import GraphFilter
from ..seen import SeenInputs
from .textleaks import DescriptionSpans
from .withheld import without_kept_descriptions

__all__ = ["EntityNames", "input_leaks", "names_of", "normalize", "describe_leaks"]

SYSTEM = "system prompt"
NODE = "message from a node that is not a tool"
PROMPT = "prompt"


def normalize(text: str, fold: bool = True) -> str:
    """NFKD, combining marks dropped, whitespace runs made one space; case folded unless ``fold=False``."""
    decomposed = unicodedata.normalize("NFKD", text)
    if not decomposed.isascii():
        decomposed = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join((decomposed.casefold() if fold else decomposed).split())


_WORD = re.compile(r"\w+")
#: Texts whose matches are kept (the system prompt and the baseline's first tool outputs recur in every run).
_TEXT_CACHE_SIZE = 20_000
#: Longest name looked up, in words.
_MAX_WORDS = 8


def _id_term(eid: str) -> bool:
    return len(eid) >= 2 and any(c.isalpha() for c in eid)


def _name_term(name: str) -> bool:
    return len(name) >= 3 and not name.replace(".", "").replace(",", "").isdigit()


def _exact(name: str) -> bool:
    """Codes and short names ("AND", "US", "Kim") are matched with their case: "and" is no leak of Andorra."""
    return len(name) < 4 or (name.isupper() and len(name) <= 5)


def _key(text: str, fold: bool) -> str:
    return " ".join(_WORD.findall(normalize(text, fold)))


Match = tuple[tuple[str, bool], ...]  # the entities one matched phrase names: (entity id, matched by its id)


class EntityNames:
    """Names and aliases of entities, from the KG (when given) and from what baseline runs revealed.

    Holds one index, phrase (normalised words) -> the entities it names, built once per
    evaluation, and the matches of every text already read: each distinct text is read
    once however many runs were given it, and the work does not grow with the hidden set.
    """

    def __init__(self, kg: Any = None, revealed: Mapping[str, Iterable[str]] | None = None,
                 descriptions: Mapping[str, Iterable[str]] | None = None) -> None:
        self.kg = kg
        self.revealed = {k: tuple(v) for k, v in (revealed or {}).items()}
        #: descriptions (the KG's, and any the caller knows) that withheld text must not show up as
        self.spans = DescriptionSpans(kg, descriptions)
        self._index: tuple[dict[str, Match], dict[str, Match]] | None = None
        # first word of an indexed phrase -> its most words (folded, exact): most words start no phrase,
        # so reading a text tries phrase widths only where one can start
        self._widths: tuple[dict[str, int], dict[str, int]] = ({}, {})
        self._texts: dict[str, tuple[Match, ...]] = {}
        self._ids: set[str] = set()  # ids in the index
        self._shared = False  # the index is another reader's too (:meth:`sharing`): copy it before adding
        self._grown = False  # ensure() added ids

    @property
    def kg_only(self) -> bool:
        """Whether this reads the KG's names alone: nothing revealed, no descriptions given, no ids added."""
        return self.kg is not None and not self.revealed and not self.spans.extra and not self._grown

    def sharing(self) -> "EntityNames":
        """A second reader of the same names on this one's index (built once, not twice), and its read texts.

        Either copies the index before :meth:`ensure` adds ids to it, so neither ever reads the other's
        additions: a reader of the KG's names alone (the factory route's recognition by value) stays that.
        """
        self.index()
        twin = EntityNames.__new__(EntityNames)
        twin.kg, twin.revealed, twin.spans = self.kg, self.revealed, self.spans
        twin._index, twin._widths, twin._texts, twin._ids = self._index, self._widths, self._texts, self._ids
        twin._grown = self._grown
        self._shared = twin._shared = True
        return twin

    def ensure(self, ids: Iterable[str]) -> None:
        """Index ids no KG or baseline named (e.g. an entity only an ablation run met), so they are looked for too."""
        self.index()
        missing = [e for e in ids if e not in self._ids and _id_term(e)]
        if missing:
            assert self._index is not None
            if self._shared:  # copy on write: the other reader keeps the index (and the texts read) as they were
                self._index = (self._index[0], dict(self._index[1]))
                self._widths = (self._widths[0], dict(self._widths[1]))
                self._ids, self._texts, self._shared = set(self._ids), {}, False
            exact, self._grown = self._index[1], True
            for eid in missing:
                key = _key(eid, False)
                exact[key] = (*exact.get(key, ()), (eid, True))
                _note_width(self._widths[1], key)
                self._ids.add(eid)
            self._texts.clear()  # matches read before did not know them

    def of(self, eid: str) -> tuple[str, ...]:
        return names_of(eid, self.revealed.get(eid, ()), self.kg.entity(eid) if self.kg is not None else None)

    def _entities(self) -> Iterable[tuple[str, Sequence[str]]]:
        if self.kg is not None:
            for record in self.kg.entities():
                yield record.id, [record.name, *record.aliases, *self.revealed.get(record.id, ())]
        for eid, names in self.revealed.items():
            if self.kg is None or eid not in self.kg:
                yield eid, names

    def index(self) -> tuple[dict[str, Match], dict[str, Match]]:
        """(case-folded phrases, case-kept phrases) -> the entities they name."""
        if self._index is None:
            folded: dict[str, list[tuple[str, bool]]] = {}
            exact: dict[str, list[tuple[str, bool]]] = {}
            for eid, names in self._entities():
                if _id_term(eid):
                    exact.setdefault(_key(eid, False), []).append((eid, True))
                    self._ids.add(eid)
                for name in names:
                    if isinstance(name, str) and name != eid and _name_term(name):
                        fold = not _exact(name)
                        (folded if fold else exact).setdefault(_key(name, fold), []).append((eid, False))
            self._index = ({k: tuple(dict.fromkeys(v)) for k, v in folded.items() if k},
                           {k: tuple(dict.fromkeys(v)) for k, v in exact.items() if k})
            for phrases, widths in zip(self._index, self._widths):
                for key in phrases:
                    _note_width(widths, key)
        return self._index

    def matches(self, text: str) -> tuple[Match, ...]:
        """Every phrase of ``text`` that names a known entity, longest first at each position (cached per text)."""
        found = self._texts.get(text)
        if found is None:
            found = _read(text, *self.index(), *self._widths)
            if len(self._texts) >= _TEXT_CACHE_SIZE:
                self._texts.clear()
            self._texts[text] = found
        return found


def names_of(eid: str, revealed: Iterable[Any], record: Any) -> tuple[str, ...]:
    """An entity's names: those the baselines revealed (in order), then its KG record's name and aliases, once each."""
    names = [*revealed, *((record.name, *record.aliases) if record is not None else ())]
    return tuple(dict.fromkeys(n for n in names if isinstance(n, str) and n and n != eid))


def _note_width(widths: dict[str, int], key: str) -> None:
    words = key.split(" ")
    widths[words[0]] = max(widths.get(words[0], 0), min(len(words), _MAX_WORDS))


def _read(text: str, folded: Mapping[str, Match], exact: Mapping[str, Match],
          folded_widths: Mapping[str, int], exact_widths: Mapping[str, int]) -> tuple[Match, ...]:
    kept = _WORD.findall(normalize(text, fold=False))
    low = [w.casefold() for w in kept]
    out: list[Match] = []
    i, n = 0, len(kept)
    while i < n:
        widest = max(folded_widths.get(low[i], 0), exact_widths.get(kept[i], 0))
        for width in range(min(widest, n - i), 0, -1):
            hit = folded.get(" ".join(low[i:i + width])) or exact.get(" ".join(kept[i:i + width]))
            if hit:
                out.append(hit)
                i += width
                break
        else:
            i += 1
    return tuple(out)


def _leaked(match: Match, graph_filter: GraphFilter) -> set[str]:
    """The hidden/masked entities one matched phrase gives away.

    An id gives its entity away when hidden. A name gives it away when hidden or
    masked, unless an entity the condition keeps bears the same name (the model
    may be reading about that one: the ablated graph shows the name too).
    """
    hidden, masked = graph_filter.hidden, graph_filter.masked
    by_id = {eid for eid, is_id in match if is_id and eid in hidden}
    by_name = [eid for eid, is_id in match if not is_id]
    if by_name and all(eid in hidden or eid in masked for eid in by_name):
        by_id.update(by_name)
    return by_id


#: A visible entity's own description is its property: deleting another entity does
#: not rewrite it, so a name in it is no leak (JSON ``"description": "..."`` fields).
_DESCRIPTION = re.compile(r'"description"\s*:\s*"(?:[^"\\]|\\.)*"')


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: the text ones, and anything else as JSON
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                parts.append(_dumps(block))
        return "\n".join(parts)
    return _dumps(content)


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _string_args(args: Any) -> list[str]:
    out: list[str] = []
    stack = [args]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if len(value) >= 3:
                out.append(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return out


def _channels(seen: SeenInputs, question: str) -> Iterable[tuple[str, str]]:
    """(channel, text) of every distinct message the model was given, minus what it cannot learn from."""
    done: set[tuple[str, str]] = set()
    for messages in seen.messages:
        call_args: dict[str, list[str]] = {}
        for message in messages:
            kind = getattr(message, "type", None)
            if kind in ("ai", "AIMessageChunk"):
                for call in getattr(message, "tool_calls", None) or []:
                    if call.get("id"):
                        call_args[call["id"]] = _string_args(call.get("args"))
                continue
            text = _text(getattr(message, "content", message))
            if kind == "tool":
                name = getattr(message, "name", None) or "tool"
                call_id = getattr(message, "tool_call_id", None)
                ran = (call_id in seen.tool_call_ids) or seen.tool_names.get(name, 0) > 0
                channel = f"tool '{name}'" if ran else f"cached tool result '{name}'"
                for arg in sorted(call_args.get(call_id, ()), key=len, reverse=True):
                    text = text.replace(arg, " ")
            elif kind == "system":
                channel = SYSTEM
            else:
                channel = NODE
            if question:
                text = text.replace(question, " ")
            if text.strip() and (channel, text) not in done:
                done.add((channel, text))
                yield channel, text
    for prompt in seen.prompts:
        text = prompt.replace(question, " ") if question else prompt
        if (PROMPT, text) not in done:
            done.add((PROMPT, text))
            yield PROMPT, text


def input_leaks(seen: SeenInputs, graph_filter: GraphFilter, names: EntityNames, question: str) -> dict[str, list[str]]:
    """``{channel: [entity ids]}`` of the withheld entities the model was given in this run; ``{}`` if none.

    Hidden ones by id, name or alias, masked ones by name or alias, and every withheld
    (hidden, masked, text-blocked) one by a span of its description (:mod:`.textleaks`).
    """
    withheld = graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked
    if not withheld:
        return {}
    by_name = bool(graph_filter.hidden or graph_filter.masked)
    if by_name:
        names.ensure(graph_filter.hidden)
    found: dict[str, set[str]] = {}
    for channel, text in _channels(seen, question):
        hits = names.spans.leaked(text, withheld, question)
        if by_name:
            if '"description"' in text:
                text = _DESCRIPTION.sub(" ", text)
            by_names = _name_hits(text, graph_filter, names)
            if by_names:  # read again without the kept entities' own descriptions, in any shape (.withheld)
                stripped = without_kept_descriptions(text, graph_filter, names)
                if stripped != text:
                    by_names = _name_hits(stripped, graph_filter, names)
            hits |= by_names
        if hits:
            found.setdefault(channel, set()).update(hits)
    return {channel: sorted(ids) for channel, ids in sorted(found.items())}


def shown_in(texts: Iterable[str], graph_filter: GraphFilter, names: EntityNames) -> set[str]:
    """The withheld entities ``texts`` name or quote, read as :func:`input_leaks` reads a channel but without
    setting aside kept entities' own descriptions: what a data source itself shows (the factory route's excuse)."""
    withheld = graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked
    if not withheld:
        return set()
    by_name = bool(graph_filter.hidden or graph_filter.masked)
    if by_name:
        names.ensure(graph_filter.hidden)
    found: set[str] = set()
    for text in dict.fromkeys(t for t in texts if t):
        found |= names.spans.leaked(text, withheld, "")
        if by_name:
            found |= _name_hits(text, graph_filter, names)
    return found


def _name_hits(text: str, graph_filter: GraphFilter, names: EntityNames) -> set[str]:
    hits: set[str] = set()
    for match in names.matches(text):
        hits |= _leaked(match, graph_filter)
    return hits


def describe_leaks(leaks: Mapping[str, Iterable[str]]) -> str:
    """``"tool 'search' (m1, d1); system prompt (d1)"``."""
    return "; ".join(f"{channel} ({', '.join(sorted(ids))})" for channel, ids in sorted(leaks.items()))
