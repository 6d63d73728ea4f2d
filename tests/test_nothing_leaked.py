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
