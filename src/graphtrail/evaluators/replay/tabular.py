"""Entities in tables without ids: read from a run's tool outputs by the names the evaluation knows.

A tool answering with a Markdown table or ``DataFrame.to_string()`` text names
its entities in cells. The tracer reads such a table only when it has an id
column (:mod:`graphtrail.tracer.tables`): it knows no graph. The evaluation
does: the KG's names and aliases, and the names the baseline runs' tools
revealed (:class:`~.leaks.EntityNames`). Here each cell of each table row of a
step's output (what the model was given: in an ablation run, the filtered
output) is read with that one phrase matcher (whole words, Unicode-normalised,
longest name first), and every entity a cell names without doubt (a name two
entities bear is skipped) is added to the step, as if the tool had returned it.

With a KG, a step's JSON output is also read by value (:mod:`.byvalue`): a
string equal to a KG id names that entity, whatever key holds it (``uid``,
``person_id``); a row the tracer read by its name (no id key it knew) is then
that entity, not a second one.

So a table-writing agent's visited set, its citations' sources (source support,
grounded citations) and the conditions built from them are those of what the
tool really showed. When the answer's citations were read by name (the tracer's
``citations="names"`` mode, its default: the tracer's citations are exactly what
reading by name gives with the entities it knew), they are read again with the
entities the tables named; markers and ``submit_answer`` citations stand as given.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...tracer.tables import find_tables
from ...tracer.trajectory import Entity, Trajectory
from .byvalue import value_entities
from .filtered.leaks import EntityNames

__all__ = ["table_entities", "prose_entities", "read_table_entities", "citation_mode"]


def table_entities(text: str | None, names: EntityNames) -> list[str]:
    """Ids of the entities the table rows of ``text`` name (by id or by a known name), in order."""
    if not text or "\n" not in text:
        return []
    found: dict[str, None] = {}
    for table in find_tables(text):
        for row in table.rows:
            for cell in row.values():
                if not cell:
                    continue
                for match in names.matches(cell):
                    ids = {eid for eid, _ in match}
                    if len(ids) == 1:  # a name two entities bear says neither
                        found.setdefault(next(iter(ids)), None)
    return list(found)


def prose_entities(text: str | None, names: EntityNames) -> list[str]:
    """Ids of the KG entities plain text names (whole words; a name two entities bear says neither), in order.

    For a step the tracer read nothing from and whose output is neither JSON nor a table: passages of plain
    text (a retriever tool's, joined by blank lines). Only with a KG: what the names mean comes from it. The
    filter route cuts such text by names, so the conditions it yields are labelled estimated (:mod:`.filtered.method`).
    """
    if not text or names.kg is None:
        return []
    stripped = text.strip()
    if not stripped or stripped[0] in "[{":
        return []
    found: dict[str, None] = {}
    for match in names.matches(text):
        ids = {eid for eid, _ in match}
        if len(ids) == 1 and (eid := next(iter(ids))) in names.kg:
            found.setdefault(eid, None)
    return list(found)


def _same_by_name(eid: str, by_value: list[str], names: EntityNames) -> bool:
    """Whether ``eid`` is not a KG id but the name of one entity the same output names by id (a row read by its name)."""
    if not by_value or names.kg is None or eid in names.kg:
        return False
    from .filtered.names import named

    hits = {e for e, _ in named(names, eid)}
    return len(hits) == 1 and next(iter(hits)) in by_value


def _kg_id_by_name(eid: str, names: EntityNames) -> str | None:
    """The KG id of the one KG entity ``eid`` is the name of (a row the tracer keyed by its name), else ``None``."""
    kg = names.kg
    if kg is None or eid in kg:
        return None
    from .filtered.names import named

    hits = {e for e, _ in named(names, eid) if e in kg}
    return next(iter(hits)) if len(hits) == 1 else None


def _by_kg_id(step: Any, names: EntityNames) -> tuple[list[Entity], list[Any]]:
    """The step's entities and edges with each row the tracer keyed by a KG entity's name under that entity's id.

    Without this a record shown without its id (``{"name": "Otto Hahn", ...}``) is a second entity beside
    ``p2``: leave-one-out would hide "Otto Hahn", which is no id, and the filter would cut p2's record by its
    name while the condition keeps p2. ``step.entities`` itself (the same list) when nothing changes.
    """
    if names.kg is None:
        return step.entities, step.edges
    ids = {e.id: kid for e in step.entities if (kid := _kg_id_by_name(e.id, names)) is not None}
    if not ids:
        return step.entities, step.edges
    entities: dict[str, Entity] = {}
    for e in step.entities:
        kid = ids.get(e.id, e.id)
        entities.setdefault(kid, e if kid == e.id else Entity(id=kid, name=e.name, type=e.type))
    edges = [edge.model_copy(update={"source": ids.get(edge.source, edge.source), "target": ids.get(edge.target, edge.target)})
             if edge.source in ids or edge.target in ids else edge for edge in step.edges]
    return list(entities.values()), edges


def _name(eid: str, names: EntityNames) -> str | None:
    known = names.of(eid)
    return known[0] if known else None


def read_table_entities(trajectory: Trajectory | None, names: EntityNames | None, mode: Any = None) -> Trajectory | None:
    """``trajectory`` with the entities its tools' tables named added to their steps (the same object if none).

    ``mode``: the agent's citation mode (``None``: unknown, citations are not read again).
    """
    if trajectory is None or names is None:
        return trajectory
    steps = []
    added = False
    for step in trajectory.steps:
        by_value = value_entities(step.output, names.kg) if step.error is None else []
        found = [*table_entities(step.output, names), *by_value] if step.error is None else []
        if step.error is None and not found and not step.entities:
            found = prose_entities(step.output, names)  # plain text: the entities it names (estimated)
        entities, edges = _by_kg_id(step, names)
        have = {e.id for e in entities}
        new = list(dict.fromkeys(e for e in found if e not in have))
        if new or entities is not step.entities:
            added = True
            kept = [e for e in entities if not _same_by_name(e.id, by_value, names)]
            step = step.model_copy(update={"entities": [*kept, *(Entity(id=e, name=_name(e, names)) for e in new)],
                                           "edges": edges})
        steps.append(step)
    if not added:
        return trajectory
    update: dict[str, Any] = {"steps": steps}
    if mode is not None and mode != "markers" and trajectory.answer and trajectory.status == "ok":
        cited = _read_citations(trajectory, steps, mode)
        if cited is not None:
            update["citations"] = cited
    return trajectory.model_copy(update=update)


def _resolve(answer: str, steps: Iterable[Any], mode: Any) -> list[str] | None:
    from ...tracer.citations import known_names, resolve_citations

    try:
        return resolve_citations(answer, known_names(e for s in steps for e in s.entities), mode)[1]
    except Exception:  # noqa: BLE001 - a user's citation rule: its failure leaves the run as the tracer saw it
        return None


def _read_citations(trajectory: Trajectory, steps: list[Any], mode: Any) -> list[str] | None:
    """The answer's citations read by name again, with the entities the tables named; ``None``: keep the tracer's.

    Only when the tracer's citations are exactly what reading by name found with
    the entities it knew (so they came from names, not from markers or a
    ``submit_answer`` call, which stand as the agent gave them).
    """
    if _resolve(trajectory.answer or "", trajectory.steps, mode) != list(trajectory.citations):
        return None
    cited = _resolve(trajectory.answer or "", steps, mode)
    return cited if cited and cited != list(trajectory.citations) else None


def citation_mode(agent: Any) -> Any:
    """The citation mode of a traced agent (``None`` when it cannot be told)."""
    handler = getattr(agent, "graphtrail_handler", None)
    options = getattr(handler, "options", None)
    return getattr(options, "citations", None)
