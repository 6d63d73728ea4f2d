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
from collections.abc import Callable
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
    from graphtrail.evaluators.replay.fromtraces import questions_from_traces, recorded_models

    from . import pipeline
    from .inputs import load_kg_arg, load_questions_arg
    from .render import print_files
    from .statscmd import load_trajectories

    trajectories, label = load_trajectories(source, jaeger=None, service=None, since=None,
                                            keep=_first_questions(limit) if limit is not None and sample is None else None)
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
    recorded = recorded_models(trajectories)
    spec = replay_spec(spec, recorded[0] if recorded else None)
    graph = load_kg_arg(kg) if kg is not None else None
    built = pipeline.build_agent(spec, kg=graph)
    console.print(f"replaying with model [bold]{built.model_name if built.model_name != 'own' else 'your factory’s own'}[/]; "
                  f"the traces recorded [bold]{', '.join(recorded) or 'no model'}[/]", highlight=False)
    trace_path = out / pipeline.REPLAY_TRACES
    if force:
        trace_path.unlink(missing_ok=True)
    pipeline.setup_tracing(trace_path, otlp)
    report = evaluators.evaluate(
        built.agent, questions, kg=graph, conditions=conditions, trials=trials, seed=seed, concurrency=concurrency,
        out_dir=out, resume=resume, reuse=reuse, citations=citations, answer_field=answer_field,
        citations_field=citations_field, progress=True, agent_name=built.name,
        model_name=built.model_name, strict=strict, force=force,  # app.py's guard_out_dir already checked --force
    )
    pipeline._flush_tracing()
    _state_models(report, out, recorded)
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


def _first_questions(limit: int) -> Callable[[Any], bool]:
    """For ``--limit N`` without ``--sample``: read runs until a production run asks an (N+1)-th distinct question."""
    from graphtrail.evaluators.replay.fromtraces import _is_replay, normalize_question

    seen: set[str] = set()

    def keep(traj: Any) -> bool:
        text = getattr(traj, "question", None)
        if _is_replay(traj) or not isinstance(text, str) or not text.strip():
            return True
        seen.add(normalize_question(text))
        return len(seen) <= limit

    return keep


#: What the offline model calls itself on its spans: replayed as ``offline``.
_OFFLINE_NAMES = {"graphtrail-offline"}


def recorded_spec(recorded: str) -> str | None:
    """An ``init_chat_model`` string for a model name the traces recorded, or None when its provider cannot be told."""
    if recorded in _OFFLINE_NAMES:
        return "offline"
    provider, sep, _ = recorded.partition(":")
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS, _attempt_infer_model_provider  # noqa: PLC2701
    except Exception:  # noqa: BLE001 - another langchain: no inference, --model decides
        return None
    if sep and provider in _BUILTIN_PROVIDERS:
        return recorded
    inferred = _attempt_infer_model_provider(recorded)
    return f"{inferred}:{recorded}" if inferred else None


def replay_spec(spec: Any, recorded: str | None) -> Any:
    """The agent spec with the model the traces recorded, unless ``--model`` chose one; refuses a model it cannot create.

    Replaying production questions with another model measures that model: a
    report on production behaviour must replay production's model, or say it did not.
    """
    from . import pipeline
    from .inputs import factory_wants_model, load_agent_factory

    if spec.model is not None:
        return spec
    if spec.agent and not factory_wants_model(load_agent_factory(spec.agent), True):
        return spec  # the factory builds its own model: the report states the one observed
    hint = "pass --model to replay another model (the report then states both), e.g. --model offline"
    if recorded is None:
        raise InputError("the traces record no model (gen_ai.request.model), so the model to replay is unknown", hint)
    candidate = recorded_spec(recorded)
    if candidate is None:
        raise InputError(f"the traces were recorded with model {recorded!r}, whose provider graphtrail cannot tell",
                         "pass --model provider:name for it, or " + hint.removeprefix("pass "))
    try:
        pipeline._resolve_model(candidate)
    except Exception as exc:  # noqa: BLE001 - InputError / ModelResolutionError: one line either way
        reason = str(getattr(exc, "message", None) or exc).strip().splitlines()[0]
        raise InputError(
            f"the traces were recorded with model {recorded!r} ({candidate}), which cannot be created here: {reason}",
            "set its provider's credentials (e.g. OPENAI_API_KEY, and OPENAI_BASE_URL for a local server) to replay it, or " + hint.removeprefix("pass "),
        ) from None
    return type(spec)(agent=spec.agent, variant=spec.variant, model=candidate)


def _state_models(report: Any, out: Path, recorded: list[str]) -> None:
    """Put the recorded model(s) beside the replayed one in the report's header and results.json."""
    from graphtrail._outdir import lock

    report.meta["recorded_model"] = ", ".join(recorded) if recorded else "none recorded"
    with lock(out):
        report.write(out)


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
