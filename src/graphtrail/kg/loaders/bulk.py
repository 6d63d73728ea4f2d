"""Many triples into a graph at once: integer codes with numpy and pyarrow, not a Python call per row.

What :meth:`KnowledgeGraph.add_relation` does one edge at a time, for whole
columns: entities numbered in order of first appearance (head, tail, head,
tail ...), a repeated ``(head, relation, tail)`` kept once at its first place
with the last description. The loaders validate their input first (and name
the line or JSON path of anything wrong); this only builds.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..graph import KnowledgeGraph
from .lookup import positions_in
from .splitcells import CellColumn

__all__ = ["add_triples", "appearance_codes", "end_positions", "first_positions", "gc_paused", "RepeatedId"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while a loader makes millions of containers that hold no cycles.

    Each collection walks every live container, so a parse that creates a
    million dicts and lists repeatedly re-walks the ones it made earlier (a
    third of node-link JSON's parse time at a million edges). The previous
    state is restored; nothing is freed later than it would be by reference counting.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def first_positions(codes: np.ndarray, k: int, out: np.ndarray | None = None, scale: int = 1, shift: int = 0) -> np.ndarray:
    """For each of ``k`` codes, the smallest ``scale * i + shift`` over the positions ``i`` where it occurs in ``codes``.

    ``out`` (updated in place) carries earlier minima, so two columns read as
    one interleaved sequence (heads at ``2i``, tails at ``2i + 1``) without
    building it. Codes that never occur keep ``out``'s value (default: a value
    past every position).
    """
    if out is None:
        out = np.full(k, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(out, codes, np.arange(shift, shift + scale * len(codes), scale, dtype=np.int64))
    return out


class EmptyValue(Exception):
    """A value is empty once stripped: the caller's exact reader names where."""


class RepeatedId(Exception):
    """``known`` repeats an id (see :func:`end_positions`): the caller's exact reader names where."""


def _encoded(column: Any, strip: bool, changed: list[bool] | None = None) -> tuple[np.ndarray, Any]:
    """``(codes, distinct values)`` of a string column; ``strip``: values stripped as ``str.strip()`` does, by stripping the
    distinct values only (and merging those that become equal). :class:`EmptyValue` when a value is or becomes empty.
    ``changed``: a list that gets ``True`` appended when stripping changed a value."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .delimited import PY_WHITESPACE

    encoded = pc.dictionary_encode(column)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.unify_dictionaries().combine_chunks() if encoded.num_chunks != 1 else encoded.chunk(0)
    codes = encoded.indices.to_numpy(zero_copy_only=False)  # (int32: half the bytes for every pass until the columns are cut)
    values = encoded.dictionary
    if strip:
        lengths = pc.utf8_length(values)
        stripped = pc.utf8_trim(values, characters=PY_WHITESPACE)
        stripped_lengths = pc.utf8_length(stripped)
        if len(values) and pc.min(stripped_lengths).as_py() == 0:
            raise EmptyValue
        if pc.sum(lengths).as_py() != pc.sum(stripped_lengths).as_py():  # some value changed: merge the equal ones
            if changed is not None:
                changed.append(True)
            again = pc.dictionary_encode(stripped)
            codes = again.indices.to_numpy(zero_copy_only=False)[codes]
            values = again.dictionary
    return codes, values


def appearance_codes(column: Any, strip: bool = False) -> tuple[np.ndarray, Any]:
    """A string column as integer codes and its distinct values (an Arrow array), numbered in order of first appearance."""
    import pyarrow as pa

    codes, values = _encoded(column, strip)
    if not in_appearance_order(codes, len(values)):  # (Arrow's encoder numbers them so; a dictionary column keeps its own order)
        first = first_positions(codes, len(values))
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(values), dtype=np.int64)
        rank[order] = np.arange(len(values))
        codes, values = rank[codes], values.take(pa.array(order))
    return codes, values


def in_appearance_order(codes: np.ndarray, k: int) -> bool:
    """Whether codes ``0..k-1`` each occur, and each first appears after the one before.

    True exactly when each code is at most one more than the largest before it
    and the largest is ``k - 1``: one running maximum, no scatter.
    """
    if not len(codes):
        return not k
    running = np.maximum.accumulate(codes)
    return bool(codes[0] == 0 and running[-1] == k - 1 and (np.diff(running) <= 1).all())


def _text_column(values: Any, keep_string: bool = False) -> Any:
    """Strings as one Arrow large_string ChunkedArray (lists and arrays of either string type accepted).

    ``keep_string``: a ``string`` column stays one (the cast copies every offset; a caller that only looks values up
    does not need it).
    """
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        column = values
    elif isinstance(values, pa.Array):
        column = pa.chunked_array([values])
    else:
        column = pa.chunked_array([pa.array(values, type=pa.large_string())])
    if column.type == pa.large_string() or (keep_string and column.type == pa.string()):
        return column
    return column.cast(pa.large_string())


#: Resolves distinct end values no id matched to positions in the graph's entities (-1: none): an entity table's names.
NameResolver = Callable[[Any], np.ndarray]


def end_positions(
    kg: KnowledgeGraph, heads: Any, tails: Any, known: Any = None, by_name: NameResolver | None = None, strip: bool = False,
    check_known: bool = False,
) -> tuple[np.ndarray, np.ndarray, Any]:
    """Head and tail values as node positions, in columns: ``(u, v, new ids)`` (the new ids: an Arrow array or a list).

    A value that is an entity id of ``kg`` is that entity (``known``: the
    graph's ids as an Arrow array, when the caller has them); else what
    ``by_name`` finds for it; else a new bare entity, numbered after the
    graph's entities in order of first appearance in head, tail, head, tail
    ... order, the order :meth:`KnowledgeGraph.add_relation` would create them in.
    ``strip``: the values stripped first (:class:`EmptyValue` if one is then empty).

    When the graph has entities, every end is first looked up among the ids
    as it is (one hash probe per end, into a table of the ids only); only the
    ends that are not an id verbatim are then encoded, stripped and resolved.
    An id is never empty or padded (both readers strip them), so an end equal
    to one is the same end stripped. ``check_known``: the ids in ``known`` are
    looked up too, in the same pass, to check that none repeats (:class:`RepeatedId`):
    a table already built from them costs less than hashing them twice.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    cells = isinstance(heads, CellColumn)  # (both) cells of a file: looked up in its bytes, copied out only where no id matched
    if not cells:
        heads, tails = _text_column(heads, keep_string=True), _text_column(tails, keep_string=True)
        if heads.type != tails.type:
            heads, tails = heads.cast(pa.large_string()), tails.cast(pa.large_string())
    n = len(heads)
    ends = [heads, tails] if cells else pa.chunked_array(heads.chunks + tails.chunks, type=heads.type)
    n_known = kg._store.n_entities()
    if not n_known and cells:  # every value is a new entity, numbered in head, tail, head, tail ... order
        # Read as that one interleaved sequence, the encoder's codes are already in order of first appearance
        # (appearance_codes checks, and renumbers if not): no second pass to find each value's first place.
        starts, stops = np.empty(2 * n, dtype=heads.starts.dtype), np.empty(2 * n, dtype=heads.ends.dtype)
        starts[0::2], starts[1::2], stops[0::2], stops[1::2] = heads.starts, tails.starts, heads.ends, tails.ends
        codes, values = appearance_codes(CellColumn(heads.data, heads.buffer, starts, stops).take(), strip)
        return codes[0::2].astype(np.int64), codes[1::2].astype(np.int64), values
    if not n_known:  # every value is a new entity
        codes, values = _encoded(ends, strip)
        position = np.full(len(values), -1, dtype=np.int64)
        rows = np.arange(len(codes), dtype=np.int64)
    else:
        id_set = _text_column(known if known is not None else kg._store.ids, keep_string=True).combine_chunks()
        if check_known:
            looked_up = [id_set, heads, tails] if cells else pa.chunked_array([id_set.cast(ends.type), *ends.chunks], type=ends.type)
        else:
            looked_up = ends
        found = positions_in(looked_up, id_set)
        if check_known:  # each id must find itself: index_in answers a repeated one with its first place
            if (found[: len(id_set)] != np.arange(len(id_set))).any():
                raise RepeatedId
            found = found[len(id_set) :]
        rows = np.flatnonzero(found < 0)
        if not len(rows):
            return found[:n], found[n:], []
        changed: list[bool] = []
        if cells:
            split = int(np.searchsorted(rows, n))
            missing = pa.concat_arrays([heads.take(rows[:split]), tails.take(rows[split:] - n)])
        else:
            missing = pc.filter(ends, pa.array(found < 0))  # chunk by chunk (a take would join them)
        codes, values = _encoded(missing, strip, changed)
        if changed:  # a padded end may be an id once stripped
            position = positions_in(values, id_set)
        else:  # none is: each was looked up as it is
            position = np.full(len(values), -1, dtype=np.int64)
        if by_name is not None and (position < 0).any():
            unresolved = np.flatnonzero(position < 0)
            position[unresolved] = by_name(values.take(pa.array(unresolved)))
    fresh = np.flatnonzero(position < 0)
    new_ids: Any = []
    if len(fresh):
        # where each end stands in the sequence head 0, tail 0, head 1, tail 1 ...
        order = np.where(rows < n, 2 * rows, 2 * (rows - n) + 1)
        first = np.full(len(values), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, codes, order)
        fresh = fresh[np.argsort(first[fresh], kind="stable")]
        position[fresh] = n_known + np.arange(len(fresh))
        new_ids = values.take(pa.array(fresh))
    if n_known:
        found[rows] = position[codes]
        return found[:n], found[n:], new_ids
    located = position[codes]
    return located[:n], located[n:], new_ids


#: Odd 64-bit multiplier (Fibonacci hashing) mixing a triple's key into 32 bits.
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _repeats(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``None`` when every key is distinct; else ``(keep, first, last)``.

    ``keep``: the rows to keep (each key's first place, in row order);
    ``first``/``last``: for each key that repeats, its first and last row (by key).
    The keys' 32-bit hashes are sorted (faster than sorting the 64-bit keys):
    distinct hashes mean distinct keys. Only the rows whose hash repeats
    (the repeated triples, and a few hash collisions) are compared by key.
    """
    mixed = key.astype(np.uint64)
    mixed *= _MIX
    mixed >>= np.uint64(32)
    hashed = mixed.astype(np.uint32)
    del mixed
    ordered = np.sort(hashed)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return None
    repeated_hashes = ordered[1:][same]  # sorted, a hash once per extra copy
    low = (1 << 20) - 1
    bitmap = np.zeros(low + 1, dtype=bool)
    bitmap[repeated_hashes & low] = True
    maybe = np.flatnonzero(bitmap[hashed & low])
    at = np.minimum(np.searchsorted(repeated_hashes, hashed[maybe]), len(repeated_hashes) - 1)
    rows = maybe[repeated_hashes[at] == hashed[maybe]]  # ascending
    order = rows[np.argsort(key[rows], kind="stable")]  # by key, then row
    grouped = key[order]
    starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1])))
    sizes = np.diff(np.append(starts, len(order)))
    many = sizes > 1
    if not many.any():  # only hash collisions
        return None
    first, last = order[starts[many]], order[(starts + sizes - 1)[many]]
    keep = np.ones(len(key), dtype=bool)
    keep[order[np.repeat(many, sizes)]] = False
    keep[first] = True
    return np.flatnonzero(keep), first, last


def _add_bare_entities(kg: KnowledgeGraph, ids: Any) -> None:
    """New entities known only by their ids (an Arrow array or a list): each named by its id, of type ``entity``.

    Into an empty graph they go as columns built when first read (a triples
    file without an entity table makes 200k of them at a million edges: their
    Python strings, lists and id index cost what the rest of the load does, and
    a graph opened to be searched or walked reads them then).
    """
    s = kg._store
    n = len(ids)
    if not s.n_entities() and not s.n_edges():
        listed = ids.to_pylist if hasattr(ids, "to_pylist") else (lambda: list(ids))
        # each is named by its id: the names share the id strings (the first n ids: entities added later are appended)
        s.adopt_columns(n, {
            "ids": listed, "names": lambda: s.ids[:n], "types": lambda: ["entity"] * n,
            "descriptions": lambda: [""] * n, "aliases": lambda: [()] * n,
        })
        return
    ids = ids.to_pylist() if hasattr(ids, "to_pylist") else ids
    s.add_entities(ids, ids, ["entity"] * n, [""] * n, [()] * n)


def add_triples(
    kg: KnowledgeGraph, heads: Any, relations: Any, tails: Any, description_column: Any = None, *,
    known: Any = None, by_name: NameResolver | None = None, strip: bool = False,
    coded: tuple[np.ndarray, np.ndarray] | None = None, relation_codes: tuple[np.ndarray, list[str]] | None = None,
    check_known: bool = False,
) -> bool:
    """Add the triples in string columns (Arrow arrays or lists) and optional descriptions, as integer columns.

    Ends are resolved as :func:`end_positions` says (``known``, ``by_name``);
    ``coded``: the ends already as positions of the graph's entities ``(u, v)``
    (a reader that numbered them while parsing). ``strip``: heads, relations
    and tails are stripped as ``str.strip()`` strips (by their distinct values),
    and an empty one returns ``False`` before anything is added. ``relations``: a column, or
    one string for every triple; ``relation_codes``: the relations already as
    ``(codes, labels)``, labels in order of first appearance. A repeated
    ``(head, relation, tail)`` is kept once, at its first place, with its last
    description, as :meth:`KnowledgeGraph.add_relation` keeps it. ``False``
    (nothing added) for a graph too large to code its triples in 64 bits, or
    without pyarrow (an optional dependency): the caller then adds them one by one.
    """
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:
        return False
    s = kg._store
    new_ids: Any = []
    if coded is not None:
        u, v = coded
    else:
        try:
            u, v, new_ids = end_positions(kg, heads, tails, known, by_name, strip, check_known)
        except EmptyValue:
            return False
    n = len(u)
    if relation_codes is not None:
        rel_codes, rel_labels = relation_codes
    elif isinstance(relations, str):
        rel_codes, rel_labels = np.zeros(n, dtype=np.int64), [relations]
    else:
        try:
            rel_codes, labels = appearance_codes(_text_column(relations, keep_string=True), strip)
        except EmptyValue:
            return False
        rel_labels = labels.to_pylist()
    n_nodes, n_rel = max(s.n_entities() + len(new_ids), 1), max(len(rel_labels), 1)
    if n_nodes * n_nodes * n_rel >= 2**62:  # pragma: no cover - astronomically large graphs
        return False
    if len(new_ids):
        _add_bare_entities(kg, new_ids)
    key = u.astype(np.int64)  # (u * n_rel + rel_codes) * n_nodes + v, in one array
    key *= n_rel
    key += rel_codes
    key *= n_nodes
    key += v
    repeats = _repeats(key)
    descriptions = None
    if description_column is not None:
        column = _text_column(description_column, keep_string=True)
        if len(column) and pc.max(pc.utf8_length(column)).as_py():  # built when first read (a new graph's edges; else now)
            descriptions = column.to_pylist
            if repeats is not None:  # a repeated triple keeps its first place and its last description
                rows = np.arange(n)
                rows[repeats[1]] = repeats[2]
                kept = pa.array(rows[repeats[0]])
                descriptions = lambda: column.take(kept).to_pylist()
    if repeats is not None:
        u, v, rel_codes = u[repeats[0]], v[repeats[0]], rel_codes[repeats[0]]
    s.append_edges(u, v, rel_labels, rel_codes, descriptions)
    return True
