"""The whole ablation suite for one agent: every baseline, then every condition built from them.

1. Run the baseline for every question, ``repeats`` times (the noise floor);
   a question's trial 0 first, so its repeated baselines can be scored against it.
2. From each question's baseline trial 0, build every condition's filters
   (:func:`.ablations.condition_filters`) and replay them, ``trials`` times each.
   Conditions also depend on the other questions' baselines (applicability, the
   names the evaluation knows, controls); :mod:`.speculate` starts a question's
   conditions as soon as its own baselines are in and keeps only the runs the
   end would have built alike, so the model is not idle behind the slowest baseline.

An agent whose baselines cite nothing gets no citation conditions: they would
be no experiment (see :data:`~graphtrail.evaluators.records.NO_CITATIONS`).
What comes back is an :class:`Evaluation`: the records and the cost totals,
nothing scored beyond what the ``score`` callback filled in as runs finished.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..records import CITATION_CONDITIONS, NO_CITATIONS, RunKey, RunRecord, question_field
from ..errors import EvaluationError
from .ablations import NO_RANDOM_CONTROL, NoRandomControl, condition_filters, revealed_pool
from .cache import RunCache
from .filtered.leaks import EntityNames
from .progress import ReplayProgress
from .reuse import PrefixReuseCache, installed
from .runner import AgentRunner, ReplayJob, Score, replay
from .slots import ModelSlots, Slots
from .speculate import Speculation
from .tabular import citation_mode, read_table_entities
from .filtered.textleaks import revealed_descriptions

__all__ = ["Evaluation", "replay_suite"]

#: Baseline repeats run at once when they reuse trial 0's calls (CPU work only): a trickle beside the conditions.
REPEATS_AT_ONCE = 2


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
    early_kept: int = 0  # condition runs started before every baseline was in, and kept (.speculate)
    early_discarded: int = 0  # ... and not kept: run again or not wanted (their model calls are in model_calls)
    kg: Any = None  # the graph the conditions were drawn from (the factory route's catalogue of graph=)

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
        from ..._display import one_line, plural

        return one_line("Evaluation", plural(len(self.records), "run"), plural(len(self.questions), "question"),
                        f"{self.model_calls} model calls ({self.reused_calls} reused)",
                        f"{len(self.skipped)} skipped" if self.skipped else None)


@dataclass(frozen=True)
class _Keys:
    """Builds the cache key of each run of one evaluation."""

    agent: str
    model: str
    seed: int

    def __call__(self, qid: str, condition: str, variant: str = "", trial: int = 0) -> RunKey:
        return RunKey(agent=self.agent, model=self.model, question_id=qid, condition=condition, variant=variant, trial=trial, seed=self.seed)


def _applicable(wanted: list[str], baselines: dict[str, RunRecord]) -> tuple[list[str], dict[str, str]]:
    """``wanted`` without the citation conditions when no answered baseline cited anything, and why."""
    answered = [r for r in baselines.values() if r.trajectory is not None and r.status != "error"]
    if answered and not any(r.citations for r in answered):
        # an agent that cites nothing: conditions built from citations are no experiment; don't pay for them
        not_applicable = {c: NO_CITATIONS for c in wanted if c in CITATION_CONDITIONS}
        return [c for c in wanted if c not in not_applicable], not_applicable
    return wanted, {}


def _condition_jobs(
    questions: Sequence[Any],
    baselines: dict[str, RunRecord],
    wanted: list[str],
    kg: Any,
    key: _Keys,
    names: EntityNames,
    *,
    trials: int,
    seed: int,
    n_subsets: int,
    shared_trials: bool,
) -> tuple[list[ReplayJob], dict[str, str], bool]:
    """Every condition's jobs, from each question's baseline trial 0; and the questions skipped, with why."""
    jobs: list[ReplayJob] = []
    skipped: dict[str, str] = {}
    traces = [b.trajectory for b in baselines.values() if b.trajectory is not None and b.status != "error"]
    pool = revealed_pool(traces) if kg is None else None
    no_control = False
    for q in questions:
        qid = str(question_field(q, "id"))
        base = baselines.get(qid)
        if base is None or base.trajectory is None:
            skipped[qid] = "baseline run has no trajectory (was the agent traced?)"
            continue
        if base.status == "error":
            skipped[qid] = f"baseline run failed: {base.error}"
            continue
        for condition in wanted:
            try:
                filters = condition_filters(condition, base.trajectory, kg, seed=seed, question=q, n_subsets=n_subsets, pool=pool)
            except NoRandomControl:
                no_control = True
                continue
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
                            names=names,
                        )
                    )
    if no_control:  # a control drawn for some questions only is no control: refuse it whole
        jobs = [j for j in jobs if j.key.condition != "random_removal"]
    return jobs, skipped, no_control


def known_names(kg: Any, baselines: Sequence[RunRecord]) -> EntityNames:
    """The KG's names and every name the baselines' tools revealed: what the model-input check and the table reader look for."""
    revealed: dict[str, list[str]] = {}
    for base in baselines:
        if base.trajectory is not None:
            for eid, name in base.trajectory.entity_names.items():
                revealed.setdefault(eid, []).append(name)
    traces = [b.trajectory for b in baselines if b.trajectory is not None and b.status != "error"]
    return EntityNames(kg, revealed, revealed_descriptions(traces))


def _read_baseline(record: RunRecord, names: EntityNames, mode: Any) -> RunRecord:
    """``record`` with the entities its tools' tables named (the same object if none)."""
    read = read_table_entities(record.trajectory, names, mode)
    if read is record.trajectory or read is None:
        return record
    return record.model_copy(update={"trajectory": read, "citations": list(read.citations), "answer": read.answer})


def read_baseline_tables(records: list[RunRecord], names: EntityNames, mode: Any, cache: RunCache) -> list[RunRecord]:
    """``records`` with the entities their tools' tables named, by every name the evaluation knows (:mod:`.tabular`).

    A baseline run is read when it finishes with the KG's names only; the names
    its sibling runs revealed are known once all have finished. A record that
    gains entities replaces its cached line (the last line of a key wins).
    """
    out = []
    for record in records:
        read = _read_baseline(record, names, mode)
        if read is not record:
            cache.add(read)
        out.append(read)
    return out


#: A KG sharing less than this share of the entities the agent's tools revealed is not the agent's graph.
MIN_KG_OVERLAP = 0.5


def check_kg_overlap(kg: Any, baselines: dict[str, RunRecord]) -> None:
    """Refuse a KG that is not the one the agent's tools read: the KG conditions would hide nothing it sees."""
    if kg is None:
        return
    revealed = {e for b in baselines.values() if b.trajectory is not None for e in b.trajectory.visited}
    if not revealed:
        return
    shared = sum(1 for e in revealed if e in kg)
    if shared < MIN_KG_OVERLAP * len(revealed):
        name = getattr(kg, "name", "the KG")
        raise EvaluationError(
            f"the KG {name!r} shares {shared} of the {len(revealed)} entities the agent's tools revealed, so it is not "
            "the graph the agent reads; pass the agent's own graph as kg=, or no kg at all"
        )


def check_answers_read(baselines: Sequence[RunRecord]) -> None:
    """Refuse an evaluation in which no baseline run gave an answer graphtrail could read.

    Its conditions would compare nothing with nothing; a report would blame the
    agent's citations for what is graphtrail not finding the answer. Runs that all
    failed with an error are reported as such (scoring/coverage.py), not here.
    """
    if not baselines or any(r.status == "ok" for r in baselines):  # (an answer recorded without content is still read)
        return
    unread = [r for r in baselines if r.status != "error"]
    if not unread:
        return
    reason = next((r.error for r in unread if r.error), None)
    why = f" ({reason})" if reason else ""
    raise EvaluationError(
        f"no baseline run produced a readable answer: {len(unread)} of {len(baselines)} ended with no answer graphtrail "
        f"could read{why}; if the agent answers in a structured_response or a key of its final state, pass answer_field= "
        "and citations_field= naming its fields (--answer-field/--citations-field), otherwise trace it with a "
        "citation_parser=; no condition is reported"
    )


def _priorities(questions: Sequence[Any]) -> Callable[[ReplayJob], tuple[int, int, int]]:
    """Who gets a freed slot (replays and model calls alike): lowest first.

    Baselines first, earlier questions before later ones, so that the first
    questions' baselines finish (and their conditions start) instead of every
    baseline sharing the model at once; then the conditions whose baseline ran
    longest, so the last runs of an evaluation are short ones.
    """
    order = {str(question_field(q, "id")): i for i, q in enumerate(questions)}

    def priority(job: ReplayJob) -> tuple[int, int, int]:
        where = order.get(job.key.question_id, len(order))
        if job.key.condition == "baseline":
            return (0, job.key.trial, where)
        return (1, -len(job.baseline.model_calls) if job.baseline is not None else 0, where)

    return priority


async def _baselines(run: Any, questions: list[Any], key: _Keys, kg: Any, repeats: int, shared_trials: bool,
                     baseline_answers: dict[str, str | None], bar: ReplayProgress, speculation: Speculation) -> list[RunRecord]:
    """Every question's baselines, trial 0 first (the repeats are scored against it), in job order.

    Questions run side by side; the moment one question's baselines are all in, its
    conditions may start early (:mod:`.speculate`).

    With ``shared_trials`` (a deterministic model: the repeats reuse every call of trial 0)
    a repeat is CPU work only, and a question's conditions may start as soon as its trial 0
    is in: the names the repeats reveal are checked at the end, as every baseline's are
    (an early run is kept only if they change nothing). The repeats then go
    :data:`REPEATS_AT_ONCE` at a time beside the conditions, rather than all of them as soon
    as trial 0 is in: run all at once they held the CPU while the conditions' model calls
    waited to be made, and the model sat idle (issue 19, `docs/ablations.md` "At model latency").
    """
    kg_names = EntityNames(kg) if kg is not None else None  # tables in tool outputs are read by the KG's names
    speculation.know(kg_names)  # baselines that reveal only the KG's names: conditions share its index
    jobs = [
        ReplayJob(
            key=key(str(question_field(q, "id")), "baseline", trial=t),
            question=question_field(q, "question"),
            question_obj=q,
            shared_trials=shared_trials,
            names=kg_names,
        )
        for t in range(repeats)
        for q in questions
    ]
    order = {job.key: i for i, job in enumerate(jobs)}
    bar.phase("baseline", len(jobs))
    n = len(questions)

    trickle = Slots(REPEATS_AT_ONCE) if shared_trials else None

    async def repeats_of(i: int) -> list[RunRecord]:
        if trickle is None:
            return await run(jobs[i + n::n])
        done: list[RunRecord] = []
        for job in jobs[i + n::n]:
            async with trickle.hold(job.key.trial):
                done += await run([job])
        return done

    async def one_question(i: int) -> list[RunRecord]:
        q = questions[i]
        first = await run([jobs[i]])
        if first:
            baseline_answers[first[0].key.question_id] = first[0].answer
            if trickle is not None:
                speculation.baseline_done(order[first[0].key], first[0])
                speculation.question_ready(q, first[0].key.question_id, first[0])
        rest = await repeats_of(i) if repeats > 1 else []
        for record in (rest if trickle is not None else first + rest):
            speculation.baseline_done(order[record.key], record)
        if first and trickle is None:
            speculation.question_ready(q, first[0].key.question_id, first[0])
        return first + rest

    tasks = [asyncio.ensure_future(one_question(i)) for i in range(n)]
    try:
        found = [r for records in await asyncio.gather(*tasks) for r in records]
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return sorted(found, key=lambda r: order[r.key])


async def replay_suite(
    runner: AgentRunner,
    questions: list[Any],
    kg: Any,
    *,
    conditions: list[str],
    agent_id: str,
    model_id: str,
    seed: int,
    trials: int,
    repeats: int,
    n_subsets: int,
    shared_trials: bool,
    cache: RunCache,
    reuse_cache: PrefixReuseCache,
    concurrency: int,
    score: Score,
    baseline_answers: dict[str, str | None],
    progress: bool,
) -> Evaluation:
    """Replay ``questions`` at baseline and under each of ``conditions``; every record, in that order.

    ``baseline_answers`` (question id -> baseline trial-0 answer) is filled as soon
    as the trial-0 baselines are in, before anything else runs: ``score`` reads it
    to tell whether an answer changed.
    """
    key = _Keys(agent_id, model_id, seed)
    mode = citation_mode(runner.agent)
    with installed(reuse_cache), ReplayProgress(progress) as bar:
        # ``concurrency`` limits calls at the model; twice as many replays run, so that tools and graphtrail's own
        # work go on while replays wait at the model (back to ``concurrency`` replays if a call escapes the limit).
        # 1 stays one replay at a time: a sequential evaluation, whose cost counters do not depend on scheduling.
        slots = Slots(2 * concurrency if concurrency > 1 else 1)
        reuse_cache.model_slots = ModelSlots(concurrency, on_ungated=lambda: slots.limit(concurrency))
        common = dict(reuse_cache=reuse_cache, concurrency=concurrency, score=score, check_model=True, slots=slots,
                      priority=_priorities(questions))
        run = functools.partial(replay, runner, cache=cache, on_done=bar.done, **common)

        def build(q: Any, base: RunRecord, names: EntityNames, cited: bool) -> list[ReplayJob]:
            early = [c for c in conditions if cited or c not in CITATION_CONDITIONS]
            qid = str(question_field(q, "id"))
            return _condition_jobs([q], {qid: base}, early, kg, key, names, trials=trials, seed=seed, n_subsets=n_subsets,
                                   shared_trials=shared_trials)[0]

        def run_early(jobs: list[ReplayJob], held: Any) -> Any:
            return replay(runner, jobs, cache=held, on_done=lambda *_: bar.ahead(), **common)

        speculation = Speculation(kg, cache, build, run_early, lambda record, names: _read_baseline(record, names, mode),
                                  known_names)
        try:
            base_records = await _baselines(run, questions, key, kg, repeats, shared_trials, baseline_answers, bar, speculation)
            # 2. conditions, from each question's baseline trial 0, with every name the baselines revealed
            fingerprint = speculation.ledger.fingerprint() if speculation.ledger is not None else None
            names = speculation.names_for(fingerprint) or known_names(kg, base_records)
            base_records = read_baseline_tables(base_records, names, mode, cache)
            by_q = {r.key.question_id: r for r in base_records if r.key.trial == 0}
            wanted, not_applicable = _applicable(conditions, by_q)
            check_kg_overlap(kg, by_q)
            check_answers_read(base_records)
            jobs, skipped, no_control = _condition_jobs(
                questions, by_q, wanted, kg, key, names, trials=trials, seed=seed, n_subsets=n_subsets, shared_trials=shared_trials
            )
            if no_control:
                not_applicable["random_removal"] = NO_RANDOM_CONTROL
            bar.phase("ablations", len(jobs))
            cond_records = await speculation.settle(jobs, by_q, fingerprint, run, bar.done)
        except BaseException:
            await speculation.cancel()
            raise
        finally:
            reuse_cache.model_slots = None

    evaluation = Evaluation.of(base_records + cond_records, questions, skipped)
    evaluation.model_calls += speculation.discarded_calls  # early runs the end did not keep still called the model
    evaluation.early_kept, evaluation.early_discarded = speculation.kept, speculation.discarded
    evaluation.not_applicable = not_applicable
    return evaluation
