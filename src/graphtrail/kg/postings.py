"""Postings for the entity search index (:mod:`.search`), built in linear time with hashing instead of sorting.

At a million edges the index build sorted 5.5M packed (bigram, label) pairs and
filled a Python dict label by label, and so cost more than loading the graph.
Here values are first given dense codes by a hash (pyarrow's dictionary
encoding, in C++); a few thousand distinct bigrams then fit in 16 bits, which
numpy sorts stably by radix (linear). Every structure is exactly what the
sorting build produced; inputs pyarrow cannot take (a lone surrogate, no
pyarrow, more than 65,536 distinct bigrams) use that build.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arrays import distinct

__all__ = ["ExactPostings", "gram_postings"]


class ExactPostings:
    """Processed label -> the positions of the labels equal to it, ascending (what a ``dict`` of lists held)."""

    def __init__(self, labels: list[str]) -> None:
        self._lists: dict[str, list[int]] | None = None
        self._one: dict[str, int] | None = dict(zip(labels, range(len(labels))))  # a repeat keeps its last place
        if len(self._one) == len(labels):
            return  # every label distinct (the usual case): one place each
        self._one = None
        try:
            import pyarrow as pa
            import pyarrow.compute as pc

            encoded = pc.dictionary_encode(pa.array(labels, type=pa.large_string()))
        except (ImportError, UnicodeError, ValueError, TypeError):  # ArrowInvalid is a ValueError
            self._lists = {}
            for j, label in enumerate(labels):
                self._lists.setdefault(label, []).append(j)
            return
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        values = encoded.dictionary.to_pylist()
        self._code = dict(zip(values, range(len(values))))
        self._order = np.argsort(codes, kind="stable")
        self._ptr = np.searchsorted(codes[self._order], np.arange(len(values) + 1))

    def get(self, label: str, default: Any = ()) -> Any:
        if self._one is not None:
            j = self._one.get(label)
            return default if j is None else [j]
        if self._lists is not None:
            return self._lists.get(label, default)
        code = self._code.get(label)
        if code is None:
            return default
        return self._order[self._ptr[code] : self._ptr[code + 1]].tolist()


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


def gram_postings(labels: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Character bigrams of ``" " + label + " "`` -> label postings, as CSR.

    Returns ``(gram_count, keys, ptr, post)``: each label's number of distinct
    bigrams, the sorted distinct bigram keys (two code points packed in an
    int64), and for key ``k`` the ascending labels ``post[ptr[k]:ptr[k + 1]]``.
    """
    if not labels:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=np.float64), empty, np.zeros(1, dtype=np.int64), empty
    joined = " " + " \x00 ".join(labels) + " "
    cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    lengths = np.fromiter(map(len, labels), dtype=np.int64, count=len(labels)) + 2
    owner = np.repeat(np.arange(len(labels), dtype=np.int64), lengths + 1)[: len(cps)]
    keys = (cps[:-1] << 21) | cps[1:]
    valid = (cps[:-1] != 0) & (cps[1:] != 0)
    keys, posting = keys[valid], owner[:-1][valid]
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
