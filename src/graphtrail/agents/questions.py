"""Question sets: the gold answers the evaluators score agents against.

A question file is JSONL, one object per line::

    {"id": "q1", "question": "What is the capital of Kenya?", "answers": ["Nairobi"],
     "answer_ids": ["E0197"], "topic_ids": ["E0758"], "hops": 1, "kind": "1-hop"}

``id``, ``question`` and ``answers`` are required; any one of ``answers``
counts as correct. Other keys are kept in :attr:`Question.metadata`. MetaQA's
plain-text format (``question with [topic]<TAB>answer1|answer2``) is read too,
so the public multi-hop benchmarks load without conversion.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .._jsonread import JSONInputError
from .._jsonread import loads as json_loads
from .._lines import split_lines
from ..kg.loaders.bundled import _BUNDLED, bundled_resource

__all__ = ["Question", "QuestionsError", "load_questions"]

PathLike = str | os.PathLike[str]


class QuestionsError(ValueError):
    """A question file could not be read; the message names the file, the line and what was expected."""


class Question(BaseModel):
    """One question with its gold answers (names, and the KG ids they stand for)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    question: str
    answers: list[str] = Field(min_length=1)
    answer_ids: list[str] = Field(default_factory=list)
    topic_ids: list[str] = Field(default_factory=list)
    hops: int | None = None
    kind: str | None = None
    #: Keys of the source record that are not fields above (e.g. the bundled set's relation ``path``).
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        # Integer ids are common in the wild; keep them as text so ids compare consistently.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("question")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("answers", "answer_ids", "topic_ids", mode="before")
    @classmethod
    def _string_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("expected a list of strings, got a single string (wrap it in [...])")
        return value

    def __repr__(self) -> str:
        from .._display import one_line, short

        more = f", +{len(self.answers) - 1}" if len(self.answers) > 1 else ""
        return one_line("Question", repr(self.id), repr(short(self.question, 60)), f"answers=[{self.answers[0]!r}{more}]")

    __str__ = __repr__


_FIELDS = set(Question.model_fields) - {"metadata"}


def _format_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "record"
        if err["type"] == "missing":
            parts.append(f"missing required field '{loc}'")
        elif err["type"] == "too_short" and loc == "answers":
            parts.append("field 'answers': expected at least one answer")
        else:
            parts.append(f"field '{loc}': {err['msg']}")
    return "; ".join(parts)


def _question_from_record(record: Any, where: str) -> Question:
    if not isinstance(record, dict):
        raise QuestionsError(f"{where}: expected a JSON object with id, question and answers, got {type(record).__name__}")
    known = {k: v for k, v in record.items() if k in _FIELDS}
    extra = {k: v for k, v in record.items() if k not in _FIELDS}
    if isinstance(record.get("metadata"), dict):
        extra = {**record["metadata"], **{k: v for k, v in extra.items() if k != "metadata"}}
    try:
        return Question(**known, metadata=extra)
    except ValidationError as exc:
        raise QuestionsError(f"{where}: {_format_error(exc)}") from None


def parse_questions_jsonl(text: str, filename: str) -> list[Question]:
    """Questions from JSONL text (a JSON array is accepted too)."""
    stripped = text.lstrip()
    questions: list[Question] = []
    if stripped.startswith("["):
        try:
            records = json_loads(text)
        except JSONInputError as exc:
            raise QuestionsError(f"{exc.where(filename)}: {exc.reason}") from None
        if not isinstance(records, list):
            raise QuestionsError(f"{filename}: expected one JSON object per line, or a JSON array of objects")
        questions = [_question_from_record(r, f"{filename} item {i}") for i, r in enumerate(records)]
        lines = [f"item {i}" for i in range(len(records))]
    else:
        lines = []
        for lineno, line in enumerate(split_lines(text), start=1):
            if not line.strip():
                continue
            try:
                record = json_loads(line, first_line=lineno)
            except JSONInputError as exc:
                raise QuestionsError(
                    f"{exc.where(filename)}: {exc.reason}; expected one JSON object per line"
                ) from None
            questions.append(_question_from_record(record, f"{filename} line {lineno}"))
            lines.append(f"line {lineno}")
    seen: dict[str, str] = {}
    for q, where in zip(questions, lines):
        if q.id in seen:
            raise QuestionsError(f"{filename} {where}: duplicate question id {q.id!r} (first at {seen[q.id]})")
        seen[q.id] = where
    return questions


_TOPIC = re.compile(r"\[([^\]]+)\]")


def parse_metaqa(text: str, filename: str, prefix: str) -> list[Question]:
    """MetaQA ``qa_*.txt``: ``question with [topic]<TAB>answer1|answer2`` per line."""
    questions = []
    for lineno, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != 2 or not cells[1].strip():
            raise QuestionsError(
                f"{filename} line {lineno}: expected 'question<TAB>answer1|answer2' (MetaQA format), got {len(cells)} column(s)"
            )
        raw_question, raw_answers = cells
        topics = _TOPIC.findall(raw_question)
        questions.append(
            Question(
                id=f"{prefix}-{lineno}",
                question=_TOPIC.sub(lambda m: m.group(1), raw_question).strip(),
                answers=[a.strip() for a in raw_answers.split("|") if a.strip()],
                metadata={"topic_names": topics} if topics else {},
            )
        )
    return questions


def load_questions(source: PathLike) -> list[Question]:
    """Questions from a bundled name (``"countries"``, ``"countries-demo"``) or a file.

    ``.jsonl`` / ``.json`` files hold one object per line (or a JSON array);
    ``.txt`` / ``.tsv`` files are read as MetaQA ``question<TAB>answers``.
    """
    if isinstance(source, str) and source in _BUNDLED:
        resource = bundled_resource(source, "questions")
        assert resource is not None
        return parse_questions_jsonl(resource.read_text(encoding="utf-8"), _BUNDLED[source].questions_file)
    path = Path(source)
    if not path.is_file():
        known = ", ".join(sorted(_BUNDLED))
        raise QuestionsError(f"questions file not found: {source} (and not a bundled question set: {known})")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        import gzip
        import zlib

        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise QuestionsError(f"{path.name}: not a readable gzip file ({exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise QuestionsError(f"{path.name} line {line}: expected UTF-8 text") from None
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    if suffixes and suffixes[-1] in (".txt", ".tsv") and not text.lstrip().startswith(("{", "[")):
        return parse_metaqa(text, path.name, _stem(path))
    return parse_questions_jsonl(text, path.name)


def _stem(path: Path) -> str:
    name = path.name
    return name.split(".")[0] or name
