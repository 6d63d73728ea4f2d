"""Reading delimited files (triples, entity tables): exact records and lines, and a fast path for large files.

Two readers, one result:

- :func:`read_records` parses with the :mod:`csv` module over the text split
  at ``\\n``/``\\r`` only, so a form feed or U+2028 inside a description is
  data, not a line break, and a quoted newline in a CSV cell is part of the
  cell. Every record carries the line it *starts* on, which is what an error
  message names. Blank lines and lines starting with ``#`` are skipped; an
  unterminated quote is an error, not a cell that swallows the rest of the file.
- :func:`fast_columns` parses with pyarrow (multi-threaded, in C++) and is
  used for large triples files. It declines (returns ``None``) whenever its
  result could differ from :func:`read_records` (comments, NULs, ragged
  rows, whitespace-only lines, empty cells, any parse error), and the exact
  reader then runs and names the line. It strips cells of exactly the
  characters ``str.strip()`` strips.
"""

from __future__ import annotations

import csv
import gzip
import io
import mmap
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import KGError

__all__ = ["read_text", "sniff_delimiter", "read_records", "fast_columns", "delimiter_name", "Records", "mapped_bytes", "leading_line"]

Records = list[tuple[int, list[str]]]

# Leading "#" (after spaces/tabs) on some line: a comment, which pyarrow has no notion of.
_COMMENT = re.compile(rb"(?:^|[\n\r])[ \t]*#")
_LEADING_NEWLINES = re.compile(rb"[\r\n]*")


def _needs_exact_reader(raw: Any) -> bool:
    """Comment lines or NULs: ``find`` scans (memchr) first, the regex only when a ``#`` is present."""
    return raw.find(b"\x00") >= 0 or (raw.find(b"#") >= 0 and _COMMENT.search(raw) is not None)


def leading_line(raw: Any) -> int:
    """The 1-based line the first record starts on, past blank lines at the start of ``raw`` (bytes or a map)."""
    skipped = _LEADING_NEWLINES.match(raw)
    return raw[: skipped.end() if skipped else 0].count(b"\n") + 1


#: Uncompressed files at least this large are mapped into memory for the pyarrow reader instead of read into a copy.
MAP_FROM_BYTES = 1 << 20


@contextmanager
def mapped_bytes(path: Path) -> Iterator[Any]:
    """The file's bytes: a read-only memory map of a large uncompressed file (no copy), else :func:`read_bytes`.

    A map supports what the fast reader needs (``len``, slices, ``find``,
    regular expressions, the buffer protocol), not ``bytes`` methods such as
    ``decode``: the exact reader reads the file again. The map is closed on
    exit unless something still holds a view of it (then when that is freed).
    """
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        mapped = None
        if size >= MAP_FROM_BYTES and fh.read(2) != b"\x1f\x8b":
            try:
                mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # a file system that cannot map: read it
                mapped = None
    if mapped is None:
        yield read_bytes(path)
        return
    try:
        yield mapped
    finally:
        try:
            mapped.close()
        except BufferError:  # an Arrow buffer still views it: closed when freed
            pass


#: Files at least this large are parsed by several threads: less wall time, more CPU time (each thread's share of
#: the work grows with the coordination), so smaller files, which parse in well under a second, use one.
#: (A 117 MB triples file: 0.26 s of CPU on threads, 0.14-0.16 s on one; issue 31 counts CPU.)
THREADS_FROM_BYTES = 512 << 20

#: Bytes pyarrow parses at a time: 4 MB blocks stay closer to the cache than 16 MB (measured 10-20% less CPU on
#: one thread); a row longer than a block makes pyarrow fail, and the exact reader then reads the file.
BLOCK_BYTES = 4 << 20

#: Exactly what Python's ``str.strip()`` removes, so both readers strip cells alike. Written out:
#: computing it (a scan of every code point) cost 0.1 s of every start-up; a test keeps it equal.
PY_WHITESPACE = '\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000'


def read_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise KGError(f"{path.name}: damaged gzip data ({exc})") from None
    return raw


def read_text(path: Path, raw: bytes | None = None) -> str:
    raw = read_bytes(path) if raw is None else raw
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise KGError(f"{path.name} line {line}: expected UTF-8 text ({exc.reason})") from None


def delimiter_name(delimiter: str) -> str:
    return {"\t": "tab-separated", ",": "comma-separated", "|": "pipe-separated"}.get(delimiter, repr(delimiter))


def sniff_delimiter(path: Path, text: str) -> str:
    """Tab for .tsv/.tab; else the first of tab, pipe, comma on the first data line; else by suffix."""
    suffix = path.suffix.lower()
    if suffix == ".gz":
        suffix = Path(path.stem).suffix.lower()
    if suffix in (".tsv", ".tab"):
        return "\t"
    first = ""
    for line in io.StringIO(text, newline=""):
        if line.strip() and not line.lstrip().startswith("#"):
            first = line
            break
    for delimiter in ("\t", "|", ","):
        if delimiter in first:
            return delimiter
    return "\t" if suffix != ".csv" else ","


class _Lines:
    """Physical lines for :class:`csv.reader`, skipping blank and comment lines *between* records.

    ``fresh`` is set before each record is read: only then may a line be
    skipped (inside a quoted cell a line starting with ``#`` is data), and the
    first line taken is the record's start line.
    """

    def __init__(self, text: str) -> None:
        self._it = iter(io.StringIO(text, newline=""))
        self.lineno = 0
        self.start = 0
        self.fresh = True

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        while True:
            line = next(self._it)
            self.lineno += 1
            if self.fresh:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                self.fresh = False
                self.start = self.lineno
            return line


def read_records(path: Path, text: str, delimiter: str) -> Records:
    """Non-blank, non-comment records with the 1-based line each starts on; cells stripped."""
    quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    lines = _Lines(text)
    reader = csv.reader(lines, delimiter=delimiter, quoting=quoting, strict=quoting != csv.QUOTE_NONE)
    rows: Records = []
    while True:
        lines.fresh = True
        try:
            cells = next(reader)
        except StopIteration:
            return rows
        except csv.Error as exc:
            if "end of data" in str(exc) or "EOF" in str(exc):
                raise KGError(
                    f"{path.name} line {lines.start}: a quoted cell opened on this line is never closed "
                    "(add the closing \" or remove the opening one)"
                ) from None
            raise KGError(f"{path.name} line {lines.start}: malformed {delimiter_name(delimiter)} row ({exc})") from None
        rows.append((lines.start, [c.strip() for c in cells]))


def _quotes(raw: Any) -> int:
    """How many ``"`` bytes ``raw`` holds (bytes or a memory map, which has no ``count``)."""
    if isinstance(raw, bytes):
        return raw.count(b'"')
    import numpy as np

    return int(np.count_nonzero(np.frombuffer(raw, dtype=np.uint8) == ord('"')))


def fast_columns(raw: Any, delimiter: str, max_columns: int = 64, strip: bool = True) -> list[list[str]] | None:
    """The file's columns (cells stripped, unless ``strip`` is false) via pyarrow, or ``None`` when only the exact reader may answer.

    ``raw``: bytes, or a memory map of the file (:func:`mapped_bytes`).
    """
    if len(raw) < 3 or _needs_exact_reader(raw):
        return None
    if delimiter == "," and _quotes(raw) % 2:  # an unterminated quote, which pyarrow would accept at EOF
        return None
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyarrow import csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return None
    view = memoryview(raw)[3:] if raw[:3] == b"\xef\xbb\xbf" else memoryview(raw)
    try:
        table = pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(view)),
            read_options=pacsv.ReadOptions(autogenerate_column_names=True, block_size=max(BLOCK_BYTES, len(raw) // 256), use_threads=len(raw) >= THREADS_FROM_BYTES),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter,
                quote_char='"' if delimiter == "," else False,
                newlines_in_values=delimiter == ",",
                ignore_empty_lines=True,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={f"f{i}": pa.string() for i in range(max_columns)}, strings_can_be_null=False, quoted_strings_can_be_null=False
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowException, ValueError):
        return None
    if table.num_columns > max_columns or table.num_rows == 0:
        return None
    columns: list[Any] = []
    for column in table.columns:
        if column.null_count:
            return None
        columns.append(pc.utf8_trim(column, characters=PY_WHITESPACE) if strip else column)
    return columns  # type: ignore[return-value]
