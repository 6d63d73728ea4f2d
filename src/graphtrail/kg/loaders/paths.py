"""What a graph source's path says: which loader reads it, and the graph's name.

:func:`detect_format` looks at the suffix, then (for unknown suffixes) at the
first bytes; :func:`graph_name` is the file name without the graph suffixes, the
name a loaded graph gets.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from ..errors import KGError

__all__ = ["PathLike", "detect_format", "graph_name"]

PathLike = str | os.PathLike[str]


def detect_format(path: PathLike) -> str:
    """``"graphrag"``, ``"node-link"``, ``"graphml"`` or ``"triples"`` for an existing path.

    A file whose suffix names no format is still read when its first bytes are JSON or XML;
    otherwise it is refused (:class:`KGError`) rather than misread as triples.
    """
    p = Path(path)
    if p.is_dir():
        return "graphrag"
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    if last == ".json":
        return "node-link"
    if last in (".graphml", ".xml"):
        return "graphml"
    if last in (".tsv", ".csv", ".txt", ".tab"):
        return "triples"
    head = b""
    if p.is_file():
        with p.open("rb") as fh:
            head = fh.read(4096)
        if head[:2] == b"\x1f\x8b":
            try:
                with gzip.open(p) as fh:
                    head = fh.read(4096)
            except (OSError, EOFError):
                head = b""
    stripped = head.lstrip()
    if stripped.startswith(b"{"):
        return "node-link"
    if stripped.startswith(b"<"):
        return "graphml"
    if last and last not in (".kg",):  # a suffix no format has (README.md): say so, rather than fail to read it as triples
        raise KGError(
            f"{p.name}: unknown graph format ({last}): expected one of .tsv, .csv, .txt, .tab, .json, "
            ".json.gz, .graphml, .xml, .lbug, or a GraphRAG output folder"
        )
    return "triples"


def graph_name(path: Path) -> str:
    """The file name without its graph suffixes (``countries.kg.json.gz`` -> ``countries``)."""
    stem = path.name
    for suffix in (".gz", ".json", ".graphml", ".xml", ".tsv", ".csv", ".txt", ".tab", ".kg"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem or path.name
