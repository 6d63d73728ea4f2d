"""The arrays behind a :class:`~graphtrail.kg.graph.KnowledgeGraph`, shared by the graph and every filtered view.

Entities sit in parallel lists indexed by an integer node id; relations in
integer arrays (``src``, ``dst``, ``rel``) with a CSR adjacency built when
first read and rebuilt after a change. Everything derived from the data (the
CSR, the networkx copy, the search index, the sets a filter implies) is cached
here against :attr:`_Store.version`, so a view costs nothing to make.

The loaders that work in columns may leave an entity attribute (or the edge
descriptions) as a builder instead of a Python list: :class:`_Lazy` calls it
the first time anything reads that attribute, so a load does not pay for
millions of Python strings and tuples that nothing may ever read (a graph
walk needs the arrays; only a search or a record needs the names and aliases).

This module holds data and caches, not the read API: that is the graph's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from .records import Community, TextUnit
from .views import GraphFilter

if TYPE_CHECKING:  # pragma: no cover
    from .graph import KnowledgeGraph
    from .search import EntityIndex


_EMPTY_I64 = np.zeros(0, dtype=np.int64)
#: Filters whose derived sets (hidden node mask, touched communities) are kept per graph.
_FILTER_CACHE_SIZE = 64


class _Lazy:
    """A store attribute that a loader may leave as a builder: built (once, under the store's lock) when first read.

    A non-data descriptor: once built, the value sits in the instance's
    ``__dict__`` and is read and assigned as a plain attribute, at no cost.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, store: "_Store | None", owner: type | None = None) -> Any:
        if store is None:
            return self
        with store.lock:
            values = store.__dict__
            if self.name not in values:
                values[self.name] = store._builders.pop(self.name)()
            return values[self.name]



class _Store:
    """The graph's data, shared by a :class:`KnowledgeGraph` and every filtered view of it."""

    ids = _Lazy()
    index = _Lazy()
    names = _Lazy()
    types = _Lazy()
    descriptions = _Lazy()
    aliases = _Lazy()
    edge_desc = _Lazy()

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._builders: dict[str, Callable[[], Any]] = {}
        self._n_lazy = 0  # how many entities the builders hold
        self.ids: list[str] = []
        self.index: dict[str, int] = {}
        self.names: list[str] = []
        self.types: list[str] = []
        self.descriptions: list[str] = []
        self.aliases: list[tuple[str, ...]] = []
        # Edges: committed numpy arrays plus appended-but-not-yet-committed Python lists.
        self.src = _EMPTY_I64
        self.dst = _EMPTY_I64
        self.rel = _EMPTY_I64
        self.edge_desc: list[str] | None = None  # None: every description is ""
        self.pending: list[tuple[int, int, int, str]] = []
        self.rel_labels: list[str] = []
        self.rel_code: dict[str, int] = {}
        self.edge_at: dict[tuple[int, int, int], int] | None = {}  # None: rebuild before the next add
        self.text_units: dict[str, TextUnit] = {}
        self.units_by_entity: dict[str, list[str]] = {}
        self.communities: dict[str, Community] = {}
        #: Called once, on first read of communities, when none were added (see load_kg); returns them.
        self.community_source: Callable[[KnowledgeGraph], Iterable[Community]] | None = None
        self.version = 0
        self._csr: tuple[np.ndarray, ...] | None = None
        self._csr_version = -1
        self._nx: Any = None
        self._nx_version = -1
        self._index: EntityIndex | None = None
        self._index_version = -1
        self._by_entity: dict[str, list[str]] | None = None
        self._filters: OrderedDict[GraphFilter, dict[str, Any]] = OrderedDict()

    def _later(self, name: str, build: Callable[[], Any]) -> None:
        """Leave attribute ``name`` to ``build()`` on first read."""
        self.__dict__.pop(name, None)
        self._builders[name] = build

    def n_entities(self) -> int:
        """How many entities the graph holds, without building the id list."""
        return len(self.__dict__["ids"]) if "ids" in self.__dict__ else self._n_lazy

    def adopt_columns(self, n: int, columns: dict[str, Any]) -> None:
        """Take the entity attributes of a new graph as lists or builders (the column loaders' fast path).

        ``columns``: ``ids``, ``names``, ``types``, ``descriptions`` and
        ``aliases`` of ``n`` distinct new entities, each a list or a zero-argument
        callable returning one (called on first read); ``index`` (id -> position)
        is built from the ids when first read. Only for an empty store.
        """
        assert not self.n_entities() and not self.n_edges(), "adopt_columns fills an empty graph"
        for name in ("ids", "names", "types", "descriptions", "aliases"):
            value = columns[name]
            if callable(value):
                self._later(name, value)
            else:
                self.__dict__[name] = value
        self._n_lazy = n
        self._later("index", lambda: dict(zip(self.ids, range(len(self.ids)))))
        self.changed()

    def add_entities(
        self, ids: list[str], names: list[str], types: list[str], descriptions: list[str], aliases: list[tuple[str, ...]],
        index: dict[str, int] | None = None,
    ) -> None:
        """Append many new entities at once (the loaders' fast path; the caller guarantees the ids are new and distinct).

        ``index``: ``{id: position in ids}`` when the caller built it already (to check the ids are distinct).
        A column still left to its builder stays so: the new values are appended when it is built.
        """
        with self.lock:
            start = self.n_entities()
            for name, values in (("ids", ids), ("names", names), ("types", types), ("descriptions", descriptions), ("aliases", aliases)):
                build = self._builders.get(name)
                if build is not None:
                    self._builders[name] = lambda build=build, values=values: build() + list(values)
                else:
                    getattr(self, name).extend(values)
            if "ids" in self._builders:
                self._n_lazy += len(ids)
            if "index" in self._builders:
                pass  # built from the whole id list when first read
            elif index is not None and not start:
                self.index = index
            else:
                self.index.update(zip(ids, range(start, start + len(ids))))
        self.changed()

    def append_edges(
        self, src: np.ndarray, dst: np.ndarray, labels: list[str], rel: np.ndarray, descriptions: list[str] | Callable[[], list[str]] | None,
    ) -> None:
        """Append many new edges between existing nodes at once (the loaders' fast path).

        ``rel`` indexes ``labels`` (mapped onto the graph's relation codes); the
        caller guarantees no (source, label, target) repeats, here or already.
        ``descriptions``: one per edge, or a callable returning them (built on
        first read when the graph had no edges; the graph then keeps a list even if all are empty).
        """
        self.commit()
        codes = []
        for label in labels:  # one per distinct label
            code = self.rel_code.get(label)
            if code is None:
                code = self.rel_code[label] = len(self.rel_labels)
                self.rel_labels.append(label)
            codes.append(code)
        start = len(self.src)
        rel = np.asarray(rel, dtype=np.int64)
        mapped = rel if codes == list(range(len(codes))) else np.asarray(codes, dtype=np.int64)[rel]
        if start:
            self.src, self.dst, self.rel = np.concatenate([self.src, src]), np.concatenate([self.dst, dst]), np.concatenate([self.rel, mapped])
        else:
            self.src, self.dst, self.rel = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), mapped
        if callable(descriptions) and not start:  # the graph's first edges: their descriptions are built on first read
            self._later("edge_desc", descriptions)
        else:
            if callable(descriptions):
                descriptions = descriptions()
            if descriptions is not None and any(descriptions):
                if self.edge_desc is None:
                    self.edge_desc = [""] * start
                self.edge_desc.extend(descriptions)
            elif self.edge_desc is not None:
                self.edge_desc.extend([""] * len(src))
        self.edge_at = None
        self.changed()

    # ------------------------------------------------------------ edges
    def commit(self) -> None:
        if not self.pending:
            return
        s, t, r, d = zip(*self.pending)
        start = len(self.src)
        self.src = np.concatenate([self.src, np.asarray(s, dtype=np.int64)])
        self.dst = np.concatenate([self.dst, np.asarray(t, dtype=np.int64)])
        self.rel = np.concatenate([self.rel, np.asarray(r, dtype=np.int64)])
        if self.edge_desc is None and any(d):
            self.edge_desc = [""] * start
        if self.edge_desc is not None:
            self.edge_desc.extend(d)
        self.pending = []

    def n_edges(self) -> int:
        return len(self.src) + len(self.pending)

    def desc(self, e: int) -> str:
        return self.edge_desc[e] if self.edge_desc is not None else ""

    def csr(self) -> tuple[np.ndarray, ...]:
        """``(out_ptr, out_edges, in_ptr, in_edges)``: edge numbers grouped by source / target, in insertion order."""
        with self.lock:
            if self._csr is None or self._csr_version != self.version:
                self.commit()
                n = self.n_entities()
                out_edges = np.argsort(self.src, kind="stable")
                in_edges = np.argsort(self.dst, kind="stable")
                out_ptr = np.zeros(n + 1, dtype=np.int64)
                in_ptr = np.zeros(n + 1, dtype=np.int64)
                np.cumsum(np.bincount(self.src, minlength=n), out=out_ptr[1:])
                np.cumsum(np.bincount(self.dst, minlength=n), out=in_ptr[1:])
                self._csr = (out_ptr, out_edges, in_ptr, in_edges)
                self._csr_version = self.version
            return self._csr

    def changed(self) -> None:
        self.version += 1
        self._by_entity = None
        self._filters.clear()

    # ------------------------------------------------------------ derived, per filter
    def for_filter(self, f: GraphFilter) -> dict[str, Any]:
        """Sets derived from ``f`` once (the same filter object serves every call of a replay run)."""
        with self.lock:
            found = self._filters.get(f)
            if found is not None:
                self._filters.move_to_end(f)
                return found
        touched: set[str] = set()
        by_entity = self.communities_by_entity()
        for group in (f.hidden, f.masked, f.text_blocked):
            for e in group:
                touched.update(by_entity.get(e, ()))
        hidden_mask = np.zeros(len(self.ids), dtype=bool)
        hidden_idx = [i for e in f.hidden if (i := self.index.get(e)) is not None]
        hidden_mask[hidden_idx] = True
        derived = {"touched": touched, "hidden_mask": hidden_mask, "n_hidden": len(hidden_idx)}
        with self.lock:
            self._filters[f] = derived
            while len(self._filters) > _FILTER_CACHE_SIZE:
                self._filters.popitem(last=False)
        return derived

    def communities_by_entity(self) -> dict[str, list[str]]:
        with self.lock:
            if self._by_entity is None:
                by_entity: dict[str, list[str]] = {}
                for cid, com in self.communities.items():
                    for e in com.entity_ids:
                        by_entity.setdefault(e, []).append(cid)
                self._by_entity = by_entity
            return self._by_entity
