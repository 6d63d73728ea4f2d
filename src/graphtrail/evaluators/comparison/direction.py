"""Which way each compared number should move: defined once, read by the findings, the tables and the default gate.

"influence 0% → 50%" is good news for cited removal (the answers rest on what
they cite) and bad news for visited-but-uncited removal (they rest on what they
do not cite). So a direction is per metric and, for ``accuracy`` and
``influence``, per condition. Controls (random removal, the isolations, the
per-entity conditions) have none: a move there is reported, never judged.
"""

from __future__ import annotations

from typing import Literal

from .model import Change

__all__ = ["HIGHER", "LOWER", "better_when", "judgement", "DEFAULT_RULE_METRICS", "default_rule_texts", "COUNT_BETTER"]

HIGHER, LOWER = 1, -1

#: Scores of the evaluation as a whole: which way is better.
_SCORES: dict[str, int] = {
    "support": HIGHER, "grounded_citations": HIGHER, "fidelity": HIGHER, "coverage": HIGHER, "hidden_influencers": LOWER,
}
#: ``influence`` per condition: the answers should rest on their citations, not on what they leave uncited.
_INFLUENCE: dict[str, int] = {"cited_removal": HIGHER, "uncited_removal": LOWER, "uncited_mask": LOWER}
#: Event counts a rule can read: more of them is better (+1) or worse (-1).
COUNT_BETTER: dict[str, int] = {
    "new_unsupported_citations": LOWER, "new_hidden_influencers": LOWER, "lost_hidden_influencers": HIGHER,
    "flipped_to_wrong": LOWER, "flipped_to_right": HIGHER, "dropped_questions": LOWER,
}

#: What ``graphtrail compare`` (without ``--fail-on``) and ``assert_no_provenance_regression`` (without
#: ``rules``) fail on: a *significant* move the wrong way of these, so noise alone never fails a build.
DEFAULT_RULE_METRICS: tuple[str, ...] = ("accuracy", "support", "coverage", "fidelity", "hidden_influencers")


def better_when(metric: str, condition: str | None = None) -> int | None:
    """:data:`HIGHER`, :data:`LOWER`, or ``None`` when neither direction is better (a control)."""
    if metric in _SCORES:
        return _SCORES[metric]
    if metric in COUNT_BETTER:
        return COUNT_BETTER[metric]
    if metric == "influence":
        return _INFLUENCE.get(condition or "")
    if metric == "accuracy":
        if condition in (None, "baseline"):
            return HIGHER
        influence = _INFLUENCE.get(condition)
        return None if influence is None else -influence  # accuracy under an ablation moves against its influence
    return None


def judgement(change: Change) -> Literal["better", "worse", "no direction", "–"]:
    """``better`` or ``worse`` for a number that moved (significant or not); ``–`` when it did not move."""
    if change.delta is None or change.delta == 0:
        return "–"
    way = better_when(change.metric, change.condition)
    if way is None:
        return "no direction"
    return "better" if (change.delta > 0) == (way == HIGHER) else "worse"


def default_rule_texts() -> tuple[str, ...]:
    """The default rules as text: a significant move the wrong way of each of :data:`DEFAULT_RULE_METRICS`."""
    out = []
    for metric in DEFAULT_RULE_METRICS:
        way = better_when(metric)
        assert way is not None
        out.append(f"{metric}{'<' if way == HIGHER else '>'}0:significant")
    return tuple(out)
