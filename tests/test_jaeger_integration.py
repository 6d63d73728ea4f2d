"""View spans in Jaeger, live: the demo exported over OTLP (HTTP and gRPC) to a real
Jaeger v2 on loopback, read back through Jaeger's query APIs, and opened in its UI.

Also checks that ``graphtrail traces --format jaeger`` (the upload file) matches
what Jaeger's own OTLP translator makes of the same spans, span by span.

Needs the Jaeger binary (``scripts/install_jaeger.sh``, from the Go module proxy):
skips with the reason where it is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.jaeger_server import JaegerServer

pytestmark = pytest.mark.jaeger

HTTP_SERVICE = "gt-jaeger-http"
GRPC_SERVICE = "gt-jaeger-grpc"
AGENT = "graphrag-agentic"
EXPORT_WAIT_S = 30.0


def _cli(*args: str, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "graphtrail", *args], capture_output=True, text=True, env=full_env, timeout=timeout, check=False
    )


def _traces(server: JaegerServer, service: str, expected: int) -> list[dict[str, Any]]:
    """All traces of ``service`` once ``expected`` of them arrived (the batch processor delays them briefly)."""
    deadline = time.monotonic() + EXPORT_WAIT_S
    while True:
        data = server.get("/api/traces", service=service, limit=1000, lookback="2h")["data"]
        if len(data) >= expected or time.monotonic() > deadline:
            return data
        time.sleep(0.5)


def _tags(obj: dict[str, Any]) -> dict[str, Any]:
    return {t["key"]: t["value"] for t in obj.get("tags") or []}


def _root(trace: dict[str, Any]) -> dict[str, Any]:
    (root,) = [s for s in trace["spans"] if not any(r["refType"] == "CHILD_OF" for r in s["references"])]
    return root


@pytest.fixture(scope="module")
def demo_http(jaeger_server: JaegerServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`graphtrail demo` (traced runs + the ablation replays) over OTLP/HTTP."""
    out = tmp_path_factory.mktemp("jaeger-demo") / "demo"
    proc = _cli("demo", "--out", str(out), "--otlp", f"http://127.0.0.1:{jaeger_server.otlp_http_port}",
                env={"OTEL_SERVICE_NAME": HTTP_SERVICE})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def run_grpc(jaeger_server: JaegerServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's traced runs (`graphtrail run` with the demo's KG, questions and model) over OTLP/gRPC."""
    from graphtrail.cli.pipeline import DEMO_KG, DEMO_MODEL, DEMO_QUESTIONS

    out = tmp_path_factory.mktemp("jaeger-grpc") / "run"
    proc = _cli("run", "--kg", DEMO_KG, "--questions", DEMO_QUESTIONS, "--model", DEMO_MODEL, "--out", str(out),
                "--otlp", jaeger_server.otlp_grpc_endpoint,
                env={"OTEL_SERVICE_NAME": GRPC_SERVICE, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _answers(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]


def _check_agent_traces(traces: list[dict[str, Any]], answers: list[dict[str, Any]], service: str) -> None:
    assert {t["traceID"] for t in traces} == {a["trace_id"] for a in answers}
    n_events = 0
    for trace in traces:
        spans = {s["spanID"]: s for s in trace["spans"]}
        root = _root(trace)
        assert trace["processes"][root["processID"]]["serviceName"] == service
        assert root["operationName"] == f"invoke_agent {AGENT}"
        rt = _tags(root)
        assert rt["gen_ai.operation.name"] == "invoke_agent" and rt["gen_ai.provider.name"]
        assert rt["otel.scope.name"] == "graphtrail"
        assert "graphtrail.condition" not in rt  # a real run, not a replay
        answer = next(a for a in answers if a["trace_id"] == trace["traceID"])
        assert json.loads(rt["graphtrail.citations"]) == answer["citations"]
        assert json.loads(rt["graphtrail.visited"]) == answer["visited"]
        assert rt["graphtrail.status"] in ("ok", "no_answer") and "error" not in rt
        # nesting: one tree, every other span a child of the root
        for span in spans.values():
            if span is not root:
                (parent,) = [r for r in span["references"] if r["refType"] == "CHILD_OF"]
                assert parent["spanID"] == root["spanID"], span["operationName"]
        chats = [s for s in spans.values() if s["operationName"].startswith("chat")]
        tools = [s for s in spans.values() if s["operationName"].startswith("execute_tool")]
        assert chats and tools and len(chats) + len(tools) + 1 == len(spans)
        for chat in chats:
            ct = _tags(chat)
            assert ct["span.kind"] == "client" and ct["gen_ai.operation.name"] == "chat"
            assert ct["gen_ai.provider.name"] == rt["gen_ai.provider.name"]
            messages = json.loads(ct["gen_ai.input.messages"])
            assert messages[0]["role"] in ("system", "user") and all("parts" in m for m in messages)
            assert json.loads(ct["gen_ai.output.messages"])[0]["role"] == "assistant"
        for tool in tools:
            tt = _tags(tool)
            assert tt["span.kind"] == "internal" and isinstance(tt["graphtrail.step"], int)
            assert isinstance(json.loads(tt["gen_ai.tool.call.arguments"]), dict)
            ids = json.loads(tt["graphtrail.entities.visited"])
            events = [{f["key"]: f["value"] for f in log["fields"]} for log in tool["logs"]]
            entity_events = [e for e in events if e.get("event") == "graphtrail.entities"]
            if ids:
                (event,) = entity_events
                assert json.loads(event["graphtrail.entity.ids"]) == ids
                assert [e["id"] for e in json.loads(event["graphtrail.entities"])] == ids
                n_events += 1
            else:
                assert not entity_events
            if tt.get("error"):
                assert tt["otel.status_code"] == "ERROR"
    assert n_events > 0


def test_demo_over_otlp_http_reads_back_from_jaeger(jaeger_server: JaegerServer, demo_http: Path) -> None:
    answers = _answers(demo_http)
    traces = _traces(jaeger_server, HTTP_SERVICE, len(answers))
    _check_agent_traces(traces, answers, HTTP_SERVICE)
    services = jaeger_server.get("/api/services")["data"]
    assert HTTP_SERVICE in services and f"{HTTP_SERVICE}-replay" in services
    operations = {(o["name"], o["spanKind"]) for o in jaeger_server.get("/api/operations", service=HTTP_SERVICE)["data"]}
    assert (f"invoke_agent {AGENT}", "internal") in operations
    assert any(name.startswith("chat ") and kind == "client" for name, kind in operations)


def test_replays_are_under_their_own_service(jaeger_server: JaegerServer, demo_http: Path) -> None:
    runs = [json.loads(line) for line in (demo_http / "runs.jsonl").read_text(encoding="utf-8").splitlines()]
    replay_ids = {r["trace_id"] for r in runs if r.get("trace_id")}
    replays = _traces(jaeger_server, f"{HTTP_SERVICE}-replay", len(replay_ids))
    assert {t["traceID"] for t in replays} == replay_ids
    conditions = set()
    for trace in replays:
        rt = _tags(_root(trace))
        conditions.add(rt["graphtrail.condition"])
        assert rt["graphtrail.question_id"]
        assert {p["serviceName"] for p in trace["processes"].values()} == {f"{HTTP_SERVICE}-replay"}
    assert "baseline" in conditions and len(conditions) > 2
    # the real runs' service holds no replay
    real = _traces(jaeger_server, HTTP_SERVICE, 1)
    assert not any("graphtrail.condition" in _tags(_root(t)) for t in real)


def test_demo_runs_over_otlp_grpc_read_back_from_jaeger(jaeger_server: JaegerServer, run_grpc: Path) -> None:
    answers = _answers(run_grpc)
    _check_agent_traces(_traces(jaeger_server, GRPC_SERVICE, len(answers)), answers, GRPC_SERVICE)


def test_api_v3_returns_otlp_with_the_resource_and_scope(jaeger_server: JaegerServer, run_grpc: Path) -> None:
    answer = _answers(run_grpc)[0]
    _traces(jaeger_server, GRPC_SERVICE, len(_answers(run_grpc)))
    data = jaeger_server.get(f"/api/v3/traces/{answer['trace_id']}")["result"]
    (rs,) = data["resourceSpans"]
    resource = {a["key"]: a["value"] for a in rs["resource"]["attributes"]}
    assert resource["service.name"] == {"stringValue": GRPC_SERVICE}
    assert resource["openinference.project.name"] == {"stringValue": GRPC_SERVICE}
    spans = [s for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert {ss["scope"]["name"] for ss in rs["scopeSpans"]} == {"graphtrail"}
    tools = [s for s in spans if s["name"].startswith("execute_tool")]
    assert any(e["name"] == "graphtrail.entities" for s in tools for e in s.get("events", []))
    found = jaeger_server.get(
        "/api/v3/traces",
        **{"query.service_name": GRPC_SERVICE, "query.start_time_min": "2000-01-01T00:00:00Z",
           "query.start_time_max": "2100-01-01T00:00:00Z", "query.num_traces": 100},
    )["result"]
    ids = {s["traceId"] for rs in found["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]}
    assert {a["trace_id"] for a in _answers(run_grpc)} <= ids


def _comparable(span: dict[str, Any]) -> dict[str, Any]:
    return {
        "operationName": span["operationName"],
        "references": sorted((r["refType"], r["traceID"], r["spanID"]) for r in span["references"]),
        "startTime": span["startTime"],
        "duration": span["duration"],
        "tags": sorted((t["key"], t["type"], json.dumps(t["value"])) for t in span["tags"]),
        "logs": sorted((log["timestamp"], json.dumps(sorted((f["key"], f["type"], json.dumps(f["value"])) for f in log["fields"])))
                       for log in span["logs"]),
    }


def test_upload_file_matches_what_jaeger_makes_of_the_same_spans(
    jaeger_server: JaegerServer, demo_http: Path, tmp_path: Path
) -> None:
    upload = tmp_path / "upload.json"
    proc = _cli("traces", str(demo_http / "traces.jsonl"), "--format", "jaeger", "--output", str(upload), env={})
    assert proc.returncode == 0, proc.stderr
    ours = {t["traceID"]: t for t in json.loads(upload.read_text(encoding="utf-8"))["data"]}
    answers = _answers(demo_http)
    assert set(ours) == {a["trace_id"] for a in answers}
    _traces(jaeger_server, HTTP_SERVICE, len(answers))
    for trace_id, mine in list(ours.items())[:3]:
        (theirs,) = jaeger_server.get(f"/api/traces/{trace_id}")["data"]
        assert {s["spanID"] for s in theirs["spans"]} == {s["spanID"] for s in mine["spans"]}
        theirs_by_id = {s["spanID"]: s for s in theirs["spans"]}
        for span in mine["spans"]:
            other = theirs_by_id[span["spanID"]]
            assert _comparable(span) == _comparable(other), span["operationName"]
            assert mine["processes"][span["processID"]]["serviceName"] == theirs["processes"][other["processID"]]["serviceName"]


@pytest.mark.browser
def test_jaeger_ui_opens_a_trace(jaeger_server: JaegerServer, run_grpc: Path) -> None:
    """Headless Chromium opens one trace in Jaeger's UI: the spans show, and the console stays clean."""
    if not jaeger_server.has_ui:
        pytest.skip(
            "this Jaeger binary has no UI assets (a module-proxy build has none); "
            "set GRAPHTRAIL_JAEGER_UI_ASSETS to a built jaeger-ui directory"
        )
    from scripts.render_report_png import find_chrome, headless_chrome

    binary, driver_path = find_chrome()
    if not binary or not driver_path:
        pytest.skip("chromium/chromedriver not installed (apt-get install -y chromium chromium-driver)")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    answer = _answers(run_grpc)[0]
    _traces(jaeger_server, GRPC_SERVICE, len(_answers(run_grpc)))
    with headless_chrome() as driver:
        driver.get(f"{jaeger_server.query_url}/trace/{answer['trace_id']}")
        WebDriverWait(driver, 30).until(lambda d: f"invoke_agent {AGENT}" in d.find_element(By.TAG_NAME, "body").text)
        text = driver.find_element(By.TAG_NAME, "body").text
        severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert "execute_tool" in text and GRPC_SERVICE in text
    assert severe == [], f"console errors: {severe}"
