"""Where each of millions of short strings stands in a set of many: ``pyarrow.compute.index_in``, as integers.

A hash lookup of one string in a table of 200k strings misses the CPU caches
(the table's slot, then the stored string to compare with), and a million
edges look up two million ends: ``index_in`` measured 0.35-0.55 s for that,
three to five times the default ``pandas.read_csv`` of the whole file. When
every string of the set fits in a few 8-byte words (entity ids such as ``Q42``,
short titles), :func:`positions_in` reads each string as those words straight
from the Arrow buffers (numpy, no Python object per string), keys it by them,
and matches keys in an open-addressing table of int32 slots that stays in the
cache: 0.1 s for the same lookups. The answer is exactly ``index_in``'s: a key
is the string itself (up to 7 bytes) or a hash whose every match is confirmed
word by word. Longer strings that share a start (URIs such as
``https://example.org/entity/00001234``) are matched by the rest after it, read
in place, and a value must also have that start. Other long strings go to
``index_in``: reading them word by word costs about what the lookup saves (measured).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .splitcells import CellColumn, arrow_of

__all__ = ["positions_in"]

#: Sets whose strings all fit in this many 8-byte words are matched as integers (:func:`_packed_positions`).
PACKED_WORDS = 3
_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)
_M1, _M2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9)


def _chunks(column: Any) -> list[Any]:
    """Arrow arrays and :class:`~.splitcells.CellColumn` pieces, in order (``column``: either, chunked, or a list of them)."""
    if isinstance(column, list):
        return [chunk for piece in column for chunk in _chunks(piece)]
    return list(column.chunks) if hasattr(column, "chunks") else [column]


def _arrow(values: Any, kind: Any) -> Any:
    """``values`` as one Arrow chunked array of type ``kind`` (cells copied out of their file)."""
    import pyarrow as pa

    if hasattr(values, "type"):
        return values
    return pa.chunked_array([arrow_of(c).cast(kind) for c in _chunks(values)], type=kind)


def positions_in(values: Any, value_set: Any) -> np.ndarray:
    """Each value's position in ``value_set`` (its first, if repeated), -1 where absent: ``index_in(values, value_set)`` as int64.

    ``value_set``: an Arrow string array (chunked or not, ``string`` or
    ``large_string``); ``values``: one too, or cells of a file
    (:class:`~.splitcells.CellColumn`), or a list of such pieces. No nulls in either.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not hasattr(value_set, "chunks"):
        value_set = pa.chunked_array([value_set])
    if not hasattr(values, "type"):  # cells, or a list of pieces: matched as bytes, whatever the set's string type
        values = [c.cast(value_set.type) if hasattr(c, "type") and c.type != value_set.type else c for c in _chunks(values)]
    elif value_set.type != values.type:
        value_set = value_set.cast(values.type)
    value_set = value_set.combine_chunks()
    if value_set.null_count or any(getattr(c, "null_count", 0) for c in _chunks(values)):
        return _as_positions(pc.index_in(_arrow(values, value_set.type), value_set=value_set))
    found = _packed_or_none(values, value_set)
    if found is not None:
        return found
    prefix = _common_prefix(value_set)
    if prefix:  # ids such as https://example.org/entity/00001234: look the rest up, among the rests
        found = _packed_or_none(values, value_set, skip=len(prefix.encode()))
        if found is not None:
            found[~_starts_with(values, prefix)] = -1
            return found
    return _as_positions(pc.index_in(_arrow(values, value_set.type), value_set=value_set))


def _starts_with(values: Any, prefix: str) -> np.ndarray:
    """Per value, whether it starts with ``prefix`` (cells: read in their file, :meth:`~.splitcells.CellColumn.spans`)."""
    import pyarrow.compute as pc

    out = []
    for chunk in _chunks(values):
        if not isinstance(chunk, CellColumn):
            out.append(pc.starts_with(chunk, prefix).to_numpy(zero_copy_only=False))
            continue
        out.append(pc.starts_with(chunk.spans(), prefix).to_numpy(zero_copy_only=False)[::2])  # (the even items are the cells)
    return np.concatenate(out) if out else np.zeros(0, dtype=bool)


def _packed_or_none(values: Any, value_set: Any, skip: int = 0) -> np.ndarray | None:
    """:func:`_packed_positions` when the set's strings (past their first ``skip`` bytes) are short enough, else ``None``.

    ``skip``: the bytes of a start every string of the set shares; a value's
    rest is then matched (the caller checks it has that start).
    """
    import pyarrow.compute as pc

    longest = (pc.max(pc.binary_length(value_set)).as_py() or 0) - skip if len(value_set) else 0
    n_words = (longest + 7) // 8
    if not 0 < n_words <= PACKED_WORDS:
        return None
    return _packed_positions(values, value_set, n_words, exact=longest <= 7, skip=skip)


def _common_prefix(value_set: Any) -> str:
    """The text every string of the set starts with: the common start of the smallest and the largest (UTF-8 orders as code points do)."""
    import pyarrow.compute as pc

    if len(value_set) < 2:
        return ""
    low_high = pc.min_max(value_set)
    low, high = low_high["min"].as_py(), low_high["max"].as_py()
    size = 0
    for a, b in zip(low, high):
        if a != b:
            break
        size += 1
    return low[:size]


def _as_positions(found: Any) -> np.ndarray:
    """``index_in``'s answer (Arrow int32 with nulls) as integers, -1 where a value was not found."""
    chunks = _chunks(found)
    if not chunks:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([c.fill_null(-1).to_numpy(zero_copy_only=False) for c in chunks]).astype(np.int64, copy=False)


def _words(column: Any, n_words: int, skip: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """A string column as ``n_words`` 8-byte integers per string (its bytes, zero past its end) and its byte lengths.

    Exact for strings of up to ``8 * n_words`` bytes: with the length, the words are the string.
    ``skip``: read each string from its ``skip``-th byte (the length is what remains; negative when shorter).
    """
    import pyarrow as pa

    chunks = _chunks(column)
    total = sum(len(chunk) for chunk in chunks)
    words = [np.empty(total if len(chunks) != 1 else 0, dtype=np.uint64) for _ in range(n_words)]
    lengths = np.empty(total, dtype=np.int64)
    done = 0
    for chunk in chunks:
        n = len(chunk)
        if not n:
            continue
        if isinstance(chunk, CellColumn):  # cells of a file: their bounds in its bytes (int32 below 1 GB, else int64)
            data, start, end = chunk.data, chunk.starts, chunk.ends
        else:
            buffers = chunk.buffers()
            offsets = np.frombuffer(buffers[1], dtype=np.int64 if pa.types.is_large_string(chunk.type) else np.int32)
            offsets = offsets[chunk.offset : chunk.offset + n + 1]
            data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
            if len(data) - 8 > 2**31 - 64:  # int32 offsets plus 8 * k could overflow
                offsets = offsets.astype(np.int64)
            start, end = offsets[:-1], offsets[1:]
        if len(data) < 16:  # too short for the 8-byte windows below: a padded copy
            data = np.concatenate([data, np.zeros(16, dtype=np.uint8)])
        last = len(data) - 8
        # every 8-byte window of the data, as an unaligned little-endian integer view (no copy)
        windows = np.ndarray((last + 1,), dtype="<u8", buffer=data, offset=0, strides=(1,))
        np.subtract(end, start, out=lengths[done : done + n])
        if skip:
            lengths[done : done + n] -= skip
        for k in range(n_words):
            at = start + (8 * k + skip) if k or skip else start
            word = windows[np.minimum(at, last)]  # (np.take would copy every window first)
            if len(chunks) == 1:  # the gather's array is the words' (no copy)
                words[k] = word
            else:
                words[k][done : done + n] = word
                word = words[k][done : done + n]
            late = int(np.searchsorted(at, last, side="right"))  # offsets ascend: the strings past ``last`` end the chunk
            if late < n:  # near the buffer's end: read the last window and shift
                word[late:] = windows[last] >> (np.minimum(at[late:] - last, 7) * 8).astype(np.uint64)
            word &= _MASKS[np.minimum(lengths[done : done + n], 8) if not k and not skip else np.clip(end - at, 0, 8)]
        done += n
    return words, lengths


def _mix(words: list[np.ndarray], lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each string's words and length (multiply and xor-shift: every bit of the input moves the output)."""
    h = lengths.astype(np.uint64) * _M1
    for word in words:
        h ^= word
        h *= _M2
        h ^= h >> np.uint64(31)
    return h


def _keys(column: Any, n_words: int, exact: bool, skip: int = 0) -> tuple[np.ndarray, list[np.ndarray], np.ndarray | None]:
    """``(key, words, lengths)``; ``exact``: strings of at most 7 bytes, whose one word and length make a key equal only for equal strings.

    An exact key is built in the word's and the lengths' arrays (no copy of
    either: two fewer passes over millions of values), so then it returns ``(key, [], None)``.
    """
    words, lengths = _words(column, n_words, skip)
    if exact:
        key = words[0]
        if skip:
            np.maximum(lengths, 0, out=lengths)
        np.minimum(lengths, 255, out=lengths)
        shifted = lengths.view(np.uint64)
        shifted <<= np.uint64(56)
        key |= shifted
        return key, [], None
    return _mix(words, lengths), words, lengths


def _packed_positions(values: Any, value_set: Any, n_words: int, exact: bool, skip: int = 0) -> np.ndarray | None:
    """:func:`positions_in` for a set of strings of at most ``8 * n_words`` bytes, as integers; ``None`` on a hash collision.

    Each string becomes its words and length and a 64-bit key: the word and
    length themselves for strings of up to 7 bytes (``exact``), else a hash of
    them. The set's keys go into an open-addressing table small enough for the
    cache, built and probed a round at a time for all strings at once. A hash
    found is confirmed by comparing words and lengths, so a value the set lacks
    is never taken for one it has.
    """
    set_key, set_words, set_lengths = _keys(value_set, n_words, exact, skip)
    n = len(set_key)
    # One entry per distinct string, at its first place; two different strings with one hash: the caller decides.
    order = np.argsort(set_key, kind="stable")
    ordered = set_key[order]
    first = np.ones(n, dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    repeated = np.flatnonzero(~first)
    if len(repeated) and not exact:
        a, b = order[repeated], order[repeated - 1]
        if (set_lengths[a] != set_lengths[b]).any() or any((w[a] != w[b]).any() for w in set_words):
            return None
    keep = order[first]
    bits = max(int(np.ceil(np.log2(max(4 * len(keep), 2)))), 4)
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    table = np.full(1 << bits, -1, dtype=np.int32)
    pending = keep.astype(np.int32)
    slot = ((set_key[keep] * _M1) >> shift).view(np.int64)
    while len(pending):  # linear probing, a round at a time: a string moves on from a slot taken before or in its round
        free = table[slot] == -1
        table[slot[free]] = pending[free]
        placed = np.zeros(len(pending), dtype=bool)
        placed[free] = table[slot[free]] == pending[free]
        pending, slot = pending[~placed], (slot[~placed] + 1) & mask
    key, words, lengths = _keys(values, n_words, exact, skip)
    slot = key * _M1
    slot >>= shift
    slot = slot.view(np.int64)
    at = table[slot]
    hit = set_key[at] == key  # an empty slot (-1) reads the last entry: -1 either way
    out = np.where(hit, at, np.int64(-1))
    hit |= at < 0
    rows = np.flatnonzero(~hit)  # a slot taken by another string: probe on
    slot = (slot[rows] + 1) & mask
    while len(rows):
        at = table[slot]
        full = at >= 0
        same = np.zeros(len(rows), dtype=bool)
        same[full] = set_key[at[full]] == key[rows[full]]
        out[rows[same]] = at[same]
        go_on = full & ~same
        rows, slot = rows[go_on], (slot[go_on] + 1) & mask
    if exact:
        return out
    # Confirm each match by its words and length (a gather per word: numpy gathers 1-d arrays fastest).
    hit = np.flatnonzero(out >= 0)
    every = len(hit) == len(out)  # every value matched: no subset to gather
    at = out if every else out[hit]
    wrong = set_lengths[at] != (lengths if every else lengths[hit])
    for k in range(n_words):
        wrong |= set_words[k][at] != (words[k] if every else words[k][hit])
    if wrong.any():  # the same hash, another string: absent (the set has one string per hash)
        out[hit[wrong]] = -1
    return out
