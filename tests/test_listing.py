"""A count and the names after it agree: every counted item is named or counted in "and N more"."""

from __future__ import annotations

import random
import re

from graphtrail._listing import listing


def _accounted(text: str) -> int:
    """How many items ``listing``'s text stands for: each name (×k counts k), plus "and N more"."""
    more = re.search(r" and (\d+) more$", text)
    names = text[: more.start()] if more else text
    shown = sum(int(m.group(1)) if (m := re.search(r" \(×(\d+)\)$", n)) else 1 for n in names.split(", ")) if names else 0
    return shown + (int(more.group(1)) if more else 0)


def test_repeated_names_are_counted_not_dropped() -> None:
    # the bug: "5 hidden influencers" naming 4, because one entity influenced two questions
    labels = ["Seoul", "South Korea", "Seoul", "Busan", "Jeju"]
    assert listing(labels, 4) == "Seoul (×2), South Korea, Busan, Jeju"
    assert _accounted(listing(labels, 4)) == 5
    assert listing(["a", "b", "c", "d", "e", "f"], 4) == "a, b, c, d and 2 more"
    assert listing([], 3) == ""


def test_every_item_is_accounted_for() -> None:
    rng = random.Random(7)
    for _ in range(500):
        labels = [rng.choice("ABCDEFGH") for _ in range(rng.randint(1, 30))]
        for limit in (1, 3, 5, 8):
            assert _accounted(listing(labels, limit)) == len(labels)
