"""Warm a just-opened database graph in the background, so its first users get the speed of a warm one.

A database answers its first queries slowly: LadybugDB search builds its
label index on the first call (one read of every entity), and a just-started
Neo4j reads its full-text index pages from disk and runs its query code
interpreted until the JVM has compiled it. A production server restarts, and
the first users after a deploy would pay that. So when graphtrail opens a
database graph of :data:`MIN_ENTITIES` entities or more, it starts a
background thread (:class:`Warmup`) that asks a few questions of its own:

- searches for the names of sampled entities, exact, with a typo and as a
  prefix (the full-text indexes, or the label index, and the record reads),
  and each sample's record and relations (the tools' other queries);
- first one search, which builds what every search needs (the label index,
  :mod:`.search`: one read of every entity's labels), however long it takes;
- then in windows of :data:`WINDOW` searches, until a window's median search is
  under :data:`SETTLED_MS`, or two windows in a row were no faster than the
  best before them (the code is compiled, the pages are in memory: more
  questions would not help), or :data:`BUDGET_S` seconds have passed since
  that first search (``GRAPHTRAIL_DB_WARMUP`` sets the budget in seconds;
  ``0`` turns warming off).

Opening does not wait for it: a command that never searches (``graphtrail kg
info``) is not held up. The first search of a user stops it (the users' own
questions warm the database from then on, and on a small machine the
warm-up's would only compete with them); that search waits for nothing but
what it needs (on LadybugDB, the label index if the warm-up is building it).
Closing the graph, or the process exiting, stops it too, after the question
in flight. Graphs under :data:`MIN_ENTITIES` are not warmed: they answer their
first questions fast enough, and are opened often (tests, notebooks).

It logs one line on the ``graphtrail`` logger (INFO) when it ends, saying what
it asked, how long it took and why it stopped. Every query is a read.
"""

from __future__ import annotations

import atexit
import logging
import os
import random
import statistics
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

from .identifiers import cypher_name
from .search import LabelIndexCancelled

if TYPE_CHECKING:  # pragma: no cover
    from .cypher import CypherGraph

__all__ = ["Warmup", "start_warm_up", "warm_up", "BUDGET_S", "WINDOW", "SETTLED_MS", "STALE_WINDOWS", "MIN_ENTITIES"]

#: Longest a warm-up may take, in seconds (``GRAPHTRAIL_DB_WARMUP`` overrides; 0 disables).
BUDGET_S = 30.0
#: Searches per window; the warm-up stops after the first window that is fast enough.
WINDOW = 25
#: A window whose median search takes less than this (ms) means the database is warm.
SETTLED_MS = 15.0
#: Windows in a row no faster than the best before them after which more questions would not help.
STALE_WINDOWS = 2
#: Smaller graphs are not warmed.
MIN_ENTITIES = 10_000
#: Entities sampled for the warm-up's questions.
SAMPLE = 200

#: Why a warm-up ended, as its log line says it.
SETTLED, BUDGET, SEARCHED, CLOSED, EXITED = "settled", "budget", "a search came in", "closed", "the process exited"

_log = logging.getLogger("graphtrail")
_running: "weakref.WeakSet[Warmup]" = weakref.WeakSet()


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


class Warmup:
    """One graph's warm-up, run by :meth:`run` (in a background thread once :meth:`start` is called).

    ``report``: the queries asked, the seconds taken, the median search of the
    last window (ms), whether the searches had settled, and why it stopped.
    """

    def __init__(self, kg: CypherGraph, budget_s: float) -> None:
        self.kg, self.budget = kg, budget_s
        self.report: dict[str, Any] = {"queries": 0, "seconds": 0.0, "settled": False, "last_window_p50_ms": None,
                                       "stopped": None}
        self._stop = threading.Event()
        #: Set when the graph closes or the process exits: a long read in flight (the label index) is abandoned.
        self.abandon = threading.Event()
        self._done = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> "Warmup":
        self.thread = threading.Thread(target=self.run, name="graphtrail-db-warmup", daemon=True)
        _running.add(self)
        self.thread.start()
        return self

    @property
    def running(self) -> bool:
        return self.thread is not None and not self._done.is_set()

    def in_warmup_thread(self) -> bool:
        return threading.current_thread() is self.thread

    def stop(self, reason: str, *, wait: bool = True, timeout: float | None = None) -> None:
        """Ask the warm-up to end after the question in flight (``wait``: until it has)."""
        if not self._stop.is_set():
            self.report["stopped"] = self.report["stopped"] or reason
            self._stop.set()
        if reason in (CLOSED, EXITED):
            self.abandon.set()
        if wait and self.thread is not None and not self.in_warmup_thread():
            self._done.wait(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the warm-up has ended; whether it has."""
        return self._done.wait(timeout) if self.thread is not None else True

    def run(self) -> dict[str, Any]:
        report, kg = self.report, self.kg
        start = time.perf_counter()
        times: list[float] = []
        try:
            self._ask(times)
        except LabelIndexCancelled:
            pass  # closed or exiting: report["stopped"] says so
        except Exception as exc:  # noqa: BLE001 - a warm-up never breaks the graph it warms: say so and stop
            report["stopped"] = report["stopped"] or f"failed ({type(exc).__name__})"
        finally:
            report["seconds"] = time.perf_counter() - start
            kg._shared.warmup = report  # what opening it cost, for whoever measures (benchmarks/kg_scale.py)
            self._log(len(times))
            self._done.set()
            _running.discard(self)
        return report

    def _ask(self, times: list[float]) -> None:
        report, kg, stop = self.report, self.kg, self._stop
        pairs = _sample(kg)
        if not pairs:
            report["stopped"] = report["stopped"] or "no entity to ask about"
            return
        rng = random.Random(0)
        questions = [(eid, q) for eid, name in pairs for q in _variants(name, rng)]
        rng.shuffle(questions)
        # The first search builds what every search needs (the label index: one read of every label), which
        # the first user's search would otherwise pay; the budget is for the questions after it.
        t = time.perf_counter()
        kg.search_entities(questions[0][1], limit=10)
        report["queries"] += 1
        report["first_search_s"] = time.perf_counter() - t
        deadline = time.perf_counter() + self.budget
        at, best, stale = 0, float("inf"), 0
        while not stop.is_set():
            times.clear()
            while len(times) < WINDOW and not stop.is_set():
                eid, query = questions[at % len(questions)]
                at += 1
                t = time.perf_counter()
                kg.search_entities(query, limit=10)
                times.append(time.perf_counter() - t)
                report["queries"] += 1
                for ask in (kg.entity, kg.out_relations, kg.in_relations):
                    if stop.is_set():
                        break
                    ask(eid)
                    report["queries"] += 1
                if time.perf_counter() >= deadline:
                    self.stop(BUDGET, wait=False)
            if not times:
                break
            p50 = report["last_window_p50_ms"] = 1000 * statistics.median(times)
            stale = stale + 1 if p50 > 0.9 * best else 0
            best = min(best, p50)
            if len(times) == WINDOW and (p50 < SETTLED_MS or stale >= STALE_WINDOWS):
                report["settled"] = True
                self.stop(SETTLED, wait=False)

    def _log(self, last: int) -> None:
        r = self.report
        why = {SETTLED: "settled", BUDGET: f"stopped at the {self.budget:g} s budget"}.get(r["stopped"], f"stopped: {r['stopped']}")
        parts = [f"first search {r['first_search_s']:.1f} s"] if "first_search_s" in r else []
        if r["last_window_p50_ms"] is not None:
            parts.append(f"median search {r['last_window_p50_ms']:.1f} ms over the last {last}")
        _log.info("graphtrail: warmed %s in the background for its first users: %d queries in %.1f s (%s%s)",
                  self.kg.store.display, r["queries"], r["seconds"], "".join(p + "; " for p in parts), why)


def start_warm_up(kg: CypherGraph, budget_s: float | None = None) -> Warmup | None:
    """Start warming ``kg`` in a background thread; ``None`` when it is too small or warming is off."""
    budget = _budget() if budget_s is None else budget_s
    if budget <= 0 or kg._shared.entity_count() < MIN_ENTITIES:
        return None
    warming = Warmup(kg, budget)
    kg._shared.warming = warming
    return warming.start()


def warm_up(kg: CypherGraph, budget_s: float | None = None) -> dict[str, Any]:
    """Warm ``kg`` now, in this thread (what the background thread runs); returns the report."""
    budget = _budget() if budget_s is None else budget_s
    if budget <= 0 or kg._shared.entity_count() < MIN_ENTITIES:
        return {"queries": 0, "seconds": 0.0, "settled": False, "last_window_p50_ms": None, "stopped": None}
    return Warmup(kg, budget).run()


@atexit.register
def _stop_all() -> None:
    """At exit, end every warm-up after its question in flight (never mid-query on a closing database)."""
    for warming in list(_running):
        warming.stop(EXITED, wait=True, timeout=30)
