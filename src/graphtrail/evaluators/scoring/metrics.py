"""Provenance scores as plain functions over trajectories, run records and the graph.

Each function implements one definition from ``docs/metrics.md``; read that
page for the reasoning and a worked example. Functions take what they need
(a :class:`Trajectory`, records of one question, a noise floor) and return
small dataclasses, so users can compose their own scoring without the report.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...tracer.trajectory import Trajectory
from ..records import RunRecord, question_field
from .judges import cover_exact_match, normalize

__all__ = [
    "group_runs",
    "baseline_record",
    "outcomes_by_question",
    "accuracy",
    "output_changed_rate",
    "answer_entities",
    "SourceSupport",
    "source_support",
    "Fidelity",
    "trajectory_fidelity",
    "SurrogateFit",
    "fit_surrogate",
    "EntityInfluence",
    "entity_influence",
    "coverage",
    "Faithfulness",
    "structural_faithfulness",
    "MULTI_VARIANT_CONDITIONS",
]

#: Conditions whose runs differ per entity/subset (``RunKey.variant``); they score entities, not the answer.
MULTI_VARIANT_CONDITIONS: frozenset[str] = frozenset({"leave_one_out", "random_subsets"})

Runs = dict[str, dict[str, list[RunRecord]]]  # question id -> condition -> records


# ------------------------------------------------------------------ grouping
def group_runs(records: Iterable[RunRecord]) -> Runs:
    """Records by question id, then condition, each list sorted by (variant, trial)."""
    out: Runs = defaultdict(lambda: defaultdict(list))
    for rec in records:
        out[rec.key.question_id][rec.key.condition].append(rec)
    for by_cond in out.values():
        for runs in by_cond.values():
            runs.sort(key=lambda r: (r.key.variant, r.key.trial))
    return {q: dict(c) for q, c in out.items()}


def _sstats() -> Any:
    """scipy.stats, imported on first use: it takes about a second, and most callers never reach it."""
    from scipy import stats

    return stats


def baseline_record(runs_of_question: Mapping[str, Sequence[RunRecord]]) -> RunRecord | None:
    """The question's reference run: baseline, trial 0 (else the lowest baseline trial)."""
    base = [r for r in runs_of_question.get("baseline", ()) if r.key.variant == ""]
    if not base:
        return None
    return min(base, key=lambda r: r.key.trial)


def outcomes_by_question(records: Iterable[RunRecord], condition: str, field_name: str = "correct") -> dict[str, list[Any]]:
    """``{question_id: [value of field_name per run]}`` for one condition (``None`` values kept)."""
    out: dict[str, list[Any]] = defaultdict(list)
    for rec in records:
        if rec.key.condition == condition:
            out[rec.key.question_id].append(getattr(rec, field_name))
    return dict(out)


def _mean_of_question_means(values: Mapping[str, Sequence[Any]]) -> float | None:
    means = []
    for vals in values.values():
        judged = [float(v) for v in vals if v is not None]
        if judged:
            means.append(sum(judged) / len(judged))
    return sum(means) / len(means) if means else None


def accuracy(records: Iterable[RunRecord], condition: str) -> float | None:
    """Mean over questions of the share of the condition's runs judged correct (questions weigh equally)."""
    return _mean_of_question_means(outcomes_by_question(records, condition, "correct"))


def output_changed_rate(records: Iterable[RunRecord], condition: str) -> float | None:
    """Mean over questions of the share of runs whose answer differs from baseline trial 0.

    For ``baseline`` itself trial 0 is the reference and is skipped, so the
    rate is the share of repeated baseline trials that changed: noise.
    """
    recs = [r for r in records if not (condition == "baseline" and r.key.trial == 0)]
    return _mean_of_question_means(outcomes_by_question(recs, condition, "changed"))


# ------------------------------------------------------------------ answer entities
def answer_entities(answer: str | None, trajectory: Trajectory, question: Any = None, kg: Any = None) -> list[str]:
    """Entity ids the answer names, among those the trajectory saw (or cites).

    An entity matches when the answer is its id, or the normalized answer equals
    its normalized name (or, given ``kg``, an alias). A sentence answer ("The
    answer is Christopher Nolan.") equals no name: then an entity matches when its
    name appears in the answer as whole words and is a gold answer (any such name,
    when the question has no gold). When the answer covers a gold answer, the
    question's ``answer_ids`` count too.
    """
    if answer is None:
        return []
    target = normalize(answer) or ""
    raw = answer.strip()
    found: dict[str, None] = {}
    names = trajectory.entity_names
    labels: dict[str, list[str]] = {}
    for eid in list(trajectory.visited) + [c for c in trajectory.citations if c not in names]:
        candidates = [names.get(eid, "")]
        if kg is not None and eid in kg:
            record = kg.entity(eid)
            if record is not None:
                candidates += [record.name, *record.aliases]
        labels[eid] = [n for n in (normalize(c) for c in candidates if c) if n]
        if eid == raw or target in labels[eid]:
            found.setdefault(eid, None)
    if not found:
        golds = {normalize(str(g)) for g in (question_field(question, "answers") or [])} if question is not None else set()
        for eid, norms in labels.items():
            if any(len(n) >= 3 and (not golds or n in golds) and _contains_phrase(target, n) for n in norms):
                found.setdefault(eid, None)
    if question is not None and question_field(question, "answer_ids"):
        if cover_exact_match(answer, question, None):
            for eid in question_field(question, "answer_ids"):
                found.setdefault(str(eid), None)
    return list(found)


# ------------------------------------------------------------------ source support
#: Normalised answers that name no entity: their source support is not defined.
YES_NO = frozenset({"yes", "no"})


@dataclass
class SourceSupport:
    """Whether the cited evidence backs the answer, and how.

    ``how``: ``"cited"`` (an answer entity is cited), ``"edge"`` (an answer
    entity is one traversed edge from a cited entity), ``"text"`` (a cited
    entity's description/text units, or the tool output that revealed it,
    states the answer), ``"yes/no"`` (``supported`` is ``None``: the answer
    names no entity, so support is not defined), or ``None`` (unsupported, or
    no answer).
    """

    supported: bool | None
    how: str | None
    answer_entities: list[str] = field(default_factory=list)
    grounded_citations: float | None = None  # share of citations some tool actually returned


def _contains_phrase(text: str, phrase: str) -> bool:
    return bool(phrase) and re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text) is not None


def source_support(trajectory: Trajectory, question: Any = None, kg: Any = None) -> SourceSupport:
    """Score whether the trajectory's citations back its answer (see docs/metrics.md, "Source support")."""
    cited = list(dict.fromkeys(trajectory.citations))
    sources = trajectory.citation_sources
    grounded = (sum(1 for c in cited if sources[c].steps) / len(cited)) if cited else None
    if trajectory.answer is None:
        return SourceSupport(None, None, [], grounded)
    ents = answer_entities(trajectory.answer, trajectory, question, kg)
    if not ents and normalize(trajectory.answer) in YES_NO:
        # A yes/no answer names no entity a citation could back: entity support does not apply.
        return SourceSupport(None, "yes/no", ents, grounded)
    cited_set = set(cited)
    if cited_set & set(ents):
        return SourceSupport(True, "cited", ents, grounded)
    for edge in trajectory.edges:
        if (edge.source in cited_set and edge.target in ents) or (edge.target in cited_set and edge.source in ents):
            return SourceSupport(True, "edge", ents, grounded)
    # what a text must state: the answer, or for a sentence answer the entity names / golds it contains
    target = normalize(trajectory.answer) or ""
    phrases = {target}
    names_of = trajectory.entity_names
    phrases.update(normalize(names_of[e]) or "" for e in ents if e in names_of)
    if question is not None:
        phrases.update(g for g in (normalize(str(a)) or "" for a in question_field(question, "answers") or []) if _contains_phrase(target, g))
    phrases.discard("")
    texts: list[str] = []
    if kg is not None:
        for cid in cited:
            record = kg.entity(cid)
            if record is not None:
                texts.append(record.description)
            texts += [u.text for u in kg.text_units_for(cid)]
    else:
        # Without the graph, the tool outputs are the only text: a segment (line or sentence) of the
        # output that revealed a cited entity, naming that entity, must state the answer.
        names = trajectory.entity_names
        for step in trajectory.steps:
            for cid in cited_set & set(step.entity_ids):
                label = normalize(names.get(cid, cid)) or ""
                for segment in re.split(r"[\n;.]+", step.output or ""):
                    norm = normalize(segment) or ""
                    if _contains_phrase(norm, label) or cid in segment:
                        texts.append(segment)
    if any(_contains_phrase(normalize(t) or "", phrase) for t in texts if t for phrase in phrases):
        return SourceSupport(True, "text", ents, grounded)
    return SourceSupport(False, None, ents, grounded)


# ------------------------------------------------------------------ trajectory fidelity
@dataclass
class Fidelity:
    """How well the citations reconstruct the path the agent took from topic to answer.

    ``path``: entity ids on the union of shortest traversed-edge paths from each
    topic entity to the answer. ``recall`` (the headline score): share of the
    path that is cited. ``precision``: share of citations on the path.
    ``order_tau``: Kendall tau between citation order and first-visit order of
    the cited, visited entities (needs two). ``reason`` says why a score is
    ``None``.
    """

    path: list[str]
    recall: float | None
    precision: float | None
    order_tau: float | None
    topic_source: str | None = None  # "question" | "first_step"
    reason: str | None = None


def _traversed_graph(trajectory: Trajectory) -> Any:
    import networkx as nx  # on use: half a second at start-up, and compare and report never reach it

    graph = nx.Graph()
    graph.add_nodes_from(trajectory.visited)
    graph.add_edges_from((e.source, e.target) for e in trajectory.edges)
    return graph


def _order_tau(trajectory: Trajectory) -> float | None:
    visit_pos = {e: i for i, e in enumerate(trajectory.visited)}
    cited = [c for c in dict.fromkeys(trajectory.citations) if c in visit_pos]
    if len(cited) < 2:
        return None
    tau = _sstats().kendalltau(list(range(len(cited))), [visit_pos[c] for c in cited]).statistic
    return None if tau is None or np.isnan(tau) else float(tau)


#: Why fidelity was not measured when neither a graph nor the questions' topic ids were given.
NO_TOPIC_NOR_KG = ("not measured: no knowledge graph and no topic_ids were given, so the topic-to-answer path is unknown "
                   "(pass --kg with your graph, or topic_ids in the questions)")


def trajectory_fidelity(trajectory: Trajectory, question: Any = None, kg: Any = None) -> Fidelity:
    """Score how well the citations reconstruct the traversal (see docs/metrics.md, "Trajectory fidelity")."""
    tau = _order_tau(trajectory)
    cited = set(trajectory.citations)
    if trajectory.answer is None:
        return Fidelity([], None, None, tau, reason="no answer")
    graph = _traversed_graph(trajectory)
    topics = [str(t) for t in (question_field(question, "topic_ids") or [])] if question is not None else []
    topics = [t for t in topics if t in graph]
    topic_source = "question"
    if not topics:
        first = next((s for s in trajectory.steps if s.entities), None)
        topics = list(dict.fromkeys(first.entity_ids)) if first is not None else []
        topic_source = "first_step"
    targets = [t for t in answer_entities(trajectory.answer, trajectory, question, kg) if t in graph]
    # Without a graph and without the question's topic ids, the path is guessed from the first step;
    # when that fails, the cause is what was not given, and the note says what to pass.
    unknown = NO_TOPIC_NOR_KG if kg is None and topic_source == "first_step" else None
    if not topics or not targets:
        reason = unknown or ("no topic entity was visited" if not topics else "the answer names no visited entity")
        return Fidelity([], None, None, tau, topic_source, reason)
    import networkx as nx

    path: dict[str, None] = {}
    for topic in topics:
        dist = nx.single_source_shortest_path_length(graph, topic)
        reachable = [t for t in targets if t in dist]
        if not reachable:
            continue
        best = min(reachable, key=lambda t: dist[t])
        for node in nx.shortest_path(graph, topic, best):
            path.setdefault(node, None)
        if topic_source == "first_step":
            break  # the first step's entities are alternatives for one entry point, not several topics
    if not path:
        return Fidelity([], None, None, tau, topic_source, unknown or "the answer is not reachable from a topic entity")
    nodes = list(path)
    on_path = cited & set(nodes)
    recall = len(on_path) / len(nodes)
    precision = len(on_path) / len(cited) if cited else None
    return Fidelity(nodes, recall, precision, tau, topic_source)


# ------------------------------------------------------------------ influence
def _removed(rec: RunRecord) -> set[str]:
    return set(rec.hidden) | set(rec.masked) | set(rec.text_blocked)


@dataclass
class SurrogateFit:
    """A ContextCite-style sparse linear surrogate over random-subset ablations of one question.

    ``weights[e]``: the fitted increase in the probability that the answer
    changes when ``e`` is removed. ``lds``: Spearman correlation between
    out-of-fold predictions and observed outcomes (``None`` when undefined,
    e.g. the outcome never varies). ``constant``: the outcome never varied.
    """

    weights: dict[str, float]
    lds: float | None
    n: int
    constant: bool = False


def fit_surrogate(
    subset_runs: Sequence[RunRecord],
    entities: Sequence[str],
    *,
    alpha: float = 0.01,
    folds: int = 5,
    seed: int = 0,
    min_runs: int = 8,
) -> SurrogateFit | None:
    """Fit ``changed ~ Lasso(removed indicators)`` on one question's random-subset runs.

    Returns ``None`` with fewer than ``min_runs`` usable runs.
    """
    runs = [r for r in subset_runs if r.changed is not None]
    if len(runs) < min_runs or not entities:
        return None
    index = {e: i for i, e in enumerate(entities)}
    x = np.zeros((len(runs), len(entities)))
    for row, rec in enumerate(runs):
        for e in _removed(rec):
            if e in index:
                x[row, index[e]] = 1.0
    y = np.array([1.0 if r.changed else 0.0 for r in runs])
    if np.all(y == y[0]):
        return SurrogateFit({e: 0.0 for e in entities}, None, len(runs), constant=True)
    from sklearn.linear_model import Lasso  # lazy: only random-subset reports pay the import
    from sklearn.model_selection import KFold, cross_val_predict

    model = Lasso(alpha=alpha, max_iter=10_000)
    k = max(2, min(folds, len(runs)))
    predicted = cross_val_predict(model, x, y, cv=KFold(n_splits=k, shuffle=True, random_state=seed))
    lds = None
    if np.ptp(predicted) > 0:
        rho = _sstats().spearmanr(predicted, y).statistic
        lds = None if np.isnan(rho) else float(rho)
    model.fit(x, y)
    return SurrogateFit({e: float(w) for e, w in zip(entities, model.coef_)}, lds, len(runs))


@dataclass
class EntityInfluence:
    """One visited (or cited) entity of one question, with its influence and label."""

    question_id: str
    entity_id: str
    name: str | None
    cited: bool
    visited: bool
    visit_rank: int | None  # 1-based first-visit position
    loo_runs: int = 0
    loo_change_rate: float | None = None
    surrogate_weight: float | None = None
    influence: float | None = None
    influential: bool | None = None
    label: str = "uncited_unknown"


def _label(cited: bool, influential: bool | None) -> str:
    head = "cited" if cited else "uncited"
    if influential is None:
        return f"{head}_unknown"
    return f"{head}_influential" if influential else f"{head}_not_influential"


def entity_influence(
    baseline: Trajectory,
    loo_runs: Sequence[RunRecord] = (),
    surrogate: SurrogateFit | None = None,
    *,
    noise: float = 0.0,
    margin: float = 0.0,
    surrogate_threshold: float = 0.1,
    min_lds: float = 0.3,
    question_id: str | None = None,
) -> list[EntityInfluence]:
    """Influence and label for each entity the baseline visited or cited.

    - leave-one-out: ``loo_change_rate`` = share of that entity's runs whose
      answer changed; influence = rate - ``noise``; influential when that
      exceeds ``margin`` *and* at least half the runs changed.
    - surrogate (used when trusted: LDS >= ``min_lds``, or the outcome never
      varied): influential when the weight exceeds ``noise + surrogate_threshold``.
    - either source saying influential makes the entity influential (the
      surrogate sees redundancy that one-at-a-time removal misses).
    """
    qid = question_id or baseline.run_id
    names = baseline.entity_names
    cited = set(baseline.citations)
    visit_rank = {e: i + 1 for i, e in enumerate(baseline.visited)}
    by_entity: dict[str, list[RunRecord]] = defaultdict(list)
    for rec in loo_runs:
        target = rec.key.variant or (rec.hidden[0] if rec.hidden else rec.masked[0] if rec.masked else "")
        if target:
            by_entity[target].append(rec)
    trusted = surrogate is not None and (surrogate.constant or (surrogate.lds is not None and surrogate.lds >= min_lds))
    out = []
    for eid in list(dict.fromkeys([*baseline.visited, *baseline.citations])):
        runs = [r for r in by_entity.get(eid, ()) if r.changed is not None]
        ent = EntityInfluence(qid, eid, names.get(eid), eid in cited, eid in visit_rank, visit_rank.get(eid))
        votes: list[bool] = []
        if runs:
            rate = sum(1 for r in runs if r.changed) / len(runs)
            ent.loo_runs, ent.loo_change_rate = len(runs), rate
            ent.influence = rate - noise
            votes.append(ent.influence > margin and rate >= 0.5)
        if surrogate is not None and eid in surrogate.weights:
            ent.surrogate_weight = surrogate.weights[eid]
            if ent.influence is None:
                ent.influence = ent.surrogate_weight
            if trusted:
                votes.append(ent.surrogate_weight > noise + surrogate_threshold)
        ent.influential = any(votes) if votes else None
        ent.label = _label(ent.cited, ent.influential)
        out.append(ent)
    return out


def coverage(entities: Sequence[EntityInfluence]) -> float | None:
    """Share of the influential entities that are cited; ``None`` when none is known to be influential."""
    influential = [e for e in entities if e.influential]
    if not influential:
        return None
    return sum(1 for e in influential if e.cited) / len(influential)


# ------------------------------------------------------------------ structural faithfulness
@dataclass
class Faithfulness:
    """How much the answer rests on context the citations do not account for.

    ``excess_*`` = max(0, change rate - noise) / (1 - noise), the change a
    condition causes beyond the noise floor, in [0, 1]. ``score`` =
    1 - excess under uncited removal (1: uncited context did not matter).
    ``structural_gap`` = excess(uncited removal) - excess(text-only
    isolation): positive when the uncited entities' *structure* (ids, edges)
    matters beyond their text, the paper's "neighborhoods matter" effect.
    """

    score: float | None
    mask_score: float | None
    excess_uncited_removal: float | None
    excess_uncited_mask: float | None
    excess_text_only: float | None
    structural_gap: float | None
    noise: float


def _excess(rate: float | None, noise: float) -> float | None:
    if rate is None:
        return None
    if noise >= 1.0:
        return 0.0
    return max(0.0, rate - noise) / (1.0 - noise)


def structural_faithfulness(
    uncited_removal: float | None,
    text_only_isolation: float | None = None,
    uncited_mask: float | None = None,
    *,
    noise: float = 0.0,
) -> Faithfulness:
    """Structural faithfulness from output-changed rates (see docs/metrics.md)."""
    ex_u = _excess(uncited_removal, noise)
    ex_m = _excess(uncited_mask, noise)
    ex_t = _excess(text_only_isolation, noise)
    gap = ex_u - ex_t if ex_u is not None and ex_t is not None else None
    return Faithfulness(
        score=None if ex_u is None else 1.0 - ex_u,
        mask_score=None if ex_m is None else 1.0 - ex_m,
        excess_uncited_removal=ex_u,
        excess_uncited_mask=ex_m,
        excess_text_only=ex_t,
        structural_gap=gap,
        noise=noise,
    )
