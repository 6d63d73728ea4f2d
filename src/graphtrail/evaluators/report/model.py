"""From run records to a :class:`Report`: the condition table, scores, entities, statistics.

:func:`build_report` is the only place that aggregates; it calls the plain
functions of :mod:`.metrics` and :mod:`.stats` and stores every number in
pydantic models, so ``results.json`` holds everything and
:func:`load_report` can re-render the Markdown/HTML without the records.
The schema is documented in ``docs/metrics.md`` ("results.json").
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..scoring.judges import DEFAULT_CORRECTNESS, Judge, apply_judges, normalize, question_field
from ..scoring.metrics import (
    MULTI_VARIANT_CONDITIONS,
    baseline_record,
    coverage,
    entity_influence,
    fit_surrogate,
    group_runs,
    output_changed_rate,
    source_support,
    structural_faithfulness,
    trajectory_fidelity,
)
from ..records import CITATION_CONDITIONS, CONDITIONS, NO_CITATIONS, RunRecord
from ..scoring.coverage import mark_rows
from ..scoring.stats import (
    cluster_bootstrap,
    majority,
    mcnemar_exact,
    min_detectable_difference,
    noise_floor,
    paired_bootstrap_difference,
    pairwise_disagreement,
    pass_k,
)

__all__ = [
    "SCHEMA_VERSION",
    "PAPER_TABLE2",
    "CONDITION_LABELS",
    "ConditionRow",
    "EntityRow",
    "QuestionRow",
    "Scores",
    "Stats",
    "Traversal",
    "Report",
    "ReportError",
    "build_report",
    "load_report",
    "CITATION_CONDITIONS",
    "NO_CITATIONS",
]

#: Version of the results.json layout; bumped on incompatible changes.
SCHEMA_VERSION = "graphtrail.results/1"

CONDITION_LABELS: dict[str, str] = {
    "baseline": "Baseline",
    "cited_removal": "Cited removal",
    "random_removal": "Random removal",
    "full_isolation": "Full isolation",
    "text_only_isolation": "Text-only isolation",
    "uncited_removal": "Visited-but-uncited removal",
    "uncited_mask": "Visited-but-uncited text mask",
    "leave_one_out": "Leave-one-out (mean over entities)",
    "random_subsets": "Random subsets (mean over subsets)",
}

#: Table 2 of arXiv:2605.15109, Agentic GraphRAG on 25 2WikiMultiHopQA questions, one run each.
#: A reference only: different data, model and agent.
PAPER_TABLE2: dict[str, float] = {
    "baseline": 0.76,
    "cited_removal": 0.36,
    "random_removal": 0.84,
    "full_isolation": 0.68,
    "text_only_isolation": 0.72,
    "uncited_removal": 0.68,
    "uncited_mask": 0.72,
}


#: How each built-in judge that can decide ``correct`` is described in the report header.
JUDGE_TEXT: dict[str, str] = {
    "cover_exact_match": "cover exact match: a gold answer, id or alias appears in the answer as whole words "
    "(case, accents, punctuation and articles ignored)",
    "exact_match": "normalized exact match: the whole answer equals a gold answer, id or alias",
    "llm_judge": "an LLM judge (LLMJudge), asked whether the answer means a gold answer",
}


class ReportError(ValueError):
    """A report could not be built or loaded; the message says why."""


class ConditionRow(BaseModel):
    condition: str
    label: str
    per_entity: bool = False
    n_questions: int = 0
    n_runs: int = 0
    trials: int = 0
    accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    delta: float | None = None
    delta_ci_low: float | None = None
    delta_ci_high: float | None = None
    mcnemar_n: int | None = None
    mcnemar_b: int | None = None
    mcnemar_c: int | None = None
    mcnemar_p: float | None = None
    mdd: float | None = None
    changed_rate: float | None = None
    pass_k: dict[str, float | None] = Field(default_factory=dict)
    model_calls: int = 0
    reused_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    wall_time_s: float = 0.0
    paper_accuracy: float | None = None
    # coverage guard (.tool_coverage): did the ablation filter reach every tool that mattered?
    valid: bool = True
    invalid_reason: str | None = None
    escaped_tools: list[str] = Field(default_factory=list)
    tool_calls_filtered: int | None = None
    tool_calls_unfiltered: int | None = None
    exact_match: float | None = None  # normalized exact match, beside ``accuracy`` (which ``correct`` decides)
    f1: float | None = None  # mean token F1
    not_applicable: str | None = None  # why this condition has no numbers (e.g. NO_CITATIONS)


class EntityRow(BaseModel):
    question_id: str
    entity_id: str
    name: str | None = None
    cited: bool
    visited: bool
    visit_rank: int | None = None
    loo_runs: int = 0
    loo_change_rate: float | None = None
    surrogate_weight: float | None = None
    influence: float | None = None
    influential: bool | None = None
    label: str


class QuestionRow(BaseModel):
    question_id: str
    question: str
    gold: list[str] = Field(default_factory=list)
    baseline_answer: str | None = None
    baseline_correct: bool | None = None
    citations: list[str] = Field(default_factory=list)
    visited: list[str] = Field(default_factory=list)
    visited_uncited: list[str] = Field(default_factory=list)
    accuracy: dict[str, float | None] = Field(default_factory=dict)
    changed: dict[str, float | None] = Field(default_factory=dict)
    answers: dict[str, str | None] = Field(default_factory=dict)
    supported: bool | None = None
    support_how: str | None = None
    grounded_citations: float | None = None
    fidelity: float | None = None
    fidelity_precision: float | None = None
    order_tau: float | None = None
    path: list[str] = Field(default_factory=list)
    fidelity_note: str | None = None
    coverage: float | None = None
    influential: list[str] = Field(default_factory=list)
    hidden_influence: list[str] = Field(default_factory=list)
    lds: float | None = None
    noise: float | None = None


class Scores(BaseModel):
    accuracy: dict[str, float | None] = Field(default_factory=dict)
    output_changed: dict[str, float | None] = Field(default_factory=dict)
    source_support: float | None = None
    source_support_n: int = 0
    support_how: dict[str, int] = Field(default_factory=dict)
    grounded_citations: float | None = None
    coverage: float | None = None
    coverage_n: int = 0
    entities_scored: int = 0
    influential_entities: int = 0
    hidden_influence: int = 0
    fidelity: float | None = None
    fidelity_precision: float | None = None
    fidelity_n: int = 0
    order_tau: float | None = None
    order_tau_n: int = 0
    faithfulness: dict[str, float | None] = Field(default_factory=dict)
    lds: float | None = None
    lds_n: int = 0


class Stats(BaseModel):
    n_questions: int = 0
    alpha: float = 0.05
    confidence: float = 0.95
    power: float = 0.8
    n_boot: int = 2000
    seed: int = 0
    baseline_trials: int = 0
    noise_floor_answer: float | None = None
    noise_floor_correct: float | None = None
    mdd_best_case: float | None = None
    power_statement: str = ""
    notes: list[str] = Field(default_factory=list)


class TraversalNode(BaseModel):
    id: str
    name: str | None = None
    cited: bool = False
    visited: bool = True
    influential: bool | None = None
    topic: bool = False
    answer: bool = False


class Traversal(BaseModel):
    question_id: str
    question: str
    answer: str | None = None
    nodes: list[TraversalNode] = Field(default_factory=list)
    edges: list[list[str]] = Field(default_factory=list)  # [source, relation, target]


class Report(BaseModel):
    """Everything an evaluation found; ``write`` renders results.json, report.md, report.html and plots."""

    schema_version: str = SCHEMA_VERSION
    created: float = Field(default_factory=time.time)
    meta: dict[str, Any] = Field(default_factory=dict)
    conditions: list[ConditionRow] = Field(default_factory=list)
    scores: Scores = Field(default_factory=Scores)
    entities: list[EntityRow] = Field(default_factory=list)
    questions: list[QuestionRow] = Field(default_factory=list)
    stats: Stats = Field(default_factory=Stats)
    traversal: Traversal | None = None
    paper_reference: bool = True
    #: the judge that decides ``correct`` (hence ``accuracy``): a key of JUDGE_TEXT or a user judge's name
    correctness: str = DEFAULT_CORRECTNESS
    #: no baseline run cited any entity: the citation conditions are NO_CITATIONS
    cited_nothing: bool = False

    def condition(self, name: str) -> ConditionRow | None:
        return next((c for c in self.conditions if c.condition == name), None)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    # One line in a REPL (everything is in ``to_dict()``), findings and accuracies in a notebook or rich.
    def __repr__(self) -> str:
        from ..._display import one_line, plural

        base = self.condition("baseline")
        return one_line(
            "Report", plural(self.stats.n_questions, "question"), plural(len(self.conditions), "condition"),
            f"baseline accuracy {base.accuracy:.0%}" if base is not None and base.accuracy is not None else None,
            f"{plural(self.scores.hidden_influence, 'hidden influencer')}" if self.scores.entities_scored else None,
        )

    __str__ = __repr__

    def _summary_rows(self) -> list[tuple[str, Any]]:
        from ..scoring.findings import findings

        rows: list[tuple[str, Any]] = [(k, v) for k, v in self.meta.items() if k in ("agent", "model", "trials")]
        for c in self.conditions:
            if c.accuracy is None:
                continue
            ci = f" [{c.ci_low:.0%}, {c.ci_high:.0%}]" if c.ci_low is not None and c.ci_high is not None else ""
            test = f", McNemar p = {c.mcnemar_p:.2g}" if c.mcnemar_p is not None else ""
            rows.append((c.label, f"{c.accuracy:.0%}{ci}{test}"))
        rows += [("finding", f) for f in findings(self)]
        return rows

    def _repr_html_(self) -> str:
        from ..._display import html_summary

        return html_summary(repr(self), self._summary_rows())

    def __rich__(self) -> Any:
        from ..._display import rich_summary

        return rich_summary(repr(self), self._summary_rows())

    def write(self, out_dir: str | Path, *, results: bool = True, html: bool = True) -> dict[str, Path]:
        """Write results.json, report.md, report.html and the PNG plots into ``out_dir``.

        Returns ``{"results": ..., "markdown": ..., "html": ..., "<plot>": ...}``
        for the files written. ``results=False`` leaves results.json alone (re-rendering
        from a saved one must not rewrite it); ``html=False`` skips report.html.
        Existing report files in ``out_dir`` are replaced; nothing else is touched.
        """
        from .plots import render_plots
        from .render import render_html, render_markdown

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}
        if results:
            results_path = out / "results.json"
            results_path.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
            paths["results"] = results_path
        plots = render_plots(self)  # a plot that cannot be drawn is left out, with a warning
        plot_files: dict[str, str] = {}
        for name, png in plots.items():
            path = out / f"{name}.png"
            path.write_bytes(png)
            paths[name] = path
            plot_files[name] = path.name
        # Each report file is written on its own: one that fails must not cost the others.
        steps: list[tuple[str, Path, Callable[[], str]]] = [("markdown", out / "report.md", lambda: render_markdown(self, plot_files))]
        if html:
            steps.append(("html", out / "report.html", lambda: render_html(self, plots)))
        failed: list[str] = []
        for key, path, render in steps:
            try:
                path.write_text(render(), encoding="utf-8")
            except OSError:
                raise
            except Exception as exc:  # noqa: BLE001 - reported below, after the other files are written
                failed.append(f"{path.name} ({type(exc).__name__}: {exc})")
            else:
                paths[key] = path
        if failed:
            written = ", ".join(p.name for p in paths.values()) or "nothing"
            raise ReportError(f"could not render {'; '.join(failed)}; written: {written}")
        return paths


def load_report(path: str | Path) -> Report:
    """Read a results.json written by :meth:`Report.write` (for re-rendering)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"results file not found: {p}") from None
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad JSON, not UTF-8, a 5,000-digit number
        raise ReportError(f"{p}: not a readable results.json ({type(exc).__name__}: {str(exc)[:200]})") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if not isinstance(version, str) or not version.startswith("graphtrail.results/"):
        raise ReportError(f"{p}: not a graphtrail results.json (schema_version={version!r})")
    if version.split("/")[-1] != SCHEMA_VERSION.split("/")[-1]:
        raise ReportError(f"{p}: schema {version} is not supported by this graphtrail ({SCHEMA_VERSION})")
    try:
        return Report.model_validate(data)
    except Exception as exc:
        raise ReportError(f"{p}: invalid results.json: {exc}") from None


# ------------------------------------------------------------------ building
def _ordered_conditions(present: Iterable[str]) -> list[str]:
    present = set(present)
    return [c for c in CONDITIONS if c in present] + sorted(present - set(CONDITIONS))


def _mean(values: Iterable[float | None]) -> tuple[float | None, int]:
    vals = [float(v) for v in values if v is not None]
    return (sum(vals) / len(vals), len(vals)) if vals else (None, 0)


def _question_mean(runs: Sequence[RunRecord], field_name: str) -> float | None:
    return _mean(getattr(r, field_name) for r in runs)[0]


def _pts(x: float) -> str:
    return f"{100 * x:+.0f} pts"


def build_report(
    records: Iterable[RunRecord],
    questions: Iterable[Any],
    kg: Any = None,
    *,
    meta: Mapping[str, Any] | None = None,
    judges: Sequence[Callable[..., Any] | Judge] = (),
    correctness: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    power: float = 0.8,
    margin: float = 0.0,
    surrogate_threshold: float = 0.1,
    min_lds: float = 0.3,
    paper_reference: bool = True,
    traversal_question: str | None = None,
) -> Report:
    """Score ``records`` (from the replay runner or hand-built) into a :class:`Report`.

    Missing ``correct``/``f1``/``changed`` fields are filled by the built-in
    judges; ``judges``/``correctness`` add or swap judges (see
    :func:`~graphtrail.evaluators.judges.apply_judges`). ``margin``,
    ``surrogate_threshold`` and ``min_lds`` set when an entity counts as
    influential (see :func:`~graphtrail.evaluators.metrics.entity_influence`).
    """
    questions = list(questions)
    by_id = {str(question_field(q, "id")): q for q in questions}
    recs = apply_judges(list(records), questions, kg=kg, judges=judges, correctness=correctness)
    if not recs:
        raise ReportError("no run records to report on")
    runs = group_runs(recs)
    qids = [q for q in by_id if q in runs] + sorted(q for q in runs if q not in by_id)
    # ---- an agent that cites nothing: the citation conditions are no experiment
    refs = [b for b in (baseline_record(runs[q]) for q in qids) if b is not None and b.status != "error"]
    cited_nothing = bool(refs) and not any(b.citations for b in refs)
    present = {r.key.condition for r in recs}
    not_applicable: dict[str, str] = {str(k): str(v) for k, v in ((meta or {}).get("not_applicable") or {}).items()}
    if cited_nothing:
        not_applicable.update({c: NO_CITATIONS for c in CITATION_CONDITIONS if c in present or c in not_applicable})
    conditions = _ordered_conditions(present | set(not_applicable))

    # ---- noise floor from the repeated baseline
    base_answers = {q: [normalize(r.answer) for r in runs[q].get("baseline", []) if r.key.variant == ""] for q in qids}
    base_correct = {q: [r.correct for r in runs[q].get("baseline", []) if r.key.variant == "" and r.correct is not None] for q in qids}
    nf_answer = noise_floor(base_answers)
    nf_correct = noise_floor(base_correct)
    baseline_trials = max((len(v) for v in base_answers.values()), default=0)
    noise = nf_answer or 0.0

    # ---- condition table
    stats = Stats(n_questions=len(qids), alpha=alpha, confidence=1 - alpha, power=power, n_boot=n_boot, seed=seed,
                  baseline_trials=baseline_trials, noise_floor_answer=nf_answer, noise_floor_correct=nf_correct)
    base_by_q = {q: [r.correct for r in runs[q].get("baseline", [])] for q in qids}
    rows: list[ConditionRow] = []
    for cond in conditions:
        by_q = {q: runs[q][cond] for q in qids if cond in runs[q]}
        flat = [r for rs in by_q.values() for r in rs]
        if cond in not_applicable:
            rows.append(ConditionRow(
                condition=cond, label=CONDITION_LABELS.get(cond, cond), per_entity=cond in MULTI_VARIANT_CONDITIONS,
                n_questions=len(by_q), n_runs=len(flat), model_calls=sum(r.model_calls for r in flat),
                reused_calls=sum(r.reused_calls for r in flat), not_applicable=not_applicable[cond],
            ))
            continue
        per_q = [[r.correct for r in rs] for rs in by_q.values()]
        ci = cluster_bootstrap(per_q, n_boot=n_boot, seed=seed, confidence=1 - alpha)
        trials = max((len({r.key.trial for r in rs}) for rs in by_q.values()), default=0)
        row = ConditionRow(
            condition=cond,
            label=CONDITION_LABELS.get(cond, cond),
            per_entity=cond in MULTI_VARIANT_CONDITIONS,
            n_questions=ci.n,
            n_runs=len(flat),
            trials=trials,
            accuracy=ci.estimate,
            ci_low=ci.low,
            ci_high=ci.high,
            model_calls=sum(r.model_calls for r in flat),
            reused_calls=sum(r.reused_calls for r in flat),
            input_tokens=sum(r.input_tokens for r in flat),
            output_tokens=sum(r.output_tokens for r in flat),
            wall_time_s=round(sum(r.wall_time_s for r in flat), 3),
            paper_accuracy=PAPER_TABLE2.get(cond) if paper_reference else None,
        )
        row.changed_rate = output_changed_rate(flat, cond)
        row.exact_match = _mean(_question_mean(rs, "exact") for rs in by_q.values())[0]
        row.f1 = _mean(_question_mean(rs, "f1") for rs in by_q.values())[0]
        for k in range(1, trials + 1):
            row.pass_k[str(k)] = pass_k(per_q, k)
        if cond != "baseline":
            paired = [q for q in by_q if _mean(base_by_q.get(q, []))[0] is not None and _question_mean(by_q[q], "correct") is not None]
            if paired:
                diff = paired_bootstrap_difference(
                    [_question_mean(by_q[q], "correct") for q in paired],  # type: ignore[misc]
                    [_mean(base_by_q[q])[0] for q in paired],  # type: ignore[misc]
                    n_boot=n_boot, seed=seed, confidence=1 - alpha,
                )
                row.delta, row.delta_ci_low, row.delta_ci_high = diff.estimate, diff.low, diff.high
            if not row.per_entity and paired:
                ref = [majority(base_by_q[q]) for q in paired]
                oth = [majority([r.correct for r in by_q[q]]) for q in paired]
                test = mcnemar_exact([bool(x) for x in ref], [bool(x) for x in oth])
                row.mcnemar_n, row.mcnemar_b, row.mcnemar_c, row.mcnemar_p = test.n, test.b, test.c, test.p_value
                psi = test.discordant / test.n
                row.mdd = min_detectable_difference(test.n, psi if psi > 0 else None, alpha=alpha, power=power)
        rows.append(row)
    mark_rows(rows, recs)

    # ---- per question: support, fidelity, influence
    question_rows: list[QuestionRow] = []
    entity_rows: list[EntityRow] = []
    for q in qids:
        question = by_id.get(q)
        base = baseline_record(runs[q])
        traj = base.trajectory if base is not None else None
        qrow = QuestionRow(
            question_id=q,
            question=str(question_field(question, "question", "") if question is not None else (base.question if base else "")),
            gold=[str(a) for a in (question_field(question, "answers") or [])] if question is not None else [],
            baseline_answer=base.answer if base else None,
            baseline_correct=base.correct if base else None,
            citations=list(base.citations) if base else [],
        )
        for cond in conditions:
            if cond in runs[q] and cond not in not_applicable:
                qrow.accuracy[cond] = _question_mean(runs[q][cond], "correct")
                cr = [r for r in runs[q][cond] if not (cond == "baseline" and r.key.trial == 0)]
                qrow.changed[cond] = _question_mean(cr, "changed") if cr else None
                first = runs[q][cond][0]
                qrow.answers[cond] = first.answer
        q_noise = pairwise_disagreement(base_answers[q])
        qrow.noise = q_noise
        if traj is not None:
            qrow.visited, qrow.visited_uncited = list(traj.visited), list(traj.visited_uncited)
            support = source_support(traj, question, kg)
            qrow.supported, qrow.support_how, qrow.grounded_citations = support.supported, support.how, support.grounded_citations
            fid = trajectory_fidelity(traj, question, kg)
            qrow.fidelity, qrow.fidelity_precision, qrow.order_tau = fid.recall, fid.precision, fid.order_tau
            qrow.path, qrow.fidelity_note = fid.path, fid.reason
            surrogate = None
            if "random_subsets" in runs[q]:
                surrogate = fit_surrogate(runs[q]["random_subsets"], traj.visited, seed=seed)
                qrow.lds = surrogate.lds if surrogate is not None else None
            ents = entity_influence(
                traj, runs[q].get("leave_one_out", ()), surrogate, noise=q_noise if q_noise is not None else noise,
                margin=margin, surrogate_threshold=surrogate_threshold, min_lds=min_lds, question_id=q,
            )
            qrow.coverage = coverage(ents)
            qrow.influential = [e.entity_id for e in ents if e.influential]
            qrow.hidden_influence = [e.entity_id for e in ents if e.influential and not e.cited]
            entity_rows += [EntityRow(**asdict(e)) for e in ents]
        question_rows.append(qrow)

    # ---- scores
    scores = Scores(
        accuracy={r.condition: r.accuracy for r in rows},
        output_changed={r.condition: r.changed_rate for r in rows},
    )
    scores.source_support, scores.source_support_n = _mean(
        None if r.supported is None else float(r.supported) for r in question_rows
    )
    for r in question_rows:
        if r.supported is not None:
            key = r.support_how or "unsupported"
            scores.support_how[key] = scores.support_how.get(key, 0) + 1
    scores.grounded_citations = _mean(r.grounded_citations for r in question_rows)[0]
    scores.coverage, scores.coverage_n = _mean(r.coverage for r in question_rows)
    scored = [e for e in entity_rows if e.influential is not None]
    scores.entities_scored = len(scored)
    scores.influential_entities = sum(1 for e in scored if e.influential)
    scores.hidden_influence = sum(1 for e in scored if e.influential and not e.cited)
    scores.fidelity, scores.fidelity_n = _mean(r.fidelity for r in question_rows)
    scores.fidelity_precision = _mean(r.fidelity_precision for r in question_rows)[0]
    scores.order_tau, scores.order_tau_n = _mean(r.order_tau for r in question_rows)
    scores.lds, scores.lds_n = _mean(r.lds for r in question_rows)
    faith = structural_faithfulness(
        scores.output_changed.get("uncited_removal"),
        scores.output_changed.get("text_only_isolation"),
        scores.output_changed.get("uncited_mask"),
        noise=noise,
    )
    scores.faithfulness = asdict(faith)
    if cited_nothing:  # scores *of* the citations: none to score (coverage and hidden influence still say something)
        scores.source_support, scores.source_support_n, scores.support_how = None, 0, {}
        scores.grounded_citations = None
        scores.fidelity, scores.fidelity_n, scores.fidelity_precision = None, 0, None
        scores.order_tau, scores.order_tau_n = None, 0

    # ---- power, in words
    _power_notes(stats, rows, alpha=alpha, power=power)
    if nf_answer is None:
        stats.notes.append(
            "The baseline ran once per question, so the noise floor is unknown and taken as 0; "
            "run trials >= 2 to measure how often the answer changes with nothing removed."
        )
    uncited_questions = [b.key.question_id for b in refs if not b.citations]
    if uncited_questions and not cited_nothing:
        stats.notes.append(
            f"{len(uncited_questions)} of {len(refs)} questions' baseline runs cited no entity ({', '.join(uncited_questions[:5])}"
            f"{', ...' if len(uncited_questions) > 5 else ''}): for them cited and random removal hide nothing and the "
            "isolations hide every entity, so those conditions measure nothing about citations on these questions."
        )
    report = Report(
        meta=dict(meta or {}),
        conditions=rows,
        scores=scores,
        entities=entity_rows,
        questions=question_rows,
        stats=stats,
        paper_reference=paper_reference,
        correctness=correctness or (meta or {}).get("correctness") or DEFAULT_CORRECTNESS,
        cited_nothing=cited_nothing,
    )
    report.traversal = _pick_traversal(report, runs, by_id, kg, traversal_question)
    return report


def _power_notes(stats: Stats, rows: Sequence[ConditionRow], *, alpha: float, power: float) -> None:
    n = max((r.mcnemar_n or 0 for r in rows), default=0) or stats.n_questions
    best = min_detectable_difference(n, None, alpha=alpha, power=power)
    stats.mdd_best_case = best
    if best is None:
        stats.power_statement = (
            f"With n = {n} question(s), no accuracy shift can be detected with the exact McNemar test "
            f"at alpha = {alpha:g} with {power:.0%} power: far more questions are needed."
        )
    else:
        tail = (
            "Smaller differences between conditions cannot be told apart from chance at this n; "
            "treat them as inconclusive, not as 'no effect'."
            if best > 0.1
            else "This n is large enough to detect moderate shifts."
        )
        stats.power_statement = (
            f"With n = {n} questions, the exact McNemar test (alpha = {alpha:g}) detects an accuracy shift "
            f"with {power:.0%} power only if it is at least {100 * best:.0f} points, and that is the most "
            f"favourable case, where every affected question moves the same way. {tail}"
        )
    for r in rows:
        if r.mcnemar_p is None or r.delta is None:
            continue
        if r.mcnemar_p < alpha:
            stats.notes.append(f"{r.label}: {_pts(r.delta)} vs baseline, McNemar p = {r.mcnemar_p:.3g}: a detected shift.")
        else:
            psi = (r.mcnemar_b or 0) + (r.mcnemar_c or 0)
            reach = (
                f"shifts below {100 * r.mdd:.0f} points would usually be missed"
                if r.mdd is not None
                else "no shift at all is reliably detectable"
            )
            stats.notes.append(
                f"{r.label}: {_pts(r.delta)} vs baseline, McNemar p = {r.mcnemar_p:.2g}: not distinguishable from "
                f"no change; with {psi} of {r.mcnemar_n} questions discordant, {reach}."
            )


def _pick_traversal(
    report: Report, runs: Mapping[str, Mapping[str, Sequence[RunRecord]]], by_id: Mapping[str, Any], kg: Any, chosen: str | None
) -> Traversal | None:
    """The question whose traversal is drawn: ``chosen``, else the one with most hidden influence, then most visited."""
    candidates = [q for q in report.questions if q.visited]
    if chosen is not None:
        candidates = [q for q in candidates if q.question_id == chosen]
    if not candidates:
        return None
    qrow = min(candidates, key=lambda q: (-len(q.hidden_influence), -len(q.influential), -min(len(q.visited), 25), q.question_id))
    base = baseline_record(runs[qrow.question_id])
    traj = base.trajectory if base else None
    if traj is None:
        return None
    from ..scoring.metrics import answer_entities

    question = by_id.get(qrow.question_id)
    topics = {str(t) for t in (question_field(question, "topic_ids") or [])} if question is not None else set()
    answers = set(answer_entities(traj.answer, traj, question, kg))
    influential = {e.entity_id: e.influential for e in report.entities if e.question_id == qrow.question_id}
    names = traj.entity_names
    visited = traj.visited  # a computed property: read once, not per node
    cited, seen = set(traj.citations), set(visited)
    nodes = [
        TraversalNode(id=e, name=names.get(e), cited=e in cited, visited=e in seen,
                      influential=influential.get(e), topic=e in topics, answer=e in answers)
        for e in dict.fromkeys([*visited, *traj.citations])
    ]
    return Traversal(
        question_id=qrow.question_id,
        question=qrow.question,
        answer=traj.answer,
        nodes=nodes,
        edges=[e.as_triple() for e in traj.edges],
    )
