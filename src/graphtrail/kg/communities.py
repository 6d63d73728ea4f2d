"""Communities for graphs that come without them: seeded Louvain, computed lazily and cached.

Louvain is by far the slowest thing graphtrail does to a large graph (minutes at
a million edges), and most commands never read a community. So ``load_kg``
does not compute them: it attaches :func:`lazy_communities`, and the first
reader of ``kg.communities`` (``get_entity``, ``search_communities``,
``read_community``, ``graphtrail kg info --communities``) pays once.

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
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .records import Community

if TYPE_CHECKING:  # pragma: no cover - the graph imports this module, never the reverse at run time
    from .graph import KnowledgeGraph

__all__ = ["louvain_communities", "lazy_communities", "cache_path", "CACHE_FORMAT"]

#: Marks a cache file as graphtrail's; bump ``_ALGORITHM`` when the computation changes.
CACHE_FORMAT = "graphtrail-communities"
_ALGORITHM = "louvain-networkx-1"


def _undirected_pairs(kg: KnowledgeGraph) -> np.ndarray:
    """Distinct undirected node pairs ``(low, high)`` (self-loops kept), sorted."""
    s = kg._store
    s.commit()
    n = max(len(s.ids), 1)
    low, high = np.minimum(s.src, s.dst), np.maximum(s.src, s.dst)
    codes = np.unique(low * n + high)
    return np.stack([codes // n, codes % n], axis=1)


def louvain_communities(kg: KnowledgeGraph, *, seed: int = 0, resolution: float = 1.0) -> list[Community]:
    """Seeded Louvain communities of the undirected simple graph, largest first, titled by their best-connected members.

    Nodes are numbered in insertion order and edges added in sorted order:
    Louvain iterates over sets of nodes, and for string ids that order follows
    Python's per-process hash seed, so the same seed would give different
    communities in different runs. Integer labels hash to themselves.
    """
    import networkx as nx

    s = kg._store
    pairs = _undirected_pairs(kg)
    numbered = nx.Graph()
    numbered.add_nodes_from(range(len(s.ids)))
    numbered.add_edges_from(map(tuple, pairs.tolist()))
    degree = np.bincount(pairs[:, 0], minlength=len(s.ids)) + np.bincount(pairs[:, 1], minlength=len(s.ids))
    found = nx.community.louvain_communities(numbered, seed=seed, resolution=resolution)
    parts = sorted((sorted(s.ids[i] for i in p) for p in found), key=lambda p: (-len(p), p[0]))
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
        communities = louvain_communities(kg, seed=seed, resolution=resolution)
        if path is not None:
            _write_cache(path, key, communities)
        return communities

    return fill
