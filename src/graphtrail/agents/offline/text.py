"""How the offline model compares words: folded, normalised names and relation labels, and label resemblance.

Pure string functions, no state: the grammar (grammar.py) and the policy
(policy.py) read names and relation words through these, so "Zurich" finds
"Zürich" and "placeOfBirth", "place_of_birth" and "the place of birth" agree.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from rapidfuzz import fuzz

from ...kg.fields import DEFAULT_RELATION

_MIN_LABEL_SCORE = 60.0
_ARTICLES = {"the", "a", "an"}


@functools.lru_cache(maxsize=8192)  # pure, and replays fold the same names and messages again and again
def _fold(text: str) -> str:
    """Case- and accent-folded text: a question that writes "Zurich" or "Sao Paulo" still names "Zürich", "São Paulo"."""
    decomposed = unicodedata.normalize("NFKD", text.replace("’", "'"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()



def _words(text: str) -> list[str]:
    return list(_words_memo(text))  # a fresh list: callers may change it


@functools.lru_cache(maxsize=8192)
def _words_memo(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[\w'-]+", _fold(text)))



@functools.lru_cache(maxsize=8192)
def _norm(text: str) -> str:
    """Lower case, punctuation dropped, leading article dropped: how names are compared."""
    words = _words(text)
    while words and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


@functools.lru_cache(maxsize=8192)
def _label_text(label: str) -> str:
    return label.replace("_", " ").replace("-", " ").lower()


@functools.lru_cache(maxsize=8192)
def _label_key(text: str) -> tuple[str, ...]:
    """A relation label or phrase as comparable words: "placeOfBirth", "place_of_birth", "the place of birth" agree."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return tuple(w for w in _words(_label_text(spaced)) if w not in _ARTICLES)


_WH_WORDS = {"what", "which", "who", "whom", "whose", "where"}
#: Labels that name no relation: the loaders' default for edges without one, and its usual spellings.
_UNNAMED = {_label_key(DEFAULT_RELATION), ("related",), ("relatedto",), ("related", "with")}
#: Words that carry no meaning of their own inside a relation label.
_LABEL_GLUE = {"of", "in", "by", "at", "on", "to", "for", "with", "from", "is", "the", "a", "an"}


@functools.lru_cache(maxsize=8192)
def _label_score(phrase: str, label: str) -> float:
    """How much ``label`` reads like the question's relation words (rapidfuzz WRatio, 0-100)."""
    return fuzz.WRatio(phrase, _label_text(label))


@functools.lru_cache(maxsize=8192)
def _resembles(phrase: str, label: str) -> bool:
    """Whether the question's relation words plausibly name ``label``.

    The same label, a near spelling ("capitol"), or a shared content word,
    one inside the other ("country" / "country of citizenship", "birthplace" /
    "place of birth"). Anything else (a fuzzy score over shared letters) is not
    a reading of the question.
    """
    words, label_words = _label_key(phrase), _label_key(label)
    if words == label_words or fuzz.ratio(" ".join(words), " ".join(label_words)) >= 80:
        return True
    content = [w for w in words if w not in _LABEL_GLUE and w not in _WH_WORDS and len(w) >= 3]
    label_content = [w for w in label_words if w not in _LABEL_GLUE and len(w) >= 3]
    # one word inside the other ("birthplace" / "birth"), or one stem ("directed" / "director")
    return any(w in lw or lw in w or (len(w) >= 5 and len(lw) >= 5 and w[:5] == lw[:5]) for w in content for lw in label_content)
