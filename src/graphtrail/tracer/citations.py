"""Citations as agents write them in prose, resolved to entity ids.

An agent built from the LangChain docs answers "The answer is Christopher
Nolan." and cites, if at all, by naming things: ``[Christopher Nolan]``,
``(source: p1)``, a closing "Sources: p1, p2" list, or just the names in the
sentence. The tracer has already read explicit citations (a ``submit_answer``
call, ``[E:id]`` markers, a ``citation_parser``); when those give none and the
mode is ``"names"``, this module reads the answer text against the entities
the run's tool outputs revealed. The rule (docs/ablations.md, "How citations
are read"):

1. explicit references: ``(source: X)`` / ``(sources: X, Y)``, a trailing
   ``Sources:`` / ``References:`` / ``Citations:`` list, and ``[X]`` brackets.
   ``X`` resolves to a visited entity by id, else by name or alias (case,
   accents and punctuation ignored). An id-like reference (one word) in a
   source list that matches no visited entity is kept as is: it is cited, and
   the report shows it as unsupported. Source lists are removed from the
   answer; a bracket around a name is unwrapped, one around an id removed;
2. then every visited entity whose name or alias appears in the remaining
   answer as whole words, longest names first (so "The Dark Knight Rises"
   does not also cite "The Dark Knight"). Names shorter than 3 characters and
   bare numbers are not matched: they occur in prose by accident.

Citations keep that order (explicit ones first, then by position in the text).
The tracer does not import :mod:`graphtrail.agents`; it knows entities only
from the steps it recorded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Union

from ._safety import warn_once

__all__ = ["CitationMode", "CITATION_MODES", "check_citation_mode", "resolve_citations", "known_names"]

CitationResolver = Callable[[str, Mapping[str, Sequence[str]]], Iterable[str]]
"""``fn(answer, entities)`` -> cited ids; ``entities`` maps each visited id to its names and aliases."""

CitationMode = Union[Literal["markers", "names"], CitationResolver]
CITATION_MODES = ("markers", "names")

_SOURCE_PAREN = re.compile(
    r"[ \t]*\(\s*(?:sources?|refs?|references?|citations?|cited|see)\s*[:=]\s*([^()\n]*?)\s*\)", re.IGNORECASE
)
_SOURCES_TRAILER = re.compile(
    r"(?:\A|(?<=\n)|(?<=[.!?)] ))[ \t]*[*_#]*[ \t]*(?:sources?|references?|citations?)[*_]*[ \t]*:[*_]*(?P<body>.*)\Z",
    re.IGNORECASE | re.DOTALL,
)
_BRACKET = re.compile(r"\[([^\[\]\n]{1,120})\](?!\()")
_SPLIT_REFS = re.compile(r"[,;\n]+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\[\d+\])\s*")
_PUNCT = re.compile(r"[^\w\s]|_")


def check_citation_mode(mode: Any) -> CitationMode:
    """``mode`` if it is ``"markers"``, ``"names"`` or a callable; else a ``ValueError`` saying what is allowed."""
    if mode in CITATION_MODES or callable(mode):
        return mode  # type: ignore[no-any-return]
    raise ValueError(f"citations must be 'markers', 'names' or a callable fn(answer, entities) -> ids, got {mode!r}")


def _norm(text: str) -> str:
    value = unicodedata.normalize("NFKD", text)
    value = "".join(ch for ch in value if not unicodedata.combining(ch)).casefold()
    return " ".join(_PUNCT.sub(" ", value).split())


def known_names(entities: Iterable[Any]) -> dict[str, list[str]]:
    """``{id: [name, *aliases]}`` over entity refs (anything with ``id``/``name``, optional ``aliases``), first seen first."""
    out: dict[str, list[str]] = {}
    for ent in entities:
        names = out.setdefault(ent.id, [])
        for label in (getattr(ent, "name", None), *(getattr(ent, "aliases", None) or ())):
            if label and label not in names:
                names.append(label)
    return out


def _matchable(name: str) -> str | None:
    norm = _norm(name)
    if len(norm) < 3 or norm.replace(" ", "").isdigit():
        return None
    return norm


def _clean(text: str) -> str:
    text = re.sub(r"[ \t]{2,}", " ", text)
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", text).strip()


def resolve_citations(answer: str, entities: Mapping[str, Sequence[str]], mode: CitationMode = "names") -> tuple[str, list[str]]:
    """The answer without its source lists, and the ids it cites (see the module docstring).

    ``entities``: the visited entities, ``{id: [name, *aliases]}`` in visit
    order. ``mode="markers"`` resolves nothing; a callable is called as
    ``mode(answer, entities)`` (one that raises is logged once and cites nothing).
    """
    if mode == "markers" or not answer:
        return answer, []
    if callable(mode):
        try:
            ids = [str(i) for i in mode(answer, entities) if isinstance(i, (str, int)) and not isinstance(i, bool)]
        except Exception as exc:  # noqa: BLE001 - a user resolver never breaks the traced app
            warn_once("citations:callable", "graphtrail: the citations resolver raised %r; the run cites nothing", exc)
            return answer, []
        return answer, list(dict.fromkeys(ids))

    by_name: dict[str, str] = {}
    for eid, names in entities.items():
        for label in names:
            norm = _matchable(label)
            if norm is not None:
                by_name.setdefault(norm, eid)

    def lookup(ref: str) -> tuple[str | None, str]:
        """(id, how): how is "id" or "name"."""
        ref = ref.strip().strip("'\"`*")
        if ref in entities:
            return ref, "id"
        norm = _norm(ref)
        if norm in by_name:
            return by_name[norm], "name"
        return None, ""

    cited: list[str] = []
    text = answer
    # 1a. a trailing "Sources:" list
    trailer = _SOURCES_TRAILER.search(text)
    if trailer is not None and trailer.start() > 0:
        for raw in _SPLIT_REFS.split(trailer.group("body")):
            ref = _BULLET.sub("", raw).strip().strip("[]").strip()
            eid, _ = lookup(ref)
            if eid is not None:
                cited.append(eid)
            elif ref and " " not in ref and len(ref) <= 80:
                cited.append(ref)  # an id the run never revealed: cited, and unsupported
        text = text[: trailer.start()]

    # 1b. "(source: X, Y)"
    def source(match: re.Match[str]) -> str:
        for ref in _SPLIT_REFS.split(match.group(1)):
            ref = ref.strip().strip("[]")
            eid, _ = lookup(ref)
            if eid is not None:
                cited.append(eid)
            elif ref and " " not in ref:
                cited.append(ref)
        return ""

    text = _SOURCE_PAREN.sub(source, text)

    # 1c. "[Christopher Nolan]" / "[p1]"
    def bracket(match: re.Match[str]) -> str:
        inner = match.group(1)
        eid, how = lookup(inner)
        if eid is None:
            return match.group(0)
        cited.append(eid)
        return inner if how == "name" else ""

    text = _clean(_BRACKET.sub(bracket, text))

    # 2. names and aliases as whole words, longest first
    if by_name:
        norm_text = _norm(text)
        pattern = re.compile(
            r"(?<!\w)(?:" + "|".join(re.escape(n) for n in sorted(by_name, key=len, reverse=True)) + r")(?!\w)"
        )
        for match in pattern.finditer(norm_text):
            cited.append(by_name[match.group(0)])
    return (text or answer), list(dict.fromkeys(cited))
