"""Ablation builders: from a question's baseline trajectory to the graph filters to replay.

Each condition is a plain function of the baseline :class:`Trajectory` (what the
agent visited and cited) and, optionally, the knowledge graph. The result is a
list of ``(variant, GraphFilter)`` pairs: one pair for most conditions, one per
visited entity for ``leave_one_out`` (variant = entity id) and one per subset for
``random_subsets`` (variant = subset index). The replay runner installs each
filter with :func:`graphtrail.agents.use_filter`; the tools do the rest.

Randomised conditions are seeded from ``(seed, question id, condition)`` through a
hash, so a condition's draw does not depend on which other conditions or
questions ran, or in which order. See docs/ablations.md for the exact semantics.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from ...kg.graph import KnowledgeGraph
from ...kg.views import GraphFilter
from ...tracer.trajectory import Trajectory
from ..records import CONDITIONS, question_field

__all__ = [
    "AblationError",
    "condition_filters",
    "condition_rng",
    "cited_entities",
    "random_removal_candidates",
    "DEFAULT_SUBSETS",
    "PLAUSIBLE_RADIUS",
]

#: Number of Bernoulli subsets ``random_subsets`` draws per question by default.
DEFAULT_SUBSETS = 32

#: ``random_removal`` prefers entities within this many hops (ignoring edge
#: direction) of something the agent visited: those are what a graph tool could
#: plausibly have returned on the way to the answer.
PLAUSIBLE_RADIUS = 2

#: ``random_removal`` picks among this many best-matched candidates per cited entity.
_MATCH_POOL = 5


class AblationError(ValueError):
    """An ablation condition could not be built (unknown name, bad parameter)."""


def condition_rng(seed: int, question_id: str, condition: str) -> random.Random:
    """A generator seeded by ``(seed, question, condition)`` alone, independent of run order."""
    digest = hashlib.sha256(f"{seed}|{question_id}|{condition}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def cited_entities(baseline: Trajectory) -> list[str]:
    """The baseline's citations, unique, in citation order."""
    return list(dict.fromkeys(baseline.citations))


def _filter(condition: str, variant: str = "", **sets: Iterable[str]) -> GraphFilter:
    label = f"{condition}:{variant}" if variant else condition
    return GraphFilter(**{k: frozenset(v) for k, v in sets.items()}, label=label)


def _non_cited(baseline: Trajectory, kg: KnowledgeGraph | None) -> list[str]:
    """Every entity except the cited ones: the whole KG if given, else everything the run saw."""
    cited = set(baseline.citations)
    if kg is not None:
        return [e for e in kg.entity_ids() if e not in cited]
    seen = dict.fromkeys(baseline.visited)
    for edge in baseline.edges:
        seen.setdefault(edge.source, None)
        seen.setdefault(edge.target, None)
    return [e for e in seen if e not in cited]


def _topic_ids(baseline: Trajectory, question: Any) -> list[str]:
    topics = question_field(question, "topic_ids") or []
    if not topics and baseline.visited:
        topics = baseline.visited[:1]
    return [str(t) for t in topics]


def _question_id(question: Any, baseline: Trajectory) -> str:
    qid = question_field(question, "id")
    if qid is not None:
        return str(qid)
    return str(baseline.question or baseline.run_id)


def random_removal_candidates(
    baseline: Trajectory,
    kg: KnowledgeGraph,
    radius: int = PLAUSIBLE_RADIUS,
) -> list[str]:
    """Entities the control may remove: in the KG, never visited, not cited, near the visited set.

    Falls back to every non-visited, non-cited entity when nothing lies within ``radius``.
    """
    excluded = set(baseline.visited) | set(baseline.citations)
    sources = [e for e in baseline.visited if e in kg]
    near: set[str] = set()
    if sources:
        near = {n for n in hop_distances(kg, sources, max_depth=radius) if n not in excluded}
    if near:
        return sorted(near)
    return sorted(e for e in kg.entity_ids() if e not in excluded)


def hop_distances(
    kg: KnowledgeGraph, sources: Iterable[str], *, max_depth: int | None = None, until: Collection[str] | None = None
) -> dict[str, int]:
    """Undirected hop counts from ``sources``: breadth-first, to ``max_depth`` or until all of ``until`` are reached.

    Uses the backend's own walk when it has one (``hop_distances``); otherwise
    walks ``out_relations``/``in_relations``. Entities it did not reach are
    absent (unreachable, or beyond the bound).
    """
    walk = getattr(kg, "hop_distances", None)
    if walk is not None:
        return walk(sources, max_depth=max_depth, until=until)
    dist = {e: 0 for e in sources if e in kg}
    missing = set(until or ()) - set(dist)
    frontier, depth = list(dist), 0
    while frontier and (max_depth is None or depth < max_depth) and (until is None or missing):
        depth += 1
        nxt = []
        for e in frontier:
            for r in (*kg.out_relations(e), *kg.in_relations(e)):
                for n in (r.source, r.target):
                    if n not in dist:
                        dist[n] = depth
                        missing.discard(n)
                        nxt.append(n)
        frontier = nxt
    return dist


def _random_removal(
    baseline: Trajectory, kg: KnowledgeGraph | None, rng: random.Random, question: Any
) -> tuple[list[str], str]:
    """Pick one matched, non-visited entity per cited entity.

    Matching, in priority order: same entity type, same hop distance from the
    question's topic entities, closest degree (on a log scale). The pick is
    random among the best few matches, so the control is not one fixed
    neighbour. Returns the ids and a note on how they were drawn.
    """
    cited = cited_entities(baseline)
    if kg is None:
        return _random_removal_without_kg(baseline, cited, rng)
    pool = random_removal_candidates(baseline, kg)
    if not pool:
        return [], "no candidates"
    topics = [t for t in _topic_ids(baseline, question) if t in kg]
    # One bounded walk per question: it stops once every entity whose hop count is compared is reached.
    hops = hop_distances(kg, topics, until=set(pool) | set(cited)) if topics else {}
    far = len(kg) + 1

    # Each entity's type and degree read once per question, not once per cited entity: on a
    # database backend every read is a query (hundreds of pool entities x each cited one).
    @functools.cache
    def node_type(e: str) -> str:
        record = kg.entity(e)
        return record.type if record is not None else ""

    @functools.cache
    def degree(e: str) -> int:
        return kg.degree(e)

    chosen: list[str] = []
    taken: set[str] = set()
    for c in cited:
        c_type, c_deg, c_hop = node_type(c), degree(c), hops.get(c, far)
        options = [e for e in pool if e not in taken]
        if not options:
            break
        same_type = [e for e in options if node_type(e) == c_type]
        options = same_type or options

        def distance(e: str) -> tuple[int, float, str]:
            return (
                abs(hops.get(e, far) - c_hop),
                abs(math.log1p(degree(e)) - math.log1p(c_deg)),
                e,
            )

        best = sorted(options, key=distance)[:_MATCH_POOL]
        pick = rng.choice(best)
        chosen.append(pick)
        taken.add(pick)
    return chosen, "matched on type, hop distance and degree"


def _random_removal_without_kg(
    baseline: Trajectory, cited: Sequence[str], rng: random.Random
) -> tuple[list[str], str]:
    """Without a KG, non-visited entities are only known as edge endpoints the tools showed.

    Those are preferred; when there are too few, visited-but-uncited entities
    (matched on type) fill the rest, which makes the control weaker: it then
    overlaps ``uncited_removal``. The note says which happened.
    """
    excluded = set(baseline.visited) | set(cited)
    endpoints = list(dict.fromkeys(x for e in baseline.edges for x in (e.source, e.target) if x not in excluded))
    types = {ent.id: ent.type for step in baseline.steps for ent in step.entities}
    chosen: list[str] = []
    for c in cited:
        if endpoints:
            pick = rng.choice(endpoints)
            endpoints.remove(pick)
            chosen.append(pick)
            continue
        fallback = [e for e in baseline.visited_uncited if e not in chosen]
        same_type = [e for e in fallback if types.get(e) == types.get(c)]
        fallback = same_type or fallback
        if not fallback:
            break
        chosen.append(rng.choice(fallback))
    note = "no KG: edge endpoints seen in tool outputs"
    if any(e in set(baseline.visited) for e in chosen):
        note += ", then visited-uncited entities (weaker control)"
    return chosen, note


def condition_filters(
    condition: str,
    baseline: Trajectory,
    kg: KnowledgeGraph | None = None,
    *,
    seed: int = 0,
    rng: random.Random | None = None,
    question: Any = None,
    n_subsets: int = DEFAULT_SUBSETS,
    keep_probability: float = 0.5,
) -> list[tuple[str, GraphFilter]]:
    """The ``(variant, GraphFilter)`` pairs that replay ``condition`` for one question.

    ``baseline`` is the question's baseline run (trial 0): its citations and
    visited entities define every condition. ``kg`` widens ``full_isolation`` and
    ``text_only_isolation`` to the whole graph and is what ``random_removal``
    draws its control entities from. ``rng`` overrides the
    ``(seed, question, condition)``-derived generator of the random conditions.
    """
    if condition not in CONDITIONS:
        raise AblationError(f"unknown condition {condition!r}; known: {', '.join(CONDITIONS)}")
    cited = cited_entities(baseline)
    uncited = baseline.visited_uncited
    if condition == "baseline":
        return [("", _filter("baseline"))]
    if condition == "cited_removal":
        return [("", _filter(condition, hidden=cited))]
    if condition == "full_isolation":
        return [("", _filter(condition, hidden=_non_cited(baseline, kg)))]
    if condition == "text_only_isolation":
        return [("", _filter(condition, text_blocked=_non_cited(baseline, kg)))]
    if condition == "uncited_removal":
        return [("", _filter(condition, hidden=uncited))]
    if condition == "uncited_mask":
        return [("", _filter(condition, masked=uncited))]
    if condition == "leave_one_out":
        return [(eid, _filter(condition, eid, hidden=[eid])) for eid in baseline.visited]
    gen = rng or condition_rng(seed, _question_id(question, baseline), condition)
    if condition == "random_removal":
        chosen, _ = _random_removal(baseline, kg, gen, question)
        return [("", _filter(condition, hidden=chosen))]
    # random_subsets
    if n_subsets < 1:
        raise AblationError(f"n_subsets must be >= 1, got {n_subsets}")
    if not 0.0 < keep_probability < 1.0:
        raise AblationError(f"keep_probability must be in (0, 1), got {keep_probability}")
    out = []
    for i in range(n_subsets):
        dropped = [e for e in baseline.visited if gen.random() >= keep_probability]
        out.append((str(i), _filter(condition, str(i), hidden=dropped)))
    return out
