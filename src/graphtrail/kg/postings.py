"""Postings for the entity search index (:mod:`.search`), built in linear time without sorting strings or keys.

At a million edges the index build sorted 5.5M packed (bigram, label) pairs and
filled a Python dict label by label, and so cost more than loading the graph.
Here a bigram gets a dense 16-bit code: processed labels use a few dozen code
points, so ``rank(a) * A + rank(b)`` over the text's own alphabet is small and
ascends as the packed key does, and numpy sorts 16-bit codes stably by radix.
For Latin text (at most 256 code points) that runs chunk by chunk: on the
wide benchmark graph, building the whole text's arrays at once faulted in
~170 MB of fresh pages, and the kernel time for those faults cost more than
the sort. Larger alphabets use one dense table, then pyarrow's hashing (thousands of
code points), then a plain sort (more than 65,536 distinct bigrams). Every
route returns exactly what the sorting build returns (tests/test_search_build.py).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .arrays import distinct

__all__ = ["ExactPostings", "complement_common", "gram_postings"]


#: The hash labels are grouped by (a module attribute, so that a test can force collisions).
_hash = hash


class ExactPostings:
    """The distinct labels ("texts"), which text each label is, and each text's labels ascending.

    Alias-rich graphs repeat half their labels (the wide benchmark graph: 800k
    labels, 316k texts), so the index builds its bigram and word postings over
    the texts and maps a text to its labels when a query reads it.

    Labels are grouped by their Python hash in numpy, and each label is then
    compared with its group's first in Arrow: a dict of 800k fresh strings cost
    more (its table does not fit a cache), and when every hash differs (every
    label distinct) nothing is compared at all. A hash shared by two different
    labels, or a label Arrow cannot hold (a lone surrogate), sends the labels
    through a dict instead. :meth:`get` answers what a ``dict`` of label ->
    places would.
    """

    def __init__(self, labels: list[str], places: np.ndarray | None = None) -> None:
        """``places``: where each of ``labels`` goes in label order (default: in the order given)."""
        n = len(labels)
        self.text_array: Any = None  # the texts as an Arrow array, when they were made in Arrow
        self._first: dict[str, int] = {}  # the lookup after a collision
        hashes = np.fromiter(map(_hash, labels), dtype=np.int64, count=n)
        order = np.argsort(hashes, kind="stable")  # each hash's labels ascending
        ordered = hashes[order]
        new = np.ones(n, dtype=bool)
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        self._hashes = ordered[starts]  # ascending, one per text
        if len(starts) == n:  # every hash differs: every label is its own text
            self.texts: list[str] = labels
            self._text_at = np.arange(n, dtype=np.int64)
            self._hash_text = order  # the text of each hash
        else:
            self.texts = self._grouped(labels, order, new, starts)
            self._hash_text = np.arange(len(starts), dtype=np.int64)
            if self.texts is None:  # two different labels share a hash
                self._hashes = np.zeros(0, dtype=np.int64)
                firsts = np.fromiter(map(self._first.setdefault, labels, range(n)), dtype=np.int64, count=n)
                self.texts = list(self._first)
                self._text_at = (np.cumsum(firsts == np.arange(n, dtype=np.int64)) - 1)[firsts]
            else:
                self._text_at = np.empty(n, dtype=np.int64)
                self._text_at[order] = np.cumsum(new) - 1
        self._identity = len(self.texts) == n and places is None
        if self._identity:  # text j is label j
            self.label_text = self.text_labels = self._text_at
            self.text_ptr = np.arange(n + 1, dtype=np.int64)
            return
        if places is None:
            self.label_text = self._text_at
        else:
            self.label_text = np.empty(n, dtype=np.int64)
            self.label_text[places] = self._text_at
        self.text_ptr = np.zeros(len(self.texts) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.label_text, minlength=len(self.texts)), out=self.text_ptr[1:])
        self.text_labels = np.argsort(self.label_text, kind="stable")

    def _grouped(self, labels: list[str], order: np.ndarray, new: np.ndarray, starts: np.ndarray) -> list[str] | None:
        """The first label of each hash group, if every label equals its group's first (else ``None``)."""
        rest = order[~new]
        first = order[starts[(np.cumsum(new) - 1)[~new]]]
        try:
            import pyarrow as pa
            import pyarrow.compute as pc

            column = pa.array(labels, type=pa.large_string())
        except (ImportError, UnicodeError, ValueError):  # a lone surrogate (ArrowInvalid is a ValueError)
            same = all(map(operator.eq, map(labels.__getitem__, rest.tolist()), map(labels.__getitem__, first.tolist())))
            return list(map(labels.__getitem__, order[starts].tolist())) if same else None
        if not pc.all(pc.equal(column.take(pa.array(rest)), column.take(pa.array(first)))).as_py():
            return None
        self.text_array = column.take(pa.array(order[starts]))
        return self.text_array.to_pylist()

    def text_of(self, label: str) -> int | None:
        """The text number of ``label`` (``None``: no label is ``label``)."""
        if not len(self._hashes):
            i = self._first.get(label)
            return None if i is None else int(self._text_at[i])
        h = _hash(label)
        k = int(np.searchsorted(self._hashes, h))
        if k < len(self._hashes) and self._hashes[k] == h:
            t = int(self._hash_text[k])
            if self.texts[t] == label:
                return t
        return None

    def labels_of(self, texts: np.ndarray) -> np.ndarray:
        """The labels of the given texts (each text's labels ascending, texts in the order given)."""
        texts = np.asarray(texts, dtype=np.int64)
        if self._identity:
            return texts
        starts = self.text_ptr[texts]
        sizes = self.text_ptr[texts + 1] - starts
        total = int(sizes.sum())
        at = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(total, dtype=np.int64)
        return self.text_labels[at]

    def get(self, label: str, default: Any = ()) -> Any:
        t = self.text_of(label)
        if t is None:
            return default
        return self.text_labels[self.text_ptr[t] : self.text_ptr[t + 1]].tolist()


def _radix_postings(keys: np.ndarray, posting: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(distinct keys ascending, ptr, postings)`` with repeats dropped; ``None`` when the radix route does not apply.

    ``posting`` must be non-decreasing (labels in order), so a stable sort by
    key alone leaves each key's postings ascending and a repeat adjacent.
    """
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:  # pragma: no cover - pyarrow comes with the loaders
        return None
    encoded = pc.dictionary_encode(pa.array(keys))
    dictionary = encoded.dictionary.to_numpy(zero_copy_only=False)
    k = len(dictionary)
    if k > 1 << 16:
        return None
    ascending = np.argsort(dictionary)
    rank = np.empty(k, dtype=np.uint16)
    rank[ascending] = np.arange(k, dtype=np.uint16)
    ranked = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    post = posting[np.argsort(ranked, kind="stable")]  # 16-bit keys: numpy's radix sort
    group = np.repeat(np.arange(k, dtype=np.uint16), np.bincount(ranked, minlength=k))
    keep = np.ones(len(post), dtype=bool)
    np.logical_or(group[1:] != group[:-1], post[1:] != post[:-1], out=keep[1:])
    ptr = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(group[keep], minlength=k), out=ptr[1:])
    return dictionary[ascending], ptr, post[keep]


def _alphabet_postings(
    cps: np.ndarray, owner: np.ndarray, valid: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`_radix_postings` without hashing: bigrams coded over the text's own alphabet.

    Processed labels use a few dozen code points, so a bigram's code
    ``rank(a) * A + rank(b)`` (``A`` distinct code points) is small, ascends as
    the packed key does, and a table of every possible code says which occur.
    ``None`` when that table would be large or the distinct bigrams do not fit
    16 bits (the hashing route then decides).
    """
    seen = np.zeros(int(cps.max()) + 1, dtype=bool)
    seen[cps] = True
    alphabet = np.flatnonzero(seen)
    size = len(alphabet)
    if size * size > 1 << 24:
        return None
    rank = np.zeros(len(seen), dtype=np.int32)
    rank[alphabet] = np.arange(size, dtype=np.int32)
    ranks = rank[cps]
    codes = (ranks[:-1] * size + ranks[1:])[valid]
    # Index assignments and searchsorted, not bincount: bincount casts 9M codes to a 64-bit temporary.
    present = np.zeros(size * size, dtype=bool)
    present[codes] = True
    used = np.flatnonzero(present)
    k = len(used)
    if k > 1 << 16:
        return None
    dense = np.zeros(size * size, dtype=np.uint16)
    dense[used] = np.arange(k, dtype=np.uint16)
    ranked = dense[codes]
    order = np.argsort(ranked, kind="stable")  # 16-bit keys: numpy's radix sort
    post, group = owner[order], ranked[order]
    keep = np.ones(len(post), dtype=bool)
    np.logical_or(group[1:] != group[:-1], post[1:] != post[:-1], out=keep[1:])
    kept_group = group[keep]
    ptr = np.append(np.searchsorted(kept_group, np.arange(k, dtype=np.uint16)), len(kept_group)).astype(np.int64)
    keys = (alphabet[used // size].astype(np.int64) << 21) | alphabet[used % size]
    return keys, ptr, post[keep]


#: Arrow sorts integers spanning at most about this many values by counting, 2-3x faster than numpy's radix sort.
_COUNTING_RANGE = 4096


def _stable_order(n_codes: int) -> Callable[[np.ndarray], np.ndarray]:
    """A stable argsort for 16-bit codes below ``n_codes``: Arrow's when the range is small, else numpy's radix sort.

    Both are stable, so they return the same order; only the speed differs:
    Arrow sorts integers spanning a few thousand values by counting (2-3x
    faster than numpy on the chunks here), and by comparison beyond that.
    """
    if n_codes <= _COUNTING_RANGE:
        try:
            import pyarrow as pa
            import pyarrow.compute as pc
        except ImportError:  # pragma: no cover - pyarrow comes with the loaders
            pass
        else:
            return lambda codes: pc.array_sort_indices(pa.array(codes)).to_numpy()
    return lambda codes: np.argsort(codes, kind="stable")


#: Labels per chunk of the chunked bigram build (its arrays stay a few MB and are reused, not faulted in anew).
_CHUNK = 1 << 15


def _encoded_chunks(labels: list[str]) -> Any:
    """``(first label, labels, code points of " " + " \\x00 ".join(labels) + " ")`` for each chunk of labels."""
    for start in range(0, len(labels), _CHUNK):
        part = labels[start : start + _CHUNK]
        joined = " " + " \x00 ".join(part) + " "
        yield start, part, np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _chunked_postings(labels: list[str], lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`gram_postings` chunk by chunk, for texts of at most 256 distinct code points (processed Latin text).

    Then ``rank(a) * A + rank(b)`` is itself a 16-bit key: each chunk's pairs
    are sorted by radix and deduplicated alone (a repeat lies within one
    label), and the chunks' postings are placed into the result, chunks in
    label order. Building the whole text's arrays at once faulted in hundreds
    of MB of fresh memory, which cost more kernel time than the sorting did.
    ``None`` for a larger alphabet.
    """
    seen = np.zeros(128, dtype=bool)
    for _, _, cps in _encoded_chunks(labels):
        top = int(cps.max()) + 1
        if top > len(seen):
            seen = np.concatenate([seen, np.zeros(top - len(seen), dtype=bool)])
        seen[cps] = True
    alphabet = np.flatnonzero(seen)
    size = len(alphabet)
    if size > 256:
        return None
    rank = np.zeros(len(seen), dtype=np.uint16)
    rank[alphabet] = np.arange(size, dtype=np.uint16)
    n_codes = size * size
    counts = np.zeros(n_codes, dtype=np.int64)
    label_type = np.int32 if len(labels) < 1 << 31 else np.int64  # kept until the end: half the memory
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    stable_order = _stable_order(n_codes)
    for start, part, cps in _encoded_chunks(labels):
        owner = np.repeat(np.arange(start, start + len(part), dtype=label_type), lengths[start : start + len(part)] + 3)[: len(cps) - 1]
        valid = (cps[:-1] != 0) & (cps[1:] != 0)
        ranks = rank[cps]
        codes = (ranks[:-1] * size + ranks[1:])[valid]  # < size * size <= 65536: fits uint16
        order = stable_order(codes)
        post, group = owner[valid][order], codes[order]
        keep = np.ones(len(post), dtype=bool)
        np.logical_or(group[1:] != group[:-1], post[1:] != post[:-1], out=keep[1:])
        post = post[keep]
        count = np.bincount(group[keep], minlength=n_codes)
        parts.append((post, count))
        counts += count
    ptr_all = np.zeros(n_codes + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr_all[1:])
    posting = np.empty(int(ptr_all[-1]), dtype=np.int64)
    cursor = ptr_all[:-1].copy()
    for post, count in parts:  # code g's postings of this chunk go after those of the chunks before
        local = np.cumsum(count) - count
        posting[np.repeat(cursor - local, count) + np.arange(len(post), dtype=np.int64)] = post
        cursor += count
    used = np.flatnonzero(counts)
    keys = (alphabet[used // size].astype(np.int64) << 21) | alphabet[used % size]
    ptr = np.append(ptr_all[used], ptr_all[-1])
    return np.bincount(posting, minlength=len(labels)).astype(np.float64), keys, ptr, posting


def gram_postings(labels: list[str], lengths: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Character bigrams of ``" " + label + " "`` -> label postings, as CSR.

    Returns ``(gram_count, keys, ptr, post)``: each label's number of distinct
    bigrams, the sorted distinct bigram keys (two code points packed in an
    int64), and for key ``k`` the ascending labels ``post[ptr[k]:ptr[k + 1]]``.
    ``lengths``: ``len`` of each label, when the caller has them already.
    """
    if not labels:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=np.float64), empty, np.zeros(1, dtype=np.int64), empty
    if lengths is None:
        lengths = np.fromiter(map(len, labels), dtype=np.int64, count=len(labels))
    chunked = _chunked_postings(labels, lengths)
    if chunked is not None:
        return chunked
    joined = " " + " \x00 ".join(labels) + " "
    cps32 = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lengths = lengths + 2
    # 32-bit label numbers while sorting (half the memory traffic), 64-bit in what is returned.
    small = np.int32 if len(labels) < 1 << 31 else np.int64
    owner = np.repeat(np.arange(len(labels), dtype=small), lengths + 1)[: len(cps32) - 1]
    valid = (cps32[:-1] != 0) & (cps32[1:] != 0)
    posting = owner[valid]
    fast = _alphabet_postings(cps32, posting, valid) if len(posting) else None
    if fast is not None:
        distinct_keys, ptr, posting = fast
        posting = posting.astype(np.int64)
        return np.bincount(posting, minlength=len(labels)).astype(np.float64), distinct_keys, ptr, posting
    posting = posting.astype(np.int64)
    cps = cps32.astype(np.int64)
    keys = ((cps[:-1] << 21) | cps[1:])[valid]
    fast = _radix_postings(keys, posting) if len(keys) else None
    if fast is not None:
        distinct_keys, ptr, posting = fast
        return np.bincount(posting, minlength=len(labels)).astype(np.float64), distinct_keys, ptr, posting
    n_labels = max(len(labels), 1)
    if len(keys) and int(keys.max()) < (1 << 62) // n_labels:
        packed = distinct(keys * n_labels + posting)  # one sort: by bigram, then label, duplicates gone
        keys, posting = packed // n_labels, packed % n_labels
    else:  # no bigrams, or astronomically many labels: sort by bigram only, duplicates kept
        order = np.argsort(keys, kind="stable")
        keys, posting = keys[order], posting[order]
    gram_count = np.bincount(posting, minlength=len(labels)).astype(np.float64)
    starts = np.flatnonzero(np.diff(keys, prepend=-1)) if len(keys) else np.zeros(0, dtype=np.int64)
    return gram_count, keys[starts], np.append(starts, len(keys)), posting


def complement_common(ptr: np.ndarray, post: np.ndarray, n_labels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each key whose postings hold more than half the labels, the labels it lacks.

    Returns ``(negated, lacking_ptr, lacking)``: ``negated[k]`` says whether
    key ``k`` has a list of the labels without it, ascending in
    ``lacking[lacking_ptr[k]:lacking_ptr[k + 1]]`` (empty for the other keys).
    Counting a query's shared bigrams per label read every posting of its
    bigrams; where labels share their common words, a few bigrams (" t",
    "th", "of") are in nearly every label and were most of what a query read.
    A label's count is then the number of negated keys minus how many of their
    lists name it: the same integers, from a fraction of the postings. (The
    postings are not rewritten: copying them cost more than the lists do.)
    """
    sizes = np.diff(ptr)
    negated = sizes > n_labels // 2
    lacking_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(np.where(negated, n_labels - sizes, 0), out=lacking_ptr[1:])
    lacking = np.empty(int(lacking_ptr[-1]), dtype=post.dtype)
    mask = np.ones(n_labels, dtype=bool)
    for k in np.flatnonzero(negated).tolist():  # fewer than twice a label's bigrams: a short loop
        mask[:] = True
        mask[post[ptr[k] : ptr[k + 1]]] = False
        lacking[lacking_ptr[k] : lacking_ptr[k + 1]] = np.flatnonzero(mask)
    return negated, lacking_ptr, lacking
