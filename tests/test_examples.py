"""Every offline example runs as a user would run it: a subprocess, from another directory, with a timeout.

04_openai.py needs a key: without one it must skip politely; with OPENAI_BASE_URL
it is run against an OpenAI-compatible server on loopback (the server's replies
come from the example's own scripted model; the HTTP, the OpenAI client and
the agent are real).
"""

from __future__ import annotations

import http.server
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_cli import write_graphrag_folder

pytestmark = pytest.mark.timeout(180)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(script: str, *args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True, text=True, timeout=150, cwd=cwd, env={**base_env, **(env or {})},
    )


def load_example(name: str) -> Any:
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(name.replace(".py", ""), EXAMPLES / name)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(EXAMPLES))


def test_my_agent_is_plain_langgraph_code(tmp_path: Path) -> None:
    source = (EXAMPLES / "my_agent.py").read_text(encoding="utf-8")
    assert "graphtrail" not in source.split('"""', 2)[2]  # the user's code knows nothing of graphtrail
    proc = run_example("my_agent.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Kenyan shilling [E:nairobi] [E:kenya] [E:kes]" in proc.stdout


def test_01_decorate_existing_agent(tmp_path: Path) -> None:
    proc = run_example("01_decorate_existing_agent.py", "--jsonl", "t.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "answer:           Kenyan shilling" in out
    assert "citations:        ['nairobi', 'kenya', 'kes']" in out
    assert "visited, uncited: ['nairobi_np']" in out  # found by the search, never cited
    assert "citation kes was first revealed by step(s) [3]" in out
    spans = [
        span
        for line in (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]
    tools = [s for s in spans if s["name"].startswith("execute_tool")]
    assert [s["name"] for s in sorted(tools, key=lambda s: int(s["startTimeUnixNano"]))] == [
        "execute_tool find_entity", "execute_tool related", "execute_tool related"]
    assert any(s["name"] == "invoke_agent countries-agent" for s in spans)


def test_02_writes_a_file_jaeger_can_upload(tmp_path: Path) -> None:
    proc = run_example("02_view_in_jaeger/write_upload_file.py", "--out", "up.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    from google.protobuf.json_format import Parse
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    traces = set()
    for line in (tmp_path / "up.jsonl").read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        for rs in data["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    traces.add(span["traceId"])
                    span["traceId"] = span["spanId"] = span["parentSpanId"] = ""  # hex ids: the proto mapping wants base64
                    for link in span.get("links", []):
                        link["traceId"] = link["spanId"] = ""
        Parse(json.dumps(data), ExportTraceServiceRequest())  # the official OTLP JSON mapping accepts the rest
    assert len(traces) == 4
    again = run_example("02_view_in_jaeger/write_upload_file.py", "--out", "up.jsonl", cwd=tmp_path)
    assert again.returncode == 2 and "exists" in again.stderr  # never appends to an old file silently


def test_03_replay_evaluation(tmp_path: Path) -> None:
    proc = run_example("03_replay_evaluation.py", "--out", "ev", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "ev" / "results.json").read_text(encoding="utf-8"))
    acc = {c["condition"]: c["accuracy"] for c in results["conditions"]}
    assert acc["baseline"] == 1.0 and acc["cited_removal"] < acc["baseline"] <= acc["random_removal"] + 1e-9
    assert (tmp_path / "ev" / "report.html").is_file()
    assert "cited_removal" in proc.stdout and "report:" in proc.stdout

    example = load_example("03_replay_evaluation.py")
    from graphtrail.agents import GraphFilter

    out = json.loads(example.filter_related(
        json.dumps({"entity": {"id": "kenya", "name": "Kenya"}, "relation": "currency", "results": [{"id": "kes", "name": "Kenyan shilling"}]}),
        GraphFilter(hidden=frozenset({"kenya"})),
    ))
    assert out["results"] == [] and "no entity kenya" in out["error"]  # a lookup on a hidden entity fails
    out = json.loads(example.filter_related(
        json.dumps({"entity": {"id": "kenya", "name": "Kenya"}, "relation": "currency", "results": [{"id": "kes", "name": "Kenyan shilling"}]}),
        GraphFilter(masked=frozenset({"kes"})),
    ))
    assert out["results"] == [{"id": "kes", "name": GraphFilter().masked_name("kes")}]


def test_04_openai_skips_without_a_key(tmp_path: Path) -> None:
    proc = run_example("04_openai.py", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("skipped: set OPENAI_API_KEY")


class _OpenAICompatible(http.server.BaseHTTPRequestHandler):
    """/v1/chat/completions answered by the example's scripted model (the model is fake, the wire is real)."""

    model: Any = None
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802
        from langchain_core.messages import HumanMessage, ToolMessage

        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        history = []
        for m in body["messages"]:
            if m["role"] == "user":
                history.append(HumanMessage(m["content"]))
            elif m["role"] == "tool":
                history.append(ToolMessage(m["content"], tool_call_id=m["tool_call_id"]))
        reply = type(self).model._respond(history)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                for c in reply.tool_calls
            ]
        payload = json.dumps({
            "id": f"chatcmpl-{len(type(self).requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def openai_server() -> Iterator[str]:
    _OpenAICompatible.model = load_example("my_agent.py").ScriptedCountriesModel()
    _OpenAICompatible.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OpenAICompatible)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(importlib.util.find_spec("langchain_openai") is None, reason="needs the openai extra (langchain-openai)")
def test_04_openai_with_base_url(tmp_path: Path, openai_server: str) -> None:
    env = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "OPENAI_BASE_URL": openai_server, "OPENAI_MODEL": "local-model"}
    proc = run_example("04_openai.py", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "answer: 'Kenyan shilling'  citations: ['nairobi', 'kenya', 'kes']" in proc.stdout
    assert _OpenAICompatible.requests and all(r["model"] == "local-model" for r in _OpenAICompatible.requests)
    assert {t["function"]["name"] for t in _OpenAICompatible.requests[0]["tools"]} == {"find_entity", "related"}


def test_05_graphrag_index(tmp_path: Path) -> None:
    folder = write_graphrag_folder(tmp_path / "output")
    proc = run_example("05_graphrag_index.py", str(folder), "Who directed Inception?", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "8 entities, 6 relations, 1 text units, 1 communities" in proc.stdout
    assert "A: CHRISTOPHER NOLAN  [ok]" in proc.stdout
    assert "get_neighbors" in proc.stdout
    (tmp_path / "empty").mkdir()
    proc = run_example("05_graphrag_index.py", str(tmp_path / "empty"), cwd=tmp_path)
    assert proc.returncode == 2 and "not a GraphRAG output folder" in proc.stderr and "Traceback" not in proc.stderr
