"""The model-input check for withheld text: did a text-blocked (or masked, or hidden) entity's description reach the model?

``text_only_isolation`` keeps every entity's structure and withholds its
description; a mask withholds it too. Names and ids say nothing about that, so
:mod:`.leaks` also looks for the descriptions themselves in what the model was
given, with one rule:

- a description is read as words (Unicode-normalised, case folded, as names are)
  and cut into runs of :data:`SPAN_WORDS` (8) consecutive words, one every
  :data:`STRIDE` (4) words and one at its end: a quoted passage of 11 words or
  more, or a whole description of 8 to 10, always holds one (shorter passages
  are caught when they hold one);
- a span found in a model input (read at every word) gives its entities away
  when every entity whose description holds it (anywhere) is withheld by the
  condition (an entity the condition keeps may be what the model is reading),
  and it is not in the question;
- a description of :data:`MIN_WORDS` (3) to 7 words is looked for whole: shorter
  than a span, it is its own fingerprint ("Polish physicist who discovered
  polonium."); under 3 words ("A film.") it is ordinary text and is not looked for.

Eight words in the same order is far beyond chance agreement between unrelated
texts, and short enough that a prompt quoting one sentence of a description is
caught. The index (sampled span -> entities) is built once per evaluation from
the KG's descriptions and those the baseline runs' tool outputs showed
(:func:`revealed_descriptions`); each distinct text is read once, and
only words that begin some span are looked at further, so the cost stays near
one dict lookup per word.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SPAN_WORDS", "MIN_WORDS", "DescriptionSpans", "revealed_descriptions"]

#: Words in a description span: long enough to be a fingerprint, short enough to catch one quoted sentence.
SPAN_WORDS = 8
#: The fewest words of a description looked for (whole, when it is shorter than a span).
MIN_WORDS = 3
#: Spans are indexed every STRIDE words (and at each description's end), so that the index stays a
#: quarter of the descriptions' size: any passage of SPAN_WORDS + STRIDE - 1 (11) words holds one.
STRIDE = 4
_WORD = re.compile(r"\w+")
_TEXT_CACHE_SIZE = 20_000
#: Keys that name an entity in a JSON tool output (as the output filter reads them), and its description.
_ID_KEYS = ("id", "entity_id", "node_id", "@id")
_DESCRIPTION_KEY = "description"
#: Tool outputs longer than this are not parsed for descriptions (an input bound).
_MAX_OUTPUT_CHARS = 1_000_000


def revealed_descriptions(trajectories: Iterable[Any]) -> dict[str, list[str]]:
    """``{entity id: [descriptions]}`` the baseline runs' tool outputs showed, for evaluations without a KG.

    Reads JSON outputs (a document, or one per line) for objects with an id key and a
    ``"description"`` string, at any depth. Outputs recorded without content are skipped.
    """
    found: dict[str, list[str]] = {}
    for trajectory in trajectories:
        for step in getattr(trajectory, "steps", ()):
            output = getattr(step, "output", None)
            if not isinstance(output, str) or len(output) > _MAX_OUTPUT_CHARS or _DESCRIPTION_KEY not in output:
                continue
            for document in _documents(output):
                stack = [document]
                while stack:
                    value = stack.pop()
                    if isinstance(value, dict):
                        eid = next((value[k] for k in _ID_KEYS if isinstance(value.get(k), (str, int))), None)
                        text = value.get(_DESCRIPTION_KEY)
                        if eid is not None and isinstance(text, str) and text and text not in found.get(str(eid), ()):
                            found.setdefault(str(eid), []).append(text)
                        stack.extend(value.values())
                    elif isinstance(value, list):
                        stack.extend(value)
    return found


def _documents(output: str) -> list[Any]:
    try:
        return [json.loads(output)]
    except ValueError:
        out = []
        for line in output.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out


def words(text: str) -> list[str]:
    """NFKD, combining marks dropped, case folded, as words."""
    decomposed = unicodedata.normalize("NFKD", text)
    if not decomposed.isascii():
        decomposed = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _WORD.findall(decomposed.casefold())


class DescriptionSpans:
    """Every :data:`SPAN_WORDS`-word span of every known description (and every short description whole),
    and the entities whose description holds it."""

    def __init__(self, kg: Any = None, descriptions: Mapping[str, Iterable[str]] | None = None) -> None:
        self.kg = kg
        self.extra = {k: tuple(v) for k, v in (descriptions or {}).items()}
        self._index: dict[str, frozenset[str]] | None = None
        self._starts: frozenset[str] = frozenset()
        self._widths: tuple[int, ...] = ()  # the span widths indexed, widest first
        self._texts: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {}

    def texts(self, eid: str) -> tuple[str, ...]:
        """The descriptions known for ``eid`` (its KG record's, then any the caller knows)."""
        record = self.kg.entity(eid) if self.kg is not None else None
        own = (record.description,) if record is not None and record.description else ()
        return tuple(dict.fromkeys((*own, *(t for t in self.extra.get(eid, ()) if isinstance(t, str) and t))))

    def _descriptions(self) -> Iterable[tuple[str, str]]:
        if self.kg is not None:
            for record in self.kg.entities():
                if record.description:
                    yield record.id, record.description
        for eid, texts in self.extra.items():
            for text in texts:
                if isinstance(text, str) and text:
                    yield eid, text

    def index(self) -> dict[str, frozenset[str]]:
        """Sampled span -> every entity whose description holds it (anywhere, not only where it was sampled)."""
        if self._index is None:
            sampled: set[str] = set()
            for _, text in self._descriptions():
                tokens = words(text)
                last = len(tokens) - SPAN_WORDS
                if last < 0 and len(tokens) >= MIN_WORDS:
                    sampled.add(" ".join(tokens))  # a short description: looked for whole
                for i in {*range(0, last + 1, STRIDE), last} if last >= 0 else ():
                    sampled.add(" ".join(tokens[i:i + SPAN_WORDS]))
            starts = {span.split(" ", 1)[0] for span in sampled}
            widths = sorted({span.count(" ") + 1 for span in sampled}, reverse=True)
            owners: dict[str, set[str]] = {}
            for eid, text in self._descriptions():  # a kept entity sharing the span anywhere makes it no fingerprint
                tokens = words(text)
                for i, token in enumerate(tokens):
                    if token in starts:
                        for width in widths:
                            span = " ".join(tokens[i:i + width])
                            if i + width <= len(tokens) and span in sampled:
                                owners.setdefault(span, set()).add(eid)
            self._index = {span: frozenset(ids) for span, ids in owners.items()}
            self._starts = frozenset(span.split(" ", 1)[0] for span in self._index)
            self._widths = tuple(widths)
        return self._index

    def found(self, text: str) -> tuple[tuple[str, frozenset[str]], ...]:
        """(span, entities whose description holds it) for every indexed span in ``text`` (cached per text)."""
        hits = self._texts.get(text)
        if hits is None:
            index = self.index()
            tokens = words(text) if index else []
            starts, widths = self._starts, self._widths
            out: dict[str, frozenset[str]] = {}
            for i, token in enumerate(tokens):
                if token in starts:
                    for width in widths:
                        if i + width <= len(tokens):
                            span = " ".join(tokens[i:i + width])
                            owners = index.get(span)
                            if owners is not None:
                                out[span] = owners
            hits = tuple(out.items())
            if len(self._texts) >= _TEXT_CACHE_SIZE:
                self._texts.clear()
            self._texts[text] = hits
        return hits

    def leaked(self, text: str, withheld: frozenset[str] | set[str], question: str = "") -> set[str]:
        """The withheld entities whose description ``text`` quotes (a span also in ``question`` does not count)."""
        out: set[str] = set()
        asked: str | None = None
        for span, owners in self.found(text):
            if owners <= withheld:
                if asked is None:
                    asked = " " + " ".join(words(question)) + " "
                if f" {span} " not in asked:
                    out |= owners
        return out
