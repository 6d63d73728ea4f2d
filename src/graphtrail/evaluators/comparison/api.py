"""``compare(base, new)``: two evaluations side by side, with paired tests and a gate.

This is the one entry point; :mod:`.pairing` decides what may be compared,
:mod:`.build` computes, :mod:`.rules` gates and the ``render_*`` modules draw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .build import build_comparison
from .model import ComparisonData
from .pairing import check_comparable, load_evaluation, pair_conditions, pair_questions, side_of
from .rules import GateResult, check_rules

__all__ = ["compare", "Comparison"]


class Comparison(ComparisonData):
    """BASE -> NEW: every change with its paired test, the per-question events, and the gate.

    ``check(rules)`` returns a :class:`~.rules.GateResult` (``ok``, ``broken``,
    ``summary``); ``findings()`` the sentences a PR comment opens with;
    ``to_markdown()``, ``to_html()`` and ``to_dict()`` the three outputs.
    """

    def check(self, rules: Any) -> GateResult:
        """Check gate rules (strings such as ``"support<-0.05"``, or :class:`~.rules.Rule`)."""
        return check_rules(self, rules)

    def findings(self) -> list[str]:
        from .findings import findings

        return findings(self)

    def to_markdown(self, gate: GateResult | None = None, *, full: str | None = None) -> str:
        """The PR comment (under GitHub's 65,536 characters); ``full`` names where every row is."""
        from .render_markdown import render_markdown

        return render_markdown(self, gate, full=full)

    def to_html(self, gate: GateResult | None = None, *, plot: bool = True) -> str:
        from .render_html import render_html

        return render_html(self, gate, plot=plot)

    def write(self, out_dir: str | Path, gate: GateResult | None = None, *, html: bool = True,
              force: bool = False) -> dict[str, Path]:
        """Write compare.json, compare.md (and compare.html) into ``out_dir``; returns their paths.

        Through :mod:`graphtrail._outdir`: a non-empty folder graphtrail did not make is
        refused unless ``force``, the folder's lock is held while writing, and each file is
        written atomically (a symlink planted there is replaced, never written through).
        """
        import json

        from ..._outdir import claim, lock, write_text

        out = claim(out_dir, force=force)
        data = self.to_dict()
        if gate is not None:
            data["gate"] = gate.to_dict()
        paths = {"json": out / "compare.json", "markdown": out / "compare.md"}
        if html:
            paths["html"] = out / "compare.html"
        with lock(out):
            write_text(paths["json"], json.dumps(data, indent=2, ensure_ascii=False))
            write_text(paths["markdown"], self.to_markdown(gate, full=f"{paths.get('html', paths['json']).name} beside this file"))
            if html:
                write_text(paths["html"], self.to_html(gate))
        return paths

    def __repr__(self) -> str:
        from ..._display import one_line, plural

        moved = sum(1 for c in self.changes if c.significant)
        return one_line("Comparison", f"{self.base.model or self.base.agent} -> {self.new.model or self.new.agent}",
                        plural(self.n_questions, "paired question"), plural(moved, "significant change"))

    __str__ = __repr__

    def __rich__(self) -> Any:
        from .render_terminal import render_terminal

        return render_terminal(self)


def method_notes(base: Any, new: Any, conditions: list[str]) -> list[str]:
    """One note per side whose compared conditions were not all measured exactly (docs/ablations.md, "Routes")."""
    from ..scoring.coverage import IMPROVE_HINT

    out = []
    for label, report in (("BASE", base), ("NEW", new)):
        rows = [r for r in report.conditions if r.condition in conditions and getattr(r, "method", None) not in (None, "exact")]
        if rows:
            how = ", ".join(f"{r.label}: {r.method}" for r in rows)
            out.append(f"{label} measured conditions by filtering its tools' outputs, not exactly ({how}); an estimated "
                       f"condition's change may be the heuristic's, not the agent's. To make them exact, {IMPROVE_HINT}")
    return out


def compare(base: Any, new: Any, *, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0) -> Comparison:
    """Compare two evaluations (folders, results.json paths, or Reports) question by question.

    Raises :class:`~.model.CompareError` when they cannot be compared: unreadable,
    a different graph, no question in common, a different judge.
    """
    from .model import CompareError

    if not 0 < alpha < 1:
        raise CompareError(f"alpha must be between 0 and 1, got {alpha}")
    base_report, base_path = load_evaluation(base, "BASE")
    new_report, new_path = load_evaluation(new, "NEW")
    b_side, n_side = side_of(base_report, "BASE", base_path), side_of(new_report, "NEW", new_path)
    differs, notes = check_comparable(b_side, n_side)
    pairs, dropped_q = pair_questions(base_report, new_report)
    conditions, dropped_c = pair_conditions(base_report, new_report)
    data = build_comparison(base_report, new_report, b_side, n_side, pairs, conditions, alpha=alpha, n_boot=n_boot, seed=seed)
    data.differs, data.notes, data.dropped = differs, notes + method_notes(base_report, new_report, conditions), dropped_q + dropped_c
    # Every output (terminal, Markdown, JSON, HTML, the step summary) is drawn from this one
    # redacted copy: a results.json may be hand-edited or older than the rules, and its
    # questions, answers, names and errors are re-emitted (the same rules as report.md).
    from ...tracer.redact import redact

    return Comparison.model_validate(redact(data.model_dump()))

