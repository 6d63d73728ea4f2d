"""Moved to graphtrail.kg.loaders; kept so old imports work.

One module per format family; patch the triples reader in graphtrail.kg.loaders.triples.
"""

from __future__ import annotations

from ..kg.errors import KGWarning, MissingDependencyError
from ..kg.fields import ALIAS_SEPARATOR, DEFAULT_RELATION
from ..kg.fields import parse_aliases as _aliases
from ..kg.loaders import detect_format, load_kg, save_kg
from ..kg.loaders.bundled import _BUNDLED, BundledDataset, bundled_resource, list_bundled
from ..kg.loaders.graphml import load_graphml
from ..kg.loaders.graphrag import load_graphrag
from ..kg.loaders.nodelink import kg_to_document, load_node_link
from ..kg.loaders.paths import PathLike
from ..kg.loaders.triples import find_entity_table, load_triples

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
    "find_entity_table",
    "kg_to_document",
    "KGWarning",
    "DEFAULT_RELATION",
    "ALIAS_SEPARATOR",
    "PathLike",
    "_BUNDLED",
    "_aliases",
]
