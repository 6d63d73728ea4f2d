"""Entity search: the ranking rules, a full scan, and an index that avoids the scan.

The ranking (what scores, what counts as a hit) is defined once, by
:func:`label_scores` and :func:`code_hits`, and applied by both paths:

- :func:`scan_entities` scores every visible label of a graph view. It is the
  reference, and the fallback for a backend without an index.
- :class:`EntityIndex` is built once per graph (lazily, on the first search).
  Per query it picks candidates (labels sharing the most character bigrams
  with the query, labels made only of query words, labels whose words the
  query words start, and exact label matches), then scores only those with the
  same rules. At 200k entities a query scores a few hundred labels instead of
  every one, which is what made search 98% of an agent run on a
  million-edge graph. Its postings are built over the distinct processed
  labels (alias-rich graphs repeat half of them) and read back per label, so
  the candidates are those a label-by-label index picks
  (tests/test_search_oracle.py holds that reference).

The candidate step is a prefilter, so a label that would pass only on a fuzzy
whole-string score and shares few character bigrams with the query can be missed. The
bundled graph's rankings for every name, alias, typo of them and question are
pinned in tests/data and the index reproduces them exactly.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np
from rapidfuzz import fuzz, process, utils

from .arrays import distinct
from .postings import ExactPostings, complement_common, gram_postings

if TYPE_CHECKING:  # pragma: no cover
    from .records import EntityRecord

__all__ = [
    "MIN_SCORE",
    "RELATIVE_MARGIN",
    "CODE_MAX_LEN",
    "label_scores",
    "code_hits",
    "rank_hits",
    "scan_entities",
    "EntityIndex",
]

#: A hit scores at least this (0-100, see :func:`label_scores`) ...
MIN_SCORE = 75.0
#: ... and at most this many points below the best hit, so an exact match is not padded with look-alikes.
RELATIVE_MARGIN = 10.0
#: Labels this short (ISO codes such as "OM", "en", "USA") match only as a whole word, never fuzzily.
CODE_MAX_LEN = 3
#: How many bigram-ranked labels the index scores per query (besides word and exact candidates).
TRIGRAM_CANDIDATES = 256

_WORD = re.compile(r"[\w'-]+")
_NO_POSTINGS = np.zeros(0, dtype=np.int64)

Ref = tuple[str, int]  # (entity id, label position: 0 = name, 1.. = aliases)


def label_scores(query: str, labels: list[str]) -> list[float]:
    """How well each (processed) label matches the (processed) query, 0-100.

    The best of: whole-string similarity (typos: "Kenia" -> "Kenya"), token-sort
    similarity x 0.95 (word order), and substring similarity x 0.9, the latter
    only when the label's words are all words of the query ("Saudi Arabia" in
    "saudi arabia share a border") or each query word starts a word of the label
    ("Congo" in "Republic of the Congo", "Kenya" in "Kenyan shilling").
    rapidfuzz's WRatio also scores any shared word ("Republic", "of", "Peso") or
    any two-letter code inside the query ("om" in "colombo") as a partial match
    worth 85-90, which made "Colombo" find Oman and Bolivia. Short labels
    (codes) match only as a whole word: the whole query (any case) or, inside a
    longer query, in capitals ("USA" in "the USA", not "is" in "What is"; see
    :func:`code_hits`).
    """
    if not labels:
        return []
    query_words = set(query.split())
    whole = process.cdist([query], labels, scorer=fuzz.ratio)[0]
    sort = process.cdist([query], labels, scorer=fuzz.token_sort_ratio)[0]
    part = process.cdist([query], labels, scorer=fuzz.partial_ratio)[0]
    scores = []
    for i, label in enumerate(labels):
        if len(label) <= CODE_MAX_LEN:
            scores.append(100.0 if label == query else 0.0)
            continue
        best, partial = max(float(whole[i]), 0.95 * float(sort[i])), 0.9 * float(part[i])
        if partial > best:  # the word test only matters when the substring score would win
            label_words = label.split()
            if set(label_words) <= query_words or all(any(w.startswith(q) for w in label_words) for q in query_words):
                best = partial
        scores.append(best)
    return scores


def code_hits(raw_query: str, codes: dict[str, list[Ref]]) -> dict[Ref, float]:
    """Short labels written as a whole word of a longer query: scored like a substring match (90).

    A short *name* ("Lao") matches in any case; a short *alias* (a code) only
    in capitals, so the English words among ISO 639 codes ("is", "am", "be")
    do not match every question that contains them.
    """
    words = _WORD.findall(raw_query)
    capitals = {w for w in words if w.isupper()}
    folded = {w.casefold() for w in words}
    return {
        (eid, i): 90.0
        for code, refs in codes.items()
        for eid, i in refs
        if code in capitals or (i == 0 and code.casefold() in folded)
    }


def rank_hits(
    scored: dict[Ref, float], records: dict[str, "EntityRecord"], limit: int
) -> list[tuple["EntityRecord", float, str]]:
    """Best label per entity, hits above :data:`MIN_SCORE` within :data:`RELATIVE_MARGIN` of the best, ties by id."""
    best: dict[str, tuple[float, int]] = {}
    for (eid, i), score in scored.items():
        if score >= MIN_SCORE and (score, -i) > best.get(eid, (-1.0, 0)):
            best[eid] = (score, -i)
    if not best:
        return []
    top = max(score for score, _ in best.values())
    ranked = sorted(
        ((eid, si) for eid, si in best.items() if si[0] >= top - RELATIVE_MARGIN), key=lambda kv: (-kv[1][0], kv[0])
    )[:limit]

    def label(eid: str, i: int) -> str:
        return (records[eid].name, *records[eid].aliases)[i]

    return [(records[eid], round(score, 1), label(eid, -neg_i)) for eid, (score, neg_i) in ranked]


#: Memoised label scores: at most this many queries, each with at most this many labels.
_MEMO_QUERIES, _MEMO_LABELS = 2048, 4096
_memo: OrderedDict[str, dict[str, float]] = OrderedDict()
_memo_lock = threading.Lock()


def _label_scores_memo(query: str, labels: list[str]) -> list[float]:
    """:func:`label_scores`, remembered per (query, label).

    An evaluation replays the same searches under many filters: each filter drops
    a few candidate labels, so the same query meets nearly the same labels again.
    A label's score depends on the query and that label only, so only the labels
    not scored before for this query are scored now.
    """
    with _memo_lock:
        known = _memo.get(query)
        if known is None:
            known = _memo[query] = {}
            if len(_memo) > _MEMO_QUERIES:
                _memo.popitem(last=False)
        else:
            _memo.move_to_end(query)
        missing = [label for label in dict.fromkeys(labels) if label not in known]
    if not missing:
        return [known[label] for label in labels]
    fresh = dict(zip(missing, label_scores(query, missing)))
    if len(known) + len(fresh) <= _MEMO_LABELS:
        with _memo_lock:
            known.update(fresh)
    return [known[label] if label in known else fresh[label] for label in labels]


def _score_labels(raw: str, processed: str, refs: list[Ref], labels: list[str], codes: dict[str, list[Ref]]) -> dict[Ref, float]:
    scored = dict(zip(refs, _label_scores_memo(processed, labels)))
    for ref, score in code_hits(raw, codes).items():
        scored[ref] = max(scored.get(ref, 0.0), score)
    return scored


def scan_entities(
    records: Iterable["EntityRecord"], query: str, *, type: str | None = None, limit: int = 10
) -> list[tuple["EntityRecord", float, str]]:
    """Score every record's name and aliases against ``query`` (the reference ranking; O(entities) per query)."""
    raw = (query or "").strip()
    processed = utils.default_process(raw)
    if not processed:
        return []
    wanted_type = type.strip().lower() if type else None
    by_id: dict[str, EntityRecord] = {}
    refs: list[Ref] = []
    labels: list[str] = []
    codes: dict[str, list[Ref]] = {}
    for record in records:
        if wanted_type and record.type.lower() != wanted_type:
            continue
        by_id[record.id] = record
        for i, label in enumerate((record.name, *record.aliases)):
            refs.append((record.id, i))
            labels.append(utils.default_process(label))
            if len(label) <= CODE_MAX_LEN:
                codes.setdefault(label, []).append((record.id, i))
    return rank_hits(_score_labels(raw, processed, refs, labels, codes), by_id, limit)


def _gram_keys(text: str) -> np.ndarray:
    """Character bigrams of ``" " + text + " "`` (two code points packed in an int64)."""
    cps = np.frombuffer((" " + text + " ").encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    return (cps[:-1] << 21) | cps[1:]


#: Odd 64-bit multiplier (Fibonacci hashing): a word id's top 6 bits of the product pick its bit of a word signature.
_SIG_MIX = np.uint64(0x9E3779B97F4A7C15)


def _word_bits(word_ids: np.ndarray) -> np.ndarray:
    """One bit of 64 per word id (uint64): a label's word signature is the OR of its words' bits."""
    return np.left_shift(np.uint64(1), (word_ids.astype(np.uint64) * _SIG_MIX) >> np.uint64(58))


def _signatures(words: np.ndarray, owners: np.ndarray, n_labels: int) -> np.ndarray:
    """Each label's word signature, from its ``(word id, label)`` pairs in label order (owners ascending)."""
    sig = np.zeros(n_labels, dtype=np.uint64)
    if len(owners):
        starts = np.flatnonzero(np.concatenate(([True], owners[1:] != owners[:-1])))
        sig[owners[starts]] = np.bitwise_or.reduceat(_word_bits(words), starts)
    return sig


def _word_postings(labels: list[str], column: Any = None) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The sorted vocabulary of the (processed) labels' words, distinct ``(word id, label)`` pairs sorted by word, then label,
    and each label's word signature (:func:`_word_bits`).

    In columns with pyarrow where it can (processed labels hold letters, digits
    and single spaces only, so splitting at spaces is ``str.split()``, and
    UTF-8 byte order is code-point order); a label pyarrow cannot encode (a
    lone surrogate) sends the whole list through the Python path. ``column``:
    the labels as an Arrow string array already, if the caller has it.
    """
    n_labels = max(len(labels), 1)
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:  # pragma: no cover - pyarrow is installed with graphtrail's loaders
        pa = None
    try:
        if pa is None:
            raise UnicodeError("no pyarrow")
        lists = pc.split_pattern(pa.array(labels, type=pa.large_string()) if column is None else column, " ")
        flat, parent = pc.list_flatten(lists), pc.list_parent_indices(lists)
        keep = pc.not_equal(pc.utf8_length(flat), 0)
        encoded = pc.dictionary_encode(flat.filter(keep))
        order = pc.array_sort_indices(encoded.dictionary).to_numpy()
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        words = rank[encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)]
        owners = parent.filter(keep).to_numpy(zero_copy_only=False).astype(np.int64)
        vocab = encoded.dictionary.take(pa.array(order)).to_pylist()
    except (UnicodeError, ValueError):  # pyarrow's encoding errors are ValueErrors (ArrowInvalid)
        word_lists = [label.split() for label in labels]
        vocab = sorted({w for ws in word_lists for w in ws})
        index = {w: k for k, w in enumerate(vocab)}
        pairs = [(index[w], j) for j, ws in enumerate(word_lists) for w in ws]
        words = np.asarray([w for w, _ in pairs], dtype=np.int64)
        owners = np.asarray([j for _, j in pairs], dtype=np.int64)
    signatures = _signatures(words, owners, len(labels))  # the pairs are still in label order here
    packed = distinct(words * n_labels + owners)  # a word twice in a label counts once
    return vocab, packed // n_labels, packed % n_labels, signatures


class EntityIndex:
    """Search structures over every entity of one graph; see the module docstring.

    Built from parallel sequences (ids, names, types, alias tuples) so it does
    not care how the graph stores them. It never changes after it is built: the
    graph drops it and builds a new one when an entity is added.
    """

    def __init__(self, ids: Sequence[str], names: Sequence[str], types: Sequence[str], aliases: Sequence[tuple[str, ...]]):
        # Labels: each entity's name, then its aliases (label_pos 0, 1, ...), in entity order.
        counts = np.fromiter(map(len, aliases), dtype=np.int64, count=len(aliases)) + 1
        starts = np.cumsum(counts) - counts
        self.ids = ids
        self.types = types
        self.n_entities = len(ids)
        self.n_labels = int(counts.sum())
        self.label_entity = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        self.label_pos = np.arange(self.n_labels, dtype=np.int64) - starts[self.label_entity]
        self._type_masks: dict[str, np.ndarray] = {}

        # The processed labels, deduplicated: the postings below are built over the distinct texts
        # (the exact lookup is the text's labels), and a query maps the texts it reads to labels.
        # Names first, then every alias, each placed at its label number (no interleaved Python list).
        flat_aliases: list[str] = list(chain.from_iterable(aliases))
        alias_places = np.flatnonzero(self.label_pos)
        processed = list(map(utils.default_process, names))
        processed += map(utils.default_process, flat_aliases)
        self.exact = ExactPostings(processed, np.concatenate([starts, alias_places]))
        del processed
        self.texts = self.exact.texts
        self.label_text = self.exact.label_text
        text_lengths = np.fromiter(map(len, self.texts), dtype=np.int64, count=len(self.texts))
        self.fuzzy_ok = (text_lengths > CODE_MAX_LEN)[self.label_text]
        # Short raw labels: codes (any position, matched in capitals) and short names (matched in any case).
        # default_process maps each code point to one, so a short label's text is short too.
        self.raw_short: dict[int, str] = {}
        self.codes_exact: dict[str, list[int]] = {}
        self.codes_folded: dict[str, list[int]] = {}
        alias_number = np.cumsum(self.label_pos > 0) - 1  # label -> index into flat_aliases
        for j in np.flatnonzero(~self.fuzzy_ok).tolist():
            e, pos = int(self.label_entity[j]), int(self.label_pos[j])
            label = names[e] if pos == 0 else flat_aliases[int(alias_number[j])]
            if len(label) > CODE_MAX_LEN:
                continue
            self.raw_short[j] = label
            self.codes_exact.setdefault(label, []).append(j)
            if pos == 0:
                self.codes_folded.setdefault(label.casefold(), []).append(j)

        # Character bigrams -> text postings (CSR over the sorted distinct keys). Bigrams, not
        # trigrams: a transposition in a five-letter name ("Aubja" for "Abuja") leaves no trigram.
        self.text_grams, self.tri_keys, self.tri_ptr, self.tri_post = gram_postings(self.texts, text_lengths)
        self.tri_negated, self.lacking_ptr, self.lacking = complement_common(self.tri_ptr, self.tri_post, len(self.texts))
        self.fuzzy_per_text = np.bincount(self.label_text[self.fuzzy_ok], minlength=len(self.texts))

        # Words: each text under its rarest word (for "label words are all query words"), and a
        # sorted vocabulary with text postings (for "every query word starts a label word").
        vocab, wid, text, self.word_sig = _word_postings(self.texts, self.exact.text_array)
        self.vocab = vocab  # sorted: a word is found by bisection (a dict of 200k words cost more than it saved)
        self.word_post = text
        self.word_ptr = np.searchsorted(wid, np.arange(len(vocab) + 1))
        repeats = np.diff(self.exact.text_ptr)  # labels per text
        # Labels (not texts) in word_post[:k]: a query picks its prefix with the fewest labels, as a label-level index did.
        self.word_labels = np.zeros(len(text) + 1, dtype=np.int64)
        np.cumsum(repeats[text], out=self.word_labels[1:])
        # The rarest word of each text: fewest labels (not texts) hold it; ties: alphabetically first
        # (word ids follow the sorted vocabulary).
        freq = np.bincount(wid, weights=repeats[text], minlength=len(vocab)).astype(np.int64)
        n_words = max(len(vocab), 1)
        rank = freq * n_words + np.arange(len(vocab), dtype=np.int64)  # lower: rarer, then alphabetically first
        best = np.full(len(self.texts), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(best, text, rank[wid])
        rarest_t = np.flatnonzero(best != np.iinfo(np.int64).max)  # the texts that have a word
        rarest_w = best[rarest_t] % n_words
        order = np.argsort(rarest_w, kind="stable")  # texts ascending within a word
        self.rarest_post = rarest_t[order]
        self.rarest_ptr = np.searchsorted(rarest_w[order], np.arange(len(vocab) + 1))

    # ------------------------------------------------------------ candidates
    def type_mask(self, wanted_type: str) -> np.ndarray:
        """Labels whose entity has type ``wanted_type`` (lower-cased), cached per type."""
        mask = self._type_masks.get(wanted_type)
        if mask is None:
            ent = np.fromiter((t.lower() == wanted_type for t in self.types), dtype=bool, count=self.n_entities)
            mask = self._type_masks[wanted_type] = ent[self.label_entity]
        return mask

    def _gram_candidates(self, processed: str, allowed: np.ndarray) -> np.ndarray:
        """The :data:`TRIGRAM_CANDIDATES` first labels by Dice coefficient of bigram sets (highest first), then label number.

        Among the labels ``allowed`` that may match fuzzily and share a bigram
        with the query. Dice is a proxy for rapidfuzz's ratio that does not
        favour long labels. A label scores as its text, so texts are ranked
        (a third as many where aliases repeat) and only the texts tied at the
        cut are opened label by label: names that share their common words
        tie by the thousand there, and the label number decides.
        """
        keys = np.unique(_gram_keys(processed))
        if not len(keys) or not len(self.tri_keys):
            return np.zeros(0, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.tri_keys, keys), len(self.tri_keys) - 1)
        at = at[self.tri_keys[at] == keys]
        if not len(at):
            return np.zeros(0, dtype=np.int64)
        # Bigrams each text shares with the query: a common bigram counts for every text but those it lacks.
        n_texts = len(self.texts)
        negated = self.tri_negated[at]
        plain = [self.tri_post[self.tri_ptr[k] : self.tri_ptr[k + 1]] for k in at[~negated].tolist()]
        counts = np.bincount(np.concatenate(plain) if plain else _NO_POSTINGS, minlength=n_texts)
        if negated.any():
            common = at[negated].tolist()
            lacking = np.concatenate([self.lacking[self.lacking_ptr[k] : self.lacking_ptr[k + 1]] for k in common])
            counts += len(common)
            counts -= np.bincount(lacking, minlength=n_texts)
        if allowed.all():
            usable, per_text = self.fuzzy_ok, self.fuzzy_per_text
        else:
            usable = allowed & self.fuzzy_ok
            per_text = np.bincount(self.label_text[usable], minlength=n_texts)
        live = np.flatnonzero((counts > 0) & (per_text > 0))
        if int(per_text[live].sum()) <= TRIGRAM_CANDIDATES:
            return self._usable_labels(live, usable)
        dice = counts[live] / (self.text_grams[live] + len(keys))
        k = min(TRIGRAM_CANDIDATES, len(live))  # k texts hold at least k labels
        top = np.argpartition(-dice, k - 1)[:k]
        top = top[np.argsort(-dice[top], kind="stable")]
        reach = np.cumsum(per_text[live[top]])
        edge = dice[top[int(np.searchsorted(reach, TRIGRAM_CANDIDATES))]]  # the Dice where the labels reach the count
        above = self._usable_labels(live[dice > edge], usable)
        tied = np.sort(self._usable_labels(live[dice == edge], usable))
        return np.concatenate([above, tied[: TRIGRAM_CANDIDATES - len(above)]])

    def _usable_labels(self, texts: np.ndarray, usable: np.ndarray) -> np.ndarray:
        labels = self.exact.labels_of(texts)
        return labels[usable[labels]]

    def _prefix_postings(self, word: str) -> tuple[int, int]:
        lo = bisect.bisect_left(self.vocab, word)
        hi = bisect.bisect_left(self.vocab, word + "\U0010ffff")
        return int(self.word_ptr[lo]), int(self.word_ptr[hi])

    def _word_candidates(self, query_words: list[str]) -> set[int]:
        texts = []
        known = []  # the query words some label has: (word, word id)
        for w in set(query_words):
            k = bisect.bisect_left(self.vocab, w)
            if k < len(self.vocab) and self.vocab[k] == w:
                known.append((w, k))
        if known:
            # Labels made only of query words: each is filed under its rarest word, so it is among the texts
            # filed under a query word. Where names share their common words ("The ... of ... district"),
            # most of those texts have other words too: a text whose signature has a bit no query word sets
            # cannot qualify, and the few left are checked word by word.
            ids = np.fromiter((k for _, k in known), dtype=np.int64, count=len(known))
            outside = ~np.bitwise_or.reduce(_word_bits(ids))
            filed = np.concatenate([self.rarest_post[self.rarest_ptr[k] : self.rarest_ptr[k + 1]] for _, k in known])
            filed = filed[(self.word_sig[filed] & outside) == 0]
            wanted = {w for w, _ in known}
            made_of = [t for t in filed.tolist() if set(self.texts[t].split()) <= wanted]
            texts.append(np.asarray(made_of, dtype=np.int64))
        if query_words:
            # Every query word must start some word of the label: enumerate the rarest prefix's postings.
            spans = [self._prefix_postings(w) for w in set(query_words)]
            lo, hi = min(spans, key=lambda s: self.word_labels[s[1]] - self.word_labels[s[0]])
            texts.append(self.word_post[lo:hi])
        if not texts:
            return set()
        return set(self.exact.labels_of(np.concatenate(texts)).tolist())

    def _exact_candidates(self, processed: str) -> list[int]:
        """The labels whose processed text is the processed query (a method apart, so a test can compare it)."""
        return self.exact.get(processed, [])

    # ------------------------------------------------------------ search
    def search(
        self,
        query: str,
        *,
        visible: np.ndarray | None = None,
        extra: Sequence[tuple[int, str]] = (),
        type: str | None = None,
        limit: int = 10,
        record: Any = None,
        records: Any = None,
    ) -> list[tuple["EntityRecord", float, str]]:
        """Search with the same rules as :func:`scan_entities`.

        ``visible``: a boolean mask over entities (``None``: all); entities it
        excludes contribute no label. ``extra``: ``(entity index, label)`` pairs
        scored as names instead (a masked entity's placeholder). ``record``
        maps an entity id to the :class:`EntityRecord` the view shows (or
        ``None``); ``records``, if given instead, maps a list of ids to a dict
        of them in one call (a database answers that in one query).
        """
        raw = (query or "").strip()
        processed = utils.default_process(raw)
        if not processed:
            return []
        allowed = np.ones(self.n_labels, dtype=bool) if visible is None else visible[self.label_entity]
        wanted_type = type.strip().lower() if type else None
        if wanted_type:
            allowed = allowed & self.type_mask(wanted_type)
        candidates = set(self._gram_candidates(processed, allowed).tolist())
        candidates.update(self._word_candidates(processed.split()))
        candidates.update(self._exact_candidates(processed))
        code_refs: dict[str, list[Ref]] = {}
        words = _WORD.findall(raw)
        for w in {w for w in words if w.isupper()}:
            for j in self.codes_exact.get(w, ()):
                code_refs.setdefault(self.raw_short[j], [])
        for w in {w.casefold() for w in words}:
            for j in self.codes_folded.get(w, ()):
                code_refs.setdefault(self.raw_short[j], [])
        for code in code_refs:
            for j in self.codes_exact.get(code, ()):
                if allowed[j]:
                    code_refs[code].append((self.ids[int(self.label_entity[j])], int(self.label_pos[j])))
        picked = np.fromiter(candidates, dtype=np.int64, count=len(candidates))
        picked.sort()
        chosen: list[int] = picked[allowed[picked]].tolist()  # one array pass instead of an index per label
        owners: list[int] = self.label_entity[chosen].tolist()
        ids = self.ids
        refs: list[Ref] = [(ids[e], i) for e, i in zip(owners, self.label_pos[chosen].tolist())]
        texts = self.texts
        labels = [texts[t] for t in self.label_text[chosen].tolist()]
        for e, label in extra:
            if wanted_type and self.types[e].lower() != wanted_type:
                continue
            refs.append((self.ids[e], 0))
            labels.append(utils.default_process(label))
            if len(label) <= CODE_MAX_LEN:
                code_refs.setdefault(label, []).append((self.ids[e], 0))
        scored = _score_labels(raw, processed, refs, labels, code_refs)
        winners = {eid for (eid, _), s in scored.items() if s >= MIN_SCORE}
        found = records(sorted(winners)) if records is not None else {eid: record(eid) for eid in winners}
        shown = {eid: r for eid, r in found.items() if r is not None}
        return rank_hits({ref: s for ref, s in scored.items() if ref[0] in shown}, shown, limit)

