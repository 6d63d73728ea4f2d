"""The seven graph tools an agentic GraphRAG agent walks a knowledge graph with.

:func:`make_graph_tools` builds LangChain tools over a
:class:`~graphtrail.agents.KnowledgeGraph`. Every tool returns
``(content, artifact)`` (``response_format="content_and_artifact"``):

- *content* is what the model reads: a one-line header, then one compact JSON
  object per line (an entity, an edge, a text unit, a community). JSON keeps
  ids and names unambiguous for any model, while one object per line stays
  readable in a trace viewer.
- *artifact* is the tracer's shape (``docs/architecture.md`` section 2):
  ``{"entities": [{"id", "name", "type"}], "edges": [{"source", "relation",
  "target"}], "text_units": [...], "truncated": bool}``.

Each call resolves ``kg.filtered(active_filter())`` *at call time*, so an
ablation replay (which sets the filter ContextVar around a run) changes what
the tools show without touching the agent, and concurrent runs never see each
other's condition. Hidden entities never appear; masked ones show their
placeholder name. A bad id is answered with an error message the model can
act on (a ``ToolMessage`` with ``status="error"``), never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal, get_type_hints

from langchain_core.tools import BaseTool, StructuredTool, ToolException, tool
from rapidfuzz import fuzz, process, utils

from ..kg.graph import KnowledgeGraph
from ..kg.records import Community, EntityRecord, Relation
from ..kg.search import CODE_MAX_LEN, MIN_SCORE, RELATIVE_MARGIN, scan_entities  # noqa: F401 - re-exported
from ..kg.search import code_hits as _code_hits  # noqa: F401 - the ranking rules live in graphtrail.kg.search
from ..kg.search import label_scores as _label_scores  # noqa: F401
from ..kg.views import active_filter

__all__ = [
    "make_graph_tools",
    "make_submit_answer_tool",
    "search_entity_records",
    "search_text_units",
    "entity_line",
    "GRAPH_TOOL_NAMES",
    "SUBMIT_ANSWER",
]

SUBMIT_ANSWER = "submit_answer"
GRAPH_TOOL_NAMES = (
    "search_entities",
    "get_entity",
    "get_neighbors",
    "read_text_unit",
    "search_communities",
    "read_community",
    SUBMIT_ANSWER,
)

#: ``search_communities``: token-set similarity below this is noise.
COMMUNITY_MIN_SCORE = 50.0


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


def _ref(record: EntityRecord) -> dict[str, str]:
    return {"id": record.id, "name": record.name, "type": record.type}


def entity_line(record: EntityRecord, **extra: Any) -> str:
    """One entity as a content line: ``{"id": ..., "name": ..., "type": ...}``."""
    return _dumps({**_ref(record), **extra})


def _artifact(
    entities: Iterable[EntityRecord] = (),
    edges: Iterable[Relation] = (),
    text_units: Iterable[str] = (),
    truncated: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    seen: dict[str, dict[str, str]] = {}
    for record in entities:
        seen.setdefault(record.id, _ref(record))
    return {
        "entities": list(seen.values()),
        "edges": [{"source": e.source, "relation": e.relation, "target": e.target} for e in edges],
        "text_units": list(text_units),
        "truncated": truncated,
        **extra,
    }


def _view(kg: KnowledgeGraph) -> KnowledgeGraph:
    # no filter in force: ``kg`` as given (a view the factory route built on ablated data stays that view)
    graph_filter = active_filter()
    return kg if graph_filter is None else kg.filtered(graph_filter)


def _require_entity(view: KnowledgeGraph, entity_id: str) -> EntityRecord:
    record = view.entity(str(entity_id))
    if record is None:
        # Hidden and missing ids get the same answer: a hidden entity must not leak.
        raise ToolException(
            f"Unknown entity id {entity_id!r}. Entity ids come from search_entities results "
            "(the \"id\" field); search by name first."
        )
    return record


def _community_title(view: KnowledgeGraph, com: Community) -> str:
    # Generated titles quote member names; under an ablation that touches the
    # community, fall back to a neutral title so no hidden/masked name leaks.
    touched = getattr(view, "community_touched", None)
    if touched is not None:
        return f"Community {com.id}" if touched(com.id) else com.title
    f = view.graph_filter
    if f is not None and any(e in f.hidden or e in f.masked or e in f.text_blocked for e in kg_members(view, com.id)):
        return f"Community {com.id}"
    return com.title


def kg_members(view: KnowledgeGraph, community_id: str) -> tuple[str, ...]:
    """All original members of a community (before filtering)."""
    com = view.communities.get(community_id)
    return com.entity_ids if com is not None else ()


def search_entity_records(
    view: KnowledgeGraph, query: str, *, type: str | None = None, limit: int = 10
) -> list[tuple[EntityRecord, float, str]]:
    """Visible entities whose name or an alias plausibly matches ``query``, best first.

    A hit scores at least :data:`MIN_SCORE` and at most :data:`RELATIVE_MARGIN`
    below the best hit (see :func:`_label_scores`), at most ``limit`` of them:
    what a search box returns, not the ``limit`` least-bad strings in the graph.
    Junk hits are not harmless: every entity a tool returns counts as visited,
    feeds the visited-but-uncited set, and gets its own leave-one-out replay.
    Returns ``(entity, score, matched label)``; ties break by entity id so
    results are deterministic. A backend with a ``search_entities`` method
    (the in-memory graph's is indexed) answers; otherwise every visible entity
    is scored (:func:`graphtrail.kg.search.scan_entities`).
    """
    indexed = getattr(view, "search_entities", None)
    if indexed is not None:
        return indexed(query, type=type, limit=limit)
    return scan_entities(view.entities(), query, type=type, limit=limit)


def search_text_units(view: KnowledgeGraph, query: str, *, limit: int = 5) -> list[tuple[str, float]]:
    """Visible text units ranked by rapidfuzz token-set similarity to the query (ties by id)."""
    units = {uid: u.text for uid in view.text_units if (u := view.text_unit(uid)) is not None}
    if not units or not (query or "").strip():
        return []
    hits = process.extract(
        query, units, scorer=fuzz.token_set_ratio, processor=utils.default_process, limit=None, score_cutoff=1
    )
    ranked = sorted(((uid, score) for _, score, uid in hits), key=lambda kv: (-kv[1], kv[0]))
    return [(uid, round(score, 1)) for uid, score in ranked[:limit]]


def _relation_summary(view: KnowledgeGraph, entity_id: str) -> list[dict[str, Any]]:
    counts: dict[tuple[str, str], int] = {}
    for rel in view.out_relations(entity_id):
        counts[(rel.relation, "out")] = counts.get((rel.relation, "out"), 0) + 1
    for rel in view.in_relations(entity_id):
        counts[(rel.relation, "in")] = counts.get((rel.relation, "in"), 0) + 1
    return [
        {"relation": label, "direction": direction, "count": n}
        for (label, direction), n in sorted(counts.items(), key=lambda kv: (kv[0][1] != "out", kv[0][0]))
    ]


def _norm_label(label: str) -> str:
    return " ".join(label.replace("_", " ").replace("-", " ").lower().split())


def make_submit_answer_tool() -> BaseTool:
    """The ``submit_answer`` tool: records the final answer and its entity citations."""

    @_graph_tool(SUBMIT_ANSWER, response_format="content_and_artifact")
    def submit_answer(answer: str, citations: list[str]) -> tuple[str, dict[str, Any]]:
        """Submit the final answer to the question. This ends the task.

        Args:
            answer: The answer, as the entity name (or "yes"/"no" for yes/no questions).
            citations: The ids of the entities the answer rests on (the reasoning path), e.g. ["E0001", "E0042"].
        """
        cited = [str(c) for c in citations]
        content = f"Answer submitted: {answer}" + (f" (citations: {', '.join(cited)})" if cited else " (no citations)")
        return content, _artifact(answer=answer, citations=cited)

    submit_answer.handle_tool_error = True
    return submit_answer


_TEMPLATES: dict[str, StructuredTool] = {}
_HINTS: dict[str, dict[str, Any]] = {}  # the template's function's resolved annotations


def _graph_tool(name: str, **kwargs: Any) -> Any:
    """``@tool(name, **kwargs)`` with its argument schema built once per process.

    LangChain builds a pydantic schema per ``@tool`` call; the factory route
    (``evaluate(make_agent, questions, graph=...)``) builds the agent, and so these
    tools, once per ablation, so each later tool of the same definition is a shallow
    copy of the first with its own function (same code, this graph in its closure).
    """

    def decorate(fn: Any) -> StructuredTool:
        template = _TEMPLATES.get(name)
        if template is None or getattr(template.func, "__code__", None) is not fn.__code__:
            template = _TEMPLATES[name] = tool(name, **kwargs)(fn)
            try:  # this module's annotations are strings: resolved once here, not by LangChain per tool built
                _HINTS[name] = get_type_hints(fn, include_extras=True)
                getattr(template, "_injected_args_keys", None)  # LangChain reads it from the signature, then keeps it
            except Exception:  # noqa: BLE001 - unresolved, they stay strings (LangChain resolves them itself)
                _HINTS.pop(name, None)
        if name in _HINTS:
            fn.__annotations__ = dict(_HINTS[name])
        return template.model_copy(update={"func": fn})

    return decorate


def make_graph_tools(kg: KnowledgeGraph, *, top_k: int = 8, neighbor_limit: int = 25) -> list[BaseTool]:
    """The seven GraphRAG tools over ``kg``, in the order the paper lists them.

    ``top_k`` bounds search results; ``neighbor_limit`` bounds neighbour and
    community-member lists (a truncation note tells the model how to narrow).
    """

    @_graph_tool("search_entities", response_format="content_and_artifact")
    def search_entities(query: str, type: str | None = None) -> tuple[str, dict[str, Any]]:
        """Find entities by name (fuzzy match). Returns entity ids, names and types, best match first.

        Args:
            query: A name or part of a name, e.g. "Kenya".
            type: Optional entity type to restrict to, e.g. "country" or "city".
        """
        view = _view(kg)
        hits = search_entity_records(view, query, type=type, limit=top_k)
        header = f"{len(hits)} entities match {query!r}" + (f" with type {type!r}" if type else "")
        lines = [header + (" (best first):" if hits else ". Try a shorter or different name.")]
        lines += [
            entity_line(rec, score=score, **({"alias": label} if label != rec.name else {})) for rec, score, label in hits
        ]
        return "\n".join(lines), _artifact([rec for rec, _, _ in hits], query=query)

    @_graph_tool("get_entity", response_format="content_and_artifact")
    def get_entity(entity_id: str) -> tuple[str, dict[str, Any]]:
        """Read one entity in detail: name, type, description, its relations (label, direction, count) and text unit ids.

        Args:
            entity_id: The entity id, e.g. "E0001".
        """
        view = _view(kg)
        rec = _require_entity(view, entity_id)
        units = [u.id for u in view.text_units_for(rec.id)]
        detail = {
            **_ref(rec),
            "description": rec.description,
            "aliases": list(rec.aliases),
            "relations": _relation_summary(view, rec.id),
            "text_units": units,
            "communities": [c.id for c in view.communities_of(rec.id)],
        }
        header = f"entity {rec.id} in detail (use get_neighbors with a relation label to follow it):"
        return header + "\n" + _dumps(detail), _artifact([rec], text_units=units)

    @_graph_tool("get_neighbors", response_format="content_and_artifact")
    def get_neighbors(
        entity_id: str, relation: str | None = None, direction: Literal["out", "in", "both"] = "out"
    ) -> tuple[str, dict[str, Any]]:
        """List the entities linked to an entity, optionally only through one relation label.

        Args:
            entity_id: The entity id, e.g. "E0001".
            relation: Optional relation label to follow, e.g. "capital" (see get_entity for the labels).
            direction: "out" for entity -[relation]-> neighbor, "in" for neighbor -[relation]-> entity, or "both".
        """
        if direction not in ("out", "in", "both"):
            raise ToolException(f"direction must be 'out', 'in' or 'both', not {direction!r}.")
        view = _view(kg)
        center = _require_entity(view, entity_id)
        rels: list[tuple[Relation, str]] = []
        if direction in ("out", "both"):
            rels += [(r, r.target) for r in view.out_relations(center.id)]
        if direction in ("in", "both"):
            rels += [(r, r.source) for r in view.in_relations(center.id)]
        if relation:
            wanted = _norm_label(relation)
            rels = [(r, n) for r, n in rels if _norm_label(r.relation) == wanted]
        rels.sort(key=lambda rn: (rn[0].source != center.id, rn[0].relation, rn[1]))
        shown = rels[:neighbor_limit]
        neighbors = [view.entity(n) for _, n in shown]
        lines = [
            f"{len(rels)} neighbors of {center.id} {center.name!r}"
            + (f" via relation {relation!r}" if relation else "")
            + f" (direction {direction})"
            + (f", showing the first {len(shown)}:" if len(shown) < len(rels) else ":")
        ]
        lines.append(entity_line(center))
        for (rel, _), nb in zip(shown, neighbors):
            assert nb is not None  # edges of the view only join visible nodes
            lines.append(_dumps({"source": rel.source, "relation": rel.relation, "target": rel.target, "neighbor": _ref(nb)}))
        truncated = len(shown) < len(rels)
        if truncated:
            lines.append(f"... {len(rels) - len(shown)} more not shown; pass a relation label to narrow the list.")
        if not rels:
            summary = _relation_summary(view, center.id)
            available = ", ".join(f"{s['relation']} ({s['direction']}, {s['count']})" for s in summary) or "none"
            lines.append(f"Relations this entity has (label, direction, count): {available}.")
        return "\n".join(lines), _artifact([center, *(n for n in neighbors if n)], [r for r, _ in shown], truncated=truncated)

    @_graph_tool("read_text_unit", response_format="content_and_artifact")
    def read_text_unit(unit_id: str) -> tuple[str, dict[str, Any]]:
        """Read a source passage (text unit) and the entities it mentions.

        Args:
            unit_id: The text unit id, as listed by get_entity.
        """
        view = _view(kg)
        unit = view.text_unit(str(unit_id))
        if unit is None:
            raise ToolException(f"Text unit {unit_id!r} is not available. Text unit ids are listed by get_entity.")
        mentioned = [rec for eid in unit.entity_ids if (rec := view.entity(eid)) is not None]
        body = {"unit": unit.id, "text": unit.text, "mentions": [_ref(r) for r in mentioned]}
        return f"text unit {unit.id}:\n" + _dumps(body), _artifact(mentioned, text_units=[unit.id])

    @_graph_tool("search_communities", response_format="content_and_artifact")
    def search_communities(query: str) -> tuple[str, dict[str, Any]]:
        """Find communities (clusters of related entities) whose title or summary matches the query.

        Args:
            query: Words describing the topic, e.g. "East Africa".
        """
        view = _view(kg)
        docs: dict[str, str] = {}
        titles: dict[str, str] = {}
        for cid in view.communities:
            com = view.community(cid)
            if com is None or not com.entity_ids:
                continue
            titles[cid] = _community_title(view, com)
            docs[cid] = f"{titles[cid]} {com.summary}"
        hits = process.extract(
            query, docs, scorer=fuzz.token_set_ratio, processor=utils.default_process, limit=None, score_cutoff=COMMUNITY_MIN_SCORE
        )
        ranked = sorted(((cid, round(score, 1)) for _, score, cid in hits), key=lambda kv: (-kv[1], kv[0]))[:top_k]
        lines = [f"{len(ranked)} communities match {query!r}" + (":" if ranked else ".")]
        for cid, score in ranked:
            com = view.community(cid)
            assert com is not None
            lines.append(_dumps({"community": cid, "title": titles[cid], "size": len(com.entity_ids), "score": score}))
        return "\n".join(lines), _artifact(communities=[cid for cid, _ in ranked])

    @_graph_tool("read_community", response_format="content_and_artifact")
    def read_community(community_id: str) -> tuple[str, dict[str, Any]]:
        """Read a community: its title, summary and member entities.

        Args:
            community_id: The community id, as returned by search_communities or get_entity.
        """
        view = _view(kg)
        com = view.community(str(community_id))
        if com is None or not com.entity_ids:
            raise ToolException(f"Unknown community id {community_id!r}. Use search_communities to find ids.")
        members = [rec for eid in com.entity_ids if (rec := view.entity(eid)) is not None]
        members.sort(key=lambda r: (-view.degree(r.id), r.id))
        shown = members[:neighbor_limit]
        truncated = len(shown) < len(members)
        body = {"community": com.id, "title": _community_title(view, com), "summary": com.summary, "size": len(members)}
        lines = [f"community {com.id}" + (f" (showing {len(shown)} of {len(members)} members):" if truncated else ":")]
        lines.append(_dumps(body))
        lines += [entity_line(r) for r in shown]
        return "\n".join(lines), _artifact(shown, truncated=truncated, communities=[com.id])

    tools: list[BaseTool] = [
        search_entities,
        get_entity,
        get_neighbors,
        read_text_unit,
        search_communities,
        read_community,
        make_submit_answer_tool(),
    ]
    # a view (an ablation's graph) runs as its whole graph does; counting what a view shows reads its hidden set
    inline = isinstance(kg, KnowledgeGraph) and len(kg.filtered(None)) <= INLINE_MAX_ENTITIES
    for t in tools:
        t.handle_tool_error = True
    return [_run_inline(t) if inline or t.name == SUBMIT_ANSWER else t for t in tools]


#: In-memory graphs up to this many entities answer tool calls on the event loop (see _run_inline).
INLINE_MAX_ENTITIES = 200_000


class _InlineTool(StructuredTool):
    """A sync tool whose ``ainvoke`` calls its function in place, on the event loop.

    LangChain runs a sync tool's ``ainvoke`` in the default thread pool: a hop out and back
    per call, costlier than a lookup in a small in-memory graph, and a queue for a few
    workers when many runs go at once (``evaluate(concurrency=16)``). A database backend's
    tools keep the thread pool: their calls wait on the network.
    """

    # No annotations and no ``config``/``run_manager`` parameters, on purpose: on every call
    # ``BaseTool.arun`` reads ``_arun``'s signature and type hints to decide what to pass, and
    # StructuredTool's own ``_arun`` (and then its coroutine's) would have their string
    # annotations evaluated each time; an evaluation makes thousands of tool calls.
    async def _arun(self, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        return self.func(*args, **kwargs)  # type: ignore[misc]


def _run_inline(t: BaseTool) -> BaseTool:
    """``t`` (a ``@tool``-made sync tool) as an :class:`_InlineTool` with the same fields; others unchanged."""
    if not isinstance(t, StructuredTool) or t.func is None or t.coroutine is not None:
        return t
    inline = _InlineTool.model_construct(**dict(t))
    # what LangChain cached on the tool (from its function's signature, its schema) holds for the same function
    inline.__dict__.update({k: v for k, v in vars(t).items() if k not in inline.__dict__})

    async def in_place(*args, **kwargs):  # type: ignore[no-untyped-def]
        return inline.func(*args, **kwargs)  # type: ignore[misc]

    # for code that calls the coroutine itself; a coroutine also keeps StructuredTool.ainvoke off the thread pool
    in_place.__name__ = in_place.__qualname__ = getattr(t.func, "__name__", t.name)
    inline.coroutine = in_place
    return inline
