"""Answers an agent gives as a structured object: ``create_agent(..., response_format=...)``'s ``structured_response``.

LangChain's ``create_agent`` puts a structured answer in the final state's
``structured_response`` (a pydantic model, a dataclass, a dict or a
TypedDict), not in the last message. Its answer and sources live in fields the
user named; graphtrail reads ``answer`` and the first of ``sources`` /
``citations`` / ``evidence`` unless ``answer_field=`` / ``citations_field=``
name others. The same options read a custom key of the final state (a
``final_answer`` channel) when there is no structured response.

A structured response whose answer cannot be read is ``no_answer`` *with a
reason* naming its fields, so an evaluation that read no answer at all can say
what to pass instead of blaming the agent's citations.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from .extract import AnswerResult, text_citations, to_entity

#: Field names read when the user names none, in the order tried.
ANSWER_FIELDS = ("answer",)
CITATION_FIELDS = ("sources", "citations", "evidence")
STRUCTURED_KEY = "structured_response"


def fields_of(value: Any) -> dict[str, Any] | None:
    """A structured value's fields by name: pydantic model, dataclass, mapping (TypedDict); else ``None``."""
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
    model_fields = getattr(type(value), "model_fields", None)  # pydantic v2, without importing it
    if isinstance(model_fields, Mapping):
        return {name: getattr(value, name, None) for name in model_fields}
    return None


def _source_id(item: Any) -> str | None:
    if isinstance(item, str):
        return item.strip() or None
    if isinstance(item, bool) or item is None:
        return None
    if isinstance(item, int):
        return str(item)
    fields = fields_of(item)
    if fields is not None:
        ref = to_entity(fields)
        return ref.id if ref is not None else None
    return None


def source_ids(value: Any) -> list[str]:
    """The entity ids a sources/citations field holds: ids, or records (dicts, models) carrying an id."""
    if value is None:
        return []
    items = re.split(r"[,;\s]+", value) if isinstance(value, str) else value
    if not isinstance(items, (list, tuple, set, frozenset)):
        items = [items]
    out: dict[str, None] = {}
    for item in items:
        eid = _source_id(item)
        if eid:
            out.setdefault(eid, None)
    return list(out)


def sources_by_name(cited: list[str], known: Mapping[str, list[str]]) -> list[str]:
    """``cited`` with each source that is not an id the run saw, but the name of exactly one entity it saw, as that id.

    A structured response's ``sources`` are often names ("Otto Hahn"), which the
    entities the run's tools revealed turn into ids; anything else stays as given.
    """
    by_name: dict[str, set[str]] = {}
    for eid, names in known.items():
        for name in names:
            by_name.setdefault(" ".join(name.casefold().split()), set()).add(eid)
    out: dict[str, None] = {}
    for source in cited:
        ids = by_name.get(" ".join(source.casefold().split()), set()) if source not in known else set()
        out.setdefault(next(iter(ids)) if len(ids) == 1 else source, None)
    return list(out)


def _answer_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, (list, tuple)):
        parts = [str(v) for v in value if v is not None]
        return ", ".join(parts) or None
    return str(value)


def _unreadable(where: str, fields: Mapping[str, Any], answer_field: str | None) -> AnswerResult:
    names = ", ".join(sorted(fields)) or "none"
    wanted = f"no field {answer_field!r}" if answer_field else "no 'answer' field"
    reason = f"the {where} has {wanted} (its fields: {names}); pass answer_field= (and citations_field=) naming them"
    return AnswerResult(answer=None, citations=[], status="no_answer", source="structured", reason=reason)


def _read(fields: Mapping[str, Any], where: str, answer_field: str | None, citations_field: str | None,
          pattern: re.Pattern[str]) -> AnswerResult:
    answer_key = answer_field or next((k for k in ANSWER_FIELDS if k in fields), None)
    if answer_key is None or answer_key not in fields:
        return _unreadable(where, fields, answer_field)
    answer = _answer_text(fields[answer_key])
    cites_key = citations_field or next((k for k in CITATION_FIELDS if k in fields), None)
    if answer is None:
        return AnswerResult(answer=None, citations=[], status="no_answer", source="structured",
                            reason=f"the {where}'s {answer_key!r} field is empty")
    stripped, marked = text_citations(answer, pattern)
    if cites_key is not None and cites_key in fields:
        cited = source_ids(fields[cites_key])
        return AnswerResult(answer=stripped, citations=cited or marked, status="ok", source="structured")
    # no sources field: markers in the text, else the names the answer mentions (tracer/citations.py)
    return AnswerResult(answer=stripped, citations=marked, status="ok", source="markers" if marked else "text")


def structured_answer(output: Any, answer_field: str | None, citations_field: str | None,
                      pattern: re.Pattern[str]) -> AnswerResult | None:
    """The answer of a final state's ``structured_response`` (or, with ``answer_field``, of its own key); else ``None``.

    ``None`` means "not a structured answer": the message-based readers
    (``extract_answer``) take over. Never raises.
    """
    if not isinstance(output, Mapping):
        return None
    try:
        value = output.get(STRUCTURED_KEY)
        if value is not None:
            fields = fields_of(value)
            if fields is None:  # a bare value (str, int) as the response format
                text = _answer_text(value)
                return AnswerResult(answer=text, citations=[], status="ok" if text else "no_answer", source="text")
            return _read(fields, STRUCTURED_KEY, answer_field, citations_field, pattern)
        if answer_field is not None and answer_field in output:
            inner = fields_of(output[answer_field])
            if inner is not None:  # the key holds the structured answer itself
                return _read(inner, f"final state's {answer_field!r}", None, citations_field, pattern)
            return _read(output, "final state", answer_field, citations_field, pattern)
    except Exception:  # noqa: BLE001 - a strange object never costs the trace: the other readers try
        return None
    return None
