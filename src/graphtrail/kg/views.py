"""Which entities the graph tools may show, for the duration of one agent run.

Ablation replays hide or mask entities *at the tool-response layer*: the agent
code is unchanged, and the tools behave as if the graph were different. The
filter lives in a :class:`contextvars.ContextVar` so that concurrent replays
(threads or asyncio tasks, each with its own copied context) see their own
condition and never each other's.

graphtrail's own graph tools read :func:`active_filter` and query a filtered
view of the :class:`~graphtrail.kg.KnowledgeGraph`; the evaluators' generic
tool wrapper reads the same variable to filter a user's tool outputs.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["GraphFilter", "active_filter", "use_filter", "MASK_PLACEHOLDER", "masked_key", "id_spells_name",
           "note_source_read", "counting_source_reads"]

#: What a masked entity's name, description and text become. The entity id is
#: appended so that distinct masked entities stay distinct, and nothing of the
#: original wording leaks.
MASK_PLACEHOLDER = "[masked entity]"

_WORDS = re.compile(r"[^\W_]+")


def masked_key(entity_id: str) -> str:
    """A masked entity's placeholder when its id spells its name: the placeholder and a digest of the id,
    which does not spell the name (and which the factory route reads back as the entity)."""
    return f"{MASK_PLACEHOLDER} {hashlib.blake2b(entity_id.encode('utf-8'), digest_size=5).hexdigest()}"


def id_spells_name(entity_id: object, name: object) -> bool:
    """Whether ``"[masked entity] <id>"`` would spell the entity's name: the id's words (letters and digits;
    case, spaces, underscores, hyphens and punctuation aside) hold the name's words as a run.

    ``"Lise Meitner"``, ``"lise  meitner"``, ``"Lise_Meitner"``, ``"dbr:Lise_Meitner"`` and
    ``"http://dbpedia.org/resource/Lise-Meitner"`` all spell ``"Lise Meitner"``; ``"Q42"`` does not spell
    ``"Douglas Adams"``. A lookup by the real name (a search, ``CONTAINS``, a full-text index) finds such a
    placeholder, so it is replaced by :func:`masked_key`. No name: nothing to spell.
    """
    if not isinstance(entity_id, str) or not isinstance(name, str):
        return False
    wanted = _WORDS.findall(name.casefold())
    if not wanted:
        return False
    words = _WORDS.findall(entity_id.casefold())
    n = len(wanted)
    return any(words[i:i + n] == wanted for i in range(len(words) - n + 1))


@dataclass(frozen=True)
class GraphFilter:
    """An ablation, as sets of entity ids: the one definition (docs/ablations.md, "What an ablation does").

    - ``hidden``: the entity is gone: out of search results and neighbour
      lists, with its edges and every text attributed to it.
    - ``masked``: id and edges stay; its name becomes :meth:`masked_name`, its
      text is withheld, and a lookup by its real name finds nothing.
    - ``text_blocked``: structure stays (id, name, type, edges); its text is withheld.

    Followed by the KnowledgeGraph's filtered views, ``kg.live.ablated_view``,
    ``graphtrail.evaluators.ablated`` (every data type) and the output filter.
    """

    hidden: frozenset[str] = field(default_factory=frozenset)
    masked: frozenset[str] = field(default_factory=frozenset)
    text_blocked: frozenset[str] = field(default_factory=frozenset)
    label: str = ""

    @property
    def is_empty(self) -> bool:
        return not (self.hidden or self.masked or self.text_blocked)

    def masked_name(self, entity_id: str, name: object = None) -> str:
        """What a masked entity is shown as: ``"[masked entity] <id>"``, or :func:`masked_key` when the id spells
        ``name`` (its real name; ``None``: not known), so that a lookup by the real name finds nothing."""
        if id_spells_name(entity_id, name):
            return masked_key(entity_id)
        return f"{MASK_PLACEHOLDER} {entity_id}"


_ACTIVE: contextvars.ContextVar[GraphFilter | None] = contextvars.ContextVar("graphtrail_graph_filter", default=None)


def active_filter() -> GraphFilter | None:
    """The filter in force in this context, or ``None`` (the real graph)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def use_filter(graph_filter: GraphFilter | None) -> Iterator[GraphFilter | None]:
    """Run the body with ``graph_filter`` applied to every graph tool response."""
    token = _ACTIVE.set(graph_filter)
    try:
        yield graph_filter
    finally:
        _ACTIVE.reset(token)


#: Reads of a data-source wrapper under a condition in this context (``[count]``); ``None`` outside a filtered run.
_SOURCE_READS: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("graphtrail_source_reads", default=None)


def note_source_read() -> None:
    """Called by the data-source wrappers (``ablated_view``, ``ablated_driver``, ...) when they apply a condition:
    a tool call that read one is exact (the evaluator's ``method``), whatever its output looks like."""
    box = _SOURCE_READS.get()
    if box is not None:
        box[0] += 1


@contextlib.contextmanager
def counting_source_reads(box: list[int]) -> Iterator[list[int]]:
    """Count data-source reads made inside the block in ``box[0]``."""
    token = _SOURCE_READS.set(box)
    try:
        yield box
    finally:
        _SOURCE_READS.reset(token)
