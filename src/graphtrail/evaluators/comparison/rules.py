"""The gate: readable rules such as ``support<-0.05`` checked against a comparison.

A rule is ``[new.][CONDITION.]METRIC OP VALUE[:significant]``:

- ``METRIC`` of a change (``accuracy``, ``influence``, ``support``, ``coverage``,
  ``fidelity``, ``grounded_citations``, ``hidden_influencers``) compares the
  change NEW - BASE; with the ``new.`` prefix, NEW's own value instead.
  ``accuracy`` and ``influence`` are per condition (``cited_removal.influence``;
  ``*.influence`` checks every condition; a bare ``accuracy`` is the baseline's).
- a count of per-question events (``new_unsupported_citations``,
  ``new_hidden_influencers``, ``lost_hidden_influencers``, ``flipped_to_wrong``,
  ``flipped_to_right``, ``flipped``, ``dropped_questions``) compares the count.
- ``OP`` is ``<``, ``<=``, ``>`` or ``>=``; ``VALUE`` a number, ``-5%`` or ``-5pts``
  (both -0.05).
- ``:significant`` breaks the rule only when the change is also significant
  (its paired test's p < alpha), so noise alone never fails a build.

A rule describes a regression: it is *broken* when its comparison holds. A rule
that cannot be evaluated (the metric was not measured in both evaluations) is
broken too, with the reason: a gate must not pass because a number went missing.

:data:`DEFAULT_RULES` (built from :mod:`.direction`, the one place that says which
way each number should move) is what ``graphtrail compare`` checks without
``--fail-on`` and ``assert_no_provenance_regression`` without ``rules``. As
defaults they skip a metric neither evaluation measured (coverage without
leave-one-out), saying so, rather than break on it.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .build import CONDITION_METRICS, SCORE_METRICS
from .direction import default_rule_texts, judgement
from .model import Change, CompareError, ComparisonData

__all__ = ["Rule", "RuleError", "RuleOutcome", "GateResult", "parse_rule", "parse_rules", "check_rules", "COUNT_METRICS",
           "DEFAULT_RULES", "default_rules"]

COUNT_METRICS: tuple[str, ...] = (
    "new_unsupported_citations", "new_hidden_influencers", "lost_hidden_influencers",
    "flipped_to_wrong", "flipped_to_right", "flipped", "dropped_questions",
)
_ALIASES = {"source_support": "support", "hidden_influence": "hidden_influencers"}
_OPS: dict[str, Callable[[float, float], bool]] = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}
_RULE = re.compile(
    r"^\s*(?P<lhs>[A-Za-z0-9_.*]+)\s*(?P<op><=|>=|<|>)\s*(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(?P<unit>%|pts?)?"
    r"\s*(?::\s*(?P<qual>[A-Za-z]+))?\s*$"
)

#: What ``graphtrail compare`` checks without ``--fail-on``, and ``assert_no_provenance_regression`` without
#: ``rules``: a significant loss of baseline accuracy, source support, coverage or trajectory fidelity, or a
#: significant rise in hidden influencers. Built from :mod:`.direction`.
DEFAULT_RULES: tuple[str, ...] = default_rule_texts()


class RuleError(CompareError):
    """A gate rule that cannot be read; the message shows the grammar."""


@dataclass(frozen=True)
class Rule:
    """One parsed rule; ``text`` is how the user wrote it."""

    text: str
    metric: str
    op: str
    value: float
    condition: str | None = None
    absolute: bool = False  # new.X: NEW's value, not the change
    significant: bool = False
    if_measured: bool = False  # a default rule: skipped (not broken) when its metric is not in both evaluations

    @property
    def is_count(self) -> bool:
        return self.metric in COUNT_METRICS


@dataclass
class RuleOutcome:
    """A rule checked against one change (one per condition for ``*.metric``)."""

    rule: Rule
    broken: bool
    message: str  # "<rule>: broken|kept (<detail>)"
    value: float | None = None
    condition: str | None = None
    detail: str = ""  # the numbers behind the verdict


@dataclass
class GateResult:
    """What ``Comparison.check(rules)`` returns: ``ok``, the ``broken`` rules and a one-paragraph ``summary``."""

    outcomes: list[RuleOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.broken

    @property
    def broken(self) -> list[RuleOutcome]:
        return [o for o in self.outcomes if o.broken]

    @property
    def summary(self) -> str:
        if not self.outcomes:
            return "no rules checked"
        if self.ok:
            return f"{len(self.outcomes)} rule check(s) passed: " + "; ".join(o.message for o in self.outcomes)
        return f"{len(self.broken)} of {len(self.outcomes)} rule check(s) broken: " + "; ".join(o.message for o in self.broken)

    def __bool__(self) -> bool:
        return self.ok

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checked": [
                {"rule": o.rule.text, "condition": o.condition, "broken": o.broken, "value": o.value, "message": o.message}
                for o in self.outcomes
            ],
        }


_GRAMMAR = (
    "write [new.][CONDITION.]METRIC OP VALUE[:significant], e.g. support<-0.05, cited_removal.influence<-10%, "
    "new_unsupported_citations>0 or accuracy<-0.05:significant"
)


def parse_rule(text: str) -> Rule:
    """Read one rule; :class:`RuleError` (one line, with the grammar) when it cannot be read."""
    m = _RULE.match(text)
    if m is None:
        raise RuleError(f"cannot read the rule {text!r}; {_GRAMMAR}")
    parts = m["lhs"].split(".")
    absolute = parts[0] == "new" and len(parts) > 1
    if absolute:
        parts = parts[1:]
    if len(parts) > 2 or not all(parts):
        raise RuleError(f"cannot read the metric {m['lhs']!r} in rule {text!r}; {_GRAMMAR}")
    condition, metric = (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])
    metric = _ALIASES.get(metric, metric)
    known = [*CONDITION_METRICS, *SCORE_METRICS, *COUNT_METRICS]
    if metric not in known:
        raise RuleError(f"unknown metric {metric!r} in rule {text!r}; choose from: {', '.join(known)}")
    if condition is not None and metric not in CONDITION_METRICS:
        raise RuleError(f"{metric} is not measured per condition (rule {text!r}); write it without {condition + '.'!r}")
    if metric == "influence" and condition is None:
        raise RuleError(f"influence is per condition (rule {text!r}); name one, e.g. cited_removal.influence, or *.influence")
    qual = (m["qual"] or "").lower()
    if qual and qual != "significant":
        raise RuleError(f"unknown qualifier ':{m['qual']}' in rule {text!r}; the only one is ':significant'")
    if metric in COUNT_METRICS and (qual or absolute):
        raise RuleError(f"{metric} is a count of events, not a change: drop {':significant' if qual else 'new.'!r} from rule {text!r}")
    value = float(m["num"]) / (100.0 if m["unit"] else 1.0)
    if metric == "accuracy" and condition is None:
        condition = "baseline"
    return Rule(text=text.strip(), metric=metric, op=m["op"], value=value, condition=condition,
                absolute=absolute, significant=bool(qual))


def parse_rules(rules: Iterable[str] | str) -> list[Rule]:
    """Rules from a list, or from one string separated by commas/semicolons/newlines."""
    if isinstance(rules, str):
        rules = re.split(r"[,;\n]", rules)
    parsed = [parse_rule(r) for r in rules if r and r.strip()]
    return parsed


def default_rules() -> list[Rule]:
    """:data:`DEFAULT_RULES` parsed, each skipped when its metric was not measured in both evaluations."""
    from dataclasses import replace

    return [replace(parse_rule(text), if_measured=True) for text in DEFAULT_RULES]


def _fmt(change: Change, value: float | None) -> str:
    if value is None:
        return "–"
    if change.unit == "count":
        return f"{value:.0f}"
    return f"{100 * value:.0f}%"


def _describe(change: Change) -> str:
    if change.base is None or change.new is None or change.delta is None:
        return f"{change.label}: {change.verdict}"
    delta = f"{change.delta:+.0f}" if change.unit == "count" else f"{100 * change.delta:+.0f} pts"
    p = "" if change.p_value is None or change.verdict == "no change" else f", p = {change.p_value:.3g}"
    way = judgement(change)
    way = f"{way}, " if way in ("better", "worse") else ""
    return f"{change.label} {_fmt(change, change.base)} -> {_fmt(change, change.new)} ({delta}, {way}{change.verdict}{p})"


def _check_change(rule: Rule, change: Change | None, cond: str | None) -> RuleOutcome:
    if change is None or change.n == 0 or change.delta is None:
        why = change.verdict if change is not None else f"{cond or rule.metric} is not in both evaluations"
        if rule.if_measured:
            return RuleOutcome(rule, False, f"{rule.text}: not checked ({why})", None, cond, f"not checked: {why}")
        return RuleOutcome(rule, True, f"{rule.text}: cannot be checked ({why})", None, cond, f"cannot be checked: {why}")
    value = change.new if rule.absolute else change.delta
    assert value is not None
    holds = _OPS[rule.op](value, rule.value)
    if holds and rule.significant and not change.significant:
        return RuleOutcome(rule, False, f"{rule.text}: kept, the change is not significant ({_describe(change)})", value, cond,
                           _describe(change))
    state = "broken" if holds else "kept"
    return RuleOutcome(rule, holds, f"{rule.text}: {state} ({_describe(change)})", value, cond, _describe(change))


def check_rules(data: ComparisonData, rules: Iterable[str | Rule] | str) -> GateResult:
    """Check ``rules`` against a comparison; a rule naming a condition not compared raises :class:`RuleError`."""
    parsed = parse_rules(rules) if isinstance(rules, str) else [r if isinstance(r, Rule) else parse_rule(r) for r in rules]
    outcomes: list[RuleOutcome] = []
    for rule in parsed:
        if rule.is_count:
            value = data.counts[rule.metric]
            holds = _OPS[rule.op](value, rule.value)
            detail = f"{rule.metric} = {value}"
            outcomes.append(RuleOutcome(rule, holds, f"{rule.text}: {'broken' if holds else 'kept'} ({detail})", value, None, detail))
            continue
        if rule.condition == "*":
            conds = [c for c in data.conditions if not (rule.metric == "influence" and c == "baseline")]
        elif rule.condition is not None:
            if rule.condition not in data.conditions and not rule.if_measured:
                raise RuleError(
                    f"rule {rule.text!r} names condition {rule.condition!r}, which is not in both evaluations; "
                    f"compared: {', '.join(data.conditions)}"
                )
            conds = [rule.condition]
        else:
            conds = [None]  # type: ignore[list-item]
        for cond in conds:
            outcomes.append(_check_change(rule, data.change(rule.metric, cond), cond))
    return GateResult(outcomes)
