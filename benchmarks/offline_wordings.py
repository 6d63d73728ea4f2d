"""How well does the offline model read a graph and wordings it was not written for?

Not a test: a measurement you run by hand (or in CI for the log)::

    python benchmarks/offline_wordings.py                  # the Wikidata-style test graph, every question
    python benchmarks/offline_wordings.py --every 5        # a fifth of them
    python benchmarks/offline_wordings.py --bundled        # also the bundled countries questions, per kind
    python benchmarks/offline_wordings.py --kg my.tsv --questions my.jsonl   # your own graph and wording

Runs the agentic GraphRAG agent with the ``offline`` model on
``tests/data/wikidata_style.tsv`` (Wikidata-style labels such as "place of
birth" and "country of citizenship", non-English and ambiguous names) and its
generated questions (``tests/wordings.py``: "What/Who/Where/Which is the R of
E?", "The R of E is", "E's R?", "R of E?", and two-hop chains of each), and
prints the accuracy per wording and hop count. Issue 10's targets: at least 0.90
on one-hop and 0.85 on two-hop questions, with the bundled accuracy unchanged.
The script reports them; it exits 1 only when a target is missed on the full
test set.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphtrail.agents import load_kg, load_questions  # noqa: E402
from tests.wordings import KG_FILE, QUESTIONS_FILE, accuracy_by_wording  # noqa: E402

TARGETS = {"1-hop": 0.90, "2-hop": 0.85}


def _table(scores: dict[tuple[str, str], tuple[int, int]], targets: dict[str, float]) -> dict[str, float]:
    """Print one row per (hops, wording) and a total per hop count; return the totals."""
    totals: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    print(f"{'hops':<12} {'wording':<12} {'correct':>8} {'total':>6} {'accuracy':>9}")
    for (kind, wording), (correct, total) in sorted(scores.items()):
        print(f"{kind:<12} {wording or '-':<12} {correct:>8} {total:>6} {correct / total:>9.3f}")
        totals[kind][0] += correct
        totals[kind][1] += total
    print()
    for kind, (correct, total) in sorted(totals.items()):
        target = targets.get(kind)
        verdict = "" if target is None else f"  target >= {target:.2f}: {'met' if correct / total >= target else 'MISSED'}"
        print(f"{kind:<12} {'all':<12} {correct:>8} {total:>6} {correct / total:>9.3f}{verdict}")
    return {kind: c / t for kind, (c, t) in totals.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kg", default=str(KG_FILE), help="graph file (default: the Wikidata-style test graph)")
    parser.add_argument("--questions", default=str(QUESTIONS_FILE), help="questions JSONL (a 'wording' key groups them)")
    parser.add_argument("--every", type=int, default=1, help="ask every N-th question only")
    parser.add_argument("--bundled", action="store_true", help="also score the bundled countries questions per kind")
    args = parser.parse_args(argv)

    kg = load_kg(args.kg, communities=False)
    questions = load_questions(args.questions)[:: args.every]
    start = time.perf_counter()
    scores = accuracy_by_wording(kg, questions)
    print(f"offline model on {kg.name}: {len(questions)} questions in {time.perf_counter() - start:.1f}s\n")
    totals = _table(scores, TARGETS)
    missed = [k for k, target in TARGETS.items() if k in totals and totals[k] < target]

    if args.bundled:
        countries = load_kg("countries")
        bundled = load_questions("countries")[:: args.every]
        start = time.perf_counter()
        print(f"\noffline model on the bundled countries questions: {len(bundled)} in ", end="")
        scores = accuracy_by_wording(countries, bundled)
        print(f"{time.perf_counter() - start:.1f}s\n")
        _table(scores, {})

    full_test_set = args.every == 1 and Path(args.kg) == KG_FILE and Path(args.questions) == QUESTIONS_FILE
    return 1 if missed and full_test_set else 0


if __name__ == "__main__":
    sys.exit(main())
