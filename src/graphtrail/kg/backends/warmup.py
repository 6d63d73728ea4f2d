"""Warm a just-opened database graph, so its first users get the speed of a warm one.

A database answers its first queries slowly: LadybugDB search builds its
label index on the first call (one read of every entity), and a just-started
Neo4j reads its full-text index pages from disk and runs its query code
interpreted until the JVM has compiled it. A production server restarts, and
the first users after a deploy would pay that. So when graphtrail opens a
database graph it asks a few questions of its own first:

- searches for the names of sampled entities, exact, with a typo and as a
  prefix (the full-text indexes, or the label index, and the record reads),
  and each sample's record and relations (the tools' other queries);
- in windows of :data:`WINDOW` searches, until a window's median search is
  under :data:`SETTLED_MS`, or two windows in a row were no faster than the
  best before them (the code is compiled, the pages are in memory: more
  questions would not help), or :data:`BUDGET_S` seconds have passed
  (``GRAPHTRAIL_DB_WARMUP`` sets the budget in seconds; ``0`` turns warming off);
- only graphs of :data:`MIN_ENTITIES` entities or more: a small graph answers
  its first questions fast enough, and is opened often (tests, notebooks).

It logs one line on the ``graphtrail`` logger (INFO) saying what it did and
how long it took. Every query is a read; nothing is written.
"""

from __future__ import annotations

import logging
import os
import random
import statistics
import time
from typing import TYPE_CHECKING, Any

from .identifiers import cypher_name

if TYPE_CHECKING:  # pragma: no cover
    from .cypher import CypherGraph

__all__ = ["warm_up", "BUDGET_S", "WINDOW", "SETTLED_MS", "MIN_ENTITIES"]

#: Longest a warm-up may take, in seconds (``GRAPHTRAIL_DB_WARMUP`` overrides; 0 disables).
BUDGET_S = 30.0
#: Searches per window; the warm-up stops after the first window that is fast enough.
WINDOW = 25
#: A window whose median search takes less than this (ms) means the database is warm.
SETTLED_MS = 15.0
#: Smaller graphs are not warmed.
MIN_ENTITIES = 10_000
#: Entities sampled for the warm-up's questions.
SAMPLE = 200

_log = logging.getLogger("graphtrail")


def _budget() -> float:
    text = os.environ.get("GRAPHTRAIL_DB_WARMUP", "").strip()
    if not text:
        return BUDGET_S
    try:
        return max(0.0, float(text))
    except ValueError:
        _log.warning("graphtrail: GRAPHTRAIL_DB_WARMUP=%r is not a number of seconds; warming for %g s", text, BUDGET_S)
        return BUDGET_S


def _sample(kg: CypherGraph) -> list[tuple[str, str]]:
    """Up to :data:`SAMPLE` (id, name) pairs, spread over the first entities the database stores."""
    m = kg.store.mapping
    label, ident, name = cypher_name(m.entity_label), cypher_name(m.id_property), cypher_name(m.name_property)
    rows = kg.store.rows(f"MATCH (e:{label}) RETURN e.{ident}, e.{name} LIMIT $n", {"n": SAMPLE * 20})
    pairs = [(str(i), str(n)) for i, n in rows if i is not None and n]
    random.Random(0).shuffle(pairs)
    return pairs[:SAMPLE]


def _variants(name: str, rng: random.Random) -> list[str]:
    out = [name]
    if len(name) > 4:
        i = rng.randrange(1, len(name) - 1)
        out.append(name[:i] + name[i + 1:])  # a typo
        out.append(name[: max(3, len(name) // 2)])  # a prefix
    return out


def warm_up(kg: CypherGraph, budget_s: float | None = None) -> dict[str, Any]:
    """Ask ``kg`` the tools' questions until it answers as a warm database does; returns what it did."""
    budget = _budget() if budget_s is None else budget_s
    report: dict[str, Any] = {"queries": 0, "seconds": 0.0, "settled": False, "last_window_p50_ms": None}
    if budget <= 0 or kg._shared.entity_count() < MIN_ENTITIES:
        return report
    start = time.perf_counter()
    deadline = start + budget
    pairs = _sample(kg)
    if not pairs:
        return report
    rng = random.Random(0)
    questions = [(eid, q) for eid, name in pairs for q in _variants(name, rng)]
    rng.shuffle(questions)
    at, best, stale = 0, float("inf"), 0
    while time.perf_counter() < deadline:
        times = []
        for _ in range(WINDOW):
            eid, query = questions[at % len(questions)]
            at += 1
            t = time.perf_counter()
            kg.search_entities(query, limit=10)
            times.append(time.perf_counter() - t)
            kg.entity(eid)
            kg.out_relations(eid)
            kg.in_relations(eid)
            report["queries"] += 4
            if time.perf_counter() >= deadline:
                break
        report["last_window_p50_ms"] = 1000 * statistics.median(times)
        p50 = report["last_window_p50_ms"]
        stale = stale + 1 if p50 > 0.9 * best else 0
        best = min(best, p50)
        if p50 < SETTLED_MS or stale >= 2:
            report["settled"] = True
            break
    report["seconds"] = time.perf_counter() - start
    kg._shared.warmup = report  # what opening it cost, for whoever measures (benchmarks/kg_scale.py)
    _log.info("graphtrail: warmed %s for its first users: %d queries in %.1f s (median search %.1f ms in the last "
              "%d, %s)", kg.store.display, report["queries"], report["seconds"], report["last_window_p50_ms"],
              len(times), "settled" if report["settled"] else f"stopped at the {budget:g} s budget")
    return report
