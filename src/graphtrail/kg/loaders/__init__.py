"""Load a :class:`~graphtrail.kg.graph.KnowledgeGraph` from the formats people already have.

:func:`load_kg` takes a bundled dataset name (see :func:`list_bundled`) or a
path, and picks the loader from the path (one module per format family):

- a folder: a Microsoft GraphRAG output folder (``entities.parquet`` ... or the
  older ``create_final_entities.parquet`` ...; :mod:`.graphrag`);
- ``.json`` / ``.json.gz``: node-link JSON (networkx's ``node_link_data``
  shape, ``edges`` or ``links``), optionally with ``text_units`` and
  ``communities`` lists beside the nodes (graphtrail's own format; :mod:`.nodelink`);
- ``.graphml`` / ``.xml``: GraphML (:mod:`.graphml`);
- ``.tsv`` / ``.csv`` / ``.txt`` (anything else): triples, one
  ``head, relation, tail`` per line, with an optional entity table
  (:mod:`.triples`, reading with :mod:`.delimited`).

:mod:`.paths` detects the format, :mod:`.bundled` holds the packaged datasets.
A graph database (``graph.lbug``, ``lbug:path``, ``bolt://user:pass@host:7687``)
is not loaded but read in place: see :mod:`graphtrail.kg.backends` (the loaders
import the backends, never the reverse).

Every loader raises :class:`~graphtrail.kg.errors.KGError` naming the file, the
line/column (or row, or JSON path) and what was expected, because a traceback
from deep inside a parser tells a user nothing about their file.
See docs/datasets.md for the formats with examples.
"""

from __future__ import annotations

from pathlib import Path

from ..communities import lazy_communities
from ..errors import KGError, MissingDependencyError
from ..graph import KnowledgeGraph
from .bundled import _BUNDLED, BundledDataset, bundled_kg, bundled_resource, list_bundled
from .graphml import load_graphml, save_graphml
from .graphrag import load_graphrag
from .nodelink import load_node_link, save_node_link
from .paths import PathLike, detect_format, graph_name
from .triples import load_triples

# Also importable from here, as they were from the single loaders module this package replaced.
from ..errors import KGWarning  # noqa: F401
from ..fields import ALIAS_SEPARATOR, DEFAULT_RELATION  # noqa: F401
from .nodelink import kg_to_document  # noqa: F401
from .triples import find_entity_table  # noqa: F401

__all__ = [
    "load_kg",
    "save_kg",
    "list_bundled",
    "BundledDataset",
    "MissingDependencyError",
    "detect_format",
    "load_triples",
    "load_node_link",
    "load_graphml",
    "load_graphrag",
    "bundled_resource",
]


def load_kg(
    source: PathLike | KnowledgeGraph,
    *,
    format: str | None = None,
    entities: PathLike | None = None,
    name: str | None = None,
    communities: bool = True,
    seed: int = 0,
    resolution: float = 1.0,
    cache_communities: bool = True,
) -> KnowledgeGraph:
    """Load a knowledge graph from a bundled name or a path, detecting the format.

    ``source``: a bundled name (``"countries"``; bundled names win over a
    same-named file in the working directory — pass a :class:`~pathlib.Path`
    to force a path), a file, or a GraphRAG output folder. A
    :class:`KnowledgeGraph` is returned unchanged.
    ``format``: force ``"triples"``, ``"node-link"``, ``"graphml"`` or ``"graphrag"``.
    ``entities``: an entity table for triples (else a sibling file is looked for).
    ``communities``: when the source has none, seeded Leiden communities
    (``seed``, ``resolution``) are computed the first time something reads
    them, and cached beside the file (``cache_communities``); see
    :mod:`graphtrail.kg.communities`.
    """
    if isinstance(source, KnowledgeGraph):
        return source
    from ..backends import CypherGraph, is_graph_database, open_graph_database  # loaders -> backends, never back

    if isinstance(source, CypherGraph):
        return source  # type: ignore[return-value]  # same read API, in a database
    if format is None and is_graph_database(source):
        return open_graph_database(source, name=name, community_seed=seed, community_resolution=resolution)  # type: ignore[return-value]
    if isinstance(source, str) and source in _BUNDLED and format is None:
        kg = bundled_kg(source)
        kg.name = name or kg.name
        return kg

    path = Path(source)
    if not path.exists():
        known = ", ".join(sorted(_BUNDLED))
        raise KGError(f"knowledge graph not found: {source} (and not a bundled dataset: {known})")
    fmt = format or detect_format(path)
    if fmt == "triples":
        kg = load_triples(path, entities=entities)
    elif fmt == "node-link":
        kg = load_node_link(path)
    elif fmt == "graphml":
        kg = load_graphml(path)
    elif fmt == "graphrag":
        kg = load_graphrag(path)
    else:
        raise KGError(f"{path}: unknown format {fmt!r}; expected triples, node-link, graphml or graphrag")
    kg.name = name or graph_name(path)
    if communities and not kg.communities and len(kg):
        kg._store.community_source = lazy_communities(path if cache_communities else None, seed=seed, resolution=resolution)
    return kg



def save_kg(kg: KnowledgeGraph, path: PathLike) -> Path:
    """Write ``kg`` as node-link JSON (``.json``, gzip if ``.gz``) or GraphML (``.graphml``)."""
    path = Path(path)
    if path.suffix.lower() == ".graphml":
        return save_graphml(kg, path)
    return save_node_link(kg, path)
