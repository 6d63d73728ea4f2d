"""What does prefix reuse save? The full condition suite with and without it.

Not a test: a measurement you run by hand (or in CI for the log)::

    python benchmarks/replay_cost.py                 # bundled "countries" questions
    python benchmarks/replay_cost.py --dataset countries-demo --limit 12

Runs ``graphtrail.evaluators.evaluate``'s replay phase (every default condition,
leave-one-out included, plus the repeated baseline) on the bundled questions with
graphtrail's offline model, once with prefix reuse and once without (naive
replay). Prints model calls (those that reached the model), reused calls, tokens
and wall time of each, checks that both produced the same records (the offline
model is deterministic, so they must), and prints the ratio.

Target (issue 4): reuse makes at most 0.4x the model calls of naive replay.
Exits 1 if the results differ; the ratio is reported, not enforced.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import defaultdict

from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
from graphtrail.evaluators import aevaluate_records


def _outcome(records: list) -> list[tuple]:
    return sorted(
        (r.key.as_str(), r.answer, tuple(r.citations), r.status, tuple(r.hidden), tuple(r.masked), tuple(r.text_blocked), r.correct)
        for r in records
    )


async def _run(kg, questions, reuse: bool, concurrency: int, repeats: int):
    agent = create_graphrag_agent("offline", kg)
    start = time.perf_counter()
    ev = await aevaluate_records(
        agent, questions, kg, reuse=reuse, concurrency=concurrency, progress=False, baseline_repeats=repeats
    )
    return ev, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="countries", help="bundled question set (countries, countries-demo)")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N questions")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--baseline-repeats", type=int, default=3)
    args = parser.parse_args()

    kg = load_kg("countries")
    questions = load_questions(args.dataset)[: args.limit]
    print(f"{len(questions)} questions from {args.dataset!r}, KG {len(kg)} entities, offline model")

    naive, t_naive = asyncio.run(_run(kg, questions, False, args.concurrency, args.baseline_repeats))
    reused, t_reused = asyncio.run(_run(kg, questions, True, args.concurrency, args.baseline_repeats))

    same = _outcome(naive.records) == _outcome(reused.records)
    print(f"\n{'':10} {'runs':>6} {'model calls':>12} {'reused':>8} {'tokens in/out':>16} {'wall s':>8}")
    for name, ev, wall in (("naive", naive, t_naive), ("reuse", reused, t_reused)):
        print(f"{name:10} {len(ev.records):>6} {ev.model_calls:>12} {ev.reused_calls:>8} "
              f"{ev.input_tokens:>8}/{ev.output_tokens:<7} {wall:>8.1f}")

    per = defaultdict(lambda: [0, 0, 0])
    for r in reused.records:
        p = per[r.key.condition]
        p[0] += 1
        p[1] += r.model_calls
        p[2] += r.reused_calls
    print("\nwith reuse, per condition: runs, model calls, reused calls")
    for condition, (runs, calls, hits) in per.items():
        share = hits / (calls + hits) if calls + hits else 0.0
        print(f"  {condition:22} {runs:>5} {calls:>6} {hits:>6}  ({share:.0%} reused)")
    condition_calls = sum(r.model_calls for r in reused.records if r.key.condition != "baseline")
    naive_condition_calls = sum(r.model_calls for r in naive.records if r.key.condition != "baseline")

    ratio = reused.model_calls / naive.model_calls if naive.model_calls else float("nan")
    print(f"\nresults identical with and without reuse: {same}")
    print(f"model calls, reuse / naive: {reused.model_calls} / {naive.model_calls} = {ratio:.2f}x (target <= 0.40x)")
    if naive_condition_calls:
        print(f"  ablation runs only (baseline excluded): {condition_calls / naive_condition_calls:.2f}x")
    print(f"wall time, reuse / naive: {t_reused:.1f}s / {t_naive:.1f}s = {t_reused / t_naive:.2f}x")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
