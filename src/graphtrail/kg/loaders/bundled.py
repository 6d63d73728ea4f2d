"""The datasets shipped inside the package (``graphtrail/data``), loadable by name.

``load_kg("countries")`` and ``load_questions("countries")`` both look names up
here. The bundled graph is graphtrail's node-link JSON, parsed once per process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..errors import KGError
from ..graph import KnowledgeGraph
from .nodelink import kg_from_document, maybe_gunzip, parse_json

__all__ = ["BundledDataset", "list_bundled", "bundled_resource", "bundled_kg"]


@dataclass(frozen=True)
class BundledDataset:
    """A knowledge graph and question set shipped inside the package (``graphtrail/data``)."""

    name: str
    description: str
    kg_file: str
    questions_file: str


_BUNDLED = {
    b.name: b
    for b in (
        BundledDataset(
            "countries",
            "Countries, capitals, regions, subregions, languages, currencies and borders "
            "(countryinfo, MIT), with 1-3 hop and comparison questions.",
            "countries.kg.json.gz",
            "countries.questions.jsonl",
        ),
        BundledDataset(
            "countries-demo",
            "The countries graph with a fixed dozen questions across kinds, for demos.",
            "countries.kg.json.gz",
            "countries-demo.questions.jsonl",
        ),
    )
}


def list_bundled() -> list[BundledDataset]:
    """The datasets that :func:`load_kg` and ``load_questions`` accept by name."""
    return list(_BUNDLED.values())


def bundled_resource(name: str, what: str) -> resources.abc.Traversable | None:
    """The packaged file for bundled dataset ``name`` (``what`` is ``"kg"`` or ``"questions"``), or ``None``."""
    dataset = _BUNDLED.get(name)
    if dataset is None:
        return None
    filename = dataset.kg_file if what == "kg" else dataset.questions_file
    return resources.files("graphtrail").joinpath("data", filename)


@functools.lru_cache(maxsize=4)
def _bundled_document(filename: str) -> dict[str, Any]:
    # Parsed once per process; every load_kg call still builds a fresh graph from it.
    resource = resources.files("graphtrail").joinpath("data", filename)
    try:
        raw = resource.read_bytes()
    except FileNotFoundError:  # pragma: no cover - a broken install
        raise KGError(f"bundled file {filename} is missing; rebuild it with scripts/build_bundled_kg.py") from None
    return parse_json(maybe_gunzip(raw, filename), filename)


def bundled_kg(name: str) -> KnowledgeGraph:
    """A fresh graph built from bundled dataset ``name`` (a key of ``_BUNDLED``)."""
    dataset = _BUNDLED[name]
    return kg_from_document(_bundled_document(dataset.kg_file), dataset.kg_file)
