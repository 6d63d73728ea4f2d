"""Start a question's conditions once its own baselines are in, and keep them only if the end agrees.

(With a deterministic model, whose repeats reuse trial 0's calls, once its trial 0 is in:
the repeats' names are checked at the end like the rest, :func:`.suite._baselines`.)

Why: conditions are built from every question's baseline, so the suite used to wait
for the last baseline before it started any condition. With model latency that
barrier leaves the model idle while the slowest baselines finish (at concurrency 16
and 0.2 s per call, wall time was 1.5x its bound). A question's conditions depend on
the other questions' baselines in three ways only, and each is settled here:

- **whether citation conditions apply** (no answered baseline cited anything): once
  one answered baseline cited, they apply whatever the others do, so they start
  early only then;
- **the names the evaluation knows** (:func:`.suite.known_names`, used to read and
  filter tables and by the model-input check): a run started early used the names
  known then. :class:`NamesLedger` gives each set of names a fingerprint that is
  equal exactly when two sets read every text alike; a run is kept only if the
  fingerprint at the end is the one it ran with, its filter equals the one built at
  the end and its baseline reads the same, and is run again otherwise. Once the
  fingerprint changes, nothing more starts early (an agent whose tools name entities
  otherwise than the KG would only pay twice);
- **random controls** without a KG draw from every baseline's entities, and one
  question without a control refuses the control for all: without a KG they never
  start early, and the end's list of jobs decides which early runs stand.

Early runs' records are held back (not in ``runs.jsonl``, not in the progress bar)
until the end keeps them, so a KG refused at the end (:func:`.suite.check_kg_overlap`)
leaves no condition on disk. Without a KG nothing starts early: every baseline adds
entities no KG names, so the names would never agree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..records import RunKey, RunRecord
from .filtered.leaks import EntityNames, names_of
from .runner import ReplayJob
from .filtered.textleaks import revealed_descriptions

__all__ = ["NamesLedger", "HeldCache", "Speculation"]


class NamesLedger:
    """The names the baselines revealed so far, kept in job order, and their fingerprint.

    :meth:`EntityNames.of` lists revealed names before the KG's, and the index holds
    every name of a KG entity, so a KG entity whose revealed names (in job order) lead
    to the same ``of`` adds nothing; entities outside the KG count with their order.
    Descriptions count as a set (:class:`.textleaks.DescriptionSpans` indexes sets).
    """

    def __init__(self, kg: Any, known: Callable[[Any, Sequence[RunRecord]], EntityNames]) -> None:
        self.kg = kg
        self._known = known  # :func:`.suite.known_names`
        self._pairs: dict[str, list[tuple[tuple[int, int], str]]] = {}  # eid -> ((job index, position), name)
        self._differs: dict[str, tuple[str, ...]] = {}  # KG eid -> its ``of`` where revealed names change it
        self._outside: set[str] = set()
        self._descriptions: dict[tuple[str, str], int] = {}  # (eid, text) no KG holds -> first job index
        self._names: EntityNames | None = None
        self._fingerprint: Any = None
        self.records: dict[int, RunRecord] = {}

    def add(self, index: int, record: RunRecord) -> None:
        """One finished baseline (``index``: its place in the suite's baseline jobs)."""
        self.records[index] = record
        trajectory = record.trajectory
        if trajectory is None:
            return
        touched = set()
        for pos, (eid, name) in enumerate(trajectory.entity_names.items()):
            self._pairs.setdefault(eid, []).append(((index, pos), name))
            touched.add(eid)
        for eid in touched:
            pairs = sorted(self._pairs[eid])
            if eid not in self.kg:
                self._outside.add(eid)
                continue
            entity = self.kg.entity(eid)
            bare = names_of(eid, (), entity)  # EntityNames.of with the KG's names only
            of = names_of(eid, (name for _, name in pairs), entity)
            if of != bare:
                self._differs[eid] = of
            else:
                self._differs.pop(eid, None)
        if record.status != "error":
            for eid, texts in revealed_descriptions([trajectory]).items():
                kept = self.kg.entity(eid)
                for text in texts:
                    if kept is None or kept.description != text:
                        self._descriptions.setdefault((eid, text), index)
        self._fingerprint = None

    def fingerprint(self) -> Any:
        """Equal for two ledgers exactly when their :meth:`names` read every text alike."""
        if self._fingerprint is None:
            outside = sorted(self._outside, key=lambda e: min(p for p, _ in self._pairs[e]))  # dict order in job order
            self._fingerprint = (
                frozenset(self._differs.items()),
                # a name revealed again (a repeated baseline) reads nothing new: EntityNames dedupes it too
                tuple((eid, tuple(dict.fromkeys(name for _, name in sorted(self._pairs[eid])))) for eid in outside),
                frozenset(self._descriptions),
            )
        return self._fingerprint

    def names(self) -> EntityNames:
        """The names known now, as :func:`.suite.known_names` builds them from the baselines in job order."""
        return self._known(self.kg, [self.records[i] for i in sorted(self.records)])


class HeldCache:
    """A run cache that answers from the real one but holds new records until they are kept."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache
        self.records: dict[RunKey, RunRecord] = {}

    def done(self, key: RunKey) -> RunRecord | None:
        return self.cache.done(key)

    def add(self, record: RunRecord) -> None:
        self.records[record.key] = record


class _Early:
    """One question's early conditions: what they were built from, and the task running them."""

    def __init__(self, fingerprint: Any, baseline: Any, jobs: list[ReplayJob], task: asyncio.Task, held: HeldCache):
        self.fingerprint = fingerprint
        self.baseline = baseline
        self.jobs = {job.key: job for job in jobs}
        self.task = task
        self.held = held


Build = Callable[[Any, RunRecord, EntityNames, bool], list[ReplayJob]]
Run = Callable[..., Awaitable[list[RunRecord]]]


class Speculation:
    """Early condition runs of one suite: started per question, judged at the end (see the module docstring)."""

    def __init__(self, kg: Any, cache: Any, build: Build, run: Run,
                 read_baseline: Callable[[RunRecord, EntityNames], RunRecord],
                 known: Callable[[Any, Sequence[RunRecord]], EntityNames]) -> None:
        self.cache = cache
        self.enabled = kg is not None
        self.ledger = NamesLedger(kg, known) if kg is not None else None
        self._build = build
        self._run = run
        self._read = read_baseline
        self._names: dict[Any, EntityNames] = {}  # fingerprint -> the names object built for it (one index each)
        self._started_with: Any = None
        self._cited = False
        self.early: dict[str, _Early] = {}
        self.kept = 0  # early runs the end kept
        self.discarded = 0  # early runs the end built otherwise (run again) or not at all
        self.discarded_calls = 0  # model calls those made

    def baseline_done(self, index: int, record: RunRecord) -> None:
        if self.ledger is not None:
            self.ledger.add(index, record)
            if (self._started_with is not None and self.ledger.fingerprint() != self._started_with):
                self.enabled = False  # names keep changing: early runs would be run twice

    def question_ready(self, question: Any, qid: str, trial0: RunRecord) -> None:
        """Every baseline of ``question`` is in: start its conditions now if that can be exact."""
        if not self.enabled or self.ledger is None or trial0.trajectory is None or trial0.status == "error":
            return
        fingerprint = self.ledger.fingerprint()
        names = self._names.get(fingerprint)
        if names is None:
            names = self._names[fingerprint] = self.ledger.names()
        if self._started_with is None:
            self._started_with = fingerprint
        base = self._read(trial0, names)
        self._cited = self._cited or bool(base.citations)  # then citation conditions apply, whatever the rest cite
        jobs = self._build(question, base, names, self._cited)
        if not jobs:
            return
        held = HeldCache(self.cache)
        task = asyncio.ensure_future(self._run(jobs, held))
        self.early[qid] = _Early(fingerprint, base.trajectory, jobs, task, held)

    def know(self, names: EntityNames | None) -> None:
        """``names`` built from the KG alone: the names of a ledger no baseline added to yet (one index, not two)."""
        if names is not None and self.ledger is not None and not self.ledger.records:
            self._names.setdefault(self.ledger.fingerprint(), names)

    def names_for(self, fingerprint: Any) -> EntityNames | None:
        """The names object early runs used for ``fingerprint`` (so the end shares its index), if any."""
        return self._names.get(fingerprint)

    async def settle(self, final_jobs: Sequence[ReplayJob], baselines: dict[str, RunRecord], fingerprint: Any,
                     run_rest: Run, on_kept: Callable[[RunRecord, bool], None]) -> list[RunRecord]:
        """Every final job's record: an early run's when it was built alike, else a run now; in job order."""
        kept: dict[RunKey, RunRecord] = {}
        pending: list[ReplayJob] = []
        waits: list[tuple[_Early, list[ReplayJob]]] = []
        by_q: dict[str, list[ReplayJob]] = {}
        for job in final_jobs:
            by_q.setdefault(job.key.question_id, []).append(job)
        for qid, jobs in by_q.items():
            early = self.early.get(qid)
            base = baselines.get(qid)
            if early is None or early.fingerprint != fingerprint or base is None or early.baseline != base.trajectory:
                pending.extend(jobs)
                continue
            same = [j for j in jobs if _alike(early.jobs.get(j.key), j)]
            pending.extend(j for j in jobs if not _alike(early.jobs.get(j.key), j))
            waits.append((early, same))
        rest = asyncio.ensure_future(run_rest(pending)) if pending else None
        # Questions whose early runs already ended first: the ablations count then starts with every
        # run done early and kept, rather than at 0 while one question's early runs still go on.
        waits.sort(key=lambda wait: not wait[0].task.done())
        redo: list[ReplayJob] = []
        try:
            for early, same in waits:
                try:
                    await early.task
                except Exception:
                    redo.extend(same)
                    continue
                for job in same:
                    held = early.held.records.get(job.key)
                    record = held if held is not None else self.cache.done(job.key)
                    if record is None:
                        redo.append(job)
                        continue
                    if held is not None:
                        self.cache.add(held)  # kept: now it is written, as a run finishing now would be
                    kept[job.key] = record
                    on_kept(record, held is None)
            done = await rest if rest is not None else []
            kept.update((r.key, r) for r in done)
            if redo:
                kept.update((r.key, r) for r in await run_rest(redo))
        finally:
            if rest is not None and not rest.done():
                rest.cancel()
                await asyncio.gather(rest, return_exceptions=True)
        final_keys = {job.key for job in final_jobs}
        for early in self.early.values():
            for key, record in early.held.records.items():
                if key not in final_keys or kept.get(key) is not record:
                    self.discarded += 1
                    self.discarded_calls += record.model_calls
                else:
                    self.kept += 1
        return [kept[job.key] for job in final_jobs if job.key in kept]

    async def cancel(self) -> None:
        """Stop every early run (the suite is failing or was cancelled)."""
        tasks = [e.task for e in self.early.values() if not e.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*(e.task for e in self.early.values()), return_exceptions=True)


def _alike(early: ReplayJob | None, final: ReplayJob) -> bool:
    """Whether an early job ran what the final one would (its names are checked by fingerprint)."""
    return (early is not None and early.graph_filter == final.graph_filter and early.question == final.question
            and early.shared_trials == final.shared_trials)
