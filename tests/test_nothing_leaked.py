"""Issue 18 (redaction everywhere, bounded inputs, output folders, exit status).

Each test below failed on the code before the issue: secrets of common shapes in
spans and files, JSON inside JSON, unprotected output folders, whole-file question
reading, and an evaluation that exited 0 after losing spans.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import graphtrail
from graphtrail.tracer import get_memory_exporter
from graphtrail.tracer.redact import redact_text

def od() -> Any:
    """graphtrail._outdir, imported by each test (so that each fails on its own where it is missing)."""
    import importlib

    return importlib.import_module("graphtrail._outdir")


# Each shape: (text as a user or a tool would write it, the secret part that must never be written).
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
SHAPES = {
    "stripe": (f"key {STRIPE}", STRIPE),
    "stripe-restricted": ("rk_live_51HqLyjWDarjtT1zdp7dcXY", "rk_live_51HqLyjWDarjtT1zdp7dcXY"),
    "azure": ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + "QXp1cmVLZXk" * 8 + "==;EndpointSuffix=core",
              "QXp1cmVLZXk" * 8),
    "sas": ("https://acct.blob.core.windows.net/c/b?sv=2020-08-04&sr=b&sig=SaSSig0123456789abcdEF%3D&se=2030", "SaSSig0123456789abcdEF"),
    "basic": ("send Basic dXNlcjpzZWNyZXQ= with it", "dXNlcjpzZWNyZXQ="),  # user:secret, no digit
    "curl": ("curl -u admin:CurlPa55word https://x.test", "CurlPa55word"),
    "db-url": ("postgres://app:Pg/Pa@ss99@db.example.test/prod", "Pg/Pa@ss99"),
    "flag": ("dump --password FlagPw77 --verbose", "FlagPw77"),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_common_credential_shapes_are_redacted(name: str) -> None:
    text, secret = SHAPES[name]
    out = redact_text(text)
    assert secret not in out and "<redacted>" in out


def test_detect_secrets_finds_nothing_in_redacted_text() -> None:
    """The maintained detector (detect-secrets' plugins) finds nothing in what we keep."""
    pytest.importorskip("detect_secrets")
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def found(text: str) -> list[str]:  # its provider and keyword detectors (entropy flags any word here)
        return [s.type for s in scan_line(text) if "High Entropy" not in s.type]

    with default_settings():
        assert found(SHAPES["stripe"][0]) and found(SHAPES["azure"][0])  # it does see raw shapes ...
        for text, _ in SHAPES.values():
            assert not found(redact_text(text)), text  # ... and none in what we keep


def test_json_inside_json_is_redacted_as_a_structure() -> None:
    inner = json.dumps({"password": "pw-Inner77", "user": "bob"})
    out = redact_text(json.dumps({"body": inner, "note": "fine"}))
    assert "pw-Inner77" not in out and "bob" in out and json.loads(json.loads(out)["body"])["password"] == "<redacted>"
    cut = json.dumps({"body": inner})[:32]  # cut short: does not parse, still redacted
    assert "pw-Inn" not in redact_text(cut + "7")


# ---------------------------------------------------------------- spans, every content mode


def _agent() -> Any:
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from tests.fakes import ScriptedChatModel, tool_call
    from tests.test_tracer_kit import build_toolnode_graph

    @tool
    def fetch(cmd: str, blob: str) -> str:
        """Run a command; echoes a JSON body holding JSON, as careless tools do."""
        return json.dumps({"ran": cmd, "body": blob, "conn": SHAPES["azure"][0]})

    @tool
    def submit_answer(answer: str, citations: list[str]) -> str:
        """Submit the answer."""
        return "accepted"

    blob = json.dumps({"password": "pw-Blob4242", "dsn": SHAPES["db-url"][0]})
    script = [
        AIMessage(content="", tool_calls=[tool_call("fetch", {"cmd": SHAPES["curl"][0], "blob": blob}, "c1")]),
        AIMessage(content="", tool_calls=[tool_call("submit_answer", {"answer": f"done {SHAPES['sas'][0]}", "citations": [STRIPE]}, "c2")]),
        AIMessage(content="done"),
    ]
    return build_toolnode_graph(ScriptedChatModel(script=script, model_name="m"), [fetch, submit_answer])


SPAN_SECRETS = [s for _, s in SHAPES.values()] + ["pw-Blob4242"]


@pytest.mark.parametrize("mode", ["full", "ids-only", "none"])
def test_no_secret_in_any_span(mode: str) -> None:
    from graphtrail.tracer import run_annotations

    graphtrail.configure(exporter="memory", content=mode)
    try:
        traced = graphtrail.trace_agent(_agent(), name=f"agent {SHAPES['flag'][0]}")
        with run_annotations(attributes={"app.conn": SHAPES["basic"][0]}, metadata={"ci": SHAPES["stripe-restricted"][0]}):
            traced.invoke({"messages": [("user", f"why {SHAPES['curl'][0]}")]}, config={"configurable": {"thread_id": STRIPE}})
        spans = list(get_memory_exporter().get_finished_spans())
    finally:
        graphtrail.configure(exporter="none")
    dump = "\n".join(
        f"{s.name} {k} {v}" for s in spans for k, v in [*s.attributes.items(), *((k, v) for e in s.events for k, v in e.attributes.items())]
    )
    assert "execute_tool fetch" in dump
    for secret in SPAN_SECRETS:
        for form in (secret, json.dumps(secret)[1:-1], json.dumps(json.dumps(secret))[1:-1]):
            assert form not in dump, f"{secret!r} leaked into a span in content={mode}"


# ---------------------------------------------------------------- files of an evaluation, every content mode


@pytest.mark.parametrize("mode", ["full", "ids-only", "none"])
def test_no_secret_in_any_file_of_an_evaluation(tmp_path: Path, mode: str) -> None:
    from graphtrail import agents, evaluators
    from graphtrail.agents import load_questions

    kg = agents.load_kg("countries")
    q = load_questions("countries-demo")[0]
    seeded = q.model_copy(update={"question": q.question + " (creds: " + "; ".join(t for t, _ in SHAPES.values()) + ")"})
    agent = agents.create_graphrag_agent(agents.resolve_model("offline"), kg, variant="agentic")
    out = tmp_path / "out"
    graphtrail.configure(exporter="jsonl", path=out / "replay-traces.jsonl", content=mode)
    try:
        evaluators.evaluate(agent, [seeded], kg=kg, conditions=["baseline"], trials=1, out_dir=out, progress=False)
        from graphtrail.tracer import config

        config.flush()
    finally:
        graphtrail.configure(exporter="none")
    files = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert {"results.json", "report.md", "report.html", "runs.jsonl", "replay-traces.jsonl"} <= set(files)
    assert b"creds" in files["results.json"]  # the question is there, its secrets are not
    for name, data in files.items():
        for _, secret in SHAPES.values():
            for form in (secret, json.dumps(secret)[1:-1]):
                assert form.encode() not in data, f"{secret!r} leaked into {name} (content={mode})"


# ---------------------------------------------------------------- output folders


def test_library_refuses_a_foreign_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(od().OutDirNotEmpty, match="not made by graphtrail"):
        od().claim(tmp_path)
    assert od().claim(tmp_path, force=True) == tmp_path and (tmp_path / od().MARKER).exists()


def test_a_second_writer_is_refused_and_a_stale_lock_taken_over(tmp_path: Path) -> None:
    od().claim(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / od().LOCK).write_text(f"{holder.pid}\n", encoding="ascii")
        with pytest.raises(od().OutDirLocked, match=f"pid {holder.pid}"):
            with od().lock(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
    with od().lock(tmp_path):  # its process is gone: stale
        assert (tmp_path / od().LOCK).read_text().strip() == str(os.getpid())
    assert not (tmp_path / od().LOCK).exists()


def test_a_symlink_planted_in_the_folder_is_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "elsewhere.txt"
    victim.write_text("precious", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    (out / "runs.jsonl").symlink_to(victim)
    od().write_text(out / "report.md", "new")
    assert victim.read_text() == "precious" and (out / "report.md").read_text() == "new"
    with pytest.raises(od().WriteFailed, match="symbolic link"):
        od().open_append(out / "runs.jsonl")
    assert victim.read_text() == "precious"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(graphtrail.__file__).resolve().parents[1])}  # the graphtrail under test
    return subprocess.run([sys.executable, "-m", "graphtrail", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_cli_refuses_foreign_folder_and_a_locked_one_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "mine.txt").write_text("x", encoding="utf-8")
    proc = _cli("eval", "--kg", "countries", "-q", "countries-demo", "--limit", "1", "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "not made by graphtrail" in proc.stderr
    (out / "mine.txt").unlink()
    od().claim(out)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / od().LOCK).write_text(f"{holder.pid}\n", encoding="ascii")
        proc = _cli("eval", "--kg", "countries", "-q", "countries-demo", "--limit", "1", "-o", str(out), cwd=tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "is writing to" in proc.stderr


@pytest.mark.parametrize("name", ["replay-traces.jsonl", "reuse.jsonl", "accuracy.png"])
def test_eval_without_force_keeps_what_it_would_append_to_or_replace(tmp_path: Path, name: str) -> None:
    from graphtrail.cli import pipeline
    from graphtrail.cli.errors import InputError
    from graphtrail.cli.inputs import guard_out_dir

    tmp_path.mkdir(exist_ok=True)
    (tmp_path / ".graphtrail").write_text("", encoding="utf-8")
    (tmp_path / name).write_bytes(b"old")
    with pytest.raises(InputError, match=name.replace(".", r"\.")):
        guard_out_dir(tmp_path, pipeline.eval_files(), force=False)
    assert (tmp_path / name).read_bytes() == b"old"


# ---------------------------------------------------------------- exit status and messages


def test_lost_spans_fail_with_one_line_naming_the_file(tmp_path: Path) -> None:
    from graphtrail.cli import pipeline

    target = tmp_path / "traces.jsonl"
    target.mkdir()  # cannot be written as a file
    pipeline.setup_tracing(target, None)
    try:
        with graphtrail.capture():
            graphtrail.trace_agent(_agent()).invoke({"messages": [("user", "hi")]})
        with pytest.raises(od().WriteFailed) as err:
            pipeline._flush_tracing()
    finally:
        graphtrail.configure(exporter="none")
    message = str(err.value)
    assert str(target) in message and "lost" in message and "\n" not in message


def test_write_failure_names_the_file_and_reason() -> None:
    import errno

    exc = OSError(errno.ENOSPC, "No space left on device")
    assert od().describe_os_error(exc, "/x/results.json") == "cannot write /x/results.json: no space left on the device"


def test_otlp_failure_line_hides_the_endpoint_password() -> None:
    from graphtrail.cli.pipeline import otlp_outcome

    graphtrail.configure(exporter="none")
    row = otlp_outcome("http://user:tok3nSecret@127.0.0.1:9/v1/traces")
    assert "tok3nSecret" not in json.dumps(row)


# ---------------------------------------------------------------- bounded inputs


def test_limit_one_reads_one_line_and_a_bad_first_line_is_reported_first(tmp_path: Path) -> None:
    from graphtrail.agents import QuestionsError
    from graphtrail.cli.inputs import load_questions_arg

    good = json.dumps({"id": "q1", "question": "What is the capital of France?", "answers": ["Paris"]})
    path = tmp_path / "q.jsonl"
    path.write_bytes(good.encode() + b"\n" + b"\xff\xfe not utf-8 {\n")
    assert [q.id for q in load_questions_arg(str(path), limit=1)] == ["q1"]
    path.write_bytes(b"{not json\n" + b"\xff\xfe not utf-8 {\n")
    with pytest.raises(QuestionsError, match="line 1"):
        load_questions_arg(str(path), limit=1)


def test_a_question_past_the_limit_is_refused_in_one_line(tmp_path: Path) -> None:
    from graphtrail.agents.limits import MAX_QUESTION_CHARS

    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "q1", "question": "a " * MAX_QUESTION_CHARS, "answers": ["x"]}) + "\n", encoding="utf-8")
    proc = _cli("run", "--kg", "countries", "-q", str(path), "-o", str(tmp_path / "o"), cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert f"{MAX_QUESTION_CHARS:,}" in proc.stderr and not (tmp_path / "o").exists()


def test_the_offline_model_reads_a_bounded_question() -> None:
    from langchain_core.messages import HumanMessage

    from graphtrail.agents.limits import MAX_QUESTION_CHARS
    from graphtrail.agents.offline.memory import _read_conversation

    question, *_ = _read_conversation([HumanMessage(content="What is the capital of " + "x" * 1_000_000)])
    assert len(question) <= MAX_QUESTION_CHARS


def test_a_symlinked_trace_file_is_refused_not_appended_through(tmp_path: Path) -> None:
    from graphtrail.cli import pipeline

    victim = tmp_path / "elsewhere.jsonl"
    victim.write_text("precious\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    link = tmp_path / "out" / "replay-traces.jsonl"
    link.symlink_to(victim)
    with pytest.raises(od().WriteFailed, match="symbolic link"):
        pipeline.setup_tracing(link, None)
    graphtrail.configure(exporter="none")
    assert victim.read_text() == "precious\n"


def test_a_symlinked_run_log_is_refused_not_appended_through(tmp_path: Path) -> None:
    victim = tmp_path / "elsewhere.jsonl"
    victim.write_text("precious\n", encoding="utf-8")
    link = tmp_path / "runs.jsonl"
    link.symlink_to(victim)
    with pytest.raises(od().WriteFailed, match="symbolic link"):
        od().append_text(link, "a run\n")
    assert victim.read_text() == "precious\n"


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Any:
    """A 64 KB tmpfs (root only; skipped where mounting is not allowed), unmounted after."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_full_disk_and_a_read_only_one_are_one_line_naming_the_file(tiny_disk: Path, tmp_path: Path) -> None:
    args = ("eval", "--kg", "countries", "-q", "countries-demo", "--limit", "2", "-o", str(tiny_disk / "o"))
    proc = _cli(*args, cwd=tmp_path)
    errors = [line for line in proc.stderr.splitlines() if "runs (" not in line]  # progress lines aside
    assert proc.returncode != 0 and len(errors) == 1, proc.stderr
    assert "no space left" in errors[0] and str(tiny_disk / "o") in errors[0]
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_disk)], check=True)
    proc = _cli(*args, "--force", cwd=tmp_path)
    errors = [line for line in proc.stderr.splitlines() if "runs (" not in line]
    assert proc.returncode != 0 and len(errors) == 1, proc.stderr
    assert "read-only" in errors[0] and str(tiny_disk / "o") in errors[0]


# ---------------------------------------------------------------- issue 29: every published shape through every exit
#
# One module-scoped probe writes every shape (tests/secret_agent.py: SHAPES) into every input
# graphtrail reads -- questions, a hand-edited results.json, a trace file from "another
# producer" (raw secrets in its questions, answers and attributes), command-line values, a
# provider's model name, a tool's error -- and keeps every byte that leaves: each command's
# stdout and stderr, every file it writes, the OTLP bodies a loopback collector receives,
# the logger's output and a /metrics scrape. The tests then grep those bytes for each
# planted secret and run detect-secrets, all plugins, over them.


def _all_shapes_text() -> str:
    from tests.secret_agent import SHAPES as ALL

    return " | ".join(text for text, _ in ALL.values())


def _planted() -> dict[str, str]:
    from tests.secret_agent import SHAPES as ALL

    return {name: secret for name, (_, secret) in ALL.items()}


def _salt_strings(value: Any, keys: tuple[str, ...], extra: str) -> Any:
    """``value`` with ``extra`` appended to every string under one of ``keys`` (a hand-edited file)."""
    if isinstance(value, dict):
        return {k: (v + " " + extra if k in keys and isinstance(v, str) else _salt_strings(v, keys, extra)) for k, v in value.items()}
    if isinstance(value, list):
        return [_salt_strings(v, keys, extra) for v in value]
    return value


def _foreign_trace(src: Path, dst: Path, extra: str) -> None:
    """A trace file from "another producer": raw secrets in questions, answers and attributes."""
    lines = []
    for line in src.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        for rs in doc.get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for span in ss.get("spans", []):
                    for attr in span.get("attributes", []):
                        if attr["key"] in ("graphtrail.question", "graphtrail.answer"):
                            attr["value"] = {"stringValue": attr["value"].get("stringValue", "") + " " + extra}
                        elif attr["key"] in ("graphtrail.citations", "graphtrail.provenance.unsupported_citations"):
                            # a cited id no tool revealed, spelling a key id: `traces stats` lists such runs
                            attr["value"] = {"stringValue": json.dumps([_planted()["aws-akia"]])}
                    span["attributes"] += [
                        {"key": "password", "value": {"stringValue": "pw-Foreign77x"}},
                        {"key": "http.request.header.authorization", "value": {"stringValue": "Bearer fOrEiGn0123456789"}},
                        {"key": "app.note", "value": {"stringValue": extra}},
                    ]
        lines.append(json.dumps(doc))
    dst.write_text("\n".join(lines) + "\n", encoding="utf-8")


_RUNNER = """
import contextlib, io, json, os, sys
from graphtrail.cli.main import main

calls = json.loads(sys.argv[1])
codes = {}
for name, args, env in calls:
    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            codes[name] = main(args)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    codes[name] = [codes[name], out.getvalue(), err.getvalue()]
print(json.dumps(codes))
"""


class _Probe:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.streams: dict[str, bytes] = {}  # stdout/stderr of each command, logger output, scrapes
        self.otlp: list[bytes] = []

    def cli(self, calls: dict[str, tuple[tuple[str, ...], dict[str, str] | None]]) -> dict[str, tuple[int, str, str]]:
        """Run the commands one after the other in one interpreter (each through the CLI's ``main``,
        its stdout and stderr captured apart): one start-up instead of one per command."""
        env = {**os.environ, "PYTHONPATH": str(Path(graphtrail.__file__).resolve().parents[1])}
        env.pop("OTEL_EXPORTER_OTLP_COMPRESSION", None)
        payload = json.dumps([[name, list(args), extra or {}] for name, (args, extra) in calls.items()])
        proc = subprocess.run([sys.executable, "-c", _RUNNER, payload], capture_output=True, text=True, env=env, cwd=self.root, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        self.streams["runner stderr"] = proc.stderr.encode()  # anything written past the redirection
        done = {name: (rc, out, err) for name, (rc, out, err) in json.loads(proc.stdout.strip().splitlines()[-1]).items()}
        (self.root / "streams").mkdir(exist_ok=True)  # kept beside the files, to read when a test fails
        for name, (rc, out, err) in done.items():
            self.streams[f"{name} stdout"], self.streams[f"{name} stderr"] = out.encode(), err.encode()
            (self.root / "streams" / f"{name.replace('/', '_')}.out").write_text(f"exit {rc}\n{out}\n---- stderr\n{err}", encoding="utf-8")
        return done

    def files(self) -> dict[str, bytes]:
        return {str(p.relative_to(self.root)): p.read_bytes() for p in self.root.rglob("*")
                if p.is_file() and "inputs" not in p.parts and "streams" not in p.parts}

    def everything(self) -> dict[str, bytes]:
        return {**self.files(), **self.streams, "otlp": b"".join(self.otlp)}


def _library_exits(probe: _Probe, endpoint: str) -> None:
    """In this process: a provider reporting a token as its model name (spans, OTLP, trajectories,
    Prometheus labels), and an evaluation whose tool error quotes a token (the coverage warning)."""
    import io
    import logging
    import urllib.request

    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from graphtrail import agents, evaluators
    from graphtrail.agents import load_questions
    from tests.fakes import ScriptedChatModel, tool_call
    from tests.secret_agent import SHAPES as ALL
    from tests.servers import free_port

    log = io.StringIO()
    handler = logging.StreamHandler(log)
    logging.getLogger("graphtrail").addHandler(handler)
    model_token, tool_token = ALL["openai-proj"][1], ALL["github-pat"][1]

    @tool
    def connect(dsn: str) -> str:
        """Connect to a database."""
        raise ConnectionError(f"could not connect with {tool_token} ({ALL['ghp'][1]})")

    try:
        graphtrail.configure(exporter=["otlp", "jsonl"], endpoint=endpoint, path=probe.root / "lib" / "spans.jsonl",
                             metrics="prometheus", prometheus_port=free_port())
        from graphtrail.tracer.metrics import prometheus_address

        with graphtrail.capture() as cap:
            model = ScriptedChatModel(script=[AIMessage(content=f"done {ALL['telegram'][0]}")], model_name=model_token)
            graphtrail.trace_agent(create_agent(model, []), name="probe").invoke({"messages": [("user", "hi")]})
        host, port = prometheus_address()  # type: ignore[misc]
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as resp:
            probe.streams["/metrics"] = resp.read()
        probe.streams["trajectories (library)"] = "\n".join(t.model_dump_json() for t in cap.trajectories).encode()
        assert b"graphtrail_runs" in probe.streams["/metrics"]

        failing = create_agent(ScriptedChatModel(script=[AIMessage(content="", tool_calls=[tool_call("connect", {"dsn": "db"}, "c1")])],
                                                 model_name="m"), [connect])
        q = load_questions("countries-demo")[0]
        evaluators.evaluate(failing, [q], kg=agents.load_kg("countries"), conditions=["baseline", "cited_removal"], trials=1,
                            out_dir=probe.root / "lib" / "eval", progress=False)
    finally:
        graphtrail.configure(exporter="none", metrics="none")
        logging.getLogger("graphtrail").removeHandler(handler)
    probe.streams["graphtrail logger"] = log.getvalue().encode()
    assert "failed with an error" in log.getvalue() or "Invalid results" in log.getvalue(), log.getvalue()[-2000:]


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import http.server
    import threading

    from graphtrail.agents import load_questions
    from tests.test_redaction import _Collector

    root = tmp_path_factory.mktemp("leak-probe")
    probe = _Probe(root)
    extra = _all_shapes_text()
    (root / "inputs").mkdir()
    questions = root / "inputs" / "q.jsonl"
    rows = [q.model_dump(mode="json") for q in load_questions("countries-demo")[:2]]
    questions.write_text("\n".join(json.dumps({**r, "question": r["question"] + " (" + extra + ")"}) for r in rows) + "\n", encoding="utf-8")

    _Collector.bodies = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        first = probe.cli({
            "run": (("run", "--kg", "countries", "-q", str(questions), "-o", "run", "--otlp", endpoint), None),
            "eval": (("eval", "--kg", "countries", "-q", str(questions), "-o", "eval", "--conditions", "baseline,cited_removal"), None),
        })
        assert all(rc == 0 for rc, _, _ in first.values()), first
        # inputs graphtrail did not write: a hand-edited results.json and another producer's traces
        edited = _salt_strings(json.loads((root / "eval" / "results.json").read_text(encoding="utf-8")),
                               ("baseline_answer", "answer", "name", "fidelity_note", "agent", "model"), extra)
        (root / "inputs" / "edited").mkdir()
        (root / "inputs" / "edited" / "results.json").write_text(json.dumps(edited), encoding="utf-8")
        foreign = root / "inputs" / "foreign.jsonl"
        _foreign_trace(root / "run" / "traces.jsonl", foreign, extra)
        s = _planted()
        done = probe.cli({
            "eval --from-traces": (("eval", "--kg", "countries", "--from-traces", str(foreign), "-o", "from-traces"), None),
            # json writes compare.{md,json,html} and appends the Markdown to the step summary; table prints
            "compare json": (("compare", "eval", str(root / "inputs" / "edited"), "--format", "json", "--out", "compare"),
                             {"GITHUB_STEP_SUMMARY": str(root / "step-summary.md")}),
            "compare table": (("compare", str(root / "inputs" / "edited"), "eval", "--out", "compare-reversed"), None),
            "report edited": (("report", str(root / "inputs" / "edited"), "--html", "--out", "report-edited"), None),
            "traces": (("traces", str(foreign)), None),
            "traces jaeger": (("traces", str(foreign), "--format", "jaeger"), None),
            "traces otlp-json": (("traces", str(foreign), "--format", "otlp-json", "--output", "converted/otlp.json"), None),
            "traces stats": (("traces", "stats", str(foreign), "--json", "stats/stats.json", "--html", "stats/stats.html"), None),
            # usage errors, answered before anything heavy loads
            "usage --trials": (("eval", "--trials", s["ghp"]), None),
            "usage --alpha": (("compare", "--alpha", s["github-pat"], "a", "b"), None),
            "usage --model": (("eval", "-o", "x", "--kg", "countries", "-q", "countries-demo", "--model", f"{s['openai-proj']}:x"), None),
            "usage --conditions": (("eval", "-o", "x", "--kg", "countries", "-q", "countries-demo", "--conditions",
                                    "123456789:" + s["telegram"]), None),
            "usage questions path": (("eval", "-o", "x", "--kg", "countries", "-q", f"/nope/{s['aws-abia']}.jsonl"), None),
        })
        # annotate re-sends what a results.json says: a hand-edited one, beside its questions-from-traces.jsonl
        import shutil

        shutil.copytree(root / "from-traces", root / "inputs" / "edited-ft")
        ft_results = root / "inputs" / "edited-ft" / "results.json"
        ft_results.write_text(json.dumps(_salt_strings(json.loads(ft_results.read_text(encoding="utf-8")), ("question", "name"), extra)),
                              encoding="utf-8")
        done |= probe.cli({"annotate": (("annotate", str(root / "inputs" / "edited-ft"), "--otlp", endpoint), None)})
        for name, (rc, _, err) in done.items():
            if name.startswith("usage"):
                assert rc == 2 and "<redacted>" in err, (name, err)
            else:
                assert rc == 0, (name, err[-2000:])
        _library_exits(probe, endpoint)
    finally:
        server.shutdown()
        server.server_close()
    probe.otlp = list(_Collector.bodies)
    return probe


@pytest.mark.timeout(900)  # the probe runs every command once (module-scoped), on a shared machine
def test_the_probe_reached_every_exit(probe: Any) -> None:
    """The bytes scanned below are real outputs of each exit, holding the probe's text (so a scan can fail)."""
    files = probe.files()
    for name in ("run/traces.jsonl", "eval/results.json", "eval/report.md", "report-edited/report.html", "compare/compare.md",
                 "compare/compare.json", "compare/compare.html", "step-summary.md", "from-traces/results.json",
                 "converted/otlp.json", "stats/stats.json", "stats/stats.html", "lib/spans.jsonl"):
        assert name in files and files[name], name
    assert b"redacted&gt;" in files["compare/compare.md"] or b"redacted>" in files["compare/compare.md"]
    assert b"<redacted>" in files["stats/stats.json"]
    assert b"<redacted>" in probe.streams["traces stdout"] and b"<redacted>" in probe.streams["traces jaeger stdout"]
    assert probe.otlp and b"invoke_agent" in b"".join(probe.otlp)
    assert b"gen_ai_request_model" in probe.streams["/metrics"] or b"gen_ai_agent_name" in probe.streams["/metrics"]


@pytest.mark.timeout(900)  # the probe runs every command once (module-scoped), on a shared machine
def test_no_planted_secret_in_any_byte_of_any_exit(probe: Any) -> None:
    planted = {**_planted(), "foreign-password": "pw-Foreign77x", "foreign-bearer": "fOrEiGn0123456789"}
    leaks = []
    for where, data in probe.everything().items():
        for name, secret in planted.items():
            for form in (secret, json.dumps(secret)[1:-1]):
                if form.encode() in data:
                    leaks.append(f"{name} in {where}")
    assert leaks == [], leaks


def _id_like(value: str | None) -> bool:
    """A span or trace id (16 or 32 hex digits) or a content hash graphtrail made (sha256: the graph's and the
    questions' fingerprints): the only strings detect-secrets' hex-entropy plugin may flag."""
    import re

    return bool(value) and re.fullmatch(r"[0-9a-f]{16}|[0-9a-f]{32}|[0-9a-f]{64}", value or "") is not None


@pytest.mark.timeout(900)  # the probe runs every command once (module-scoped), on a shared machine
def test_detect_secrets_with_all_plugins_finds_nothing_in_any_exit(probe: Any, tmp_path: Path) -> None:
    pytest.importorskip("detect_secrets")
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    findings = []
    with default_settings() as settings:
        assert len(settings.plugins) >= 27  # every plugin detect-secrets ships (1.5: 27)
        for i, (where, data) in enumerate(probe.everything().items()):
            suffix = Path(where).suffix if Path(where).suffix in (".json", ".jsonl", ".md", ".html", ".txt") else ".txt"
            path = tmp_path / f"{i}{suffix}"
            path.write_bytes(data)
            found = SecretsCollection()
            found.scan_file(str(path))
            findings += [(where, s.type, s.secret_value) for _, s in found
                         if not (s.type == "Hex High Entropy String" and _id_like(s.secret_value))]
    assert findings == [], findings
