"""Secrets never leave in spans: the redaction rules, each place a tool argument surfaces, and
a scan of every exported byte (OTLP to a loopback collector, JSONL files, console) in all
three content modes."""

from __future__ import annotations

import gzip
import http.server
import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphtrail
from graphtrail.tracer import get_memory_exporter
from graphtrail.tracer._content import clean_args
from graphtrail.tracer.redact import REDACTED, is_secret_key, redact, redact_text
from tests.secret_agent import QUESTION, SECRETS, VISIBLE, build_failing_agent, build_secret_agent, run_secret_agents

REPO = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------- the rules


@pytest.mark.parametrize(
    "key",
    ["password", "Password", "pwd", "passwd", "pw", "passphrase", "private_key", "privateKey", "bearer", "token",
     "access_token", "refreshToken", "cookie", "Set-Cookie", "session", "session_id", "sessionId", "credential",
     "credentials", "client_secret", "clientSecret", "api_key", "API-KEY", "apiKey", "x-api-key", "secret",
     "authorization", "Proxy-Authorization", "oauth", "auth", "jwt", "csrf_token", "pin", "dsn", "connection_string"],
)
def test_secret_keys(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    ["entity_id", "query", "name", "author", "author_id", "authority", "max_tokens", "input_tokens", "token_count",
     "key", "keyword", "passenger", "compass", "spinning", "relation", "citations", "answer"],
)
def test_ordinary_keys(key: str) -> None:
    assert not is_secret_key(key)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("login with password=hunter2 please", "hunter2"),
        ('{"user": "bob", "password": "hunter2"}', "hunter2"),
        ("{'pwd': 'hunter2'}", "hunter2"),
        ("Authorization: Bearer abcDEF1234567890", "abcDEF1234567890"),
        ('curl -H "Authorization: Basic dXNlcjpwYXNz" x', "dXNlcjpwYXNz"),
        ("headers sent with bearer eyJhbGciOi.payload1234", "eyJhbGciOi.payload1234"),
        ("Cookie: sessionid=abc123; csrftoken=zz999", "zz999"),
        ("postgres://admin:s3cr3t@db:5432/app", "s3cr3t"),
        ("use sk-proj-ABCDEFGHIJKLMNOPQRST0 for it", "sk-proj-ABCDEFGHIJKLMNOPQRST0"),
        ("ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
        ("aws AKIAIOSFODNN7EXAMPLE key", "AKIAIOSFODNN7EXAMPLE"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAK\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAK"),
        ('"client_secret": {"v": "nested-value"}, "x": 1', "nested-value"),
        ("my API key: zq-123456", "zq-123456"),
        ("pin\n  Input should be a valid integer [type=int_parsing, input_value='9876x', input_type=str]", "9876x"),
        ("X-Api-Key: k-abc-123 (sent)", "k-abc-123"),
    ],
)
def test_text_redaction(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and REDACTED in out


@pytest.mark.parametrize(
    "text",
    ["Which currency is used in the country whose capital is Nairobi?", "the author: Bob; max_tokens=100",
     "passengers spinning a compass", '{"entity_id": "Q42", "relation": "capital"}', "basic facts about Kenya"],
)
def test_text_without_secrets_is_unchanged(text: str) -> None:
    assert redact_text(text) is text or redact_text(text) == text


def test_redact_walks_structures_without_changing_them() -> None:
    value = {"a": {"Password": 123456, "list": [{"token": "t1"}, "Bearer abcdefgh12345"]}, "ok": "Q42", "n": None}
    out = redact(value)
    assert out == {"a": {"Password": REDACTED, "list": [{"token": REDACTED}, f"Bearer {REDACTED}"]}, "ok": "Q42", "n": None}
    assert value["a"]["Password"] == 123456  # the input is not modified
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    assert "x" not in json.dumps(redact(deep))  # too deep to walk: replaced whole


@pytest.mark.parametrize("mode", ["full", "ids-only"])
def test_clean_args_redacts_in_every_mode(mode: str) -> None:
    args = {"user": "alice", "password": "hunter2", "auth": {"Authorization": "Bearer x"}, "q": "sk-ABCDEFGHIJKLMNOPQRSTUV"}
    out = clean_args(args, mode, 100)  # type: ignore[arg-type]
    assert out["password"] == REDACTED and out["auth"] == REDACTED and "sk-" not in json.dumps(out)
    assert out["user"] == "alice"


def test_users_rule(memory: Any) -> None:
    seen: list[tuple[Any, Any]] = []

    def rule(key: str | None, value: Any) -> Any:
        seen.append((key, value))
        if key in ("username", "user"):
            return "<user>"
        if key is None and isinstance(value, str):
            return value.replace("welcome", "hello")
        return value

    graphtrail.configure(exporter="memory", redact=rule)
    try:
        graphtrail.trace_agent(build_secret_agent()).invoke({"messages": [("user", QUESTION)]})
        spans = list(get_memory_exporter().get_finished_spans())
    finally:
        graphtrail.configure(exporter="memory")
    args = _where(spans, "execute_tool login", "attr:graphtrail.step.args")
    requested = _where(spans, "chat", "attr:output.value")  # the model's call to login, with its arguments
    assert "<user>" in args and VISIBLE["username"] not in args
    assert "<user>" in requested and VISIBLE["username"] not in requested
    assert "hello" in _where(spans, "execute_tool login", "attr:output.value")  # free text: key None
    assert ("username", VISIBLE["username"]) in seen and any(k is None for k, _ in seen)
    assert not any(s in _dump_spans(spans) for s in SECRETS.values())  # the built-in rules still apply


def test_a_users_rule_that_raises_fails_closed(memory: Any, caplog: pytest.LogCaptureFixture) -> None:
    def rule(key: str | None, value: Any) -> Any:
        raise RuntimeError("bug in my rule")

    graphtrail.configure(exporter="memory", redact=rule)
    try:
        graphtrail.trace_agent(build_secret_agent()).invoke({"messages": [("user", QUESTION)]})
        dumped = _dump_spans(get_memory_exporter().get_finished_spans())
    finally:
        graphtrail.configure(exporter="memory")
    assert VISIBLE["username"] not in dumped and REDACTED in dumped


def test_configure_rejects_a_rule_that_is_not_callable() -> None:
    with pytest.raises(TypeError):
        graphtrail.configure(exporter="none", redact="password")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- each place, in a real run


@pytest.fixture
def memory() -> Iterator[Any]:
    graphtrail.configure(exporter="memory")
    yield get_memory_exporter()
    graphtrail.configure(exporter="none")


def _span_texts(span: Any) -> dict[str, str]:
    """Every string a span exports, by where it is."""
    out = {f"attr:{k}": str(v) for k, v in span.attributes.items()}
    for i, ev in enumerate(span.events):
        out.update({f"event{i}:{k}": str(v) for k, v in ev.attributes.items()})
    if span.status.description:
        out["status"] = span.status.description
    return out


def _dump_spans(spans: Any) -> str:
    return "\n".join(f"{s.name} {k} {v}" for s in spans for k, v in _span_texts(s).items())


@pytest.fixture(scope="module")
def traced_run() -> Iterator[tuple[list[Any], list[Any]]]:
    """The secret agents' spans and trajectories in content="full" (the most that is ever recorded)."""
    graphtrail.configure(exporter="memory")
    try:
        with graphtrail.capture() as cap:
            run_secret_agents(graphtrail.trace_agent(build_secret_agent()), graphtrail.trace_agent(build_failing_agent()))
        spans = list(get_memory_exporter().get_finished_spans())
    finally:
        graphtrail.configure(exporter="none")
    yield spans, cap.trajectories


def _where(spans: list[Any], name_prefix: str, where: str, nth: int = 0) -> str:
    matching = [s for s in spans if s.name.startswith(name_prefix)]
    texts = _span_texts(matching[nth])
    hits = {k: v for k, v in texts.items() if k == where or k.startswith(where)}
    assert hits, f"{name_prefix} has no {where}: {sorted(texts)}"
    return "\n".join(hits.values())


# (span, attribute or event, secret, text that must still be there): one row per place.
PLACES = [
    pytest.param("execute_tool login", "attr:graphtrail.step.args", "password", VISIBLE["username"], id="tool-args"),
    pytest.param("execute_tool login", "attr:input.value", "password", VISIBLE["username"], id="tool-input-value"),
    pytest.param("execute_tool call_api", "attr:graphtrail.step.args", "bearer", VISIBLE["endpoint"], id="tool-args-nested-header"),
    pytest.param("execute_tool call_api", "attr:output.value", "bearer", VISIBLE["endpoint"], id="tool-output-echoes-args"),
    pytest.param("execute_tool call_api", "attr:output.value", "session_cookie", VISIBLE["endpoint"], id="tool-output-cookie"),
    pytest.param("execute_tool show_config", "attr:output.value", "client_secret", "client_id", id="tool-output-text"),
    pytest.param("execute_tool show_config", "attr:graphtrail.step.args", "openai_key", "client_id", id="tool-args-token-format"),
    pytest.param("chat", "attr:output.value", "password", VISIBLE["username"], id="model-output-tool-call-args"),
    pytest.param("chat", "attr:output.value", "password", "Logging in", id="model-output-text"),
    pytest.param("execute_tool set_pin", "attr:graphtrail.step.error", "pin", "valid integer", id="tool-validation-error"),
    pytest.param("execute_tool set_pin", "status", "pin", "valid integer", id="tool-error-status"),
    pytest.param("execute_tool connect", "attr:graphtrail.step.error", "dsn_password", "db.internal", id="tool-error-message"),
    pytest.param("invoke_agent", "attr:input.value", "api_key_in_question", "Log in", id="root-input"),
    pytest.param("invoke_agent", "attr:graphtrail.question", "api_key_in_question", "Log in", id="root-question"),
    pytest.param("invoke_agent", "attr:output.value", "answer_token", "3 items", id="root-output"),
    pytest.param("invoke_agent", "attr:graphtrail.metadata", "metadata_secret", "kg", id="root-metadata"),
]


@pytest.mark.parametrize(("span", "where", "secret", "visible"), PLACES)
def test_each_place_a_secret_can_surface(traced_run: Any, span: str, where: str, secret: str, visible: str) -> None:
    spans, _ = traced_run
    text = _where(spans, span, where)
    assert SECRETS[secret] not in text
    assert visible in text  # the rest of the value is still recorded


def test_model_input_holding_a_tool_error_that_quotes_the_arguments(traced_run: Any) -> None:
    spans, _ = traced_run
    # LangChain's message for a failed validation quotes every argument ("with kwargs {...}"),
    # and the model reads it on its next call.
    inputs = [_span_texts(s).get("attr:input.value", "") for s in spans if s.name.startswith("chat")]
    quoting = [t for t in inputs if "set_pin" in t or "valid integer" in t]
    assert quoting and not any(SECRETS["pin"] in t for t in quoting)


def test_a_tool_error_that_ends_the_run(traced_run: Any) -> None:
    spans, trajs = traced_run
    failed = [s for s in spans if s.name == "execute_tool connect" and s.events]
    roots = [s for s in spans if s.name.startswith("invoke_agent") and s.events]
    assert failed and roots
    for span in failed + roots:
        texts = _span_texts(span)
        assert any("exception.stacktrace" in k for k in texts) and any("db.internal" in v for v in texts.values())
        assert not any(SECRETS["dsn_password"] in v for v in texts.values())
    assert all(SECRETS["dsn_password"] not in (t.error or "") for t in trajs)


def test_no_secret_anywhere_in_spans_or_trajectories(traced_run: Any) -> None:
    spans, trajs = traced_run
    dumped = _dump_spans(spans) + "\n".join(t.model_dump_json() for t in trajs)
    assert VISIBLE["username"] in dumped
    leaked = {k: v for k, v in SECRETS.items() if v in dumped}
    assert not leaked
    login = next(s for t in trajs for s in t.steps if s.tool == "login")
    assert login.args == {"username": VISIBLE["username"], "password": REDACTED}  # Step.args = the span's args


# ---------------------------------------------------------------------------- every exported byte


class _Collector(http.server.BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        type(self).bodies.append(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


_SCAN_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    import graphtrail
    from graphtrail.tracer import flush
    from tests.secret_agent import build_failing_agent, build_secret_agent, run_secret_agents

    out = sys.argv[1]
    for mode in ("full", "ids-only", "none"):
        print("=== mode", mode, flush=True)
        graphtrail.configure(exporter=["otlp", "jsonl", "console"], endpoint=sys.argv[2], path=f"{{out}}/{{mode}}.jsonl", content=mode)
        with graphtrail.capture() as cap:
            run_secret_agents(graphtrail.trace_agent(build_secret_agent()), graphtrail.trace_agent(build_failing_agent()))
        with open(f"{{out}}/{{mode}}.trajectories.jsonl", "w", encoding="utf-8") as fh:
            for t in cap.trajectories:
                fh.write(t.model_dump_json() + "\\n")
        assert flush(10000)
    graphtrail.configure(exporter="none")
    """
)


def test_secret_scan_of_every_exported_byte(tmp_path: Path) -> None:
    """Plant secrets in every place, export through OTLP/HTTP, JSONL and the console in all
    three content modes, and grep all the bytes that left the process."""
    _Collector.bodies = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    script = tmp_path / "scan.py"
    script.write_text(_SCAN_SCRIPT.format(repo=str(REPO)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    env.pop("OTEL_EXPORTER_OTLP_COMPRESSION", None)
    try:
        proc = subprocess.run(
            [sys.executable, str(script), str(tmp_path), f"http://127.0.0.1:{server.server_address[1]}"],
            capture_output=True, env=env, timeout=300, cwd=tmp_path,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    console = proc.stdout + proc.stderr
    otlp = b"".join(_Collector.bodies)
    files = {p.name: p.read_bytes() for p in tmp_path.glob("*.jsonl")}
    assert len(files) == 6 and all(files.values())
    assert otlp and b"execute_tool login" in otlp and b"execute_tool login" in console
    # content="full" really exported the arguments and texts (so the scan looked at them)
    visible = VISIBLE["username"].encode()
    assert visible in files["full.jsonl"] and visible in otlp and visible in console
    assert visible not in files["none.jsonl"]
    for where, data in {"otlp": otlp, "console": console, **files}.items():
        for name, secret in SECRETS.items():
            for form in (secret, json.dumps(secret)[1:-1]):
                assert form.encode() not in data, f"secret {name!r} leaked into {where}"


# ---------------------------------------------------------------------------- issue 29: every published shape, every exit


from tests.secret_agent import SHAPES as PUBLISHED  # noqa: E402


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_every_published_shape_is_redacted(name: str) -> None:
    text, secret = PUBLISHED[name]
    out = redact_text(text)
    assert secret not in out and REDACTED in out
    assert redact_text(f"before {text} after").startswith("before ")  # found inside other text too


def test_detect_secrets_flags_the_raw_shapes_and_nothing_once_redacted() -> None:
    """The shapes are the detector's own: it flags the raw texts (so the check can fail) and finds
    nothing in what graphtrail keeps (its regex and keyword plugins; entropy flags any word of a line)."""
    pytest.importorskip("detect_secrets")
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def found(text: str) -> list[str]:
        return [s.type for s in scan_line(text) if "High Entropy" not in s.type]

    with default_settings():
        flagged = {name for name, (text, _) in PUBLISHED.items() if found(text)}
        assert {"pgp", "putty", "ssh2", "openssh", "twilio-sk", "telegram", "discord", "mailchimp", "aws-abia", "jwt"} <= flagged
        assert {name: found(redact_text(text)) for name, (text, _) in PUBLISHED.items() if found(redact_text(text))} == {}


def test_jwts_are_recognised_by_structure_not_by_their_payload() -> None:
    opaque = PUBLISHED["jwt-opaque-payload"][0]
    assert not opaque.split(".")[1].startswith("eyJ") and redact_text(f"t={opaque}") == f"t={REDACTED}"
    assert redact_text("the eyes.of.the world, ewes.graze.here") == "the eyes.of.the world, ewes.graze.here"


def test_ordinary_text_near_the_new_shapes_is_kept() -> None:
    for text in ["ACME API keys are great", "SKU 12345", "version 1.2.3 of key.value.store", "12345:abc", "time 12:30:45",
                 "BEGIN the migration", '{"key": "Q42"}', "Mongolia (E0479) borders China"]:
        assert redact_text(text) == text


def test_attribute_lists_of_foreign_trace_documents_are_read_by_name() -> None:
    from graphtrail._secrets import redact_value

    doc = {"attributes": [{"key": "db.password", "value": {"stringValue": "hunter2x"}},
                          {"key": "user", "value": {"stringValue": "alice"}},
                          {"key": "note", "type": "string", "value": "Bearer abcDEF1234567890"}]}
    out = redact_value(doc)
    assert out["attributes"][0] == {"key": "db.password", "value": {"stringValue": REDACTED}}
    assert out["attributes"][1] == doc["attributes"][1] and "abcDEF1234567890" not in json.dumps(out)


def test_graphtrails_logger_redacts_every_record(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    token = PUBLISHED["github-pat"][1]
    with caplog.at_level(logging.WARNING, logger="graphtrail"):
        logging.getLogger("graphtrail").warning("graphtrail: could not connect with %s", token)
        logging.getLogger("graphtrail").warning("graphtrail: login password=%s failed", "hunter2x")  # split by the template
        logging.getLogger("graphtrail").warning("graphtrail: %s of %d", "plain", 3)
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == f"graphtrail: could not connect with {REDACTED}" and "hunter2x" not in messages[1]
    assert caplog.records[2].args == ("plain", 3)  # nothing to redact: the record is left as it was


def test_a_usage_error_is_redacted_without_loading_the_tracer() -> None:
    token = PUBLISHED["ghp"][1]
    code = (
        "import sys\nfrom graphtrail.cli.main import main\n"
        f"rc = main(['eval', '--trials', {token!r}])\n"
        "print(rc, 'graphtrail.tracer' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout.split() == ["2", "False"], proc.stderr
    assert token not in proc.stderr and REDACTED in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_model_name_a_provider_reports_is_redacted_in_spans_and_trajectories(memory: Any) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage

    from tests.fakes import ScriptedChatModel

    token = PUBLISHED["openai-proj"][1]
    model = ScriptedChatModel(script=[AIMessage(content="done")], model_name=token)
    with graphtrail.capture() as cap:
        graphtrail.trace_agent(create_agent(model, [])).invoke({"messages": [("user", "hi")]})
    spans = list(get_memory_exporter().get_finished_spans())
    dumped = _dump_spans(spans) + " ".join(s.name for s in spans) + "\n".join(t.model_dump_json() for t in cap.trajectories)
    assert "gen_ai.response.model" in dumped and f"chat {REDACTED}" in dumped
    assert token not in dumped


def test_namespaced_token_counts_are_not_secrets() -> None:
    # OTLP and Jaeger attribute lists name token counts with dotted names; their values are numbers to keep.
    from graphtrail._secrets import is_secret_key, redact_value

    for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "llm.token_count.prompt", "llm.token_count.total"):
        assert not is_secret_key(key), key
        assert redact_value({"key": key, "type": "int64", "value": 102})["value"] == 102
    for key in ("api.token", "x.secret_token", "http.request.header.authorization"):
        assert is_secret_key(key), key
        assert redact_value({"key": key, "value": "abc"})["value"] != "abc"
