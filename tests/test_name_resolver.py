"""The triples loader's name resolver (kg/loaders/triples.py): an end that is no id is the one entity whose name it casefolds to.

The oracle is what the exact reader does: a dict from each casefolded name to
its entity's row, ``None`` for a name two entities share.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from graphtrail.kg.loaders.triples import _name_resolver

_WORDS = ["Paris", "paris", "PARIS", "Straße", "STRASSE", "Łódź", "łódź", "Σίσυφος", "ΣΊΣΥΦΟΣ", "İstanbul", "x", "", "ﬁne", "fine"]


def _oracle(names: list[str], values: list[str]) -> list[int]:
    rows: dict[str, int | None] = {}
    for i, name in enumerate(names):
        key = name.casefold()
        rows[key] = None if key in rows else i
    return [-1 if rows.get(v.casefold()) is None else rows[v.casefold()] for v in values]  # type: ignore[misc]


@pytest.mark.parametrize("seed", range(40))
def test_ends_resolve_to_the_one_entity_of_their_name(seed: int) -> None:
    rng = random.Random(seed)
    names = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 2))) for _ in range(rng.choice([1, 5, 60]))]
    values = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 2))) for _ in range(rng.choice([1, 30, 200]))]
    for table in (pa.array(names), names, lambda: pa.array(names, type=pa.large_string())):
        assert _name_resolver(table)(pa.array(values)).tolist() == _oracle(names, values)


def test_no_names_resolve_nothing() -> None:
    assert _name_resolver([])(pa.array(["a", "b"])).tolist() == [-1, -1]
