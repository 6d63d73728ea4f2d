"""From two loaded reports to the numbers of a comparison (no I/O, no rendering).

Everything is computed from results.json alone (its per-question rows), so a
baseline stored months ago compares as well as one made a minute ago.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..scoring.stats import min_detectable_difference
from .model import Change, CitationIssue, ComparisonData, Flip, InfluencerChange, Side
from .paired import binary_change, score_change

__all__ = ["build_comparison", "CONDITION_METRICS", "SCORE_METRICS", "INFLUENCE_CONDITIONS"]

#: Metrics measured per condition (a rule names them ``<condition>.<metric>``).
CONDITION_METRICS: dict[str, str] = {"accuracy": "accuracy", "influence": "influence (drop from baseline)"}
#: Metrics of the evaluation as a whole, from each question's baseline run and leave-one-out.
SCORE_METRICS: dict[str, str] = {
    "support": "source support",
    "grounded_citations": "grounded citations",
    "fidelity": "trajectory fidelity",
    "coverage": "coverage",
    "hidden_influencers": "hidden influencers",
}
#: Conditions that measure which entities are influential (coverage and hidden influence need one).
INFLUENCE_CONDITIONS = ("leave_one_out", "random_subsets")
_PER_ENTITY = ("leave_one_out", "random_subsets")


def _paired(pairs: Sequence[tuple[Any, Any]], get: Callable[[Any], float | None]) -> tuple[list[float], list[float]]:
    base, new = [], []
    for b, n in pairs:
        x, y = get(b), get(n)
        if x is not None and y is not None:
            base.append(float(x))
            new.append(float(y))
    return base, new


def _influence(cond: str) -> Callable[[Any], float | None]:
    def get(q: Any) -> float | None:
        base, other = q.accuracy.get("baseline"), q.accuracy.get(cond)
        return None if base is None or other is None else base - other

    return get


def _label(report: Any, cond: str) -> str:
    row = report.condition(cond)
    return row.label if row is not None else cond


def build_comparison(
    base_report: Any, new_report: Any, base: Side, new: Side, pairs: list[tuple[Any, Any]], conditions: list[str],
    *, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0,
) -> ComparisonData:
    """Every change with its paired test, and the per-question events (flips, influencers, citations)."""
    opts = {"alpha": alpha, "n_boot": n_boot, "seed": seed}
    changes: list[Change] = []
    for cond in conditions:
        label = _label(base_report, cond)
        b, n = _paired(pairs, lambda q, c=cond: q.accuracy.get(c))
        acc = Change(metric="accuracy", condition=cond, label="baseline accuracy" if cond == "baseline" else f"accuracy under {label.lower()}")
        # per-entity conditions average over many variants: a majority flip means little, test the shares
        changes.append((score_change if cond in _PER_ENTITY else binary_change)(acc, b, n, **opts))
        if cond != "baseline":
            b, n = _paired(pairs, _influence(cond))
            changes.append(score_change(Change(metric="influence", condition=cond, label=f"influence of {label.lower()}"), b, n, **opts))

    influence_measured = any(c in conditions for c in INFLUENCE_CONDITIONS)
    not_measured = "not measured: needs leave_one_out (or random_subsets) in both evaluations"
    for metric, label in SCORE_METRICS.items():
        change = Change(metric=metric, label=label, unit="count" if metric == "hidden_influencers" else "share")
        if metric in ("coverage", "hidden_influencers") and not influence_measured:
            change.verdict = not_measured
            changes.append(change)
            continue
        if metric == "support":
            b, n = _paired(pairs, lambda q: None if q.supported is None else float(q.supported))
            change = binary_change(change, b, n, **opts)
        elif metric == "hidden_influencers":
            b, n = _paired(pairs, lambda q: float(len(q.hidden_influence)))
            change = score_change(change, b, n, total=True, **opts)
        else:
            b, n = _paired(pairs, lambda q, m=metric: getattr(q, m))
            change = score_change(change, b, n, **opts)
        if change.n == 0 and not change.verdict:
            change.verdict = "not measured: no question has it in both evaluations"
        changes.append(change)

    names = {e.entity_id: e.name for r in (base_report, new_report) for e in r.entities if e.name}
    influencers = _influencers(pairs) if influence_measured else []
    for inf in influencers:
        inf.name = names.get(inf.entity_id)
    return ComparisonData(
        base=base, new=new, alpha=alpha, n_questions=len(pairs), conditions=conditions, changes=changes,
        flips=_flips(pairs, conditions), influencers=influencers,
        unsupported=_unsupported(pairs), names=names,
        mdd=min_detectable_difference(len(pairs), None, alpha=alpha) if pairs else None,
    )


def _flips(pairs: Sequence[tuple[Any, Any]], conditions: Sequence[str]) -> list[Flip]:
    flips: list[Flip] = []
    for cond in conditions:
        if cond in _PER_ENTITY:
            continue
        for b, n in pairs:
            x, y = b.accuracy.get(cond), n.accuracy.get(cond)
            if x is None or y is None or (x > 0.5) == (y > 0.5):
                continue
            flips.append(Flip(
                question_id=b.question_id, question=b.question, condition=cond, base_correct=x > 0.5, new_correct=y > 0.5,
                base_answer=b.answers.get(cond), new_answer=n.answers.get(cond),
            ))
    return flips


def _influencers(pairs: Sequence[tuple[Any, Any]]) -> list[InfluencerChange]:
    out: list[InfluencerChange] = []
    for b, n in pairs:
        old, now = list(b.hidden_influence), list(n.hidden_influence)
        out += [InfluencerChange(question_id=b.question_id, entity_id=e, appeared=True) for e in now if e not in old]
        out += [InfluencerChange(question_id=b.question_id, entity_id=e, appeared=False) for e in old if e not in now]
    return out


def _invented(q: Any) -> list[str]:
    """Citations no tool returned (only knowable when the run visited something)."""
    seen = set(q.visited)
    return [c for c in q.citations if c not in seen] if seen else []


def _unsupported(pairs: Sequence[tuple[Any, Any]]) -> list[CitationIssue]:
    out: list[CitationIssue] = []
    for b, n in pairs:
        if b.supported is True and n.supported is False:
            out.append(CitationIssue(question_id=n.question_id, question=n.question, answer=n.baseline_answer,
                                     citations=list(n.citations), reason="lost support"))
            continue
        fresh = [c for c in _invented(n) if c not in set(_invented(b))]
        if fresh:
            out.append(CitationIssue(question_id=n.question_id, question=n.question, answer=n.baseline_answer,
                                     citations=list(n.citations), reason="invented citation", entity_ids=fresh))
    return out
