"""A pytest helper: fail a test when an agent change regresses provenance against a stored baseline.

The baseline is a results.json committed to the repository (or downloaded from
a CI artifact); the test evaluates the current agent and compares::

    from graphtrail.evaluators.comparison import assert_no_provenance_regression

    def test_agent_stays_grounded(tmp_path):
        report = evaluate(build_agent(), load_questions("countries-demo"), kg=kg, out_dir=tmp_path)
        assert_no_provenance_regression(report, "tests/baselines/results.json")
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .api import Comparison, compare
from .rules import Rule, default_rules

__all__ = ["assert_no_provenance_regression"]


def assert_no_provenance_regression(
    new: Any, baseline: Any, rules: Iterable[str | Rule] | str | None = None, *, alpha: float = 0.05,
) -> Comparison:
    """Raise ``AssertionError`` (one line per broken rule) when ``new`` breaks ``rules`` against ``baseline``.

    ``new`` and ``baseline`` are Reports, evaluation folders or results.json
    paths. Without ``rules``, the default rules (``DEFAULT_RULES``, the same
    ``graphtrail compare`` checks without ``--fail-on``) fail only on
    *significant* losses of accuracy, source support, coverage or fidelity, or
    a significant rise in hidden influencers, so a noisy agent does not make
    the test flaky; a metric neither evaluation measured is skipped. Returns
    the comparison for further asserts.
    """
    __tracebackhide__ = True  # pytest shows the message, not this frame
    comparison = compare(baseline, new, alpha=alpha)
    gate = comparison.check(default_rules() if rules is None else rules)
    if not gate.ok:
        lines = "\n".join(f"  - {o.message}" for o in gate.broken)
        raise AssertionError(f"provenance regression against the stored baseline ({len(gate.broken)} rule(s) broken):\n{lines}")
    return comparison
