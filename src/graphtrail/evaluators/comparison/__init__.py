"""Compare two evaluations: paired tests of BASE -> NEW, and a gate for pull requests.

``compare(base, new)`` returns a :class:`Comparison`; ``.check(rules)`` a
:class:`GateResult`. See docs/compare.md.
"""

from __future__ import annotations

from .api import Comparison, compare
from .fingerprint import evaluation_fingerprint
from .model import CompareError
from .direction import better_when, judgement
from .rules import DEFAULT_RULES, GateResult, Rule, RuleError, default_rules, parse_rule, parse_rules
from .testing import assert_no_provenance_regression

__all__ = [
    "compare",
    "Comparison",
    "CompareError",
    "GateResult",
    "Rule",
    "RuleError",
    "DEFAULT_RULES",
    "default_rules",
    "parse_rule",
    "parse_rules",
    "better_when",
    "judgement",
    "evaluation_fingerprint",
    "assert_no_provenance_regression",
]
