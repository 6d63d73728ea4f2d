"""The model-input check: did a hidden (or masked) entity reach the model in an ablation run?

The filter works on tool outputs by reading their shape; this check does not
trust it. It reads what the model was actually given (:mod:`.seen`) and looks
for each hidden entity's id, name and aliases, and each masked entity's name
and aliases (a mask keeps the id by design), as whole words after Unicode
normalisation (NFKD, accents dropped, case folded). A hit is a leak, reported
by the channel it came through:

- ``tool 'name'``: a tool that ran in this run returned it (the filter missed it);
- ``cached tool result 'name'``: a tool message no tool run of this run produced
  (a caching middleware, or a tool run the evaluation could not see);
- ``system prompt``: e.g. a ``@dynamic_prompt`` that writes graph facts;
- ``message from a node that is not a tool``: any other message a node added;
- ``prompt``: a completion model's prompt.

Not read: the model's own messages (what it wrote, including tool-call
arguments, is not graph access), the question text, and in a tool message the
tool call's own string arguments (a tool answering "no film named Inception"
echoes the question, it reveals nothing). Artifacts the model never reads are
not read either. Ids shorter than two characters or without a letter, names
shorter than three characters and bare numbers are not matched: they would hit
counts and years.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ...kg.views import GraphFilter
from .seen import SeenInputs

__all__ = ["EntityNames", "input_leaks", "normalize", "describe_leaks"]

SYSTEM = "system prompt"
NODE = "message from a node that is not a tool"
PROMPT = "prompt"


def normalize(text: str, fold: bool = True) -> str:
    """NFKD, combining marks dropped, whitespace runs made one space; case folded unless ``fold=False``."""
    decomposed = unicodedata.normalize("NFKD", text)
    if not decomposed.isascii():
        decomposed = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join((decomposed.casefold() if fold else decomposed).split())


class EntityNames:
    """Names and aliases of entities, from the KG (when given) and from what baseline runs revealed."""

    def __init__(self, kg: Any = None, revealed: Mapping[str, Iterable[str]] | None = None) -> None:
        self.kg = kg
        self.revealed = {k: tuple(v) for k, v in (revealed or {}).items()}

        self._visible: dict[str, tuple[str, ...]] | None = None

    def visible(self) -> dict[str, tuple[str, ...]]:
        """Names and aliases of every entity the baselines revealed (computed once)."""
        if self._visible is None:
            self._visible = {eid: self.of(eid) for eid in self.revealed}
        return self._visible

    def of(self, eid: str) -> tuple[str, ...]:
        names = list(self.revealed.get(eid, ()))
        record = self.kg.entity(eid) if self.kg is not None else None
        if record is not None:
            names += [record.name, *record.aliases]
        return tuple(dict.fromkeys(n for n in names if isinstance(n, str) and n and n != eid))


def _id_term(eid: str) -> bool:
    return len(eid) >= 2 and any(c.isalpha() for c in eid)


def _name_term(name: str) -> bool:
    return len(name) >= 3 and not name.replace(".", "").replace(",", "").isdigit()


def _exact(name: str) -> bool:
    """Codes and short names ("AND", "US", "Kim") are matched with their case: "and" is no leak of Andorra."""
    return len(name) < 4 or (name.isupper() and len(name) <= 5)


class _Terms:
    """The words to look for: normalised term -> entity id (``None``: a visible name that contains one, a shield)."""

    def __init__(self) -> None:
        self.folded: dict[str, str | None] = {}
        self.exact: dict[str, str | None] = {}

    def add(self, term: str, eid: str | None, exact: bool) -> None:
        (self.exact if exact else self.folded).setdefault(normalize(term, fold=not exact), eid)

    def patterns(self) -> list[tuple[re.Pattern[str], dict[str, str | None], bool]]:
        out = []
        for terms, fold in ((self.folded, True), (self.exact, False)):
            if terms:
                alternation = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
                out.append((re.compile(r"(?<![\w-])(?:" + alternation + r")(?![\w-])"), terms, fold))
        return out


def _terms(graph_filter: GraphFilter, names: Callable[[str], Sequence[str]], visible: Mapping[str, Iterable[str]]) -> _Terms:
    """Hidden entities' ids and names, masked entities' names; and visible names that contain one of them.

    A visible name containing a hidden one ("Chinese Yuan" when "Chinese" is hidden,
    "Papua New Guinea" when "Guinea" is) is matched first, so it does not count.
    """
    terms = _Terms()
    for eid in sorted(graph_filter.hidden):
        if _id_term(eid):
            terms.add(eid, eid, True)
        for name in names(eid):
            if _name_term(name):
                terms.add(name, eid, _exact(name))
    for eid in sorted(graph_filter.masked):
        for name in names(eid):
            if _name_term(name):
                terms.add(name, eid, _exact(name))
    if not (terms.folded or terms.exact):
        return terms
    patterns = terms.patterns()
    filtered = graph_filter.hidden | graph_filter.masked
    for eid, shown in visible.items():
        if eid in filtered:
            continue
        for name in shown:
            if any(p.search(normalize(name, fold)) for p, _, fold in patterns):
                terms.add(name, None, _exact(name))
    return terms


#: A visible entity's own description is its property: deleting another entity does
#: not rewrite it, so a name in it is no leak (JSON ``"description": "..."`` fields).
_DESCRIPTION = re.compile(r'"description"\s*:\s*"(?:[^"\\]|\\.)*"')


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: the text ones, and anything else as JSON
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                parts.append(_dumps(block))
        return "\n".join(parts)
    return _dumps(content)


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _string_args(args: Any) -> list[str]:
    out: list[str] = []
    stack = [args]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if len(value) >= 3:
                out.append(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return out


def _channels(seen: SeenInputs, question: str) -> Iterable[tuple[str, str]]:
    """(channel, text) of every distinct message the model was given, minus what it cannot learn from."""
    done: set[tuple[str, str]] = set()
    for messages in seen.messages:
        call_args: dict[str, list[str]] = {}
        for message in messages:
            kind = getattr(message, "type", None)
            if kind in ("ai", "AIMessageChunk"):
                for call in getattr(message, "tool_calls", None) or []:
                    if call.get("id"):
                        call_args[call["id"]] = _string_args(call.get("args"))
                continue
            text = _text(getattr(message, "content", message))
            if kind == "tool":
                name = getattr(message, "name", None) or "tool"
                call_id = getattr(message, "tool_call_id", None)
                ran = (call_id in seen.tool_call_ids) or seen.tool_names.get(name, 0) > 0
                channel = f"tool '{name}'" if ran else f"cached tool result '{name}'"
                for arg in sorted(call_args.get(call_id, ()), key=len, reverse=True):
                    text = text.replace(arg, " ")
            elif kind == "system":
                channel = SYSTEM
            else:
                channel = NODE
            if question:
                text = text.replace(question, " ")
            if text.strip() and (channel, text) not in done:
                done.add((channel, text))
                yield channel, text
    for prompt in seen.prompts:
        text = prompt.replace(question, " ") if question else prompt
        if (PROMPT, text) not in done:
            done.add((PROMPT, text))
            yield PROMPT, text


def input_leaks(seen: SeenInputs, graph_filter: GraphFilter, names: Callable[[str], Sequence[str]], question: str,
                visible: Mapping[str, Iterable[str]] | None = None) -> dict[str, list[str]]:
    """``{channel: [entity ids]}`` of the hidden/masked entities the model was given in this run; ``{}`` if none.

    ``visible``: names of entities the tools may show (id -> names), to tell a
    visible name that contains a hidden one from the hidden one.
    """
    patterns = _terms(graph_filter, names, visible or {}).patterns()
    if not patterns:
        return {}
    found: dict[str, set[str]] = {}
    for channel, text in _channels(seen, question):
        text = _DESCRIPTION.sub(" ", text) if '"description"' in text else text
        hits: set[str] = set()
        for pattern, terms, fold in patterns:
            for m in pattern.finditer(normalize(text, fold)):
                eid = terms[m.group(0)]
                if eid is not None:
                    hits.add(eid)
        if hits:
            found.setdefault(channel, set()).update(hits)
    return {channel: sorted(ids) for channel, ids in sorted(found.items())}


def describe_leaks(leaks: Mapping[str, Iterable[str]]) -> str:
    """``"tool 'search' (m1, d1); system prompt (d1)"``."""
    return "; ".join(f"{channel} ({', '.join(sorted(ids))})" for channel, ids in sorted(leaks.items()))
