"""``graphtrail compare BASE NEW``: the command body (the option declarations live in app.py).

The gate fails by default: without ``--fail-on`` the default rules
(``DEFAULT_RULES``, docs/compare.md) are checked; ``--fail-on none`` checks none;
``--fail-on default,...`` adds rules to them.

Exit codes: 0 when every rule is kept (or ``--fail-on none``), 1 when a rule is
broken (one ``graphtrail: rule broken:`` line each on stderr), 2 on bad input (one
``graphtrail: error:`` line, via :class:`InputError`).

Nothing is written unless ``--out`` is given (then compare.{md,json,html} go there,
through graphtrail._outdir); under GitHub Actions the Markdown is also appended to
``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = ["run_compare", "FORMATS", "EXIT_RULE_BROKEN", "gate_rules"]

FORMATS = ("table", "markdown", "json")
#: A rule broken: the build fails (distinct from 2, bad input).
EXIT_RULE_BROKEN = 1
_NOT_WRITTEN = "compare.html and compare.json (rerun with --out DIR to write them)"


def gate_rules(fail_on: list[str] | None) -> list[Any]:
    """The rules to check: the defaults without ``--fail-on``; none for ``none``; ``default`` expands to them."""
    from graphtrail.evaluators.comparison import default_rules, parse_rule

    specs = [r.strip() for spec in (fail_on if fail_on is not None else ["default"]) for r in spec.split(",") if r.strip()]
    if any(s.lower() == "none" for s in specs):
        if len(specs) > 1:
            raise InputError("--fail-on none turns the gate off, so it takes no other rule",
                             "pass either --fail-on none or the rules to check")
        return []
    rules: list[Any] = []
    for spec in specs:
        rules.extend(default_rules() if spec.lower() == "default" else [parse_rule(spec)])
    return rules


def run_compare(
    base: Path, new: Path, *, fail_on: list[str] | None, fmt: str, out: Path | None, html: bool, alpha: float, console: Any,
    force: bool = False,
) -> int:
    """Compare, print in ``fmt``, write compare.{json,md,html} into ``out`` (if given), append to
    $GITHUB_STEP_SUMMARY; return the exit code."""
    import json

    from graphtrail._outdir import append_text, check
    from graphtrail.evaluators.comparison import CompareError

    if fmt not in FORMATS:
        raise InputError(f"--format {fmt!r} is not a format", "choose from: " + ", ".join(FORMATS))
    if out is not None:
        check(out, force=force)  # a refused --out fails before the comparison is computed
    try:
        rules = gate_rules(fail_on)
        from graphtrail.evaluators.comparison import compare  # after the rules: a bad one is answered at once

        comparison = compare(base, new, alpha=alpha)
        gate = comparison.check(rules)
    except CompareError as exc:
        raise InputError(str(exc)) from None

    full = str(out / ("compare.html" if html else "compare.json")) if out is not None else _NOT_WRITTEN
    markdown = comparison.to_markdown(gate, full=full)
    if fmt == "json":
        data = comparison.to_dict()
        data["gate"] = gate.to_dict()
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    elif fmt == "markdown":
        sys.stdout.write(markdown)
    else:
        from graphtrail.evaluators.comparison.render_terminal import render_terminal

        console.print(render_terminal(comparison, gate))

    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        append_text(summary, markdown + "\n")  # O_APPEND, a symlink refused
    if out is not None:
        paths = comparison.write(out, gate, html=html, force=force)
        if fmt == "table":
            also = ", ".join(p.name for k, p in paths.items() if k != "html")
            console.print(f"comparison  {paths.get('html', paths['json'])}  (also {also})", soft_wrap=True, highlight=False)
    if not gate.ok:
        from graphtrail._secrets import scan_text

        for outcome in gate.broken:
            print(scan_text(f"graphtrail: rule broken: {outcome.rule.text}: {' '.join(outcome.detail.split())}"), file=sys.stderr)
        return EXIT_RULE_BROKEN
    return 0
