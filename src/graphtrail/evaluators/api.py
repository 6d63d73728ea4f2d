"""``evaluate``: the whole ablation suite for one agent in one call.

1. Prepare the agent: route every tool call of a filtered run through the
   ablation filter (:mod:`.interception`) and trace the agent with
   :func:`graphtrail.trace_agent` unless it already is.
2. Run the baseline for every question, ``baseline_repeats`` times (the noise floor).
3. From each question's baseline trial 0, build every condition's filters
   (:func:`.ablations.condition_filters`) and replay them, ``trials`` times each.
4. Score the records and hand them to the report builder.

Model responses are reused across runs whose conversations agree
(:mod:`.reuse`), finished runs go to ``out_dir`` as they finish (:mod:`.cache`),
and ``resume=True`` picks an interrupted evaluation up where it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import inspect
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.kg import KnowledgeGraph
from .ablations import DEFAULT_SUBSETS, condition_filters
from .cache import REUSE_FILE, RunCache
from .judges import DEFAULT_CORRECTNESS, question_field
from .records import CITATION_CONDITIONS, CONDITIONS, DEFAULT_CONDITIONS, NO_CITATIONS, RunKey, RunRecord
from .replay import AgentRunner, ReplayJob, replay
from .reuse import PrefixReuseCache, ReuseStore, installed
from .interception import install as install_interception

__all__ = ["evaluate", "aevaluate", "EvaluationError", "CoverageError", "Evaluation", "normalize_questions", "DEFAULT_BASELINE_REPEATS"]

#: Baseline runs per question when ``baseline_repeats`` is not given (at least ``trials``).
DEFAULT_BASELINE_REPEATS = 3


class EvaluationError(ValueError):
    """``evaluate`` was given something it cannot run; the message says what and how to fix it."""


class CoverageError(EvaluationError):
    """``evaluate(strict=True)``: a condition's filter did not reach a tool that mattered (see :mod:`.tool_coverage`).

    The report was still built (and written to ``out_dir``) and is on ``.report``,
    with the invalid conditions marked.
    """

    def __init__(self, message: str, report: Any = None) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class Evaluation:
    """What the replay phase produced: records, the questions as scored, and cost totals."""

    records: list[RunRecord]
    questions: list[Any]
    model_calls: int = 0
    reused_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    skipped: dict[str, str] = field(default_factory=dict)  # question id -> why its conditions did not run
    not_applicable: dict[str, str] = field(default_factory=dict)  # condition -> why it was not run

    @classmethod
    def of(cls, records: list[RunRecord], questions: list[Any], skipped: dict[str, str]) -> "Evaluation":
        return cls(
            records=records,
            questions=questions,
            model_calls=sum(r.model_calls for r in records),
            reused_calls=sum(r.reused_calls for r in records),
            input_tokens=sum(r.input_tokens for r in records),
            output_tokens=sum(r.output_tokens for r in records),
            skipped=skipped,
        )

    def __repr__(self) -> str:
        # One line: the records themselves hold whole trajectories.
        from .._display import one_line, plural

        return one_line("Evaluation", plural(len(self.records), "run"), plural(len(self.questions), "question"),
                        f"{self.model_calls} model calls ({self.reused_calls} reused)",
                        f"{len(self.skipped)} skipped" if self.skipped else None)


# ---------------------------------------------------------------- inputs


def normalize_questions(questions: Any) -> list[Any]:
    """``load_questions`` objects, dicts or strings, as objects/dicts with ``id`` and ``question``.

    Strings and dicts without an id get ``q-<sha1 of the text>``, stable across
    reorderings so the cache still matches. Duplicate ids are an error.
    """
    if isinstance(questions, (str, Mapping)) or not isinstance(questions, Iterable):
        questions = [questions]
    out: list[Any] = []
    seen: set[str] = set()
    for i, q in enumerate(questions):
        if isinstance(q, str):
            q = {"question": q, "answers": []}
        text = question_field(q, "question")
        if not isinstance(text, str) or not text.strip():
            raise EvaluationError(f"question #{i} has no 'question' text: {q!r}")
        if question_field(q, "id") is None:
            if not isinstance(q, Mapping):
                raise EvaluationError(f"question #{i} has no 'id'")
            q = {**q, "id": "q-" + hashlib.sha1(text.encode()).hexdigest()[:10]}
        elif isinstance(q, Mapping):
            q = {**q, "id": str(q["id"])}
        qid = str(question_field(q, "id"))
        if qid in seen:
            raise EvaluationError(f"duplicate question id {qid!r}; ids key the cache and must be unique")
        seen.add(qid)
        out.append(q)
    if not out:
        raise EvaluationError("no questions to evaluate")
    return out


def _check_conditions(conditions: Sequence[str] | None) -> list[str]:
    chosen = list(DEFAULT_CONDITIONS if conditions is None else conditions)
    unknown = [c for c in chosen if c not in CONDITIONS]
    if unknown:
        raise EvaluationError(f"unknown condition(s) {unknown}; known: {', '.join(CONDITIONS)}")
    return [c for c in CONDITIONS if c in chosen and c != "baseline"]


def _is_traced(agent: Any) -> bool:
    if hasattr(agent, "graphtrail_handler"):  # graphtrail.tracer.TracedRunnable
        return True
    from ..tracer import wrap as tracer_wrap

    code = getattr(agent, "__code__", None)
    return code is not None and code.co_filename == tracer_wrap.__file__


def _traced_agent(agent: Any, citations: Any) -> Any:
    """``agent`` traced, with ``citations`` (if given) as its rule for reading citations from prose."""
    from ..tracer import GraphTrailHandler, TracedRunnable, trace_agent
    from ..tracer.citations import check_citation_mode

    if citations is not None:
        try:
            check_citation_mode(citations)
        except ValueError as exc:
            raise EvaluationError(str(exc)) from None
    if not _is_traced(agent):
        return trace_agent(agent) if citations is None else trace_agent(agent, citations=citations)
    if citations is None:
        return agent
    handler = getattr(agent, "graphtrail_handler", None)
    if handler is None:
        raise EvaluationError(
            "citations= cannot change a function already decorated with @trace_agent; "
            "pass citations= to trace_agent(...) instead"
        )
    options = dataclasses.replace(handler.options, citations=citations)  # the user's other options stay
    return TracedRunnable(agent.__wrapped__, GraphTrailHandler(_options=options))


def _agent_name(agent: Any) -> str:
    target = getattr(agent, "__wrapped__", None) or agent
    name = getattr(target, "name", None) or getattr(target, "__name__", None) or type(target).__name__
    return str(name)


def _find_model(agent: Any) -> Any:
    """The agent's chat model if it can be found in the graph without running it, else ``None``."""
    from langchain_core.language_models import BaseChatModel

    target = getattr(agent, "__wrapped__", None) or agent
    for node in (getattr(target, "nodes", None) or {}).values():
        bound = getattr(node, "bound", None)
        for value in _closure_values(getattr(bound, "func", None)):
            model = getattr(value, "bound", value)
            if isinstance(model, BaseChatModel):
                return model
    return None


def _model_name(model: Any) -> str:
    """The name of the chat model :func:`_find_model` found, else ``"default"``."""
    if model is None:
        return "default"
    params = getattr(model, "_identifying_params", {}) or {}
    name = params.get("model_name") or params.get("model") or getattr(model, "model_name", None)
    return str(name or model._llm_type)


def _is_deterministic(model: Any, declared: bool | None) -> bool:
    """Whether repeated trials are identical by construction: the user's word, else the model's own.

    A model declares it with a ``deterministic`` attribute that is ``True`` (graphtrail's
    offline model does when ``noise == 0``). Temperature 0 on a hosted LLM is *not*
    deterministic, so nothing is inferred from sampling parameters.
    """
    if declared is not None:
        return declared
    return getattr(model, "deterministic", None) is True


def _closure_values(fn: Any) -> Iterator[Any]:
    for cell in getattr(fn, "__closure__", None) or ():
        with contextlib.suppress(ValueError):
            yield cell.cell_contents


# ---------------------------------------------------------------- progress


class _Progress:
    """A rich progress bar on a terminal; elsewhere (pipes, CI logs) a plain line on stderr every few seconds."""

    def __init__(self, enabled: bool) -> None:
        self._bar: Any = None
        self._beat: Any = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            console = Console()
            if console.is_terminal:
                self._bar = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("model calls {task.fields[calls]}, reused {task.fields[reused]}"),
                    TimeElapsedColumn(),
                    console=console,
                    transient=False,
                )
            else:
                from .._heartbeat import Heartbeat

                self._beat = Heartbeat("replay", 0)
        self._task: Any = None
        self._calls = self._reused = 0

    def __enter__(self) -> "_Progress":
        if self._bar is not None:
            self._bar.__enter__()
        if self._beat is not None:
            self._beat.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
        if self._beat is not None:
            self._beat.stop()

    def phase(self, description: str, total: int) -> None:
        if self._beat is not None:
            self._beat.phase(description, total)
        if self._bar is not None:
            self._task = self._bar.add_task(description, total=total, calls=self._calls, reused=self._reused)

    def done(self, record: RunRecord, from_cache: bool) -> None:
        if not from_cache:
            self._calls += record.model_calls
            self._reused += record.reused_calls
        if self._beat is not None:
            self._beat.advance()
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=1, calls=self._calls, reused=self._reused)


# ---------------------------------------------------------------- scoring


def _scorer(questions: list[Any], kg: Any, judges: Sequence[Any], correctness: str | None, baseline: dict[str, str | None]):
    """Fill ``correct``/``f1``/``changed`` (and extra judges) as each run finishes, so the cache holds them."""
    from . import judges as judges_module

    by_id = {str(question_field(q, "id")): q for q in questions}

    def score_sync(record: RunRecord) -> RunRecord:
        qid = record.key.question_id
        question = by_id.get(qid)
        batch = [record]
        is_anchor = record.key.condition == "baseline" and record.key.trial == 0 and record.key.variant == ""
        if not is_anchor and qid in baseline:
            # apply_judges reads "changed" against the baseline trial-0 record it is given
            anchor = RunRecord(key=RunKey(agent="", model="", question_id=qid, condition="baseline"), question="", answer=baseline[qid])
            batch = [anchor, record]
        try:
            scored = judges_module.apply_judges(batch, [question] if question is not None else [], kg=kg, judges=judges, correctness=correctness)
        except ImportError:  # answer normalisation not installed: the report builder scores later
            return record
        return scored[-1]

    async def score(record: RunRecord) -> RunRecord:
        if judges:
            return await asyncio.to_thread(score_sync, record)  # LLM judges block
        return score_sync(record)

    return score


# ---------------------------------------------------------------- evaluate


async def aevaluate_records(
    agent: Any,
    questions: Any,
    kg: KnowledgeGraph | None = None,
    *,
    conditions: Sequence[str] | None = None,
    trials: int = 1,
    seed: int = 0,
    concurrency: int = 4,
    out_dir: str | Path | None = None,
    resume: bool = False,
    reuse: bool = True,
    baseline_repeats: int | None = None,
    judge: Any = None,
    correctness: str | None = None,
    progress: bool = True,
    agent_name: str | None = None,
    model_name: str | None = None,
    input_builder: Callable[[str], Any] | None = None,
    n_subsets: int = DEFAULT_SUBSETS,
    deterministic: bool | None = None,
    citations: Any = None,
) -> Evaluation:
    """Run the replays and return the scored records (no report): :func:`aevaluate` minus scoring."""
    if trials < 1:
        raise EvaluationError(f"trials must be >= 1, got {trials}")
    if concurrency < 1:
        raise EvaluationError(f"concurrency must be >= 1, got {concurrency}")
    if agent is None or not (callable(agent) or hasattr(agent, "ainvoke")):
        raise EvaluationError(f"agent must be a Runnable, a compiled graph or a callable, got {type(agent).__name__}")
    qs = normalize_questions(questions)
    wanted = _check_conditions(conditions)
    repeats = max(trials, DEFAULT_BASELINE_REPEATS if baseline_repeats is None else baseline_repeats, 1)
    judges = list(judge) if isinstance(judge, (list, tuple)) else ([judge] if judge is not None else [])

    install_interception()  # every tool call of a filtered run reaches the filter, however it is made
    traced = _traced_agent(agent, citations)
    runner = AgentRunner(traced, input_builder)
    agent_id = agent_name or _agent_name(agent)
    model = _find_model(agent)  # one walk of the graph for the name and the determinism flag
    model_id = model_name or _model_name(model)
    shared_trials = reuse and _is_deterministic(model, deterministic)

    cache = RunCache(out_dir, resume=resume)
    reuse_path = Path(out_dir) / REUSE_FILE if out_dir is not None else None
    if reuse_path is not None and not resume and reuse_path.exists():
        reuse_path.unlink()  # a stale store from another agent version must not answer this run
    reuse_cache = PrefixReuseCache(ReuseStore(reuse_path if reuse else None), reuse=reuse)

    def key(qid: str, condition: str, variant: str = "", trial: int = 0) -> RunKey:
        return RunKey(agent=agent_id, model=model_id, question_id=qid, condition=condition, variant=variant, trial=trial, seed=seed)

    baseline_answers: dict[str, str | None] = {}
    score = _scorer(qs, kg, judges, correctness, baseline_answers)
    skipped: dict[str, str] = {}

    with installed(reuse_cache), _Progress(progress) as bar:
        # 1. baselines: trial 0 of each question defines its conditions
        base_jobs = [
            ReplayJob(
                key=key(str(question_field(q, "id")), "baseline", trial=t),
                question=question_field(q, "question"),
                question_obj=q,
                shared_trials=shared_trials,
            )
            for t in range(repeats)
            for q in qs
        ]
        bar.phase("baseline", len(base_jobs))
        # trial 0 first, so repeated baselines can be scored against it
        first = [j for j in base_jobs if j.key.trial == 0]
        rest = [j for j in base_jobs if j.key.trial != 0]
        base_records = await replay(runner, first, cache=cache, reuse_cache=reuse_cache, concurrency=concurrency, score=score, on_done=bar.done)
        for rec in base_records:
            baseline_answers[rec.key.question_id] = rec.answer
        base_records += await replay(runner, rest, cache=cache, reuse_cache=reuse_cache, concurrency=concurrency, score=score, on_done=bar.done)

        # 2. conditions, from each question's baseline trial 0
        jobs: list[ReplayJob] = []
        by_q = {r.key.question_id: r for r in base_records if r.key.trial == 0}
        not_applicable: dict[str, str] = {}
        answered = [r for r in by_q.values() if r.trajectory is not None and r.status != "error"]
        if answered and not any(r.citations for r in answered):
            # an agent that cites nothing: conditions built from citations are no experiment; don't pay for them
            not_applicable = {c: NO_CITATIONS for c in wanted if c in CITATION_CONDITIONS}
            wanted = [c for c in wanted if c not in not_applicable]
        for q in qs:
            qid = str(question_field(q, "id"))
            base = by_q.get(qid)
            if base is None or base.trajectory is None:
                skipped[qid] = "baseline run has no trajectory (was the agent traced?)"
                continue
            if base.status == "error":
                skipped[qid] = f"baseline run failed: {base.error}"
                continue
            for condition in wanted:
                filters = condition_filters(condition, base.trajectory, kg, seed=seed, question=q, n_subsets=n_subsets)
                for variant, graph_filter in filters:
                    for t in range(trials):
                        jobs.append(
                            ReplayJob(
                                key=key(qid, condition, variant, t),
                                question=question_field(q, "question"),
                                graph_filter=graph_filter,
                                question_obj=q,
                                baseline=base.trajectory,
                                shared_trials=shared_trials,
                            )
                        )
        bar.phase("ablations", len(jobs))
        cond_records = await replay(runner, jobs, cache=cache, reuse_cache=reuse_cache, concurrency=concurrency, score=score, on_done=bar.done)

    evaluation = Evaluation.of(base_records + cond_records, qs, skipped)
    evaluation.not_applicable = not_applicable
    return evaluation


#: Keyword arguments of :func:`evaluate` that go to the report builder rather than the replays.
_REPORT_KWARGS = {"n_boot", "alpha", "power", "margin", "surrogate_threshold", "min_lds", "paper_reference", "traversal_question"}


def _split_options(caller: str, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``options`` as the replays' keyword arguments (defaults filled in) and the report builder's.

    :func:`aevaluate_records` is the one place the run options and their defaults are declared.
    """
    run_defaults = {
        name: p.default
        for name, p in inspect.signature(aevaluate_records).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    unknown = sorted(set(options) - set(run_defaults) - _REPORT_KWARGS)
    if unknown:
        raise TypeError(f"{caller}() got unexpected keyword argument(s) {unknown}")
    run_kwargs = {**run_defaults, **{k: v for k, v in options.items() if k in run_defaults}}
    return run_kwargs, {k: v for k, v in options.items() if k in _REPORT_KWARGS}


def _with_run_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Show ``fn(agent, questions, kg=None, **options)`` with every option :func:`aevaluate_records` takes.

    ``help()`` and ``inspect.signature`` read ``__signature__``; the report
    builder's keyword arguments stay behind ``**report_kwargs``.
    """
    params = list(inspect.signature(aevaluate_records).parameters.values())
    params.append(inspect.Parameter("strict", inspect.Parameter.KEYWORD_ONLY, default=False, annotation="bool"))
    params.append(inspect.Parameter("report_kwargs", inspect.Parameter.VAR_KEYWORD, annotation="Any"))
    fn.__signature__ = inspect.Signature(params, return_annotation="Report")  # type: ignore[attr-defined]
    return fn


@_with_run_options
async def aevaluate(agent: Any, questions: Any, kg: KnowledgeGraph | None = None, **options: Any) -> Any:
    """Async :func:`evaluate`."""
    strict = bool(options.pop("strict", False))
    run_kwargs, report_kwargs = _split_options("aevaluate", options)
    evaluation = await aevaluate_records(agent, questions, kg, **run_kwargs)
    return _report(evaluation, kg, run_kwargs, report_kwargs, strict=strict)


def _report(evaluation: Evaluation, kg: Any, run_kwargs: dict[str, Any], report_kwargs: dict[str, Any], *, strict: bool = False) -> Any:
    from .report import build_report

    meta = {
        "agent": evaluation.records[0].key.agent if evaluation.records else None,
        "model": evaluation.records[0].key.model if evaluation.records else None,
        "trials": run_kwargs["trials"],
        "seed": run_kwargs["seed"],
        "reuse": run_kwargs["reuse"],
        "cost": {
            "model_calls": evaluation.model_calls,
            "reused_calls": evaluation.reused_calls,
            "input_tokens": evaluation.input_tokens,
            "output_tokens": evaluation.output_tokens,
        },
        "skipped_questions": evaluation.skipped,
        "not_applicable": evaluation.not_applicable,
        "correctness": run_kwargs["correctness"] or DEFAULT_CORRECTNESS,
    }
    from .comparison.fingerprint import evaluation_fingerprint  # what a later `graphtrail compare` checks

    meta["fingerprint"] = evaluation_fingerprint(kg, evaluation, run_kwargs)
    report = build_report(evaluation.records, evaluation.questions, kg, meta=meta, seed=run_kwargs["seed"], **report_kwargs)
    if run_kwargs["out_dir"] is not None:
        report.write(run_kwargs["out_dir"])
    _guard_coverage(report, strict)
    return report


def _guard_coverage(report: Any, strict: bool) -> None:
    """Log (and with ``strict``, raise) when a condition's filter missed a tool that revealed entities."""
    from .tool_coverage import warning_text

    text = warning_text(report)
    if text is None:
        return
    if strict:  # the exception says it; a log line as well would print it twice
        raise CoverageError(text, report)
    logging.getLogger("graphtrail").warning("graphtrail: %s", text)


def evaluate(
    agent: Any,
    questions: Any,
    kg: KnowledgeGraph | None = None,
    *,
    conditions: Sequence[str] | None = None,
    trials: int = 1,
    seed: int = 0,
    concurrency: int = 4,
    out_dir: str | Path | None = None,
    resume: bool = False,
    reuse: bool = True,
    baseline_repeats: int | None = None,
    judge: Any = None,
    correctness: str | None = None,
    progress: bool = True,
    agent_name: str | None = None,
    model_name: str | None = None,
    input_builder: Callable[[str], Any] | None = None,
    n_subsets: int = DEFAULT_SUBSETS,
    deterministic: bool | None = None,
    strict: bool = False,
    citations: Any = None,
    **report_kwargs: Any,
) -> Any:
    """Replay ``agent`` on ``questions`` under every ablation condition and return the :class:`Report`.

    - ``agent``: a Runnable / compiled LangGraph graph (invoked with
      ``{"messages": [("user", question)]}``, or ``input_builder(question)``),
      traced with ``graphtrail.trace_agent`` or not; or a function
      ``question -> answer`` (sync or async; trace it with ``@trace_agent`` so the
      graph tools it calls are recorded).
    - ``questions``: what ``load_questions`` returns, dicts, or strings.
    - ``kg``: the graph, for ``random_removal`` and for whole-graph isolation.

    Options (keyword only):

    - ``conditions``: default :data:`DEFAULT_CONDITIONS`; ``"random_subsets"`` is opt-in.
    - ``trials``: runs per condition; ``baseline_repeats``: baseline runs per
      question (default ``max(trials, 3)``), the noise floor.
    - ``seed``, ``concurrency``, ``progress`` (a rich bar on a terminal; elsewhere a plain line on
      stderr every few seconds, see ``GRAPHTRAIL_PROGRESS_EVERY``).
    - ``out_dir``: where ``runs.jsonl`` (every run, as it finishes), the reuse
      store and the report go; ``resume=True`` continues an interrupted run.
    - ``reuse``: prefix reuse of model responses (docs/ablations.md).
    - ``deterministic``: the model answers a conversation the same way every time, so
      repeated trials share one reuse store (their calls are reused, not repeated).
      Default: the model's own ``deterministic`` attribute (graphtrail's offline model
      with ``noise=0``); never inferred from temperature.
    - ``judge``: a judge or list of judges (:mod:`.judges`); ``correctness`` names
      the one that decides ``correct`` (default: cover exact match, so "The answer
      is Christopher Nolan." is correct for gold "Christopher Nolan"; normalized
      exact match and token F1 are reported beside it).
    - ``citations``: how citations are read from an answer written in prose:
      ``"names"``, ``"markers"`` or ``fn(answer, {id: [names]}) -> ids`` (see
      ``graphtrail.trace_agent``; default: the tracer's, ``"names"``). An agent that
      cites nothing still gets its uncited and leave-one-out conditions; the
      conditions built from citations are reported as not applicable.
    - ``agent_name`` / ``model_name``: the cache key's names (default: discovered).
    - ``input_builder``, ``n_subsets``: the agent's input for a question; subsets per question.
    - ``strict``: raise :class:`CoverageError` (after writing the report) when a condition
      is invalid because a tool that revealed entities escaped the ablation filter
      (docs/ablations.md, "When a condition is invalid"); otherwise a warning is logged
      and the reports carry a red banner.
    - ``n_boot``, ``alpha``, ``power``, ``margin``, ``surrogate_threshold``, ``min_lds``,
      ``paper_reference``, ``traversal_question`` go to
      :func:`graphtrail.evaluators.report.build_report`.

    Works from synchronous code; inside a running event loop (a notebook) it
    runs on a helper thread. Use :func:`aevaluate` from async code.
    """
    # Spelt out (not ``**options``) so that editors and type checkers show every option;
    # :func:`aevaluate_records` stays the one place their defaults are *used*.
    options = {k: v for k, v in locals().items() if k not in ("agent", "questions", "kg", "report_kwargs", "strict")}
    _split_options("evaluate", {**options, **report_kwargs})  # a misspelt option fails here, before a thread starts
    return _run_sync(aevaluate(agent, questions, kg, **options, strict=strict, **report_kwargs))


def _run_sync(coro: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            result["error"] = exc

    thread = threading.Thread(target=target, name="graphtrail-evaluate")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]

