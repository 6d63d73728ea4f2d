"""Entity search in a graph database: candidates from an index, ranked by the in-memory scorer.

An unindexed search reads and scores every visible entity per query (seconds at
a million edges). Here a query costs one candidate step plus one read of the
winners, and the ranking rules are those of :mod:`graphtrail.kg.search`, so
every backend ranks alike:

- **Up to :data:`LABEL_INDEX_MAX_ENTITIES` entities, either database** uses
  :class:`LabelIndex`: the same :class:`~graphtrail.kg.search.EntityIndex` as
  in memory, built from one read of the entities' names, types and aliases
  (by the warm-up at open, :mod:`.warmup`, or else the first search), and the
  winners read back through the view (hidden, masked and text-blocked as the
  view says, in the query). It ranks exactly as in memory, and a search costs
  the database one lookup by id, cheap from a server's first query on.
  (LadybugDB's full-text extension is a download, ``INSTALL fts`` from
  extension.ladybugdb.com, which an offline machine cannot run.)
- **A larger Neo4j graph** is searched through a full-text (Lucene) index over
  entity names and aliases, which ``graphtrail kg import`` creates
  (:data:`FULLTEXT_INDEX`), and a bigram index (:data:`GRAMS_INDEX`). A query
  asks them for the labels that share a word with the query, fuzzily (one
  edit) or as a prefix, or share character bigrams, under the view's ablation
  parameters; the best :data:`FULLTEXT_CANDIDATES` and :data:`GRAM_CANDIDATES`
  are re-scored with :func:`~graphtrail.kg.search.scan_entities`, with the
  masked entities' placeholders (which no index holds). Such a graph without
  the index still works: one warning prints the statement that creates it,
  and search uses the label index.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from rapidfuzz import utils

from ..fields import parse_aliases
from ..records import EntityRecord
from ..search import EntityIndex, scan_entities
from ..views import GraphFilter

if TYPE_CHECKING:  # pragma: no cover
    from .cypher import CypherGraph

__all__ = [
    "LabelIndex", "LABEL_INDEX_MAX_ENTITIES", "FULLTEXT_INDEX", "GRAMS_INDEX", "GRAMS_PROPERTY", "FULLTEXT_CANDIDATES", "GRAM_CANDIDATES",
    "fulltext_statement", "grams_statement", "lucene_query", "gram_tokens",
]  # fmt: skip

#: Name of the Neo4j full-text index over entity names and aliases (words: fuzzy and prefix matches).
FULLTEXT_INDEX = "graphtrail_entity_labels"
#: Name of the Neo4j full-text index over :data:`GRAMS_PROPERTY` (typos that join or split words).
GRAMS_INDEX = "graphtrail_entity_grams"
#: The property ``kg import`` writes on each entity: the character bigrams of its processed labels.
GRAMS_PROPERTY = "graphtrail_grams"
#: Most bigram clauses per query (Lucene refuses more than 1024).
_MAX_GRAMS = 400
#: Edits a fuzzy word of the words index may differ by (words of three letters or more).
FUZZY_EDITS = 1
#: How many visible hits of the words index are re-scored per query (fuzzy words, prefixes) ...
FULLTEXT_CANDIDATES = 64
#: ... and of the bigram index (fewer than 256 loses look-alikes the in-memory index finds: "Itlaian" -> Taiwan).
GRAM_CANDIDATES = 256
#: When the view's filter or the type left fewer, ask the index for this many times more hits ...
_WIDEN = 4
#: ... up to this many (or the candidates plus every withheld entity, if more).
_MAX_ASK = 4096
#: Above this many hidden or masked entities, Neo4j search scores the visible entities instead of asking the index.
_MAX_WITHHELD = 20_000
#: Filters whose visibility masks are kept (concurrent replays each hold one).
_MASK_CACHE = 16
#: A Neo4j graph of up to this many entities is searched with the label index (in this process, built once
#: by the warm-up); a larger one through its full-text indexes. The label index answers in a few ms of this
#: process's CPU and one lookup of the winners' records, and ranks exactly as in memory; a full-text search
#: costs the server two Lucene queries whose code a just-started JVM runs interpreted (86 ms of CPU a search
#: over a fresh server's first 25 at 1M edges, docs/datasets.md). Above it, the labels stay in the server
#: rather than cost this process memory in proportion to them (as an in-memory graph does).
LABEL_INDEX_MAX_ENTITIES = 1_000_000


class LabelIndexCancelled(Exception):
    """The warm-up's read of the labels was abandoned: the graph was closed or the process exits."""


class LabelIndex:
    """The in-memory search index over a database graph's labels, built once and shared by its views.

    One read of every entity's id, name, type and aliases (no description), in
    the graph's order, so the index is the one :func:`~graphtrail.kg.load_kg`
    builds in memory and ranks exactly as it does.
    """

    def __init__(self, base: "CypherGraph", cancel: threading.Event | None = None) -> None:
        ids, names, types, aliases = [], [], [], []
        rows = base._iter_rows("labels")
        for eid, name, type_, alias in rows:
            if cancel is not None and cancel.is_set():
                rows.close()  # type: ignore[attr-defined]  # a generator: ends the read (and frees the connection)
                raise LabelIndexCancelled("the label index read was abandoned (the graph was closed)")
            ids.append(str(eid))
            names.append(str(name))
            types.append(str(type_ or "entity"))
            aliases.append(tuple(parse_aliases(alias)))  # as CypherGraph reads them: one parser for every source
        self.index = EntityIndex(ids, names, types, aliases)
        self.names = names  # a masked entity's placeholder depends on whether its id spells its name
        self.position = {eid: i for i, eid in enumerate(ids)}
        self._masks: dict[GraphFilter, tuple[np.ndarray, list[int]]] = {}
        self._lock = threading.Lock()

    def _visible(self, f: GraphFilter) -> tuple[np.ndarray, list[int]]:
        found = self._masks.get(f)
        if found is None:
            visible = np.ones(len(self.position), dtype=bool)
            hidden = [i for e in f.hidden if (i := self.position.get(e)) is not None]
            masked = sorted(i for e in f.masked if (i := self.position.get(e)) is not None and e not in f.hidden)
            visible[hidden] = False
            visible[masked] = False
            found = (visible, masked)
            with self._lock:
                if len(self._masks) >= _MASK_CACHE:
                    self._masks.pop(next(iter(self._masks)))
                self._masks[f] = found
        return found

    def search(self, view: "CypherGraph", query: str, *, type: str | None, limit: int) -> list[tuple[EntityRecord, float, str]]:
        f = view.graph_filter
        visible, extra = None, []
        if f is not None and (f.hidden or f.masked):
            visible, masked = self._visible(f)
            extra = [(i, f.masked_name(self.index.ids[i], self.names[i])) for i in masked]
        return self.index.search(query, visible=visible, extra=extra, type=type, limit=limit, records=view.entities_by_id)


def lucene_query(query: str) -> str:
    """The Lucene query for a search: each word of the processed query, fuzzily or as a prefix.

    ``rapidfuzz.utils.default_process`` leaves letters, digits and spaces only,
    so no Lucene syntax can reach the index from the user's text. Words of one
    or two letters match exactly or as a prefix (fuzzy, they would match every short word).

    Longer words match within one edit (:data:`FUZZY_EDITS`), not two: Lucene
    builds a Levenshtein automaton per fuzzy word per query and walks the term
    dictionary with it, and two edits cost the server several times one
    (measured at 1M edges). Typos beyond one edit are the bigram index's to
    find, as they are the in-memory index's (which has no fuzzy words at all);
    the bundled rankings are identical either way.
    """
    words = dict.fromkeys(utils.default_process(query or "").split())
    parts = []
    for w in words:
        if len(w) <= 2:
            parts += [w, f"{w}*"]
        else:
            parts.append(f"{w}~{FUZZY_EDITS}")
            parts.append(f"{w}*")
    return " ".join(parts)


def gram_tokens(labels: list[str] | tuple[str, ...], limit: int | None = None) -> str:
    """The character bigrams of the processed labels, space-separated, ``_`` for a word boundary.

    ``default_process`` leaves letters, digits and spaces, so a token holds
    nothing Lucene's query syntax reads as an operator.
    """
    grams: dict[str, None] = {}
    for label in labels:
        text = "_" + "_".join(utils.default_process(label).split()) + "_"
        for a, b in zip(text, text[1:]):
            grams[a + b] = None
    tokens = [g for g in grams if g != "__"]
    return " ".join(tokens[:limit] if limit else tokens)


def grams_statement(label: str) -> str:
    """The statement that creates the bigram index (``kg import`` writes the property it reads)."""
    return (
        f"CREATE FULLTEXT INDEX {GRAMS_INDEX} IF NOT EXISTS FOR (e:{label}) ON EACH [e.{GRAMS_PROPERTY}] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}"
    )


def fulltext_statement(label: str, name_property: str, aliases_property: str) -> str:
    """The one statement that creates the full-text index search uses (names already quoted)."""
    return (
        f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (e:{label}) ON EACH [e.{name_property}, e.{aliases_property}] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words'}}"
    )


def fulltext_search(view: "CypherGraph", query: str, *, type: str | None, limit: int) -> list[tuple[EntityRecord, float, str]]:
    """Neo4j: candidates from the full-text indexes (visible, of the type), re-scored with the in-memory rules.

    Two round trips: the candidates of both indexes in one query, then the
    winners' records. The indexes are asked for their best
    :data:`FULLTEXT_CANDIDATES` and :data:`GRAM_CANDIDATES` hits; when the view's filter or the type ate
    some and the index had more, it is asked again for more (``*``
    :data:`_WIDEN`), so the re-scored set is each index's best visible hits.
    """
    lucene = lucene_query(query)
    if not lucene:
        return []
    f = view.graph_filter
    withheld = len(f.hidden) + len(f.masked) if f is not None else 0
    if withheld > _MAX_WITHHELD:
        # Most of the graph is hidden: the index's best hits would be mostly invisible ones.
        return scan_entities(view.entities(), query, type=type, limit=limit)
    wanted = (type or "").strip().lower()
    grams = gram_tokens([query], _MAX_GRAMS) if view._shared.fulltext_grams else ""
    want, want_g = FULLTEXT_CANDIDATES, GRAM_CANDIDATES
    k, k_grams = want, (want_g if grams else 0)
    cap = max(want + withheld, _MAX_ASK)
    while True:
        n_words, n_grams, words, by_grams = view.fulltext_candidates(lucene, k, grams, k_grams, wanted)
        # An index that returned all it was asked for may hold more visible hits than the filter left.
        wider_words = n_words >= k and len(words) < want and k < cap
        wider_grams = bool(grams) and n_grams >= k_grams and len(by_grams) < want_g and k_grams < cap
        if not (wider_words or wider_grams):
            break
        k = min(k * _WIDEN, cap) if wider_words else k
        k_grams = min(k_grams * _WIDEN, cap) if wider_grams else k_grams
    seen = {r.id for r in words}
    candidates = words + [r for r in by_grams if r.id not in seen]
    candidates += view.masked_records()  # searchable by their placeholder only, which no index holds
    ranked = scan_entities(candidates, query, type=type, limit=limit)
    shown = view.entities_by_id([r.id for r, _, _ in ranked])  # the candidates carry labels only
    return [(shown[r.id], score, label) for r, score, label in ranked if r.id in shown]


def warn_missing_fulltext(display: str, statement: str) -> None:
    warnings.warn(
        f"{display}: no full-text index {FULLTEXT_INDEX!r}; entity search builds an index in memory on first use "
        f"(reads every entity). Create it once: {statement}",
        stacklevel=4,
    )


def any_search(view: "CypherGraph", shared: Any, query: str, *, type: str | None, limit: int) -> list[tuple[EntityRecord, float, str]]:
    """Search ``view`` with the database's index, or the label index when there is none."""
    if shared.fulltext:
        return fulltext_search(view, query, type=type, limit=limit)
    index = shared.label_index
    if index is None:
        warming = shared.warming  # the warm-up's build ends early if the graph is closed meanwhile
        cancel = warming.abandon if warming is not None and warming.in_warmup_thread() else None
        with shared.label_lock:  # not shared.lock: views and communities need not wait for the build
            if shared.label_index is None:
                shared.label_index = LabelIndex(view._unfiltered(), cancel)
            index = shared.label_index
    return index.search(view, query, type=type, limit=limit)
