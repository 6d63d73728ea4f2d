"""``evaluate``: the whole ablation suite for one agent in one call, in three steps.

1. **replay** (:mod:`.replay`): trace the agent, route every tool call of a
   filtered run through the ablation filter, run each question's baseline
   ``baseline_repeats`` times (the noise floor), then every condition built
   from its baseline trial 0, ``trials`` times each. Finished runs go to
   ``out_dir`` as they finish; ``resume=True`` picks an interrupted evaluation
   up where it stopped. Each run is judged as it finishes, so the cache holds
   its verdict.
2. **score** (:mod:`.scoring`): the condition table, question and entity rows,
   scores and statistics, from the records alone.
3. **report** (:mod:`.report`): the :class:`~.report.Report`, written to ``out_dir``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..kg.graph import KnowledgeGraph
from .comparison.fingerprint import evaluation_fingerprint
from .errors import CoverageError, EvaluationError
from .records import RunKey, RunRecord, question_field
from .replay.ablations import DEFAULT_SUBSETS
from .replay import agent as agent_setup
from .replay.cache import REUSE_FILE, RUNS_FILE, RunCache
from .replay.inputs import check_conditions, normalize_questions
from .replay.filtered.interception import install as install_interception
from .replay.reuse import PrefixReuseCache, ReuseStore
from .replay.runner import AgentRunner, Score
from .replay.suite import Evaluation, replay_suite
from .report.build import assemble_report
from .scoring.coverage import warning_text
from .scoring.judges import DEFAULT_CORRECTNESS, apply_judges
from .scoring.score import score_records

__all__ = ["evaluate", "aevaluate", "EvaluationError", "CoverageError", "Evaluation", "normalize_questions", "DEFAULT_BASELINE_REPEATS"]

#: What marks a folder as holding an evaluation: ``evaluate(out_dir=...)`` replaces one only with ``force=True``.
EVALUATION_FILES: tuple[str, ...] = ("results.json", RUNS_FILE)

#: Baseline runs per question when ``baseline_repeats`` is not given (at least ``trials``).
DEFAULT_BASELINE_REPEATS = 3


# ---------------------------------------------------------------- 1. replay


def _scorer(questions: list[Any], kg: Any, judges: Sequence[Any], correctness: str | None, baseline: dict[str, str | None]) -> Score:
    """Fill ``correct``/``f1``/``changed`` (and extra judges) as each run finishes, so the cache holds them."""
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
            scored = apply_judges(batch, [question] if question is not None else [], kg=kg, judges=judges, correctness=correctness)
        except ImportError:  # answer normalisation not installed: the report builder scores later
            return record
        return scored[-1]

    async def score(record: RunRecord) -> RunRecord:
        if judges:
            return await asyncio.to_thread(score_sync, record)  # LLM judges block
        return score_sync(record)

    return score


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
    answer_field: str | None = None,
    citations_field: str | None = None,
    graph: Any = None,
    graph_keys: Any = None,
) -> Evaluation:
    """Run the replays and return the scored records (no report): :func:`aevaluate` minus scoring."""
    if trials < 1:
        raise EvaluationError(f"trials must be >= 1, got {trials}")
    if concurrency < 1:
        raise EvaluationError(f"concurrency must be >= 1, got {concurrency}")
    if agent is None or not (callable(agent) or hasattr(agent, "ainvoke")):
        raise EvaluationError(f"agent must be a Runnable, a compiled graph or a callable, got {type(agent).__name__}")
    qs = normalize_questions(questions)
    wanted = check_conditions(conditions)
    repeats = max(trials, DEFAULT_BASELINE_REPEATS if baseline_repeats is None else baseline_repeats, 1)
    judges = list(judge) if isinstance(judge, (list, tuple)) else ([judge] if judge is not None else [])

    factory = None
    if graph is not None:  # the factory route: every condition's agent built on really-ablated data
        from .replay.exact.factory import AgentFactory

        factory = AgentFactory(agent, graph, keys=graph_keys, kg=kg,
                               trace=lambda built: agent_setup.traced_agent(built, citations, answer_field, citations_field))
        kg = factory.kg
        runner = AgentRunner(factory.baseline, input_builder)
        runner.factory = factory
        agent_id = agent_name or agent_setup.agent_name(agent)
        agent = factory.baseline
    else:
        install_interception()  # every tool call of a filtered run reaches the filter, however it is made
        runner = AgentRunner(agent_setup.traced_agent(agent, citations, answer_field, citations_field), input_builder)
        agent_id = agent_name or agent_setup.agent_name(agent)
    model = agent_setup.find_model(agent)  # one walk of the graph for the name and the determinism flag
    model_id = model_name or agent_setup.model_name(model)
    shared_trials = reuse and agent_setup.is_deterministic(model, deterministic)

    cache = RunCache(out_dir, resume=resume)
    reuse_path = Path(out_dir) / REUSE_FILE if out_dir is not None else None
    if reuse_path is not None and not resume and reuse_path.exists():
        reuse_path.unlink()  # a stale store from another agent version must not answer this run
    reuse_cache = PrefixReuseCache(ReuseStore(reuse_path if reuse else None), reuse=reuse)

    baseline_answers: dict[str, str | None] = {}
    score = _scorer(qs, kg, judges, correctness, baseline_answers)  # reads baseline_answers, which the suite fills
    evaluation = await replay_suite(
        runner, qs, kg, conditions=wanted, agent_id=agent_id, model_id=model_id, seed=seed, trials=trials,
        repeats=repeats, n_subsets=n_subsets, shared_trials=shared_trials, cache=cache, reuse_cache=reuse_cache,
        concurrency=concurrency, score=score, baseline_answers=baseline_answers, progress=progress,
    )
    evaluation.kg = kg
    return evaluation


# ---------------------------------------------------------------- options


#: Keyword arguments of :func:`evaluate` that go to scoring and the report rather than the replays.
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
    params.append(inspect.Parameter("force", inspect.Parameter.KEYWORD_ONLY, default=False, annotation="bool"))
    params.append(inspect.Parameter("report_kwargs", inspect.Parameter.VAR_KEYWORD, annotation="Any"))
    fn.__signature__ = inspect.Signature(params, return_annotation="Report")  # type: ignore[attr-defined]
    return fn


# ---------------------------------------------------------------- evaluate: replay -> score -> report


@_with_run_options
async def aevaluate(agent: Any, questions: Any, kg: KnowledgeGraph | None = None, **options: Any) -> Any:
    """Async :func:`evaluate`."""
    strict = bool(options.pop("strict", False))
    force = bool(options.pop("force", False))
    run_kwargs, report_kwargs = _split_options("aevaluate", options)
    traversal_question = report_kwargs.pop("traversal_question", None)
    if run_kwargs["out_dir"] is None:
        return await _evaluate(agent, questions, kg, run_kwargs, report_kwargs, traversal_question, strict)
    from .._outdir import claim, lock

    questions = normalize_questions(questions)  # bad input is refused before anything is written
    check_conditions(run_kwargs.get("conditions"))
    if force and run_kwargs["resume"]:
        raise EvaluationError("resume=True and force=True contradict each other: resume continues the evaluation "
                              "in out_dir, force replaces it")
    # A folder graphtrail did not make is refused (OutDirNotEmpty), and so is one holding an
    # earlier evaluation (OutDirHoldsResults), unless force or resume; one another process
    # writes to is refused (OutDirLocked) while that process lives.
    claim(run_kwargs["out_dir"], resume=run_kwargs["resume"], force=force, holds=EVALUATION_FILES)
    with lock(run_kwargs["out_dir"]):
        return await _evaluate(agent, questions, kg, run_kwargs, report_kwargs, traversal_question, strict)


async def _evaluate(agent: Any, questions: Any, kg: Any, run_kwargs: dict[str, Any], report_kwargs: dict[str, Any],
                    traversal_question: Any, strict: bool) -> Any:
    evaluation = await aevaluate_records(agent, questions, kg, **run_kwargs)  # 1. replay
    kg = evaluation.kg  # with graph=, the catalogue of the user's data
    meta = _meta(evaluation, run_kwargs)
    meta["fingerprint"] = evaluation_fingerprint(kg, evaluation, run_kwargs)  # what a later `graphtrail compare` checks
    scored = score_records(  # 2. score
        evaluation.records, evaluation.questions, kg, seed=run_kwargs["seed"], not_applicable=meta["not_applicable"], **report_kwargs
    )
    report = assemble_report(scored, kg, meta=meta, traversal_question=traversal_question)  # 3. report

    if run_kwargs["out_dir"] is not None:
        report.write(run_kwargs["out_dir"])
    _guard_coverage(report, strict)
    return report


def _observed_model(evaluation: Evaluation) -> str | None:
    """The model the runs' model calls named (the commonest, if several), else the name the runs were keyed by."""
    from collections import Counter

    seen = Counter(r.model_seen for r in evaluation.records if r.model_seen)
    if seen:
        return seen.most_common(1)[0][0]
    return evaluation.records[0].key.model if evaluation.records else None


def _meta(evaluation: Evaluation, run_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The run's settings and cost, as the report's ``meta`` records them."""
    return {
        "agent": evaluation.records[0].key.agent if evaluation.records else None,
        "model": _observed_model(evaluation),
        "model_name": evaluation.records[0].key.model if evaluation.records else None,
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


def _guard_coverage(report: Any, strict: bool) -> None:
    """Log (and with ``strict``, raise) when a condition's filter missed a tool that revealed entities."""
    text = warning_text(report)
    if text is None:
        return
    from ..tracer.redact import redact_text

    text = redact_text(text)  # it quotes the first tool error, which may quote a credential
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
    force: bool = False,
    answer_field: str | None = None,
    citations_field: str | None = None,
    graph: Any = None,
    graph_keys: Any = None,
    **report_kwargs: Any,
) -> Any:
    """Replay ``agent`` on ``questions`` under every ablation condition and return the :class:`Report`.

    - ``graph``: the factory route, exact by construction (docs/ablations.md, "Routes"): ``agent`` is then
      a function ``make_agent(data) -> agent``, and ``graph`` the data it builds the agent from (a
      ``KnowledgeGraph``, a networkx graph, a list of LangChain Documents keyed by ``metadata["id"]``,
      a dict of id -> record, pandas tables, or a type given to ``register_ablation``). The baseline
      runs ``make_agent(graph)``; each ablation run ``make_agent(ablated(graph, condition))``, built once
      per distinct ablation. No output filter runs. ``graph_keys`` (``graphtrail.evaluators.Keys``) says
      where ids, names and text live in the data (default ``id``, ``name``, ``description``/``text``/``summary``).
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
    - ``seed``, ``progress`` (a rich bar on a terminal; elsewhere a plain line on
      stderr every few seconds, see ``GRAPHTRAIL_PROGRESS_EVERY``).
    - ``concurrency``: calls at the model at once; up to twice as many replays run,
      so tools and graphtrail's own work overlap the model's latency (back to
      ``concurrency`` replays when a call escapes the limit: docs/ablations.md); ``1`` runs
      one replay at a time.
    - ``out_dir``: where ``runs.jsonl`` (every run, as it finishes), the reuse
      store and the report go; ``resume=True`` continues an interrupted run.
    - ``reuse``: prefix reuse of model responses (docs/ablations.md).
    - ``deterministic``: the model answers a conversation the same way every time, so
      repeated trials share one reuse store (their calls are reused, not repeated).
      Default: the model's own ``deterministic`` attribute (graphtrail's offline model
      with ``noise=0``); never inferred from temperature.
    - ``judge``: a judge or list of judges (:mod:`.scoring.judges`); ``correctness`` names
      the one that decides ``correct`` (default: cover exact match, so "The answer
      is Christopher Nolan." is correct for gold "Christopher Nolan"; normalized
      exact match and token F1 are reported beside it).
    - ``citations``: how citations are read from an answer written in prose:
      ``"names"``, ``"markers"`` or ``fn(answer, {id: [names]}) -> ids`` (see
      ``graphtrail.trace_agent``; default: the tracer's, ``"names"``). An agent that
      cites nothing still gets its uncited and leave-one-out conditions; the
      conditions built from citations are reported as not applicable.
    - ``answer_field`` / ``citations_field``: where a ``create_agent(response_format=...)``
      agent's ``structured_response`` (or a key of its final state) holds the answer and its
      sources (default: ``answer``, and ``sources``/``citations``/``evidence``). An evaluation
      in which no baseline run gave a readable answer raises :class:`EvaluationError`.
    - ``agent_name`` / ``model_name``: the cache key's names (default: discovered).
    - ``input_builder``, ``n_subsets``: the agent's input for a question; subsets per question.
    - ``strict``: raise :class:`CoverageError` (after writing the report) when a condition
      is invalid because a tool that revealed entities escaped the ablation filter
      (docs/ablations.md, "When a condition is invalid"); otherwise a warning is logged
      and the reports carry a red banner.
    - ``force``: replace an earlier evaluation in ``out_dir``. Without it (or ``resume``), a
      folder holding ``results.json`` or ``runs.jsonl`` is refused with
      :class:`graphtrail._outdir.OutDirHoldsResults`, so no result is lost silently.
    - ``n_boot``, ``alpha``, ``power``, ``margin``, ``surrogate_threshold``, ``min_lds``,
      ``paper_reference``, ``traversal_question`` go to
      scoring and the report (:func:`graphtrail.evaluators.report.build_report`).

    Works from synchronous code; inside a running event loop (a notebook) it
    runs on a helper thread. Use :func:`aevaluate` from async code.
    """
    # Spelt out (not ``**options``) so that editors and type checkers show every option;
    # :func:`aevaluate_records` stays the one place their defaults are *used*.
    options = {k: v for k, v in locals().items() if k not in ("agent", "questions", "kg", "report_kwargs", "strict", "force")}
    _split_options("evaluate", {**options, **report_kwargs})  # a misspelt option fails here, before a thread starts
    return _run_sync(aevaluate(agent, questions, kg, **options, strict=strict, force=force, **report_kwargs))


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

