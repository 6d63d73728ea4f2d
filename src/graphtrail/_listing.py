"""A count and the names it lists agree: "5 hidden influencers: A, B, C, D and 1 more".

A finding that says "5 hidden influencers" and names 4 reads as a bug, whether
the fifth was cut for space or folded into a repeated name. Every sentence that
counts things and names them builds the names here, so each counted item is
either named or counted in "and N more".

This module imports nothing from graphtrail.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["listing"]


def listing(labels: Iterable[str], limit: int = 5) -> str:
    """``labels`` (one per counted item) as "A, B (×2), C and 3 more".

    A label repeated is shown once with how many items it stands for, so the
    items shown plus "and N more" always add up to ``len(labels)``.
    """
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    groups = list(counts.items())
    shown = [f"{label} (×{n})" if n > 1 else label for label, n in groups[:limit]]
    rest = sum(n for _, n in groups[limit:])
    return ", ".join(shown) + (f" and {rest} more" if rest else "")
