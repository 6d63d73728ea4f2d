"""What the commands do, as plain functions over loaded inputs.

The Typer layer (``app.py``) only parses and validates arguments; everything
that loads graphs, builds agents, traces runs or writes files lives here so the
steps read top to bottom and can be reused (``demo`` is ``run`` + ``eval``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InputError
from .render import answers_table, conditions_table, print_files, trajectory_panel

__all__ = [
    "AgentSpec",
    "BuiltAgent",
    "Inputs",
    "load_inputs",
    "build_agent",
    "setup_tracing",
    "run_questions",
    "evaluate",
    "demo",
    "rerender",
    "show_traces",
    "eval_files",
    "DEMO_KG",
    "DEMO_QUESTIONS",
    "DEMO_MODEL",
]

#: What ``graphtrail demo`` runs on: the bundled KG and its fixed demo subset.
DEMO_KG = "countries"
DEMO_QUESTIONS = "countries-demo"
#: The demo's model: the offline policy, citing only the topic and the answer entity
#: (as many LLM agents do, leaving the bridge entities uncited), with a little seeded
#: sampling noise so that repeated baselines give a real noise floor.
DEMO_MODEL = "offline:cite=endpoints,noise=0.2,seed=1"

#: Where ``run`` writes its traces, and where ``eval`` writes the replays' traces.
RUN_TRACES = "traces.jsonl"
REPLAY_TRACES = "replay-traces.jsonl"

#: The root-span attribute naming the question a run answered (the evaluators' replays carry it too).
QUESTION_ID = "graphtrail.question_id"

#: Files ``run`` writes (``--force`` replaces them).
RUN_FILES: tuple[str, ...] = (RUN_TRACES, "trajectories.jsonl", "answers.jsonl")
#: Report files ``eval`` writes; :func:`eval_files` adds the run cache.
EVAL_FILES: tuple[str, ...] = ("results.json", "report.md", "report.html")


@dataclass(frozen=True)
class AgentSpec:
    """Which agent the user asked for: their own factory, or a reference variant, and a model.

    ``model`` is None when the user did not choose one: reference agents then use
    ``offline``, and a user's factory keeps its own default.
    """

    agent: str | None
    variant: str | None
    model: str | None


@dataclass
class BuiltAgent:
    agent: Any
    name: str
    model_name: str
    graph: Any = None  # --graph: the factory route (``agent`` is then ``data -> agent``)


def build_factory(spec: AgentSpec, *, graph_arg: str) -> BuiltAgent:
    """``--agent MODULE:FACTORY --graph DATA``: the factory route, every condition's agent built on ablated data."""
    from .inputs import factory_wants_model, graph_factory, load_agent_factory, load_graph_arg

    target = load_agent_factory(spec.agent or "")
    wants = factory_wants_model(target, spec.model is not None)
    model = _resolve_model(spec.model or "offline") if wants else None
    name = spec.agent.rpartition(":")[2] if spec.agent else "agent"
    return BuiltAgent(agent=graph_factory(target, model=model, spec=spec.agent or ""), name=name,
                      model_name=(spec.model or "offline") if wants else "own", graph=load_graph_arg(graph_arg))


@dataclass
class Inputs:
    kg: Any  # None: no --kg (an agent of your own reads its own graph)
    questions: list[Any]
    kg_arg: str | None
    questions_arg: str


def eval_files() -> tuple[str, ...]:
    """Files in an eval output directory that hold results: the reports and the run cache."""
    from .names import RUNS_FILE  # the evaluators' name, without importing them

    # reuse.jsonl: graphtrail.evaluators.replay.cache.REUSE_FILE (not imported: seconds)
    return EVAL_FILES + (RUNS_FILE, "reuse.jsonl", REPLAY_TRACES, "accuracy.png", "influence.png", "traversal.png")


def load_inputs(*, kg: str | None, questions: str, limit: int | None = None) -> Inputs:
    from .inputs import load_kg_arg, load_questions_arg

    graph = load_kg_arg(kg) if kg is not None else None
    qs = load_questions_arg(questions, limit=limit)
    return Inputs(kg=graph, questions=qs, kg_arg=kg, questions_arg=questions)


def _resolve_model(model: str) -> Any:
    from graphtrail.agents import resolve_model

    try:
        return resolve_model(model)
    except Exception as exc:  # noqa: BLE001 - provider packages raise many types for a bad config
        if type(exc).__name__ == "ModelResolutionError":
            raise
        hint = "set OPENAI_API_KEY (and OPENAI_BASE_URL for a local server)" if model.startswith("openai:") else "check the provider's settings"
        raise InputError(f"cannot create model {model!r}: {type(exc).__name__}: {exc}", hint) from None


def build_agent(spec: AgentSpec, *, kg: Any) -> BuiltAgent:
    """The agent to run: the user's ``MODULE:FACTORY``, or a reference variant over ``kg``."""
    if spec.agent:
        from .inputs import build_agent_from_factory, factory_wants_model, load_agent_factory

        factory = load_agent_factory(spec.agent)
        wants = factory_wants_model(factory, spec.model is not None)
        model = _resolve_model(spec.model or "offline") if wants else None
        agent = build_agent_from_factory(factory, model=model, kg=kg, spec=spec.agent)
        name = getattr(agent, "name", None) or spec.agent.rpartition(":")[2]
        model_name = (spec.model or "offline") if wants else "own"
        return BuiltAgent(agent=agent, name=str(name), model_name=model_name)
    model = _resolve_model(spec.model or "offline")
    variant = spec.variant or "agentic"
    from graphtrail import agents

    if variant in agents.BASELINES:
        agent = agents.BASELINES[variant](model, kg)
    else:
        agent = agents.create_graphrag_agent(model, kg, variant=variant)
    return BuiltAgent(agent=agent, name=f"graphrag-{variant}", model_name=spec.model or "offline")


# ----------------------------------------------------------------- tracing
def setup_tracing(jsonl_path: Path, otlp: str | None) -> None:
    """Send graphtrail's spans to ``jsonl_path`` (OTLP/JSON lines) and, if given, an OTLP/HTTP endpoint."""
    import graphtrail
    from graphtrail._outdir import WriteFailed

    if jsonl_path.is_symlink():  # planted in --out: appending would write through it, elsewhere
        raise WriteFailed(f"cannot write {jsonl_path}: it is a symbolic link, which graphtrail does not follow; remove it")
    logger = logging.getLogger("graphtrail")
    if _export_warnings not in logger.filters:
        logger.addFilter(_export_warnings)
    graphtrail.configure(
        exporter=["jsonl", "otlp"] if otlp else "jsonl",
        path=jsonl_path,
        endpoint=otlp,
        protocol=None,  # OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL, else http/protobuf
        service_name=os.environ.get("OTEL_SERVICE_NAME") or "graphtrail",
    )


def _flush_tracing() -> None:
    """Flush the spans; if any could not be written to the trace file, fail with one line naming it
    (the results are written, but a trace file with holes must not pass for a whole one)."""
    from graphtrail._outdir import WriteFailed
    from graphtrail.tracer import config

    config.flush()
    for status in config.export_status():
        if not status.label.startswith("OTLP") and status.dropped:
            raise WriteFailed(f"{status.last_error or status.label}; {status.dropped} span(s) were lost")


class _ExportWarnings(logging.Filter):
    """The CLI says itself what happened to the OTLP export (:func:`otlp_outcome`), once."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        msg = str(record.msg)
        if msg.startswith("graphtrail: could not write spans to"):
            return False  # the trace file: _flush_tracing() says it in one line
        return not (msg.startswith("graphtrail: span export to") and args and (str(args[0]).startswith("OTLP") or "jsonl" in str(args[0]).lower() or "/" in str(args[0])))


_export_warnings = _ExportWarnings()


def otlp_outcome(otlp: str | None) -> dict[str, str]:
    """The files-table row about the OTLP export: where spans went, or that the endpoint was unreachable."""
    if not otlp:
        return {}
    from graphtrail.tracer.config import export_status

    status = next((s for s in export_status() if s.label.startswith("OTLP")), None)
    from graphtrail.tracer.redact import redact_text

    otlp = redact_text(otlp)  # an endpoint may carry user:token@
    if status is None or not status.dropped:
        return {"also exported to": otlp}
    return {
        "OTLP export failed": f"{otlp} was unreachable or did not answer: {status.dropped} of "
        f"{status.dropped + status.exported} spans dropped (the trace file above has them all)"
    }


# ----------------------------------------------------------------- run
def _question_text(q: Any) -> str:
    return q.question if hasattr(q, "question") else str(q)


def _is_correct(answer: str | None, question: Any, kg: Any) -> bool | None:
    if answer is None:
        return False
    if not getattr(question, "answers", None) and not getattr(question, "answer_ids", None):
        return None
    from graphtrail.agents.answers import is_correct

    return bool(is_correct(answer, question, kg=kg))


def run_questions(built: BuiltAgent, inputs: Inputs, *, out: Path, otlp: str | None, console: Any, show: int = 1) -> list[Any]:
    """Answer every question with the traced agent; write traces, trajectories and answers to ``out``
    (holding ``out``'s lock; every file redacted, written atomically)."""
    from graphtrail._outdir import claim, lock

    claim(out, force=True)  # cli/app.py checked it (graphtrail._outdir.check)
    with lock(out):
        return _run_questions(built, inputs, out=out, otlp=otlp, console=console, show=show)


def _run_questions(built: BuiltAgent, inputs: Inputs, *, out: Path, otlp: str | None, console: Any, show: int) -> list[Any]:
    import graphtrail
    from graphtrail.tracer import run_annotations
    from rich.progress import Progress

    from graphtrail._outdir import write_lines
    from graphtrail.tracer.redact import redact

    out.mkdir(parents=True, exist_ok=True)
    for name in RUN_FILES:
        (out / name).unlink(missing_ok=True)  # the guard already required --force for these
    setup_tracing(out / RUN_TRACES, otlp)
    traced = graphtrail.trace_agent(built.agent, name=built.name)

    trajectories: list[Any] = []
    rows: list[dict[str, Any]] = []
    failures = 0
    from graphtrail._heartbeat import Heartbeat

    # On a terminal a live bar; piped or in CI, a plain line on stderr every few seconds.
    beat = None if console.is_terminal else Heartbeat("answering", len(inputs.questions), unit="questions")
    with Progress(console=console, transient=True) as progress, (beat or contextlib.nullcontext()):
        task = progress.add_task(f"answering with {built.name} ({built.model_name})", total=len(inputs.questions))
        for q in inputs.questions:
            qid = str(getattr(q, "id", len(rows) + 1))
            # The root span carries the question id, as a replay's does, so `traces --question ID`
            # finds the run in traces.jsonl too.
            with graphtrail.capture() as cap, run_annotations(attributes={QUESTION_ID: qid}):
                try:
                    traced.invoke({"messages": [("user", _question_text(q))]})
                except Exception as exc:  # noqa: BLE001 - one failing question must not lose the others
                    failures += 1
                    error = f"{type(exc).__name__}: {exc}"
                else:
                    error = None
            traj = cap.trajectories[-1] if cap.trajectories else None
            answer = traj.answer if traj is not None else None
            correct = _is_correct(answer, q, inputs.kg)
            if traj is not None:
                traj.metadata.update({"question_id": qid, "correct": correct})
                trajectories.append(traj)
            rows.append(
                {
                    "id": qid,
                    "question": _question_text(q),
                    "answer": answer,
                    "citations": list(traj.citations) if traj is not None else [],
                    "visited": list(traj.visited) if traj is not None else [],
                    "status": traj.status if traj is not None else "error",
                    "error": error or (traj.error if traj is not None else None),
                    "correct": correct,
                    "steps": len(traj.steps) if traj is not None else 0,
                    "trace_id": traj.trace_id if traj is not None else None,
                }
            )
            progress.advance(task)
            if beat is not None:
                beat.advance()
    _flush_tracing()

    write_lines(out / "trajectories.jsonl", (json.dumps(redact(t.model_dump(mode="json")), ensure_ascii=False) for t in trajectories))
    write_lines(out / "answers.jsonl", (json.dumps(redact(row), ensure_ascii=False) for row in rows))

    for traj in trajectories[:show]:
        console.print(trajectory_panel(traj))
    console.print(answers_table(rows))
    graded = [r["correct"] for r in rows if r["correct"] is not None]
    if graded:
        console.print(f"accuracy of these runs (one per question): {sum(graded)}/{len(graded)} ({sum(graded) / len(graded):.0%})")
    if failures:
        console.print(f"[yellow]{failures} question(s) failed with an exception; see 'error' in answers.jsonl[/]")
    print_files(
        console,
        {
            "traces (OTLP/JSON lines)": out / RUN_TRACES,
            "trajectories": out / "trajectories.jsonl",
            "answers": out / "answers.jsonl",
            **otlp_outcome(otlp),
        },
    )
    return trajectories


# ----------------------------------------------------------------- eval
def evaluate(
    built: BuiltAgent,
    inputs: Inputs,
    *,
    out: Path,
    conditions: list[str] | None,
    trials: int,
    seed: int,
    concurrency: int,
    resume: bool,
    force: bool,
    reuse: bool,
    otlp: str | None,
    console: Any,
    strict: bool = False,
    citations: str | None = None,
    answer_field: str | None = None,
    citations_field: str | None = None,
) -> Any:
    """The replay evaluation: writes the run cache, results.json, report.md and report.html to ``out``.

    ``strict``: an invalid condition (a tool escaped the ablation filter) raises
    ``CoverageError``, which the CLI prints as one line with exit code 2.
    """
    from graphtrail import evaluators
    from graphtrail._outdir import claim, lock

    claim(out, force=True)  # cli/app.py checked it (graphtrail._outdir.check)
    with lock(out):
        return _evaluate(evaluators, built, inputs, out=out, conditions=conditions, trials=trials, seed=seed,
                         concurrency=concurrency, resume=resume, force=force, reuse=reuse, otlp=otlp,
                         console=console, strict=strict, citations=citations, answer_field=answer_field,
                         citations_field=citations_field)


def _evaluate(evaluators: Any, built: BuiltAgent, inputs: Inputs, *, out: Path, conditions: list[str] | None, trials: int,
              seed: int, concurrency: int, resume: bool, force: bool, reuse: bool, otlp: str | None, console: Any,
              strict: bool, citations: str | None, answer_field: str | None = None,
              citations_field: str | None = None) -> Any:
    trace_path = out / REPLAY_TRACES
    if force:
        trace_path.unlink(missing_ok=True)  # starting over: old replay traces would mix with the new
    setup_tracing(trace_path, otlp)
    report = evaluators.evaluate(
        built.agent,
        inputs.questions,
        kg=inputs.kg,
        graph=built.graph,
        conditions=conditions,
        trials=trials,
        seed=seed,
        concurrency=concurrency,
        out_dir=out,
        resume=resume,
        reuse=reuse,
        citations=citations,
        answer_field=answer_field,
        citations_field=citations_field,
        progress=True,
        agent_name=built.name,
        model_name=built.model_name,
        strict=strict,
        force=force,  # app.py's guard_out_dir already refused earlier results without --force / --resume
    )
    _flush_tracing()
    print_report_summary(report, console)
    print_files(
        console,
        {
            "results": out / "results.json",
            "report (markdown)": out / "report.md",
            "report (HTML)": out / "report.html",
            "replay traces": trace_path,
            **otlp_outcome(otlp),
        },
    )
    return report


def print_report_summary(report: Any, console: Any) -> None:
    from graphtrail.evaluators.report.render import cited_nothing_line

    if (nothing := cited_nothing_line(report)) is not None:
        console.print(f"[bold yellow]{nothing}[/]")
    console.print(conditions_table(_condition_rows(report)))
    s = report.scores

    def pct(value: Any) -> str:
        return "n/a" if value is None else f"{value:.0%}"

    faithfulness = (s.faithfulness or {}).get("score")
    console.print(
        f"source support {pct(s.source_support)} · coverage {pct(s.coverage)} · "
        f"trajectory fidelity {pct(s.fidelity)} · structural faithfulness {pct(faithfulness)} · "
        f"[bold]{s.hidden_influence}[/] visited-but-uncited entities were influential (hidden influence)"
    )


def _condition_rows(report: Any) -> list[dict[str, Any]]:
    return [
        {
            "condition": row.condition if getattr(row, "valid", True) else f"{row.condition} (INVALID)",
            "n": row.n_questions,
            "accuracy": row.accuracy,
            "ci": (row.ci_low, row.ci_high) if row.ci_low is not None and row.ci_high is not None else None,
            "changed": row.changed_rate,
            "p_value": row.mcnemar_p,
        }
        for row in report.conditions
    ]


# ----------------------------------------------------------------- demo
def demo(*, out: Path, otlp: str | None, force: bool, console: Any) -> None:
    """Bundled KG + offline model: traced agentic runs, then the full ablation suite and reports."""
    inputs = load_inputs(kg=DEMO_KG, questions=DEMO_QUESTIONS)
    console.print(
        f"[bold]graphtrail demo[/]: {len(inputs.questions)} questions on the bundled '{DEMO_KG}' graph, model {DEMO_MODEL}"
    )
    built = build_agent(AgentSpec(agent=None, variant="agentic", model=DEMO_MODEL), kg=inputs.kg)
    from graphtrail._outdir import claim, lock

    claim(out, force=True)  # cli/app.py checked it (graphtrail._outdir.check)
    with lock(out):
        _demo(built, inputs, out=out, otlp=otlp, force=force, console=console)


def _demo(built: BuiltAgent, inputs: Inputs, *, out: Path, otlp: str | None, force: bool, console: Any) -> None:
    trajectories = run_questions(built, inputs, out=out, otlp=otlp, console=console)
    console.print("[bold]replaying under graph ablations[/] …")
    report = evaluate(
        built,
        inputs,
        out=out,
        conditions=None,
        trials=1,
        seed=0,
        concurrency=4,
        resume=False,
        force=force,
        reuse=True,
        otlp=otlp,
        console=console,
    )
    note = two_accuracies(trajectories, report)
    if note:
        console.print(note, markup=False)
    console.print(f"open [bold]{out / 'report.html'}[/] in a browser")


def two_accuracies(trajectories: list[Any], report: Any) -> str | None:
    """Why the demo shows two accuracies: one traced run per question vs the mean over repeated baseline trials."""
    graded = [t.metadata.get("correct") for t in trajectories if t.metadata.get("correct") is not None]
    base = report.condition("baseline")
    if not graded or base is None or base.accuracy is None:
        return None
    first = f"Two accuracies: the traced runs above scored {sum(graded)}/{len(graded)} ({sum(graded) / len(graded):.0%}), one run per question"
    second = f"the replay baseline scored {base.accuracy:.0%}, the mean over {base.trials} trials per question"
    if round(100 * base.accuracy) == round(100 * sum(graded) / len(graded)):
        return f"{first}; {second}."
    return (f"{first}; {second}. They differ because the demo's model samples with noise "
            "(the noise floor), so repeated runs of one question do not always agree.")


# ----------------------------------------------------------------- report
def rerender(results: Path, *, html: bool, out: Path | None, console: Any, force: bool = False) -> None:
    """report.md (and report.html) again from a saved results.json.

    An ``--out`` holding another evaluation (its own results.json) is refused without
    ``force``: its report.md would no longer describe its results.json."""
    if not results.exists():
        raise InputError(f"results file not found: {results}", "pass the results.json that `graphtrail eval` or `demo` wrote")
    if results.is_dir():
        candidate = results / "results.json"
        if not candidate.exists():
            raise InputError(f"{results} holds no results.json", "pass the results.json that `graphtrail eval` or `demo` wrote")
        results = candidate
    from graphtrail.evaluators import load_report  # seconds: only once the argument is known good

    report = load_report(results)
    from graphtrail._outdir import claim, lock

    target = out or results.parent
    if out is not None:
        other = out.is_dir() and (out / "results.json").exists() and not (out / "results.json").samefile(results)
        # a new or empty folder, or one graphtrail made; not one holding another evaluation
        claim(out, force=force, holds=("results.json",) if other else ())
    # The evaluators render the same files `eval` wrote; results.json is the source here, left as it is.
    with lock(target):
        written = report.write(target, results=False, html=html)
    files = {"report (markdown)": written["markdown"]}
    if html:
        files["report (HTML)"] = written["html"]
    print_report_summary(report, console)
    print_files(console, files)


# ----------------------------------------------------------------- traces
def show_traces(
    file: Path,
    *,
    fmt: str,
    output: Path | None,
    limit: int | None,
    console: Any,
    conditions: list[str] | None = None,
    questions: list[str] | None = None,
) -> None:
    """``graphtrail traces``: see :mod:`.tracecmd` (it reads the file as a stream)."""
    from .tracecmd import show_traces as show

    show(file, fmt=fmt, output=output, limit=limit, console=console, conditions=conditions, questions=questions)
