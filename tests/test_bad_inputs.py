"""A corpus of careless and hostile input files, fed to every CLI command that reads a file.

Each case must end with exit 0 (the file was usable) or exit 2 with one line on stderr
that names the file (and the line, for line-based formats), and never a traceback or an
internal error. The CLI runs in-process (``graphtrail.cli.main.main``), so the corpus is fast.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphtrail.cli.main import main

BIG = "7" * 5000
TEN_MB = 10 * 1024 * 1024
NODES = {"nodes": [{"id": "a", "name": "Alpha"}, {"id": "b", "name": "Beta"}], "edges": [{"source": "a", "target": "b", "relation": "r"}]}
QUESTION = {"id": "q1", "question": "What is the capital of Kenya?", "answers": ["Nairobi"]}


def _node_link(**changes: object) -> bytes:
    doc = json.loads(json.dumps(NODES))
    for path, value in changes.items():
        kind, index, field = path.split("__")
        doc.setdefault(kind, [{}])
        doc[kind][int(index)][field] = value
    return json.dumps(doc).encode()


def _jsonl(*records: object) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


_GRAPHML_HEAD = '<?xml version="1.0"?>\n'
_GRAPHML_BODY = (
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
    '<key id="name" for="node" attr.name="name" attr.type="string"/>'
    '<graph edgedefault="directed"><node id="n1"><data key="name">{}</data></node></graph></graphml>\n'
)
XML_BOMB = (
    _GRAPHML_HEAD
    + '<!DOCTYPE lolz [<!ENTITY lol "lollollollollollollollollollol">'
    + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10))
    + "]>\n"
    + _GRAPHML_BODY.format("&lol9;")
).encode()
XXE = (
    _GRAPHML_HEAD + '<!DOCTYPE g [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n' + _GRAPHML_BODY.format("&xxe;")
).encode()
XXE_PARAMETER = (
    _GRAPHML_HEAD + '<!DOCTYPE g [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;]>\n' + _GRAPHML_BODY.format("x")
).encode()


@dataclass(frozen=True)
class Case:
    id: str
    filename: str
    content: bytes
    line: bool = False  # a line-based format: an error must name the line


# Files for `graphtrail kg info FILE` (and `run --kg FILE`).
KG_CASES = [
    Case("json-5000-digit-id", "g.json", b'{"nodes": [{"id": ' + BIG.encode() + b'}], "edges": []}'),
    Case("json-aliases-int", "g.json", _node_link(nodes__0__aliases=5)),
    Case("json-aliases-list-of-objects", "g.json", _node_link(nodes__0__aliases=[{"a": 1}])),
    Case("json-community-level-text", "g.json", json.dumps({**NODES, "communities": [{"id": "c", "entity_ids": ["a"], "level": "high"}]}).encode()),
    Case("json-community-level-huge", "g.json", json.dumps({**NODES, "communities": [{"id": "c", "entity_ids": ["a"], "level": int("9" * 4000)}]}).encode()),
    Case("json-name-object", "g.json", _node_link(nodes__0__name={"x": 1})),
    Case("json-id-list", "g.json", _node_link(nodes__0__id=[1, 2])),
    Case("json-id-bool", "g.json", _node_link(nodes__1__id=True)),
    Case("json-relation-object", "g.json", _node_link(edges__0__relation={"r": 1})),
    Case("json-source-object", "g.json", _node_link(edges__0__source={"id": "a"})),
    Case("json-text-units-not-list", "g.json", json.dumps({**NODES, "text_units": 5}).encode()),
    Case("json-communities-not-list", "g.json", json.dumps({**NODES, "communities": "c1"}).encode()),
    Case("json-nan", "g.json", b'{"nodes": [{"id": NaN}], "edges": []}'),
    Case("json-deep", "g.json", b'{"nodes": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"),
    Case("json-top-level-list", "g.json", b"[1, 2, 3]"),
    Case("json-truncated", "g.json", json.dumps(NODES).encode()[:-7]),
    Case("json-binary", "g.json", bytes(range(256)) * 4),
    Case("json-nul", "g.json", b'{"nodes": [{"id": "a\x00b"}], "edges": []}\x00'),
    Case("json-empty", "g.json", b""),
    Case("json-10mb-line", "g.json", b'{"nodes": [{"id": "a", "name": "' + b"x" * TEN_MB + b'"}], "edges": []}'),
    Case("json-gz-damaged", "g.json.gz", b"\x1f\x8b\x08\x00" + b"garbage" * 10),
    Case("json-gz-binary", "g.json.gz", gzip.compress(bytes(range(256)) * 8)),
    Case("graphml-bomb", "g.graphml", XML_BOMB),
    Case("graphml-xxe", "g.graphml", XXE),
    Case("graphml-xxe-parameter-entity", "g.graphml", XXE_PARAMETER),
    Case("graphml-binary", "g.graphml", bytes(range(256)) * 4),
    Case("graphml-empty", "g.graphml", b""),
    Case("graphml-deep", "g.graphml", (_GRAPHML_HEAD + "<a>" * 50_000 + "</a>" * 50_000).encode()),
    Case("tsv-binary", "g.tsv", bytes(range(256)) * 4, line=True),
    Case("tsv-nul", "g.tsv", b"a\tr\tb\nc\x00\tr\td\n", line=True),
    Case("tsv-empty", "g.tsv", b""),
    Case("tsv-header-only", "g.tsv", b"head\trelation\ttail\n"),
    Case("csv-header-only", "g.csv", b"head,relation,tail\n"),
    Case("tsv-10mb-line", "g.tsv", b"a\tr\t" + b"b" * TEN_MB + b"\n", line=True),
    Case("tsv-one-column", "g.tsv", b"just-one-cell\n", line=True),
]

# Files for `graphtrail run --questions FILE`.
QUESTION_CASES = [
    Case("q-5000-digit-id", "q.jsonl", b'{"id": ' + BIG.encode() + b', "question": "q?", "answers": ["a"]}\n', line=True),
    Case("q-5000-digit-hops", "q.jsonl", b'{"id": "x", "question": "q?", "answers": ["a"], "hops": ' + BIG.encode() + b"}\n", line=True),
    Case("q-answers-int", "q.jsonl", _jsonl({**QUESTION, "answers": 5}), line=True),
    Case("q-answers-objects", "q.jsonl", _jsonl({**QUESTION, "answers": [{"a": 1}]}), line=True),
    Case("q-question-null", "q.jsonl", _jsonl({**QUESTION, "question": None}), line=True),
    Case("q-hops-text", "q.jsonl", _jsonl({**QUESTION, "hops": "high"}), line=True),
    Case("q-id-object", "q.jsonl", _jsonl({**QUESTION, "id": {"x": 1}}), line=True),
    Case("q-not-object", "q.jsonl", b"[1, 2]\n"),
    Case("q-line-not-object", "q.jsonl", _jsonl(QUESTION) + b"5\n", line=True),
    Case("q-array-of-numbers", "q.json", b"[1, 2, 3]"),
    Case("q-deep", "q.jsonl", b'{"id": "x", "question": "q?", "answers": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n", line=True),
    Case("q-binary", "q.jsonl", bytes(range(256)) * 4, line=True),
    Case("q-nul", "q.jsonl", _jsonl(QUESTION) + b'{"id": "q2"\x00}\n', line=True),
    Case("q-empty", "q.jsonl", b""),
    Case("q-blank-lines", "q.jsonl", b"\n\n  \n"),
    Case("q-10mb-line", "q.jsonl", b'{"id": "q", "question": "' + b"x" * TEN_MB + b'", "answers": ["a"]', line=True),
    Case("q-duplicate-ids", "q.jsonl", _jsonl(QUESTION, QUESTION), line=True),
    Case("q-gz-damaged", "q.jsonl.gz", b"\x1f\x8b\x08\x00garbage"),
    Case("q-metaqa-header-only", "q.txt", b"question\tanswer\n"),
    Case("q-metaqa-binary", "q.txt", bytes(range(256)) * 4, line=True),
]

# Files for `graphtrail traces FILE`.
TRACE_CASES = [
    Case("t-binary", "t.jsonl", bytes(range(256)) * 4, line=True),
    Case("t-nul", "t.jsonl", b'{"resourceSpans": []}\n\x00\n', line=True),
    Case("t-empty", "t.jsonl", b""),
    Case("t-not-json", "t.jsonl", b'{"resourceSpans": []}\nnot json\n', line=True),
    Case("t-5000-digit", "t.jsonl", b'{"resourceSpans": []}\n{"x": ' + BIG.encode() + b"}\n", line=True),
    Case("t-deep", "t.jsonl", b'{"resourceSpans": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"),
    Case("t-resource-spans-int", "t.jsonl", b'{"resourceSpans": 5}\n'),
    Case("t-spans-wrong-types", "t.jsonl", json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 5, "spanId": [], "name": {}, "attributes": 7}]}]}]}).encode() + b"\n"),
    Case("t-attributes-wrong", "t.jsonl", json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "ab", "spanId": "cd", "name": "invoke_agent x", "attributes": [{"key": "graphtrail.visited", "value": {"stringValue": "[[[["}}, {"key": 5}]}]}]}]}).encode() + b"\n"),
    Case("t-trajectory-wrong-types", "t.jsonl", json.dumps({"run_id": 5, "trace_id": [], "steps": "x", "status": 1}).encode() + b"\n"),
    Case("t-10mb-line", "t.jsonl", b'{"resourceSpans": [], "x": "' + b"y" * TEN_MB + b'"}\n'),
    Case("t-list-of-scalars", "t.json", b"[1, 2]"),
]

# Files for `graphtrail report FILE`.
REPORT_CASES = [
    Case("r-binary", "results.json", bytes(range(256)) * 4),
    Case("r-empty", "results.json", b""),
    Case("r-5000-digit", "results.json", b'{"schema_version": ' + BIG.encode() + b"}"),
    Case("r-deep", "results.json", b'{"schema_version": "graphtrail.results/1", "x": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"),
    Case("r-wrong-schema", "results.json", b'{"schema_version": "other/1"}'),
    Case("r-not-object", "results.json", b"[]"),
    Case("r-nul", "results.json", b"{\x00}"),
]


def _check(code: int, out: str, err: str, path: Path, case: Case) -> None:
    assert code in (0, 2), f"{case.id}: exit {code}\n{err[-2000:]}"
    assert "Traceback" not in out + err and "internal error" not in err, f"{case.id}: {err[-2000:]}"
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1, f"{case.id}: expected one line, got:\n{err[-2000:]}"
        assert path.name in lines[0], f"{case.id}: the message does not name the file: {lines[0]}"
        if case.line:
            assert "line" in lines[0], f"{case.id}: the message does not name the line: {lines[0]}"
        assert len(lines[0]) < 1000, f"{case.id}: the message is too long ({len(lines[0])} chars)"
    assert "root:" not in out, f"{case.id}: a local file's content reached the output"


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case, argv: Callable[[Path], list[str]]) -> None:
    path = tmp_path / case.filename
    path.write_bytes(case.content)
    capsys.readouterr()
    code = main(argv(path))
    captured = capsys.readouterr()
    _check(code, captured.out, captured.err, path, case)


@pytest.mark.parametrize("case", KG_CASES, ids=lambda c: c.id)
def test_kg_info(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case) -> None:
    _run(capsys, tmp_path, case, lambda p: ["kg", "info", str(p)])


@pytest.mark.parametrize("case", [c for c in KG_CASES if c.id.startswith(("json-5000", "json-aliases-int", "graphml-xxe", "tsv-nul"))], ids=lambda c: c.id)
def test_run_with_a_bad_kg(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case) -> None:
    _run(capsys, tmp_path, case, lambda p: ["run", "--kg", str(p), "-q", "countries-demo", "--limit", "1", "--out", str(tmp_path / "out")])


@pytest.mark.parametrize("case", QUESTION_CASES, ids=lambda c: c.id)
def test_run_questions(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case) -> None:
    _run(capsys, tmp_path, case, lambda p: ["run", "--kg", "countries", "-q", str(p), "--limit", "1", "--out", str(tmp_path / "out")])


@pytest.mark.parametrize("case", TRACE_CASES, ids=lambda c: c.id)
def test_traces(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case) -> None:
    _run(capsys, tmp_path, case, lambda p: ["traces", str(p)])


@pytest.mark.parametrize("fmt", ["jaeger", "otlp-json"])
@pytest.mark.parametrize("case", [c for c in TRACE_CASES if c.id in ("t-resource-spans-int", "t-spans-wrong-types", "t-attributes-wrong")], ids=lambda c: c.id)
def test_traces_conversion(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case, fmt: str) -> None:
    _run(capsys, tmp_path, case, lambda p: ["traces", str(p), "--format", fmt, "--output", str(tmp_path / "converted.json")])


@pytest.mark.parametrize("case", REPORT_CASES, ids=lambda c: c.id)
def test_report(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case) -> None:
    _run(capsys, tmp_path, case, lambda p: ["report", str(p), "--out", str(tmp_path / "rendered")])


def test_xxe_is_not_resolved(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """An external entity in GraphML is never read: neither into the graph nor into a message."""
    path = tmp_path / "g.graphml"
    path.write_bytes(XXE)
    code = main(["kg", "info", str(path), "--samples", "5"])
    captured = capsys.readouterr()
    assert code in (0, 2)
    passwd = Path("/etc/passwd").read_text(encoding="utf-8", errors="replace").split("\n")[0] if Path("/etc/passwd").exists() else "root:x:0:0"
    assert passwd[:20] not in captured.out + captured.err


def test_eval_resume_with_a_damaged_run_cache(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A run cache with torn, binary and hostile lines: --resume skips them and redoes those runs."""
    out = tmp_path / "eval"
    out.mkdir()
    (out / "runs.jsonl").write_bytes(b'{"key": {"agent": 5}}\n' + bytes(range(256)) + b"\n" + b"[" * 100_000 + b"\n" + b'{"x": ' + BIG.encode() + b"}\n")
    code = main(["eval", "--kg", "countries", "-q", "countries-demo", "--limit", "1", "-c", "baseline", "--out", str(out), "--resume"])
    captured = capsys.readouterr()
    assert code in (0, 2), captured.err[-2000:]
    assert "Traceback" not in captured.out + captured.err and "internal error" not in captured.err
