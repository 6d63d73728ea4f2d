"""Communities for graphs that come without them: seeded Leiden (igraph's C core), computed lazily and cached.

The algorithm is Leiden (Traag, van Eck & Waltman 2019), Louvain's successor,
optimising modularity, as implemented in igraph's C library: about two seconds
of CPU at a million edges, where networkx's pure-Python Louvain took most of a
minute. Leiden also guarantees that every community is connected, which
Louvain does not. It is still the slowest thing graphtrail does to a large
graph, and most commands never read a community, so ``load_kg`` does not
compute them: it attaches :func:`lazy_communities`, and the first reader of
``kg.communities`` (``get_entity``, ``search_communities``, ``read_community``,
``graphtrail kg info --communities``) pays once.

The result is cached in a file beside the graph (``<graph file>.graphtrail-communities.json``)
keyed by a digest of the graph's content (ids, names, types, relations), the
seed, the resolution and the algorithm version. A cache whose key does not
match is never used: it is recomputed and replaced. A file at that path that
graphtrail did not write is never overwritten; an unwritable folder only
means no cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .arrays import distinct
from .records import Community

if TYPE_CHECKING:  # pragma: no cover - the graph imports this module, never the reverse at run time
    from .graph import KnowledgeGraph

__all__ = ["leiden_communities", "lazy_communities", "cache_path", "CACHE_FORMAT"]

#: Marks a cache file as graphtrail's; bump ``_ALGORITHM`` when the computation changes.
CACHE_FORMAT = "graphtrail-communities"
_ALGORITHM = "leiden-igraph-1"
#: Leiden passes over the graph; igraph's default. Running to convergence (-1) gains ~0.5% modularity for 10x the time.
_ITERATIONS = 2
# igraph draws its random numbers from one process-wide generator; seeded runs take turns.
_RNG_LOCK = threading.Lock()


def _undirected_pairs(kg: KnowledgeGraph) -> np.ndarray:
    """Distinct undirected node pairs ``(low, high)`` (self-loops kept), sorted."""
    s = kg._store
    s.commit()
    n = max(len(s.ids), 1)
    low, high = np.minimum(s.src, s.dst), np.maximum(s.src, s.dst)
    codes = distinct(low * n + high)
    return np.stack([codes // n, codes % n], axis=1)


def _import_igraph() -> Any:
    try:
        import igraph
    except ImportError as exc:  # pragma: no cover - a declared dependency
        from .errors import MissingDependencyError

        raise MissingDependencyError("computing communities needs the igraph package: pip install igraph") from exc
    return igraph


def leiden_communities(kg: KnowledgeGraph, *, seed: int = 0, resolution: float = 1.0) -> list[Community]:
    """Seeded Leiden (modularity) communities of the undirected simple graph, largest first, titled by their best-connected members.

    Nodes are numbered in insertion order and edges given in sorted order, so
    the result depends on the graph's content and the seed only (never on
    Python's per-process hash seed). igraph's generator is seeded for the call
    and put back to its default (Python's ``random`` module) afterwards.
    """
    ig = _import_igraph()
    s = kg._store
    n = len(s.ids)
    pairs = _undirected_pairs(kg)
    graph = ig.Graph(n=n, edges=pairs)
    with _RNG_LOCK:
        ig.set_random_number_generator(random.Random(seed))
        try:
            found = graph.community_leiden(objective_function="modularity", resolution=resolution, n_iterations=_ITERATIONS)
        finally:
            ig.set_random_number_generator(random)
    membership = np.asarray(found.membership, dtype=np.int64)
    degree = np.bincount(pairs[:, 0], minlength=n) + np.bincount(pairs[:, 1], minlength=n)
    order = np.argsort(membership, kind="stable")
    bounds = np.flatnonzero(np.diff(membership[order])) + 1
    parts = sorted((sorted(s.ids[i] for i in group.tolist()) for group in np.split(order, bounds) if len(group)),
                   key=lambda p: (-len(p), p[0]))
    out = []
    for i, members in enumerate(parts):
        by_degree = sorted(members, key=lambda m: (-int(degree[s.index[m]]), m))
        title = "Community of " + ", ".join(s.names[s.index[m]] for m in by_degree[:3])
        out.append(Community(f"C{i}", title, tuple(members), _summary(kg, by_degree), 0))
    return out


def _summary(kg: KnowledgeGraph, members_by_degree: list[str], per_type: int = 12) -> str:
    """Members grouped by type, best-connected first, so a reader can tell what the community is about."""
    s = kg._store
    groups: dict[str, list[str]] = {}
    for m in members_by_degree:
        i = s.index[m]
        groups.setdefault(s.types[i], []).append(s.names[i])
    parts = []
    for type_, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        more = f" and {len(names) - per_type} more" if len(names) > per_type else ""
        parts.append(f"{type_} ({len(names)}): " + ", ".join(names[:per_type]) + more)
    return f"{len(members_by_degree)} entities. " + "; ".join(parts) + "."


def cache_path(graph_path: Path) -> Path:
    """Where the communities of the graph at ``graph_path`` are cached."""
    return graph_path.with_name(graph_path.name + ".graphtrail-communities.json")


def _key(kg: KnowledgeGraph, seed: int, resolution: float) -> str:
    return hashlib.sha256(f"{_ALGORITHM}|{seed}|{resolution!r}|{kg.content_hash()}".encode()).hexdigest()


def _read_cache(path: Path) -> dict[str, Any] | None:
    """The cache document if ``path`` holds one graphtrail wrote, else ``None``."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != CACHE_FORMAT or not isinstance(doc.get("communities"), list):
        return None
    return doc


def _cached_communities(doc: dict[str, Any]) -> list[Community] | None:
    """The communities in a cache document, or ``None`` if any entry is malformed (then they are recomputed)."""
    out = []
    for entry in doc["communities"]:
        if not (isinstance(entry, list) and len(entry) == 5 and isinstance(entry[2], list)):
            return None
        cid, title, members, summary, level = entry
        if not (isinstance(cid, str) and isinstance(title, str) and isinstance(summary, str) and type(level) is int):
            return None
        if not all(isinstance(m, str) for m in members):
            return None
        out.append(Community(cid, title, tuple(members), summary, level))
    return out


def _write_cache(path: Path, key: str, communities: list[Community]) -> None:
    if path.exists() and _read_cache(path) is None:
        warnings.warn(f"{path} exists and is not a graphtrail communities cache; not overwriting it", stacklevel=3)
        return
    doc = {
        "format": CACHE_FORMAT,
        "key": key,
        "communities": [[c.id, c.title, list(c.entity_ids), c.summary, c.level] for c in communities],
    }
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")  # created with the usual permissions
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a read-only folder: no cache, same result


def lazy_communities(
    graph_path: Path | None, *, seed: int = 0, resolution: float = 1.0
) -> Callable[[KnowledgeGraph], list[Community]]:
    """A callable returning ``kg``'s communities from the cache beside ``graph_path``, or computing and caching them."""

    def fill(kg: KnowledgeGraph) -> list[Community]:
        if not len(kg):
            return []
        path = cache_path(graph_path) if graph_path is not None else None
        key = _key(kg, seed, resolution) if path is not None else ""
        doc = _read_cache(path) if path is not None and path.is_file() else None
        cached = _cached_communities(doc) if doc is not None and doc.get("key") == key else None
        if cached is not None:
            return cached
        communities = leiden_communities(kg, seed=seed, resolution=resolution)
        if path is not None:
            _write_cache(path, key, communities)
        return communities

    return fill
