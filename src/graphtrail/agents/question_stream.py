"""Questions read one line at a time, with a bound on every line.

A questions file can be far larger than what one evaluation needs (``--limit 1``
on a 200 MB file), and one line can be far longer than any question. Reading
through here costs time and memory in proportion to the lines actually read:

- JSONL and MetaQA files are read line by line (gzip too); the first malformed
  line is reported as soon as it is read;
- a question longer than :data:`MAX_QUESTION_CHARS` is refused
  (:class:`QuestionTooLong`, one line naming the limit), and a line longer than
  :data:`MAX_LINE_BYTES` is refused without being read whole;
- a file holding one JSON array must be read whole, so it may be at most
  :data:`MAX_ARRAY_BYTES`.

The whole-file parser (:func:`graphtrail.agents.questions.load_questions`) keeps
its API; :func:`iter_questions` is what the CLI uses.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .limits import MAX_ARRAY_BYTES, MAX_LINE_BYTES, MAX_QUESTION_CHARS
from .questions import (
    _BUNDLED,
    Question,
    QuestionsError,
    _question_from_record,
    _stem,
    load_questions,
    parse_metaqa,
    parse_questions_jsonl,
)

__all__ = ["MAX_QUESTION_CHARS", "MAX_LINE_BYTES", "MAX_ARRAY_BYTES", "QuestionTooLong", "iter_questions", "check_question"]

class QuestionTooLong(QuestionsError):
    """A question, or a line of a questions file, is past graphtrail's documented limit."""


def check_question(text: str, where: str) -> str:
    """``text`` if it is within :data:`MAX_QUESTION_CHARS`, else :class:`QuestionTooLong`."""
    if len(text) > MAX_QUESTION_CHARS:
        raise QuestionTooLong(
            f"{where}: the question has {len(text):,} characters, over the limit of {MAX_QUESTION_CHARS:,}; shorten it"
        )
    return text


def _open(path: Path) -> IO[bytes]:
    fh: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    if fh.read(2) == b"\x1f\x8b":
        fh.seek(0)
        return gzip.GzipFile(fileobj=fh)  # type: ignore[return-value]
    fh.seek(0)
    return fh


def _lines(fh: IO[bytes], name: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, each read with a bound (a longer line is refused unread)."""
    lineno = 0
    while True:
        try:
            raw = fh.readline(MAX_LINE_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise QuestionsError(f"{name}: not a readable gzip file ({exc})") from None
        if not raw:
            return
        lineno += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise QuestionTooLong(f"{name} line {lineno}: longer than the limit of {MAX_LINE_BYTES:,} bytes a line; shorten it")
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise QuestionsError(f"{name} line {lineno}: expected UTF-8 text") from None
        yield lineno, text.rstrip("\r\n")


def iter_questions(source: str | Path) -> Iterator[Question]:
    """The questions of a bundled set or a file, one at a time (see the module docstring for the bounds)."""
    if isinstance(source, str) and source in _BUNDLED:
        for q in load_questions(source):
            yield _checked(q, source)
        return
    path = Path(source)
    if not path.is_file():
        known = ", ".join(sorted(_BUNDLED))
        raise QuestionsError(f"questions file not found: {source} (and not a bundled question set: {known})")
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    metaqa = bool(suffixes) and suffixes[-1] in (".txt", ".tsv")
    with _open(path) as fh:
        try:
            first = fh.peek(64)[:64] if hasattr(fh, "peek") else b""
        except (OSError, EOFError, zlib.error) as exc:
            raise QuestionsError(f"{path.name}: not a readable gzip file ({exc})") from None
        head = first.lstrip(b"\xef\xbb\xbf \t\r\n")
        if head.startswith(b"["):
            yield from _array(fh, path)
            return
        if metaqa and not head.startswith(b"{"):
            for lineno, line in _lines(fh, path.name):
                if line.strip():
                    for q in parse_metaqa(line, path.name, _stem(path)):
                        yield _checked(q.model_copy(update={"id": f"{_stem(path)}-{lineno}"}), f"{path.name} line {lineno}")
            return
        from .._jsonread import JSONInputError
        from .._jsonread import loads as json_loads

        seen: dict[str, int] = {}
        for lineno, line in _lines(fh, path.name):
            if not line.strip():
                continue
            try:
                record = json_loads(line, first_line=lineno)
            except JSONInputError as exc:
                raise QuestionsError(f"{exc.where(path.name)}: {exc.reason}; expected one JSON object per line") from None
            if isinstance(record, dict) and isinstance(record.get("question"), str):
                check_question(record["question"], f"{path.name} line {lineno}")
            q = _question_from_record(record, f"{path.name} line {lineno}")
            if q.id in seen:
                raise QuestionsError(f"{path.name} line {lineno}: duplicate question id {q.id!r} (first at line {seen[q.id]})")
            seen[q.id] = lineno
            yield q


def _array(fh: Any, path: Path) -> Iterator[Question]:
    data = fh.read(MAX_ARRAY_BYTES + 1)
    if len(data) > MAX_ARRAY_BYTES:
        raise QuestionTooLong(
            f"{path.name}: a JSON array of questions is read whole and may be at most {MAX_ARRAY_BYTES >> 20} MB; "
            "write one JSON object per line instead"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise QuestionsError(f"{path.name} line {line}: expected UTF-8 text") from None
    for i, q in enumerate(parse_questions_jsonl(text, path.name)):
        yield _checked(q, f"{path.name} item {i}")


def _checked(q: Question, where: str) -> Question:
    check_question(q.question, where)
    return q
