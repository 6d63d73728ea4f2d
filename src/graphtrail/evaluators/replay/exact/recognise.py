"""What a factory-route run visited, recognised by value against the user's data.

The factory route filters nothing, so nothing has to guess an output's shape:
an entity is recognised when a tool output holds one of its values whole.

- any JSON string value or key equal to an entity id (whatever its key:
  ``id``, ``@id``, ``person_id``) or to an entity's unique name;
- a text unit (a LangChain Document's ``page_content``) returned whole, as a
  retriever tool returns it (passages joined by blank lines);
- a line of plain text equal to an id or a unique name;
- a unique name inside free text (a sentence, a passage, a JSON string value),
  in a step where nothing above recognised an entity: read as whole words
  against one index of every name (:class:`~..filtered.leaks.EntityNames`, the
  model-input check's phrase index: one pass over the text's words, longest name
  first at each position, short names and codes with their case), so "Ann" is
  found in "Ann wrote it" and not in "Annual"; an id is read inside text only
  where it is the entity's name (a graph keyed by names). A step whose output
  names its entities by id or whole value is about those: a name inside one of
  their descriptions is a mention, not a visit (as in the filter route, where the
  tracer reads the same output; so both routes agree on an agent both read exactly),
  and the step's own arguments are no visit either ("0 entities match 'Seoul'");
- the key a masked entity keyed by its name is shown under (:func:`.nxgraph.masked_key`).

Names two entities share are skipped (they say neither). Each recognised entity
is added to the step as if the tool had returned it, so visited sets, citation
sources and the conditions built from them are what the tool really showed. A
tool output from which nothing is recognised stays unread (the report names
such tools: :mod:`graphtrail.evaluators.scoring.unread`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ....kg.graph import KnowledgeGraph
from ....kg.views import GraphFilter
from ....tracer.trajectory import Entity, Trajectory
from ..filtered.leaks import EntityNames
from .nxgraph import masked_key, placeholders

__all__ = ["ValueIndex", "recognise"]

#: Longest line read as a whole value (an id or a name).
_LONGEST = 200

#: A passage is looked for where its first this many characters are (shorter ones are searched whole).
_PROBE = 16

#: Above this many passages, a passage is recognised only when it is a whole paragraph of the output.
_SCAN_LIMIT = 2000


def _norm(text: str) -> str:
    return " ".join(text.split())


class ValueIndex:
    """ids, unique names and passages of a catalogue, looked up by whole value; names found in free text too."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        self.ids: set[str] = set(kg.entity_ids())
        names: dict[str, str | None] = {}  # folded name -> its entity, None when two entities bear it
        #: ids that are their entity's name (no other name given): read inside free text as names are
        self.named_ids: set[str] = set()
        self._phrases: EntityNames | None = None
        self._shared: EntityNames | None = None  # the suite's reader of the same names (share_names)
        for eid, labels in _labels(kg):
            if labels and labels[0] == eid and len(eid) >= 3:
                self.named_ids.add(eid)
            for label in labels:
                if label and label != eid and len(label) >= 3:
                    key = _norm(label).casefold()
                    names[key] = eid if names.get(key, eid) == eid else None
        self.names = {k: v for k, v in names.items() if v is not None}
        self.passages: dict[str, tuple[str, ...]] = {}
        self._probes: dict[str, list[tuple[int, str]]] | None = None  # _within's index, built on first use
        self._short: list[tuple[int, str]] = []
        self._order: list[str] = []
        for unit in kg.text_units.values():
            text = _norm(unit.text)
            if text and unit.entity_ids:
                self.passages[text] = tuple(dict.fromkeys((*self.passages.get(text, ()), *unit.entity_ids)))

    def _within(self, norm: str) -> list[str]:
        """The passages ``norm`` holds, in the order of ``passages``: each looked for only where its first
        :data:`_PROBE` characters are (one pass over ``norm``, not one search per passage)."""
        if self._probes is None:
            probes: dict[str, list[tuple[int, str]]] = {}
            for i, passage in enumerate(self.passages):
                if len(passage) >= _PROBE:
                    probes.setdefault(passage[:_PROBE], []).append((i, passage))
            self._short = [(i, p) for i, p in enumerate(self.passages) if len(p) < _PROBE]
            self._order, self._probes = list(self.passages), probes
        hits = {i for i, passage in self._short if passage in norm}
        probes = self._probes
        for at in [at for at in range(len(norm) - _PROBE + 1) if norm[at:at + _PROBE] in probes]:
            hits.update(i for i, passage in probes[norm[at:at + _PROBE]] if norm.startswith(passage, at))
        return [self._order[i] for i in sorted(hits)]

    def share_names(self, names: EntityNames | None) -> None:
        """Read free text on the index of ``names`` when it reads this catalogue's names alone (the suite's, built
        once per evaluation: one index of every name, not two), rather than on one built here."""
        if self._phrases is None and self._shared is None and names is not None and names.kg is self.kg and names.kg_only:
            self._shared = names  # shared when first needed: a run that reads no prose builds no index

    def value(self, text: str, extra: Mapping[str, str] | None = None) -> str | None:
        """The entity a whole value names (its id, else its unique name, else an ``extra`` key), or ``None``."""
        if text in self.ids:
            return text
        found = self.names.get(_norm(text).casefold())
        if found is None and extra:
            found = extra.get(_norm(text))
        return found

    def in_prose(self, text: str, echoed: tuple[str, ...] = ()) -> list[str]:
        """The entities whose unique name ``text`` holds as whole words, in order (one pass over its words).

        ``echoed``: the step's own string arguments, read out first: a tool that answers "0 entities
        match 'Seoul'" or "Answer submitted: Seoul" repeats what it was asked, it shows nothing.
        """
        for arg in echoed:
            if arg and arg in text:
                text = text.replace(arg, " ")
        if self._phrases is None:
            shared = self._shared
            self._phrases = shared.sharing() if shared is not None and shared.kg_only else EntityNames(self.kg)
        found: dict[str, None] = {}
        for match in self._phrases.matches(text):
            ids = {eid for eid, _ in match}
            if len(ids) != 1:  # a name two entities bear says neither
                continue
            eid = next(iter(ids))
            if any(not is_id or eid in self.named_ids for _, is_id in match):
                found.setdefault(eid, None)
        return list(found)

    def in_text(self, text: str, extra: Mapping[str, str] | None = None, prose: bool = True,
                echoed: tuple[str, ...] = ()) -> list[str]:
        """The entities ``text`` holds by value; with ``prose``, when it holds none, the names inside its free text
        (the step's own arguments, ``echoed``, read out)."""
        found: dict[str, None] = {}
        parsed = _json(text)
        if parsed is not None:
            free: list[str] = []
            for value in _strings(parsed):
                whole = self.value(value, extra)
                if whole is not None:
                    found.setdefault(whole, None)
                elif " " in value.strip():
                    free.append(value)
                for eid in self.passages.get(_norm(value), ()):
                    found.setdefault(eid, None)
            if prose and not found:  # free text only: the names it holds
                for value in free:
                    for eid in self.in_prose(value, echoed):
                        found.setdefault(eid, None)
            return list(found)
        if self.passages:
            norm = _norm(text)
            for eid in self.passages.get(norm, ()):
                found.setdefault(eid, None)
            for part in text.split("\n\n"):
                for eid in self.passages.get(_norm(part), ()):
                    found.setdefault(eid, None)
            if len(self.passages) <= _SCAN_LIMIT:
                for passage in self._within(norm):
                    for eid in self.passages[passage]:
                        found.setdefault(eid, None)
        for line in text.splitlines():
            if len(line) > _LONGEST:  # a line that is one id or one name is short
                continue
            line = line.strip().strip("-*•").strip()
            if line:
                eid = self.value(line, extra)
                if eid is not None:
                    found.setdefault(eid, None)
        if prose and not found:
            for eid in self.in_prose(text, echoed):
                found.setdefault(eid, None)
        return list(found)


def _labels(kg: KnowledgeGraph) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(id, (name, *aliases)) of every entity; straight from the store of an unfiltered KnowledgeGraph."""
    store = getattr(kg, "_store", None)
    if getattr(kg, "graph_filter", True) is None and store is not None:
        for eid, name, aliases in zip(store.ids, store.names, store.aliases):
            yield eid, (name, *aliases)
        return
    for record in kg.entities():
        yield record.id, (record.name, *record.aliases)


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for k, v in item.items():
                if isinstance(k, str):
                    yield k
                stack.append(v)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _shown_name(index: ValueIndex, eid: str, graph_filter: GraphFilter | None) -> str | None:
    record = index.kg.entity(eid)
    if graph_filter is not None and eid in graph_filter.masked:
        if record is None:
            return masked_key(eid)  # its id is its name: the placeholder with the id would spell it
        return graph_filter.masked_name(eid, record.name)  # an id that spells the name: the digest
    return record.name if record is not None else None


def _string_args(args: Any) -> tuple[str, ...]:
    """Every string in a tool call's arguments, longest first (so a longer one is read out whole)."""
    out: list[str] = []
    stack = [args]
    while stack and len(out) < 100:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return tuple(sorted(set(out), key=len, reverse=True))


def _known(index: ValueIndex, entity: Entity, graph_filter: GraphFilter | None,
           extra: Mapping[str, str] | None = None) -> Entity | None:
    """``entity`` as an entity of the data: by its id, else by an id or unique name its id or name equals."""
    if entity.id in index.ids:
        return entity
    eid = index.value(entity.id, extra) or (index.value(entity.name, extra) if entity.name else None)
    return Entity(id=eid, name=_shown_name(index, eid, graph_filter), type=entity.type) if eid is not None else None


def _step_entities(step: Any, index: ValueIndex, graph_filter: GraphFilter | None,
                   extra: Mapping[str, str] | None = None) -> list[Entity]:
    """The step's entities, each one of the data (a row the tracer keyed by its name maps to its id;
    what the data does not hold is dropped), then every entity its output holds by value."""
    out: dict[str, Entity] = {}
    for entity in step.entities:
        known = _known(index, entity, graph_filter, extra)
        if known is not None:
            out.setdefault(known.id, known)
    if step.error is None and step.output:
        for eid in index.in_text(step.output, extra, prose=not out, echoed=_string_args(step.args)):
            out.setdefault(eid, Entity(id=eid, name=_shown_name(index, eid, graph_filter)))
    return list(out.values())


def recognise(trajectory: Trajectory | None, index: ValueIndex | None, graph_filter: GraphFilter | None,
              mode: Any = None) -> Trajectory | None:
    """``trajectory`` with each step's entities those of the data, by value (the same object if nothing changes)."""
    if trajectory is None or index is None:
        return trajectory
    steps = []
    changed = False
    extra = placeholders(graph_filter) or None  # masked entities keyed by their name, under their new keys
    for step in trajectory.steps:
        entities = _step_entities(step, index, graph_filter, extra)
        edges = [e for e in step.edges if e.source in index.ids and e.target in index.ids]
        if entities != list(step.entities) or len(edges) != len(step.edges):
            changed = True
            step = step.model_copy(update={"entities": entities, "edges": edges})
        steps.append(step)
    cited = list(dict.fromkeys(c if c in index.ids else (index.value(c) or c) for c in trajectory.citations))
    if not changed and cited == list(trajectory.citations):
        return trajectory
    update: dict[str, Any] = {"steps": steps, "citations": cited}
    if mode is not None and mode != "markers" and trajectory.answer and trajectory.status == "ok":
        from ..tabular import _read_citations

        again = _read_citations(trajectory, steps, mode)
        if again is not None:
            update["citations"] = again
    return trajectory.model_copy(update=update)
