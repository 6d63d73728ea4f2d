"""Names are entities too: tool arguments that name a hidden entity, and masked names deep in outputs.

- A tool keyed by names (``movie_info(title="Inception")``) finds a hidden
  entity when the model asks for it by the name in the question. With the
  entity really gone, the tool would answer what it answers for something
  that is not there. So the call runs with that argument replaced by a name no
  graph holds, and the replacement is put back in the output: a tool that
  says "No movie named Inception." says exactly that.
- Masking replaces a masked entity's name everywhere in the output, in nested
  values too (a Neo4j ``record.data()`` relationship tuple, a list of names).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ....kg.relabel import placeholder
from ....kg.views import GraphFilter
from .leaks import normalize
from .withheld import map_strings as _map_strings

__all__ = ["MISSING", "absent_arguments", "restore", "mask_everywhere"]

#: What a hidden entity's name becomes in a tool call's arguments: a name no graph holds.
MISSING = "graphtrail-absent-entity-7f3a"


def absent_arguments(args: tuple[Any, ...], kwargs: dict[str, Any], graph_filter: GraphFilter,
                     names: Mapping[str, str], known: Any = None) -> tuple[tuple[Any, ...], dict[str, Any], list[str]] | None:
    """``(args, kwargs, replaced)`` with every string argument naming a hidden entity (id or name) made absent.

    A masked entity's real name is made absent too: masking renames it, so the
    data no longer holds that name and a lookup by it finds nothing (its id,
    which a mask keeps, still finds it). ``names``: id -> the name a baseline
    saw; ``known``: the evaluation's :class:`~.leaks.EntityNames` (every KG name
    and alias), looked up per argument.
    """
    hidden, masked = graph_filter.hidden, graph_filter.masked
    if not hidden and not masked:
        return None
    wanted = {normalize(e) for e in hidden}
    wanted |= {normalize(n) for e, n in names.items() if (e in hidden or e in masked) and isinstance(n, str) and n}
    replaced: list[str] = []

    def gone(value: str) -> bool:
        if normalize(value) in wanted:
            return True
        if known is None:
            return False
        hits = named(known, value)  # a name an entity the condition keeps also bears still finds that one
        return bool(hits) and all((eid in hidden) or (eid in masked and not is_id) for eid, is_id in hits)

    def swap(value: Any) -> Any:
        if isinstance(value, str) and value.strip() and gone(value):
            replaced.append(value)
            return MISSING
        return value

    new_args = tuple(swap(a) for a in args)
    new_kwargs = {k: swap(v) for k, v in kwargs.items()}
    return (new_args, new_kwargs, replaced) if replaced else None


def named(known: Any, value: str) -> tuple[tuple[str, bool], ...]:
    """The ``(entity id, by its id)`` pairs whose id, name or alias is all of ``value`` (the phrase index of :mod:`.leaks`)."""
    from .leaks import _key

    folded, exact = known.index()
    return (*folded.get(_key(value, True), ()), *exact.get(_key(value, False), ()))


def restore(output: Any, replaced: list[str]) -> Any:
    """``output`` with :data:`MISSING` put back as the argument it replaced (the tool's own echo)."""
    original = replaced[0]
    return _map_strings(output, lambda s: s.replace(MISSING, original) if MISSING in s else s)


def mask_everywhere(output: Any, graph_filter: GraphFilter, names: Mapping[str, str]) -> Any:
    """Every whole-word occurrence of a masked entity's name, anywhere in ``output``, becomes its placeholder."""
    terms = {n: placeholder(graph_filter, e, n) for e, n in names.items()
             if e in graph_filter.masked and isinstance(n, str) and len(n) >= 3}
    if not terms:
        return output
    pattern = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)) + r")(?![\w-])")
    return _map_strings(output, lambda s: pattern.sub(lambda m: terms[m.group(0)], s))
