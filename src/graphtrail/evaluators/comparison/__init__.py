"""Compare two evaluations: paired tests of BASE -> NEW, and a gate for pull requests.

``compare(base, new)`` returns a :class:`Comparison`; ``.check(rules)`` a
:class:`GateResult`. See docs/compare.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Names are imported on first use (``_EXPORTS`` maps each to its module), so that a bad ``--fail-on``
# rule is answered from :mod:`.rules` without loading the reports' models and statistics.
_EXPORTS: dict[str, str] = {
    "Comparison": "api",
    "compare": "api",
    "evaluation_fingerprint": "fingerprint",
    "CompareError": "model",
    "DEFAULT_RULES": "rules",
    "GateResult": "rules",
    "Rule": "rules",
    "RuleError": "rules",
    "parse_rules": "rules",
    "parse_rule": "rules",
    "default_rules": "rules",
    "better_when": "direction",
    "judgement": "direction",
    "assert_no_provenance_regression": "testing",
}

if TYPE_CHECKING:  # pragma: no cover
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)
