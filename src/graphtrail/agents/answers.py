"""Answer checking: is a free-text answer one of a question's gold answers?

Models write "Nairobi.", "the Euro", "EUR" or "Yes, they do." for the same gold
answer, so exact string comparison would score wording instead of knowledge.
:func:`normalize_answer` folds case, accents, punctuation, articles and
whitespace (the SQuAD convention plus accent folding); :func:`is_correct`
also accepts a gold entity's id and, given the KG, any of its aliases.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.graph import KnowledgeGraph

__all__ = ["normalize_answer", "is_correct", "token_f1", "gold_labels"]

_MARKER = re.compile(r"\[E:([^\]]+)\]")
_PUNCT = re.compile(r"[^\w\s]|_")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ITEM_SPLIT = re.compile(r"[;,/\n]")
_AND_OR = re.compile(r"\s+(?:and|or|&)\s+", re.IGNORECASE)
_YES_NO = {"yes", "no"}


def normalize_answer(text: Any) -> str:
    """Lower-case, accent-free, punctuation-free text without articles and extra spaces."""
    if text is None:
        return ""
    value = unicodedata.normalize("NFKD", str(text))
    value = "".join(ch for ch in value if not unicodedata.combining(ch)).casefold()
    value = _PUNCT.sub(" ", value)
    value = _ARTICLES.sub(" ", value)
    return " ".join(value.split())


def gold_labels(question: Any, kg: KnowledgeGraph | None = None) -> list[str]:
    """Every string that counts as a correct answer: gold names, gold ids, and (with ``kg``) their names and aliases."""
    if isinstance(question, str):
        return [question]
    if isinstance(question, Mapping):
        answers, ids = list(question.get("answers") or []), list(question.get("answer_ids") or [])
    elif hasattr(question, "answers"):
        answers, ids = list(question.answers), list(getattr(question, "answer_ids", []) or [])
    else:
        answers, ids = [str(a) for a in question], []
    labels = [*answers, *ids]
    if kg is not None:
        for entity_id in ids:
            record = kg.filtered(None).entity(entity_id)
            if record is not None:
                labels.append(record.name)
                labels.extend(record.aliases)
    return labels


def _items(answer: str) -> list[str]:
    """The answer as a list: "A, B and C" -> [A, B, C]; marker-only answers give their ids."""
    markers = _MARKER.findall(answer)
    text = _MARKER.sub(" ", answer)
    if not text.strip():
        return markers
    return [text]


def is_correct(answer: Any, question: Any, kg: KnowledgeGraph | None = None, *, contains: bool = False) -> bool:
    """Whether ``answer`` matches one of ``question``'s golds after :func:`normalize_answer`.

    ``question`` is a :class:`~graphtrail.agents.questions.Question`, a mapping
    with ``answers``/``answer_ids``, or a list of gold strings. A list answer
    ("English, Swahili") is correct when every item is a gold answer. Yes/no
    golds are matched on the answer's first word ("Yes, they do."). With
    ``contains=True`` a gold appearing as whole words inside a longer answer
    also counts (lenient scoring for chatty models).
    """
    if answer is None:
        return False
    golds = {normalize_answer(g) for g in gold_labels(question, kg)}
    golds.discard("")
    if not golds:
        return False
    items = _items(str(answer))
    normalized = [normalize_answer(i) for i in items]
    if not any(normalized):
        return False
    if golds <= _YES_NO:
        first = normalized[0].split()[0] if normalized[0] else ""
        return first in golds
    if len(items) > 1:  # several [E:id] markers and nothing else: every one must be gold
        return all(n in golds for n in normalized)
    if normalized[0] in golds:
        return True
    # A list of answers: every listed item must be gold (no credit for hedging with wrong ones).
    for text in items:
        pieces: list[str] = []
        for raw in _ITEM_SPLIT.split(text):
            norm = normalize_answer(raw)
            if norm in golds:
                pieces.append(norm)
            elif norm:
                pieces.extend(p for p in (normalize_answer(x) for x in _AND_OR.split(raw)) if p)
        if len(pieces) > 1 and all(p in golds for p in pieces):
            return True
    if contains:
        for n in normalized:
            padded = f" {n} "
            if any(len(g) >= 2 and f" {g} " in padded for g in golds):
                return True
    return False


def token_f1(answer: Any, golds: Any) -> float:
    """The best SQuAD-style token F1 between ``answer`` and any gold (a Question, mapping or strings)."""
    if answer is None:
        return 0.0
    labels: Iterable[str] = gold_labels(golds) if not isinstance(golds, str) else [golds]
    predicted = normalize_answer(_MARKER.sub(" ", str(answer))).split()
    best = 0.0
    for gold in labels:
        truth = normalize_answer(gold).split()
        if not predicted or not truth:
            continue
        overlap = sum((Counter(predicted) & Counter(truth)).values())
        if overlap == 0:
            continue
        precision, recall = overlap / len(predicted), overlap / len(truth)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best
