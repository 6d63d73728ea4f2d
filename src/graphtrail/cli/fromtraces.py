"""``graphtrail eval --from-traces SOURCE``: the replay evaluation on questions from production traffic.

The questions come from the traces' root spans (see
:mod:`graphtrail.evaluators.replay.fromtraces`); they are written to
``OUT/questions-from-traces.jsonl`` with the production runs each came from,
which is what ``graphtrail annotate`` reads to put the verdicts back on those runs.

Production traffic has no gold answers, so the summary leads with what needs
none: how often each condition changed the output, influence as a change of
output, citation support and fidelity. Accuracy appears only when ``--answers``
grades the questions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = ["evaluate_from_traces", "QUESTIONS_FILE"]

#: The sampled questions, with the production traces each came from (read by `graphtrail annotate`).
QUESTIONS_FILE = "questions-from-traces.jsonl"


def evaluate_from_traces(
    spec: Any,
    *,
    kg: str | None,
    source: Path,
    sample: int | None,
    answers: str | None,
    out: Path,
    conditions: list[str] | None,
    trials: int,
    seed: int,
    concurrency: int,
    resume: bool,
    force: bool,
    reuse: bool,
    citations: str | None,
    otlp: str | None,
    console: Any,
    strict: bool,
    limit: int | None,
    answer_field: str | None = None,
    citations_field: str | None = None,
) -> Any:
    from graphtrail import evaluators
    from graphtrail.evaluators.replay.fromtraces import questions_from_traces

    from . import pipeline
    from .inputs import load_kg_arg, load_questions_arg
    from .render import print_files
    from .statscmd import load_trajectories

    trajectories, label = load_trajectories(source, jaeger=None, service=None, since=None)
    gold = load_questions_arg(answers) if answers else None
    questions = questions_from_traces(trajectories, sample=sample, seed=seed, gold=gold)
    if limit is not None:
        questions = questions[:limit]
    if not questions:
        raise InputError(
            f"{source} holds no production questions",
            "its runs' root spans must carry graphtrail.question (traced with content='full', the default), "
            "and evaluation replays are not production runs",
        )
    graded = sum(1 for q in questions if q["answers"])
    if answers and not graded:
        raise InputError(f"no question in {answers} matches a question in {source}",
                         "an answers file grades the questions whose text it repeats (case and final '?' aside)")
    from graphtrail._outdir import claim, write_lines
    from graphtrail.tracer.redact import redact

    claim(out, force=True)  # app.py checked it (guard_out_dir); marked as graphtrail's for evaluate()
    write_lines(out / QUESTIONS_FILE, (json.dumps(redact(q), ensure_ascii=False) for q in questions))
    console.print(
        f"[bold]{len(questions)}[/] distinct question(s) from {label}"
        + (f" (a seeded sample of {sample}, seed {seed})" if sample else "")
        + f", {sum(q['runs'] for q in questions)} production run(s); "
        + (f"{graded} graded by {answers}" if answers else "no gold answers: scores that need none lead, accuracy is not shown"),
        highlight=False,
    )
    graph = load_kg_arg(kg) if kg is not None else None
    built = pipeline.build_agent(spec, kg=graph)
    trace_path = out / pipeline.REPLAY_TRACES
    if force:
        trace_path.unlink(missing_ok=True)
    pipeline.setup_tracing(trace_path, otlp)
    report = evaluators.evaluate(
        built.agent, questions, kg=graph, conditions=conditions, trials=trials, seed=seed, concurrency=concurrency,
        out_dir=out, resume=resume, reuse=reuse, citations=citations, answer_field=answer_field,
        citations_field=citations_field, progress=True, agent_name=built.name,
        model_name=built.model_name, strict=strict,
    )
    pipeline._flush_tracing()
    print_gold_free_summary(report, console, graded=bool(graded))
    print_files(console, {
        "questions (with their production traces)": out / QUESTIONS_FILE,
        "results": out / "results.json",
        "report (markdown)": out / "report.md",
        "report (HTML)": out / "report.html",
        "replay traces (each root links to its production runs)": trace_path,
        **pipeline.otlp_outcome(otlp),
    })
    return report


def print_gold_free_summary(report: Any, console: Any, *, graded: bool) -> None:
    """Changed outputs per condition first; accuracy only for graded questions."""
    from rich.table import Table

    table = Table(title="changed outputs per condition", title_justify="left",
                  caption="share of replays whose answer differs from the baseline's", caption_justify="left")
    table.add_column("condition")
    table.add_column("n", justify="right")
    table.add_column("changed output", justify="right")
    if graded:
        table.add_column("accuracy", justify="right")
    for row in report.conditions:
        name = row.condition if getattr(row, "valid", True) else f"{row.condition} (INVALID)"
        n = sum(1 for q in report.questions if q.changed.get(row.condition) is not None) or row.n_questions
        cells = [name, str(n), "–" if row.changed_rate is None else f"{row.changed_rate:.0%}"]
        if graded:
            cells.append("–" if row.accuracy is None else f"{row.accuracy:.0%}")
        table.add_row(*cells)
    console.print(table)
    s = report.scores

    def pct(value: Any) -> str:
        return "n/a" if value is None else f"{value:.0%}"

    console.print(
        f"citation support {pct(s.source_support)} · trajectory fidelity {pct(s.fidelity)} · "
        f"[bold]{s.hidden_influence}[/] visited-but-uncited entities changed the output when hidden (hidden influence)"
        + ("" if graded else " · baseline noise: repeated runs disagree "
           + pct(report.condition("baseline").changed_rate if report.condition("baseline") else None)),
        highlight=False,
    )
