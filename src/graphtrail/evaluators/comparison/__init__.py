"""Compare two evaluations: paired tests of BASE -> NEW, and a gate for pull requests.

``compare(base, new)`` returns a :class:`Comparison`; ``.check(rules)`` a
:class:`GateResult`. See docs/compare.md.
"""

from __future__ import annotations

from .api import Comparison, compare
from .fingerprint import evaluation_fingerprint
from .model import CompareError
from .rules import DEFAULT_RULES, GateResult, Rule, RuleError, parse_rules
from .testing import assert_no_provenance_regression

__all__ = [
    "compare",
    "Comparison",
    "CompareError",
    "GateResult",
    "Rule",
    "RuleError",
    "DEFAULT_RULES",
    "parse_rules",
    "evaluation_fingerprint",
    "assert_no_provenance_regression",
]
