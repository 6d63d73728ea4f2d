"""The query set whose rankings on the bundled graph are pinned in data/bundled_search_rankings.json.gz.

The file was written with the full-scan search (before the index existed) by
``python -m tests.search_cases --write``; the indexed search must reproduce it
exactly (see tests/test_search_index.py).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

from graphtrail.agents import GraphFilter, load_kg, load_questions
from graphtrail.agents.tools import search_entity_records

RANKINGS = Path(__file__).parent / "data" / "bundled_search_rankings.json.gz"


def _typos(label: str) -> list[str]:
    if len(label) < 5:
        return []
    mid = len(label) // 2
    return [label[:mid] + label[mid + 1 :], label[: mid - 1] + label[mid] + label[mid - 1] + label[mid + 1 :], label.lower()]


def cases() -> list[tuple[str, str | None, str]]:
    """``(query, type, filter name)`` triples: every name and alias, typos of them, and every question."""
    kg = load_kg("countries")
    out: list[tuple[str, str | None, str]] = []
    for e in kg.entities():
        for label in (e.name, *e.aliases):
            out.append((label, None, ""))
            out += [(t, None, "") for t in _typos(label)]
        out.append((e.name, e.type, ""))
    out += [(q.question, None, "") for q in load_questions("countries")]
    out += [(w, None, "") for w in ("Congo", "Republic", "peso", "the USA", "What is", "Kenia", "saudi arabia share a border", "colombo", "east africa", "a", "")]
    for name in ("hide", "mask", "text"):
        out += [(w, None, name) for w in ("Kenya", "Nairobi", "masked entity", "Kenyan shilling", "Swahili", "E0001")]
    return out


def filters() -> dict[str, GraphFilter]:
    kenya = {"E0758", "E0197"}
    return {
        "": GraphFilter(),
        "hide": GraphFilter(hidden=frozenset(kenya)),
        "mask": GraphFilter(masked=frozenset(kenya)),
        "text": GraphFilter(text_blocked=frozenset(kenya)),
    }


def rankings() -> list[list[Any]]:
    kg = load_kg("countries")
    views = {name: kg.filtered(f) for name, f in filters().items()}
    rows = []
    for query, type_, fname in cases():
        hits = search_entity_records(views[fname], query, type=type_, limit=8)
        rows.append([query, type_, fname, [[r.id, r.name, score, label] for r, score, label in hits]])
    return rows


if __name__ == "__main__":
    if "--write" in sys.argv:
        RANKINGS.write_bytes(gzip.compress(json.dumps(rankings(), ensure_ascii=False).encode(), mtime=0))
        print("wrote", RANKINGS)
