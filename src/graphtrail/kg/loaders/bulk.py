"""Many triples into a graph at once: integer codes with numpy and pyarrow, not a Python call per row.

What :meth:`KnowledgeGraph.add_relation` does one edge at a time, for whole
columns: entities numbered in order of first appearance (head, tail, head,
tail ...), a repeated ``(head, relation, tail)`` kept once at its first place
with the last description. The loaders validate their input first (and name
the line or JSON path of anything wrong); this only builds.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..arrays import distinct
from ..graph import KnowledgeGraph

__all__ = ["add_triples", "gc_paused"]


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


def _first_appearance_codes(heads: Any, tails: Any) -> tuple[Any, Any, list[str]]:
    """Integer codes for the values of two string columns, numbered in order of first appearance
    in head, tail, head, tail, ... order (the order add_relation would create the nodes in).

    The columns are interleaved (one ``take``) and dictionary-encoded once: pyarrow's
    encoder numbers values in the order it first meets them, so no sort is needed.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(heads)
    if tails.type != heads.type:
        tails = tails.cast(heads.type)
    both = pa.chunked_array(heads.chunks + tails.chunks, type=heads.type)
    order = np.empty(2 * n, dtype=np.int64)
    order[0::2] = np.arange(n)
    order[1::2] = order[0::2] + n
    encoded = pc.dictionary_encode(both.take(pa.array(order))).combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return codes[0::2], codes[1::2], encoded.dictionary.to_pylist()


def add_triples(
    kg: KnowledgeGraph, heads: Any, relations: Any, tails: Any, description_column: Any = None, resolve: Any = None,
    coded: tuple[np.ndarray, np.ndarray, list[str]] | None = None, relation_codes: tuple[np.ndarray, list[str]] | None = None,
) -> bool:
    """Add the triples in three string columns (pyarrow arrays or lists) and optional descriptions.

    ``resolve`` maps a raw head or tail value to an entity id (an entity
    table's name lookup); ``None``: every value is its own id. ``coded``:
    the heads and tails already as positions in a list of distinct ids
    ``(head positions, tail positions, ids)`` (a reader that numbered them
    while parsing), so they are not encoded again. ``relation_codes``: the
    relations already as ``(codes, labels)``, labels numbered in order of first
    appearance (``relations`` is then ignored). ``False``
    (nothing added) for a graph too large to code its triples in 64 bits, or
    without pyarrow (an optional dependency): the caller then adds them one by one.
    """
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:
        return False

    def chunked(values: Any) -> Any:
        if isinstance(values, pa.ChunkedArray):
            return values
        return pa.chunked_array([values if isinstance(values, pa.Array) else pa.array(values, type=pa.string())])

    if description_column is not None:
        description_column = chunked(description_column)
    src, dst, ids = coded if coded is not None else _first_appearance_codes(chunked(heads), chunked(tails))
    if relation_codes is not None:
        rel_codes, rel_labels = relation_codes
    else:
        rel_encoded = pc.dictionary_encode(chunked(relations)).combine_chunks()
        rel_codes = rel_encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        rel_labels = rel_encoded.dictionary.to_pylist()
    n = len(rel_codes)
    descriptions = description_column.to_pylist() if description_column is not None else None
    if resolve is not None:
        # Two raw values may name the same entity (its id and its name): number the resolved ids again.
        ids = [resolve(v) for v in ids]
        renumber: dict[str, int] = {}
        node_of = np.fromiter((renumber.setdefault(e, len(renumber)) for e in ids), dtype=np.int64, count=len(ids))
        u, v, n_nodes = node_of[src], node_of[dst], len(renumber)
    else:
        u, v, n_nodes = src, dst, len(ids)
    n_rel = max(len(rel_labels), 1)
    if n_nodes and n_nodes * n_nodes * n_rel < 2**62:
        key = (u * n_rel + rel_codes) * n_nodes + v
        duplicates = len(distinct(key)) < n  # one plain sort; the first places only when there are repeats
        first_at = np.unique(key, return_index=True)[1] if duplicates else None
    else:  # pragma: no cover - astronomically large graphs
        first_at, duplicates = None, True
    if duplicates:
        if first_at is None:
            return False
        # The same triple more than once: like add_relation, keep the first edge and the last description.
        first_at = np.sort(first_at)
        if descriptions is not None:
            last: dict[int, int] = {}
            for i, k in enumerate(key.tolist()):
                last[k] = i
            descriptions = [descriptions[last[k]] for k in key[first_at].tolist()]
        src, dst, rel_codes = src[first_at], dst[first_at], rel_codes[first_at]
    kg.add_relations_bulk(ids, src, dst, rel_labels, rel_codes, descriptions)
    return True
