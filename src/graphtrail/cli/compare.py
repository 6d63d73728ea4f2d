"""``graphtrail compare BASE NEW``: the command body (the option declarations live in app.py).

Exit codes: 0 when every ``--fail-on`` rule is kept (or none was given), 1 when
a rule is broken (one ``graphtrail: rule broken:`` line each on stderr), 2 on bad
input (one ``graphtrail: error:`` line, via :class:`InputError`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = ["run_compare", "FORMATS", "EXIT_RULE_BROKEN"]

FORMATS = ("table", "markdown", "json")
#: ``--fail-on`` rule broken: the build fails (distinct from 2, bad input).
EXIT_RULE_BROKEN = 1


def _default_out(new: Path) -> Path:
    """Beside NEW's reports: its folder, or the folder of the results.json given."""
    return new if new.is_dir() else new.parent


def run_compare(
    base: Path, new: Path, *, fail_on: list[str] | None, fmt: str, out: Path | None, html: bool, alpha: float, console: Any,
) -> int:
    """Compare, print in ``fmt``, write compare.{json,md,html}, append to $GITHUB_STEP_SUMMARY; return the exit code."""
    import json

    from graphtrail.evaluators.comparison import CompareError, parse_rules

    if fmt not in FORMATS:
        raise InputError(f"--format {fmt!r} is not a format", "choose from: " + ", ".join(FORMATS))
    try:
        rules = parse_rules([r for spec in fail_on or [] for r in spec.split(",")])
        from graphtrail.evaluators.comparison import compare  # after the rules: a bad one is answered at once

        comparison = compare(base, new, alpha=alpha)
        gate = comparison.check(rules) if rules else None
    except CompareError as exc:
        raise InputError(str(exc)) from None

    markdown = comparison.to_markdown(gate)
    if fmt == "json":
        data = comparison.to_dict()
        if gate is not None:
            data["gate"] = gate.to_dict()
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    elif fmt == "markdown":
        sys.stdout.write(markdown)
    else:
        from graphtrail.evaluators.comparison.render_terminal import render_terminal

        console.print(render_terminal(comparison, gate))

    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(markdown + "\n")
    if html:
        target = out or _default_out(new)
        paths = comparison.write(target, gate)
        if fmt == "table":
            console.print(f"comparison  {paths['html']}  (also compare.md, compare.json)", soft_wrap=True, highlight=False)
    if gate is not None and not gate.ok:
        for outcome in gate.broken:
            print(f"graphtrail: rule broken: {outcome.rule.text}: {' '.join(outcome.detail.split())}", file=sys.stderr)
        return EXIT_RULE_BROKEN
    return 0
