"""What does prefix reuse save? The full condition suite with and without it.

Not a test: a measurement you run by hand (or in CI for the log)::

    python benchmarks/replay_cost.py                      # default: 40 questions of all kinds, both variants
    python benchmarks/replay_cost.py --limit 12 --variant agentic
    python benchmarks/replay_cost.py --dataset countries-demo

Runs ``graphtrail.evaluators.evaluate``'s replay phase (every default condition,
leave-one-out included, plus the repeated baseline) on the bundled questions with
graphtrail's offline model, once with prefix reuse and once without (naive
replay), for each chosen agent variant. For each it prints

- model calls (those that reached the model), reused calls, tokens, wall time;
- a per-condition breakdown: runs, calls naive vs with reuse, and the ratio;
- the divergence-step histogram (first call of a run that reached the model);
- calls with reuse as a function of the naive run length;
- whether both produced the same records (the offline model is deterministic, so
  they must) and the model-call ratio against the target;
- evaluate's CPU per replay run (process CPU time / runs, with the offline
  model, so it is graphtrail's own cost: tools, tracing, scoring). Issue 12
  measured 64 ms per run; with 0.2 s of model latency that alone caps how far
  concurrency can help.

Two ratios, both honest, because they answer different questions:

- **full suite**: every run, including the repeated baseline. For a sampled model
  baseline trial *k* is an independent sample and the first run of its namespace,
  so it can never reuse anything; the offline model used here declares itself
  deterministic (``noise=0``), so its repeats reuse trial 0 and only trial 0 is a
  floor. The script prints that floor (baseline runs' calls with reuse / naive).
- **ablation runs only**: the replays the ablation conditions add on top of the
  baseline, i.e. the part prefix reuse is for.

Target (issue 4): reuse makes at most 0.4x the model calls of naive replay. The
script prints, for each variant and ratio, whether it is met. Exits 1 if the
records differ with and without reuse; the ratio is reported, not enforced.

Against an older graphtrail (issue 19: replay CPU per run <= 0.50x of before)::

    python benchmarks/replay_cost.py --brief --against ddf0ea7       # a git ref: its src/ runs in a subprocess
    python benchmarks/replay_cost.py --brief --json before.json      # or save a baseline now ...
    python benchmarks/replay_cost.py --brief --against before.json   # ... and compare with it later

``--against`` measures the other code with this same script, alternating with
the code under test (``--rounds``), so both see the same machine load; it prints
the CPU ratio per variant with MET / NOT met, and whether every record is the
same (a digest of each record minus timings and ids). Exits 1 if they differ.

The factory route (issue 28: CPU per run <= 1.3x the filter route's, on the bundled agent and on a
100k-edge graph)::

    python benchmarks/replay_cost.py --brief --factory                  # bundled KG, then 100k edges
    python benchmarks/replay_cost.py --brief --factory --big-edges 0    # bundled KG only

runs the same suite through ``evaluate(agent, questions, kg)`` (the filter route) and through
``evaluate(make_agent, questions, graph=kg)`` (the factory route: the agent rebuilt per distinct
ablation), alternating the two ``--rounds`` times, and prints CPU per run of each, the ratio with
MET / NOT met, the agents built, and whether every answer is the same.

Model latency (issue 19: at concurrency 16 with 0.2 s latency, wall <= 1.2x its
bound)::

    python benchmarks/replay_cost.py --brief --latency 0.2 --concurrency 16

runs the offline model behind an ``asyncio.sleep(latency)`` per call that
reaches the model (reused calls cost no latency), with reuse only, and prints the
wall time against its bound max(calls x latency / concurrency, CPU): raw, and on
:class:`DedicatedCoreLoop`'s clock (the same run as on a core no other process
shares), which the verdict uses, so a busy machine does not decide it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any
from pathlib import Path
from collections import Counter, defaultdict
from dataclasses import dataclass

from graphtrail.agents import VARIANTS, create_graphrag_agent, load_kg, load_questions
from graphtrail.evaluators import aevaluate_records

TARGET = 0.40
CPU_TARGET = 0.50  # issue 19: CPU per replay run, against the code before
LATENCY_TARGET = 1.2  # issue 19: wall time at model latency, against its bound


def _outcome(records: list) -> list[tuple]:
    return sorted(
        (r.key.as_str(), r.answer, tuple(r.citations), r.status, tuple(r.hidden), tuple(r.masked), tuple(r.text_blocked), r.correct)
        for r in records
    )


@dataclass
class Measured:
    variant: str
    naive: object
    reused: object
    t_naive: float
    t_reused: float
    cpu_naive: float = 0.0
    cpu_reused: float = 0.0

    @property
    def same(self) -> bool:
        return _outcome(self.naive.records) == _outcome(self.reused.records)


class CheckCPU:
    """CPU seconds spent in the model-input check (docs/ablations.md): recording what each model call was
    given (the SeenInputs callbacks) and reading it for hidden entities (input_leaks), timed per call."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def _timed(self, fn):
        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - start
        return timed

    def __enter__(self) -> "CheckCPU":
        runner = importlib.import_module("graphtrail.evaluators.replay.runner")
        seen = importlib.import_module("graphtrail.evaluators.replay.seen").SeenInputs
        self._saved = [(runner, "input_leaks", runner.input_leaks)]
        self._saved += [(seen, name, seen.__dict__[name]) for name in ("on_chat_model_start", "on_llm_start", "on_tool_start")]
        for owner, name, fn in self._saved:
            setattr(owner, name, self._timed(fn))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, fn in self._saved:
            setattr(owner, name, fn)


def _digest(records: list) -> str:
    """One digest of every record's content, minus timings and ids (which differ run to run by design).

    Which of two concurrent runs reaching the same new prompt calls the model and which
    reuses its answer is a race (single flight, docs/ablations.md), so the per-run cost
    counters are left out of each record and their totals over all records go in instead.
    """
    volatile = {"wall_time_s", "trace_id", "baseline_trace_id", "run_id", "span_id", "parent_span_id", "start_time",
                "end_time", "span_ids", "duration_ms", "duration_s", "conversation_id", "tool_call_id", "id", "call_id",
                # LangGraph's super-step counter: it counts graph nodes run (middleware hooks included), so it
                # follows the agent graph's shape, not what the run did; the steps' order is kept in the digest
                "langgraph_step"}
    counters = ("model_calls", "reused_calls", "input_tokens", "output_tokens", "divergence_step")

    def scrub(value):
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if k not in volatile}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    rows = sorted(json.dumps(scrub(r.model_dump(mode="json", exclude=set(counters))), sort_keys=True, default=str)
                  for r in records)
    rows.append(json.dumps([sum(getattr(r, c) or 0 for r in records) for c in counters[:4]]))
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def _model(latency: float):
    """The offline model, or the same model behind ``asyncio.sleep(latency)`` per call that reaches it."""
    if not latency:
        return "offline"
    from graphtrail.agents.offline.model import OfflineChatModel

    class SlowOffline(OfflineChatModel):
        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            await asyncio.sleep(latency)
            return await super()._agenerate(messages, stop, run_manager, **kwargs)

    return SlowOffline()


class DedicatedCoreLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock is the process's CPU time plus the waits it skipped: time on a core of its own.

    Whenever nothing is ready to run, nothing is readable and no work it handed to a
    thread is unfinished, it moves its clock to the next timer (the simulated model
    latency) instead of sleeping. So the time it keeps is what the run would take on one
    core no other process shares: CPU as used, latency as waited. While a thread works it
    waits for real, with that thread's CPU on the clock.
    """

    def __init__(self) -> None:
        super().__init__()
        self._skipped = 0.0
        self._threads = 0  # executor jobs not finished yet
        self._cpu0 = time.process_time()
        select = self._selector.select

        def skipping_select(timeout=None):
            if timeout is None or timeout <= 0 or self._threads:
                return select(timeout)
            events = select(0)
            if not events:
                self._skipped += timeout  # idle until the next timer: skip the wait
            return events

        self._selector.select = skipping_select

    def run_in_executor(self, executor, func, *args):
        future = super().run_in_executor(executor, func, *args)
        self._threads += 1

        def finished(_):
            self._threads -= 1

        future.add_done_callback(finished)
        return future

    def time(self) -> float:
        return time.process_time() - self._cpu0 + self._skipped


async def _run(kg, questions, variant: str, reuse: bool, concurrency: int, repeats: int, latency: float = 0.0):
    agent = create_graphrag_agent(_model(latency), kg, variant)
    loop = asyncio.get_running_loop()
    with CheckCPU() as check:
        start, cpu, clock = time.perf_counter(), time.process_time(), loop.time()
        ev = await aevaluate_records(
            agent, questions, kg, reuse=reuse, concurrency=concurrency, progress=False, baseline_repeats=repeats
        )
        wall, used = time.perf_counter() - start, time.process_time() - cpu
    ev.check_cpu = check.seconds  # the model-input check's share of replay CPU is printed in the summary
    ev.loop_time = loop.time() - clock
    return ev, wall, used


def _stratified(questions: list, n: int) -> list:
    """The first ``n`` questions taken round-robin over their ``kind`` (1-hop, 2-hop, ...), in file order.

    The bundled file is sorted by kind, so its first N questions are all 1-hop:
    short runs, not representative of the suite.
    """
    by_kind: dict[str, list] = defaultdict(list)
    for q in questions:
        by_kind[str(getattr(q, "kind", "") or "")].append(q)
    out: list = []
    queues = [list(v) for v in by_kind.values()]
    while len(out) < n and any(queues):
        for queue in queues:
            if queue and len(out) < n:
                out.append(queue.pop(0))
    return out


def _ratio(a: int, b: int) -> float:
    return a / b if b else float("nan")


def _verdict(ratio: float) -> str:
    return "MET" if ratio <= TARGET else "NOT met"


def _report(m: Measured, detail: bool) -> dict[str, float]:
    naive, reused = m.naive, m.reused
    print(f"\n=== variant {m.variant!r} ===")
    print(f"{'':10} {'runs':>6} {'model calls':>12} {'reused':>8} {'tokens in/out':>18} {'wall s':>8}")
    for name, ev, wall in (("naive", naive, m.t_naive), ("reuse", reused, m.t_reused)):
        print(f"{name:10} {len(ev.records):>6} {ev.model_calls:>12} {ev.reused_calls:>8} "
              f"{ev.input_tokens:>9}/{ev.output_tokens:<8} {wall:>8.1f}")

    naive_by_key = {r.key: r for r in naive.records}
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # runs, naive calls, calls with reuse, correct
    by_length: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    by_step: dict[int | str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in reused.records:
        n = naive_by_key[r.key]
        label = r.key.condition if (r.key.condition != "baseline" or r.key.trial == 0) else "baseline (repeats)"
        bucket = per[label]
        bucket[0] += 1
        bucket[1] += n.model_calls
        bucket[2] += r.model_calls
        bucket[3] += bool(r.correct)
        if r.key.condition != "baseline":
            for b in (by_length[n.model_calls], by_step["all reused" if r.divergence_step is None else r.divergence_step]):
                b[0] += 1
                b[1] += n.model_calls
                b[2] += r.model_calls

    if detail:
        print("\nper condition: runs, accuracy, model calls naive -> with reuse (ratio)")
        for label, (runs, nc, rc, ok) in per.items():
            print(f"  {label:20} {runs:>5}  acc {ok / runs:4.0%} {nc:>7} -> {rc:>6}  ({_ratio(rc, nc):.2f}x)")
        print("\nablation runs by divergence step (first call that reached the model): runs, calls naive -> with reuse")
        keys = sorted((k for k in by_step if k != "all reused"), key=int) + (["all reused"] if "all reused" in by_step else [])
        total = sum(b[0] for b in by_step.values())
        for k in keys:
            runs, nc, rc = by_step[k]
            print(f"  step {str(k):>10}: {runs:>5} runs ({runs / total:4.0%}) {nc:>7} -> {rc:>6}  ({_ratio(rc, nc):.2f}x)")
        print("\nablation runs by naive run length (model calls): runs, calls naive -> with reuse (ratio)")
        for length in sorted(by_length):
            runs, nc, rc = by_length[length]
            print(f"  length {length:>3}: {runs:>5} {nc:>7} -> {rc:>6}  ({_ratio(rc, nc):.2f}x)")

    ablation_naive = sum(r.model_calls for r in naive.records if r.key.condition != "baseline")
    ablation_reused = sum(r.model_calls for r in reused.records if r.key.condition != "baseline")
    full = _ratio(reused.model_calls, naive.model_calls)
    floor = _ratio(reused.model_calls - ablation_reused, naive.model_calls)
    ablation = _ratio(ablation_reused, ablation_naive)
    print(f"\nresults identical with and without reuse: {m.same}")
    print(f"model calls, full suite (incl. {len([r for r in reused.records if r.key.condition == 'baseline'])} "
          f"baseline runs): {reused.model_calls} / {naive.model_calls} = {full:.2f}x  target <= {TARGET:.2f}x: {_verdict(full)}")
    print(f"  (the baseline runs' own calls are {floor:.2f}x of naive: no reuse can go below that)")
    print(f"model calls, ablation runs only: {ablation_reused} / {ablation_naive} = {ablation:.2f}x  "
          f"target <= {TARGET:.2f}x: {_verdict(ablation)}")
    print(f"wall time, reuse / naive: {m.t_reused:.1f}s / {m.t_naive:.1f}s = {_ratio(m.t_reused, m.t_naive):.2f}x")
    cpu_naive = 1000 * m.cpu_naive / max(len(naive.records), 1)
    cpu_reused = 1000 * m.cpu_reused / max(len(reused.records), 1)
    print(f"CPU per replay run: naive {cpu_naive:.1f} ms, with reuse {cpu_reused:.1f} ms "
          f"({len(naive.records)} runs each; process CPU time, includes the offline model)")
    return {"full": full, "ablation": ablation, "floor": floor, "cpu_naive": cpu_naive, "cpu_reused": cpu_reused}


def _schedstat() -> tuple[float, float] | None:
    """(CPU seconds, seconds waiting for a CPU) of this thread (Linux schedstat), None where the kernel does not say."""
    try:
        run, wait = Path("/proc/thread-self/schedstat").read_text().split()[:2]
        return int(run) / 1e9, int(wait) / 1e9
    except (OSError, ValueError):
        return None


def _latency(kg, questions, variants, args) -> int:
    """Wall time at model latency against its bound: max(calls that reach the model x latency / c, CPU).

    On a shared machine the event loop also waits for a CPU other processes hold; that
    wait is not the replay's doing. So each variant runs twice: on the real clock (raw
    wall time, what you see on this machine now), and on :class:`DedicatedCoreLoop`'s
    clock (the same run as on a core of its own), which the verdict uses. The old
    estimate, raw wall minus the loop thread's run-queue wait that the process's own
    other threads cannot explain, is printed beside it.
    """
    print(f"model latency {args.latency} s per call that reaches the model, concurrency {args.concurrency}, with reuse")
    for variant in variants:
        before = _schedstat()
        ev, wall, cpu = asyncio.run(_run(kg, questions, variant, True, args.concurrency, args.baseline_repeats, args.latency))
        after = _schedstat()
        bound = max(ev.model_calls * args.latency / args.concurrency, cpu)
        line = (f"  {variant:15} {len(ev.records)} runs, {ev.model_calls} model calls: raw wall {wall:.2f}s, CPU {cpu:.2f}s, "
                f"bound {bound:.2f}s -> {wall / bound:.2f}x")
        if before is not None and after is not None:
            loop_cpu, waited = after[0] - before[0], after[1] - before[1]
            others = max(cpu - loop_cpu, 0.0)  # CPU of this process's other threads
            foreign = max(waited - others, 0.0)
            line += f" (minus run-queue wait {(wall - foreign) / bound:.2f}x)"
        with asyncio.Runner(loop_factory=DedicatedCoreLoop) as runner:
            ev2, _, cpu2 = runner.run(_run(kg, questions, variant, True, args.concurrency, args.baseline_repeats, args.latency))
        bound2 = max(ev2.model_calls * args.latency / args.concurrency, cpu2)
        ratio = ev2.loop_time / bound2
        print(line)
        print(f"  {'':15} on a core of its own: {ev2.loop_time:.2f}s, CPU {cpu2:.2f}s, bound {bound2:.2f}s -> {ratio:.2f}x  "
              f"target <= {LATENCY_TARGET}x: {'MET' if ratio <= LATENCY_TARGET else 'NOT met'}")
    return 0


def _measure(kg, questions, variants, args) -> dict:
    """CPU per run with reuse and without, and the records' digest, per variant (what --json saves)."""
    out = {}
    for variant in variants:
        row = {}
        for mode, reuse in (("naive", False), ("reuse", True)):
            ev, wall, cpu = asyncio.run(_run(kg, questions, variant, reuse, args.concurrency, args.baseline_repeats))
            row[mode] = {"runs": len(ev.records), "cpu_s": cpu, "wall_s": wall, "cpu_ms_per_run": 1000 * cpu / max(len(ev.records), 1),
                         "model_calls": ev.model_calls, "digest": _digest(ev.records)}
        out[variant] = row
    return out


def _other(args, argv: list[str]) -> dict:
    """The same measurement of the code at ``--against`` (a saved JSON, or a git ref run in a subprocess)."""
    if args.against.endswith(".json") and Path(args.against).exists():
        return json.loads(Path(args.against).read_text())
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="replay_cost_") as tmp:
        archive = subprocess.run(["git", "-C", str(root), "archive", args.against, "src"], capture_output=True, check=False)
        if archive.returncode != 0:
            raise SystemExit(f"--against {args.against!r}: neither a saved JSON nor a git ref ({archive.stderr.decode().strip()})")
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        out = Path(tmp) / "other.json"
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src")}
        subprocess.run([sys.executable, __file__, *argv, "--json", str(out)], env=env, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


def _compare(kg, questions, variants, args, argv: list[str]) -> int:
    """CPU per replay run of this code / the code at ``--against``, alternating rounds, and whether records match."""
    mine: list[dict] = []
    theirs: list[dict] = []
    for i in range(args.rounds):
        theirs.append(_other(args, argv))
        mine.append(_measure(kg, questions, variants, args))
        print(f"round {i + 1}/{args.rounds} done", flush=True)
    same = True
    print(f"\nCPU per replay run, this code vs {args.against} (median of {args.rounds} round(s); target <= {CPU_TARGET:.2f}x):")
    for variant in variants:
        for mode in ("naive", "reuse"):
            new = sorted(m[variant][mode]["cpu_ms_per_run"] for m in mine)[args.rounds // 2]
            old = sorted(t[variant][mode]["cpu_ms_per_run"] for t in theirs)[args.rounds // 2]
            ours = {m[variant][mode]["digest"] for m in mine}
            other = {t[variant][mode]["digest"] for t in theirs}
            digests = ours | other
            same &= len(digests) == 1
            ratio = new / old
            # When they differ, say whose rounds disagreed among themselves (a run-to-run difference of that code).
            who = "" if len(digests) == 1 else (
                f" (this code's rounds agree: {len(ours) == 1}; {args.against}'s rounds agree: {len(other) == 1})")
            print(f"  {variant:15} {mode:6} {old:6.1f} ms -> {new:6.1f} ms = {ratio:.2f}x  "
                  f"{'MET' if ratio <= CPU_TARGET else 'NOT met'}; records identical: {len(digests) == 1}{who}")
    return 0 if same else 1


FACTORY_TARGET = 1.3


def _grown(n_edges: int, seed: int = 0):
    """The bundled KG plus synthetic entities and relations up to ``n_edges`` edges (its questions still answerable)."""
    import random

    big = load_kg("countries")
    rng = random.Random(seed)
    ids = list(big.entity_ids())
    n_new = max(1, (n_edges - big.number_of_relations()) // 3)
    for i in range(n_new):
        big.add_entity(f"S{i:06d}", f"Synthetic place {i}", "place", f"a synthetic place numbered {i}")
    pool = ids + [f"S{i:06d}" for i in range(n_new)]
    while big.number_of_relations() < n_edges:
        a, b = f"S{rng.randrange(n_new):06d}", rng.choice(pool)
        if a != b:
            big.add_relation(a, rng.choice(("near", "trades_with", "part_of")), b)
    return big


async def _route_cpu(kg, questions, variant: str, factory: bool, args) -> tuple[Any, float]:
    from graphtrail.evaluators.replay.exact.factory import AgentFactory

    built = []
    original = AgentFactory.agent_for

    def counting(self, graph_filter):
        agent = original(self, graph_filter)
        built.append(self.built)
        return agent

    cpu = time.process_time()
    if factory:
        AgentFactory.agent_for = counting
        try:
            ev = await aevaluate_records(lambda g: create_graphrag_agent("offline", g, variant), questions, graph=kg,
                                         concurrency=args.concurrency, progress=False, baseline_repeats=args.baseline_repeats)
        finally:
            AgentFactory.agent_for = original
        ev.agents_built = max(built, default=0)
    else:
        ev = await aevaluate_records(create_graphrag_agent("offline", kg, variant), questions, kg,
                                     concurrency=args.concurrency, progress=False, baseline_repeats=args.baseline_repeats)
    return ev, time.process_time() - cpu


def _factory(kg, questions, variants, args) -> int:
    """Factory route vs filter route, CPU per run, alternating ``--rounds`` times (issue 28)."""
    graphs = [("bundled", kg)]
    if args.big_edges:
        big = _grown(args.big_edges)
        graphs.append((f"{big.number_of_relations() // 1000}k edges", big))
    same_all, met_all = True, True
    print(f"\nfactory route vs filter route: CPU per replay run (target <= {FACTORY_TARGET:.1f}x), {args.rounds} round(s)")
    for label, graph in graphs:
        for variant in variants:
            cpu = {False: 0.0, True: 0.0}
            runs = {False: 0, True: 0}
            last: dict[bool, Any] = {}
            for _ in range(args.rounds):
                for factory in (False, True):
                    ev, used = asyncio.run(_route_cpu(graph, questions, variant, factory, args))
                    cpu[factory] += used
                    runs[factory] += len(ev.records)
                    last[factory] = ev
            per = {k: 1000 * cpu[k] / runs[k] for k in cpu}
            ratio = per[True] / per[False]
            key = lambda r: (r.key.question_id, r.key.condition, r.key.variant, r.key.trial)  # noqa: E731
            answers = {key(r): r.answer for r in last[False].records}
            same = all(answers.get(key(r)) == r.answer for r in last[True].records) and len(answers) == len(last[True].records)
            same_all &= same
            met_all &= ratio <= FACTORY_TARGET
            print(f"  {label:12} {variant:15} filter {per[False]:6.1f} ms/run, factory {per[True]:6.1f} ms/run: "
                  f"{ratio:.2f}x ({'MET' if ratio <= FACTORY_TARGET else 'NOT met'}); "
                  f"{last[True].agents_built} agents built for {len(last[True].records)} runs; same answers: {same}")
    return 0 if same_all else 1


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Default: 40 'countries' questions taken round-robin over the four kinds (1-hop, 2-hop, 3-hop, "
        "comparison), 3 baseline repeats, variants agentic and evidence_first; about 1 minute on 2 cores.",
    )
    parser.add_argument("--dataset", default="countries", help="bundled question set (countries, countries-demo)")
    parser.add_argument("--limit", type=int, default=40,
                        help="use N questions, taken round-robin over the question kinds in file order (0: all)")
    parser.add_argument("--first", action="store_true", help="with --limit: the first N questions in file order instead")
    parser.add_argument("--variant", choices=[*VARIANTS, "both"], default="both",
                        help="agent variant; 'both' = agentic and evidence_first (default)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--baseline-repeats", type=int, default=3)
    parser.add_argument("--brief", action="store_true", help="totals only, no per-condition breakdown")
    parser.add_argument("--json", metavar="PATH", help="save CPU per run and record digests per variant (a baseline for --against)")
    parser.add_argument("--against", metavar="REF|JSON", help="compare CPU per run and records with a git ref or a saved --json")
    parser.add_argument("--rounds", type=int, default=1, help="with --against a ref: alternate the two codes this many times")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds of model latency per call: wall time vs its bound")
    parser.add_argument("--factory", action="store_true", help="the factory route's CPU per run against the filter route's")
    parser.add_argument("--big-edges", type=int, default=100_000, help="with --factory: also on the KG grown to this many edges (0: skip)")
    argv = sys.argv[1:]
    args = parser.parse_args()
    if args.against:
        drop = {"--against": 2, "--rounds": 2, "--json": 2}
        rest, i = [], 0
        while i < len(argv):
            name = argv[i].split("=")[0]
            step = (1 if "=" in argv[i] else drop[name]) if name in drop else 1
            if name not in drop:
                rest.append(argv[i])
            i += step
        argv = rest

    kg = load_kg("countries")
    questions = load_questions(args.dataset)
    if args.limit:
        questions = questions[: args.limit] if args.first else _stratified(questions, args.limit)
    variants = ["agentic", "evidence_first"] if args.variant == "both" else [args.variant]
    kinds = Counter(str(getattr(q, "kind", "")) for q in questions)
    print(f"{len(questions)} questions from {args.dataset!r} ({', '.join(f'{n} {k}' for k, n in kinds.items())}), KG {len(kg)} entities, offline model, "
          f"variants {', '.join(variants)}, {args.baseline_repeats} baseline repeats, concurrency {args.concurrency}")

    if args.factory:
        return _factory(kg, questions, variants, args)
    if args.latency:
        return _latency(kg, questions, variants, args)
    if args.against:
        return _compare(kg, questions, variants, args, argv)
    if args.json:
        Path(args.json).write_text(json.dumps(_measure(kg, questions, variants, args), indent=1))
        return 0

    results = {}
    checks: dict[str, tuple[float, float]] = {}
    all_same = True
    for variant in variants:
        naive, t_naive, c_naive = asyncio.run(_run(kg, questions, variant, False, args.concurrency, args.baseline_repeats))
        reused, t_reused, c_reused = asyncio.run(_run(kg, questions, variant, True, args.concurrency, args.baseline_repeats))
        m = Measured(variant, naive, reused, t_naive, t_reused, c_naive, c_reused)
        checks[variant] = (naive.check_cpu / c_naive if c_naive else 0.0, reused.check_cpu / c_reused if c_reused else 0.0)
        results[variant] = _report(m, not args.brief)
        all_same &= m.same

    print("\nsummary (model calls with reuse / naive; target <= 0.40x):")
    for variant, r in results.items():
        print(f"  {variant:15} full suite {r['full']:.2f}x ({_verdict(r['full'])}; floor {r['floor']:.2f}x), "
              f"ablation runs only {r['ablation']:.2f}x ({_verdict(r['ablation'])}); "
              f"CPU per replay run naive {r['cpu_naive']:.1f} ms, with reuse {r['cpu_reused']:.1f} ms")
    print("\nmodel-input check (recording each model call's input + reading it for hidden entities), share of replay CPU"
          " (target <= 10%):")
    for variant, (naive_share, reused_share) in checks.items():
        print(f"  {variant:15} naive {naive_share:.1%}, with reuse {reused_share:.1%}")
    print(f"  results identical with and without reuse: {all_same}")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
