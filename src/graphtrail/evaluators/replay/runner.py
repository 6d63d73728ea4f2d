"""The replay runner: run an agent once per (question, condition, variant, trial) job.

Each job runs in its own asyncio task with its own context, holding

- the job's :class:`~graphtrail.agents.GraphFilter` (``use_filter``), which every
  graph tool reads, and a :func:`.interception.filtering` scope that routes
  every other LangChain tool call through it and counts what it filtered
  (``RunRecord.tool_coverage``, read by the coverage guard,
  :mod:`graphtrail.evaluators.scoring.coverage`);
- a prefix-reuse scope (:mod:`.reuse`) that counts model calls and answers the
  ones whose conversation matches an earlier run of the same namespace;
- a ``graphtrail.capture()`` block collecting the run's trajectory, and
  ``run_annotations`` tagging its root span with the condition and linking it
  to the question's baseline trace.

At most ``concurrency`` jobs run at once. A job whose key is already in the
:class:`~.cache.RunCache` is not run again. A finished job is scored
(``score``), stored (and appended to disk) at once. An exception from the agent
becomes a record with ``status="error"``; ``KeyboardInterrupt``/cancellation
stop the whole replay (finished records are already on disk).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .fromtraces import production_links
from ...agents.sampling import use_trial
from ...kg.views import GraphFilter, use_filter
from ...tracer.trajectory import Trajectory
from ..records import RunKey, RunRecord
from .cache import RunCache
from .filtered.interception import coverage_of, filtering
from .filtered.leaks import EntityNames, input_leaks
from .filtered.method import EXACT, weakest
from .filtered.scope import FilterScope
from .reuse import PrefixReuseCache, RunCounters, namespace_for, reuse_scope
from .seen import SeenInputs, recording
from .slots import CALL_PRIORITY, Slots
from .tabular import citation_mode, read_table_entities

__all__ = [
    "ReplayJob",
    "AgentRunner",
    "replay",
    "answer_from_output",
    "default_input",
]


@dataclass(frozen=True)
class ReplayJob:
    """One run to do: its cache key, the question, the filter, and the baseline it derives from."""

    key: RunKey
    question: str
    graph_filter: GraphFilter = field(default_factory=GraphFilter)
    question_obj: Any = None
    baseline: Trajectory | None = None
    #: All trials share trial 0's reuse namespace: only for a deterministic model, whose
    #: repeated samples are identical by definition (see ``evaluate(deterministic=...)``).
    shared_trials: bool = False
    #: names and aliases of entities, for the model-input check (:mod:`.leaks`) and for reading and
    #: filtering tables (:mod:`.tabular`, :mod:`.tablefilter`); None: ids only
    names: EntityNames | None = None

    @property
    def namespace(self) -> str:
        trial = 0 if self.shared_trials else self.key.trial
        return namespace_for(self.key.agent, self.key.model, self.key.question_id, trial)


def default_input(question: str) -> dict[str, Any]:
    """The LangGraph state graphtrail invokes a Runnable agent with."""
    return {"messages": [("user", question)]}


def _submitted(messages: Sequence[Any]) -> tuple[str | None, list[str]] | None:
    """The last accepted ``submit_answer`` call in a LangGraph message list (docs/architecture.md §3)."""
    from langchain_core.messages import AIMessage, ToolMessage

    errors = {m.tool_call_id for m in messages if isinstance(m, ToolMessage) and m.status == "error"}
    found = None
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("name") == "submit_answer" and call.get("id") not in errors:
                    args = call.get("args") or {}
                    found = (args.get("answer"), [str(c) for c in args.get("citations") or []])
    return found


def answer_from_output(output: Any) -> tuple[str | None, list[str]]:
    """Answer and citations from an agent's return value, for runs without a trajectory."""
    if output is None:
        return None, []
    if isinstance(output, str):
        return output, []
    if isinstance(output, dict):
        from ...tracer.extract import compile_pattern
        from ...tracer.structured import structured_answer

        structured = structured_answer(output, None, None, compile_pattern(None))
        if structured is not None:
            return structured.answer, structured.citations
        messages = output.get("messages")
        if isinstance(messages, list) and messages:
            submitted = _submitted(messages)
            if submitted is not None:
                return submitted
            content = getattr(messages[-1], "content", None)
            return (content if isinstance(content, str) and content else None), []
        if "answer" in output:
            answer = output.get("answer")
            return (None if answer is None else str(answer)), [str(c) for c in output.get("citations") or []]
        from ...tracer.extract import chain_text

        text = chain_text(output)
        if text is not None:
            return text, []
    content = getattr(output, "content", None)
    if isinstance(content, str):
        return content, []
    return str(output), []


class AgentRunner:
    """Calls an agent the same way for every job: ``await runner(question_text, question_obj)``.

    - objects with ``ainvoke`` (Runnables, compiled graphs, traced agents) get
      ``input_builder(question)`` (default ``{"messages": [("user", q)]}``);
    - async callables are awaited with the question text;
    - sync callables run in a worker thread (``asyncio.to_thread`` copies the
      context, so filters and scopes follow them);
    - a Runnable without a working async path (e.g. a sync-only ``@wrap_tool_call``
      middleware, whose ``ainvoke`` raises ``NotImplementedError``) runs through
      ``invoke`` in a worker thread with the context copied, from then on.
    """

    def __init__(self, agent: Any, input_builder: Callable[[str], Any] | None = None) -> None:
        self.agent = agent
        self.input_builder = input_builder
        self.sync_only = False  # set once ``ainvoke`` said it cannot run: ``invoke`` in a worker thread
        #: the model this evaluation's fresh runs saw (RunRecord.model_seen); cached runs of another are re-run
        self.observed: str | None = None
        self._probe: asyncio.Event | None = None  # set while one fresh run learns ``observed`` on resume
        #: the factory route (:mod:`.exact.factory`): each condition's agent built on its ablated data; None: the filter route
        self.factory: Any = None

    async def __call__(self, question: str, agent: Any = None) -> Any:
        agent = self.agent if agent is None else agent
        if hasattr(agent, "ainvoke"):
            payload = (self.input_builder or default_input)(question)
            if self.sync_only:
                return await asyncio.to_thread(agent.invoke, payload)
            try:
                return await agent.ainvoke(payload)
            except NotImplementedError:
                if not hasattr(agent, "invoke"):
                    raise
                self.sync_only = True
                return await asyncio.to_thread(agent.invoke, payload)
        payload = self.input_builder(question) if self.input_builder else question
        if inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(getattr(agent, "__call__", None)):
            return await agent(payload)
        result = await asyncio.to_thread(agent, payload)
        if inspect.isawaitable(result):
            result = await result
        return result


@contextlib.contextmanager
def _traced_scope(job: ReplayJob) -> Iterator[Any]:
    """``capture()`` + ``run_annotations`` when the tracer is available, else a null scope."""
    try:
        from ...tracer import capture, run_annotations  # type: ignore[attr-defined]
    except ImportError:  # tracer not built in this install: records carry no trajectory
        yield None
        return
    key = job.key
    attributes = {
        "graphtrail.condition": key.condition,
        "graphtrail.variant": key.variant,
        "graphtrail.trial": key.trial,
        "graphtrail.question_id": key.question_id,
    }
    links = []
    baseline = job.baseline
    if baseline is not None and baseline.trace_id and baseline.span_id and key.condition != "baseline":
        links.append((baseline.trace_id, baseline.span_id))
    links.extend(production_links(job.question_obj))  # a question taken from production traces links to its runs
    metadata = {
        "condition": key.condition,
        "variant": key.variant,
        "trial": key.trial,
        "question_id": key.question_id,
        "seed": key.seed,
    }
    with capture() as cap, run_annotations(attributes=attributes, links=links, metadata=metadata, replay=True):
        yield cap


def _record(
    job: ReplayJob,
    output: Any,
    error: BaseException | None,
    trajectory: Trajectory | None,
    counters: RunCounters,
    wall: float,
    tool_coverage: dict[str, dict[str, int]] | None = None,
    seen: SeenInputs | None = None,
    factory: Any = None,
) -> RunRecord:
    f = job.graph_filter
    if trajectory is not None:
        answer, citations = trajectory.answer, list(trajectory.citations)
        status = trajectory.status
        err = trajectory.error
    else:
        answer, citations = answer_from_output(output) if error is None else (None, [])
        status = "ok" if answer is not None else "no_answer"
        err = None
    if error is not None:
        status, err = "error", f"{type(error).__name__}: {error}"
    model_calls, reused = counters.model_calls, counters.reused_calls
    tin, tout = counters.input_tokens, counters.output_tokens
    if counters.calls == 0 and trajectory is not None and trajectory.model_calls:
        # the model bypassed the global LLM cache (e.g. ``cache=False``): count from the trace
        model_calls = len(trajectory.model_calls)
        tin = sum(c.input_tokens or 0 for c in trajectory.model_calls)
        tout = sum(c.output_tokens or 0 for c in trajectory.model_calls)
    baseline = job.baseline
    return RunRecord(
        key=job.key,
        question=job.question,
        answer=answer,
        citations=citations,
        status=status,
        error=err,
        hidden=sorted(f.hidden),
        masked=sorted(f.masked),
        text_blocked=sorted(f.text_blocked),
        model_calls=model_calls,
        reused_calls=reused,
        input_tokens=tin,
        output_tokens=tout,
        divergence_step=counters.divergence_step,
        wall_time_s=wall,
        tool_coverage=tool_coverage,
        input_leaks=_leaks(job, seen, factory) if not job.graph_filter.is_empty else None,
        route="factory" if factory is not None else "filter",
        method="exact" if factory is not None else None,
        model_seen=("; ".join(sorted(seen.models)) or None) if seen is not None else None,
        trace_id=trajectory.trace_id if trajectory is not None else None,
        baseline_trace_id=baseline.trace_id if baseline is not None and job.key.condition != "baseline" else None,
        trajectory=trajectory,
    )


def _leaks(job: ReplayJob, seen: SeenInputs | None, factory: Any = None) -> dict[str, list[str]] | None:
    """The model-input check of an ablation run (:mod:`.leaks`; a factory run's excuses what the ablated data shows)."""
    if seen is None:
        return None
    names = job.names or EntityNames(revealed={k: [v] for k, v in (job.baseline.entity_names if job.baseline else {}).items()})
    if factory is not None:
        return factory.leaks(seen, job.graph_filter, names, job.question)
    return input_leaks(seen, job.graph_filter, names, job.question)


async def run_job(runner: AgentRunner, job: ReplayJob, reuse_cache: PrefixReuseCache | None) -> RunRecord:
    """Run one job now (no concurrency limit, no cache): the building block of :func:`replay`."""
    output: Any = None
    error: BaseException | None = None
    trajectory: Trajectory | None = None
    scope: FilterScope | None = None
    seen: SeenInputs | None = None
    factory = runner.factory  # the factory route: the agent is built on ablated data, nothing is filtered
    with contextlib.ExitStack() as stack:
        stack.enter_context(use_filter(None if job.graph_filter.is_empty or factory is not None else job.graph_filter))
        if not job.graph_filter.is_empty and factory is None:  # every tool call of the run goes through the filter
            names = job.baseline.entity_names if job.baseline is not None else None
            scope = stack.enter_context(filtering(job.graph_filter, names))
            scope.entity_names = job.names
        seen = stack.enter_context(recording())  # what the model was given and which model answered
        stack.enter_context(use_trial(job.key.trial))  # sampled (simulated) models draw trial k's sample
        counters = (
            stack.enter_context(reuse_scope(reuse_cache, job.namespace)) if reuse_cache is not None else RunCounters()
        )
        cap = stack.enter_context(_traced_scope(job))
        start = time.perf_counter()
        try:
            agent = factory.agent_for(job.graph_filter) if factory is not None else None
            output = await runner(job.question, agent)
        except Exception as exc:  # the agent's failure is a result, not a crash of the evaluation
            error = exc
        wall = time.perf_counter() - start
        if cap is not None:  # entities the tools' tables named, by the names the evaluation knows (.tabular)
            trajectory = read_table_entities(cap.last, job.names, citation_mode(runner.agent))
            if factory is not None:  # ... and every value of the user's data the tools returned (.exact.recognise)
                trajectory = factory.recognise(trajectory, job.graph_filter, citation_mode(runner.agent), job.names)
    if factory is not None:
        return _record(job, output, error, trajectory, counters, wall, None, seen, factory)
    record = _record(job, output, error, trajectory, counters, wall, coverage_of(scope, trajectory), seen)
    if scope is not None:  # how this run's ablation reached the model (.method): its weakest tool call
        record.method = weakest(scope.methods.elements()) or EXACT
    return record


Score = Callable[[RunRecord], Awaitable[RunRecord]]


def _observe(runner: AgentRunner, record: RunRecord) -> None:
    """The first fresh run that saw a model call names the model of this evaluation."""
    if runner.observed is None and record.model_seen:
        runner.observed = record.model_seen
    if runner._probe is not None and not runner._probe.is_set():
        runner._probe.set()


async def _same_model(runner: AgentRunner, cached: RunRecord) -> bool | None:
    """Whether a cached run was answered by the model answering now (resume with another model re-runs).

    ``None``: nothing has shown yet which model answers now, so the caller runs
    this job fresh to see it (a probe: its cached record is kept when the models
    agree); the other cached jobs wait for it.
    """
    if cached.model_seen is None:
        return True  # no model call was seen then (or an old record): nothing to compare
    if runner.observed is None:
        if runner._probe is None:
            runner._probe = asyncio.Event()
            return None
        await runner._probe.wait()
    return runner.observed is None or cached.model_seen == runner.observed


async def replay(
    agent: Any,
    jobs: Sequence[ReplayJob],
    *,
    cache: RunCache | None = None,
    reuse_cache: PrefixReuseCache | None = None,
    concurrency: int = 4,
    score: Score | None = None,
    on_done: Callable[[RunRecord, bool], None] | None = None,
    input_builder: Callable[[str], Any] | None = None,
    check_model: bool = False,
    slots: Slots | None = None,
    priority: Callable[[ReplayJob], Any] | None = None,
) -> list[RunRecord]:
    """Run ``jobs`` (skipping those ``cache`` already holds); records in job order.

    ``agent`` is invoked as :class:`AgentRunner` describes; trace it with
    ``graphtrail.trace_agent`` beforehand to get trajectories (``evaluate`` does).
    ``reuse_cache`` must be installed as the global LLM cache
    (:func:`.reuse.installed`) for prefix reuse; without it, calls are not counted.
    ``on_done(record, from_cache)`` is called once per job, e.g. for progress.
    ``check_model``: a cached run answered by another model than the one answering
    now is run again (``evaluate`` turns it on; it may cost one probe run).
    ``slots``: share one concurrency limit between replays running at once (the
    suite's baselines and early conditions); default: its own ``concurrency`` slots.
    ``priority(job)``: which waiting job gets a freed slot first (lowest; then arrival).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    runner = agent if isinstance(agent, AgentRunner) else AgentRunner(agent, input_builder)
    cache = cache if cache is not None else RunCache()
    slots = slots if slots is not None else Slots(concurrency)
    results: list[RunRecord | None] = [None] * len(jobs)

    async def one(i: int, job: ReplayJob) -> None:
        cached = cache.done(job.key)
        probing: RunRecord | None = None
        if cached is not None and check_model:
            same = await _same_model(runner, cached)
            if same is None:
                probing, cached = cached, None
            elif not same:
                cached = None
        if cached is not None:
            results[i] = cached
            if on_done is not None:
                on_done(cached, True)
            return
        rank = priority(job) if priority is not None else 0
        async with slots.hold(rank):
            token = CALL_PRIORITY.set(rank)  # its calls wait for a model slot in the same order (.slots.ModelSlots)
            try:
                record = await run_job(runner, job, reuse_cache)
            finally:
                CALL_PRIORITY.reset(token)
        _observe(runner, record)
        if probing is not None and record.model_seen == probing.model_seen:
            record = probing  # the same model: the finished run stands, the probe only looked
            results[i] = record
            if on_done is not None:
                on_done(record, True)
            return
        if score is not None:
            record = await score(record)
        cache.add(record)
        results[i] = record
        if on_done is not None:
            on_done(record, False)

    tasks = [asyncio.ensure_future(one(i, job)) for i, job in enumerate(jobs)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return [r for r in results if r is not None]
