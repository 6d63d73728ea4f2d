"""graphtrail's OTLP export, read back from a real backend: Arize Phoenix on loopback.

A traced ``create_agent`` run goes over OTLP/HTTP (protobuf), and the spans are
read back through Phoenix's REST API (``GET /v1/projects/{project}/spans``).
Phoenix files spans under the project named by the ``openinference.project.name``
resource attribute: graphtrail sets it to ``configure(project=...)``, else to the
service name, unless the standard ``OTEL_RESOURCE_ATTRIBUTES`` variable names one.
Replays go to ``<service>-replay``; tool spans carry a ``graphtrail.entities`` event.
(tests/test_jaeger_integration.py does the same against a live Jaeger.)

Also replays the ``jsonl`` exporter's file into Phoenix's OTLP/HTTP endpoint, so
the OTLP-JSON graphtrail writes is proven ingestible by a real backend too.

Run: ``python -m pytest tests/test_phoenix_integration.py -m phoenix``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphtrail
import graphtrail.tracer
from tests import kg_agent
from tests.phoenix_server import PhoenixServer

httpx = pytest.importorskip("httpx")

pytestmark = [pytest.mark.phoenix, pytest.mark.timeout(240)]

READBACK_TIMEOUT_S = 60.0


@pytest.fixture(autouse=True)
def _restore_graphtrail_defaults() -> Iterator[None]:
    """These tests re-point graphtrail's exporter; leave the default behind for other modules."""
    yield
    graphtrail.configure()


def fetch_spans(server: PhoenixServer, project: str, trace_id: str) -> list[dict[str, Any]]:
    """All spans of one trace in a project (empty until the project exists)."""
    spans: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"trace_id": trace_id, "limit": 1000}
        if cursor:
            params["cursor"] = cursor
        resp = httpx.get(f"{server.base_url}/v1/projects/{project}/spans", params=params, timeout=10)
        if resp.status_code == 404:  # the project appears with its first span
            return []
        resp.raise_for_status()
        body = resp.json()
        spans.extend(body["data"])
        cursor = body.get("next_cursor")
        if not cursor:
            return spans


def wait_for_spans(server: PhoenixServer, project: str, trace_id: str, span_ids: set[str]) -> list[dict[str, Any]]:
    """Poll until every expected span id has landed (Phoenix ingests asynchronously)."""
    deadline = time.monotonic() + READBACK_TIMEOUT_S
    spans: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        spans = fetch_spans(server, project, trace_id)
        if span_ids <= {s["context"]["span_id"] for s in spans}:
            return spans
        time.sleep(0.25)
    missing = span_ids - {s["context"]["span_id"] for s in spans}
    pytest.fail(
        f"{len(missing)} of {len(span_ids)} spans never reached Phoenix project {project!r} "
        f"within {READBACK_TIMEOUT_S:.0f}s: {sorted(missing)}\n{server.log_tail()}"
    )


def expected_span_ids(traj: graphtrail.Trajectory) -> set[str]:
    ids = {traj.span_id} | {s.span_id for s in traj.steps} | {m.span_id for m in traj.model_calls}
    assert None not in ids, "the trajectory records the span id of the root, every step and model call"
    return ids  # type: ignore[return-value]


def assert_graphtrail_trace(spans: list[dict[str, Any]], traj: graphtrail.Trajectory) -> None:
    """The span tree, kinds and graphtrail attributes of one KG-agent run, as Phoenix stored them."""
    by_id = {s["context"]["span_id"]: s for s in spans}
    assert len(by_id) == len(spans), "no duplicate spans"

    # One tree: a single root, every other span's parent is in the same trace.
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == 1
    root = roots[0]
    assert root["name"] == "invoke_agent kg-agent"
    assert root["context"]["span_id"] == traj.span_id
    for span in spans:
        if span is not root:
            assert span["parent_id"] in by_id, f"orphan span {span['name']}"

    def ancestors(span: dict[str, Any]) -> list[str]:
        chain = []
        while span["parent_id"] is not None:
            span = by_id[span["parent_id"]]
            chain.append(span["context"]["span_id"])
        return chain

    # Kinds: Phoenix lifts ``openinference.span.kind`` into ``span_kind``.
    assert root["span_kind"] == "AGENT"
    tools = {s["name"].removeprefix("execute_tool "): s for s in spans if s["name"].startswith("execute_tool ")}
    chats = [s for s in spans if s["name"].startswith("chat ")]
    assert sorted(tools) == sorted(kg_agent.TOOL_NAMES)
    assert len(chats) == len(traj.model_calls) == len(kg_agent.script())
    for span in [*tools.values(), *chats]:
        assert root["context"]["span_id"] in ancestors(span)
    assert {s["span_kind"] for s in tools.values()} == {"TOOL"}
    assert {s["span_kind"] for s in chats} == {"LLM"}
    assert {s["name"] for s in chats} == {"chat scripted-kg-model"}

    # GenAI conventions survive the trip.
    for name, span in tools.items():
        assert span["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert span["attributes"]["gen_ai.tool.name"] == name
    for span in chats:
        assert span["attributes"]["gen_ai.operation.name"] == "chat"
        assert span["attributes"]["gen_ai.request.model"] == "scripted-kg-model"

    # graphtrail attributes: per-step entities and edges, the root's answer and provenance.
    steps = sorted(tools.values(), key=lambda s: s["attributes"]["graphtrail.step"])
    assert [s["name"] for s in steps] == [f"execute_tool {t}" for t in kg_agent.TOOL_NAMES]
    assert [s["attributes"]["graphtrail.step"] for s in steps] == [1, 2, 3, 4]
    for span, entities, edges in zip(steps, kg_agent.STEP_ENTITIES, kg_agent.STEP_EDGES):
        assert json.loads(span["attributes"]["graphtrail.entities.visited"]) == entities
        assert json.loads(span["attributes"].get("graphtrail.edges.traversed", "[]")) == edges
    attrs = root["attributes"]
    assert attrs["graphtrail.answer"] == kg_agent.ANSWER
    assert json.loads(attrs["graphtrail.citations"]) == kg_agent.CITATIONS
    assert json.loads(attrs["graphtrail.visited"]) == kg_agent.VISITED
    assert json.loads(attrs["graphtrail.visited_uncited"]) == kg_agent.VISITED_UNCITED


def test_otlp_http_export_reads_back_from_phoenix(
    phoenix_server: PhoenixServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = f"graphtrail-it-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
    provider = graphtrail.configure(
        exporter="otlp",
        endpoint=phoenix_server.otlp_http_endpoint,
        protocol="http/protobuf",
        service_name="graphtrail-phoenix-test",
    )
    agent = graphtrail.trace_agent(kg_agent.build_agent(), name="kg-agent")
    with graphtrail.capture() as cap:
        result = agent.invoke(kg_agent.agent_input())
    assert result["messages"][-1].content.startswith(kg_agent.ANSWER), "tracing left the agent's result intact"
    assert provider.force_flush(timeout_millis=30_000)

    (traj,) = cap.trajectories
    spans = wait_for_spans(phoenix_server, project, traj.trace_id, expected_span_ids(traj))
    assert_graphtrail_trace(spans, traj)


def test_jsonl_file_replays_into_phoenix(
    phoenix_server: PhoenixServer,
    tmp_path: Path,
) -> None:
    """What ``exporter="jsonl"`` writes is valid OTLP a real receiver ingests as-is."""
    from tests.otlp_json import parse_line

    path = tmp_path / "traces.jsonl"
    provider = graphtrail.configure(exporter="jsonl", path=str(path), service_name="graphtrail-jsonl")
    agent = graphtrail.trace_agent(kg_agent.build_agent(), name="kg-agent")
    with graphtrail.capture() as cap:
        agent.invoke(kg_agent.agent_input())
    provider.force_flush()
    (traj,) = cap.trajectories

    project = f"graphtrail-jsonl-{uuid.uuid4().hex[:8]}"
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        resp = httpx.post(
            phoenix_server.otlp_http_endpoint,
            content=parse_line(line).SerializeToString(),
            headers={"Content-Type": "application/x-protobuf", "x-project-name": project},
            timeout=10,
        )
        assert resp.status_code == 200, resp.text

    spans = wait_for_spans(phoenix_server, project, traj.trace_id, expected_span_ids(traj))
    assert_graphtrail_trace(spans, traj)


def _projects(server: PhoenixServer) -> set[str]:
    resp = httpx.get(f"{server.base_url}/v1/projects", params={"limit": 1000}, timeout=10)
    resp.raise_for_status()
    return {p["name"] for p in resp.json()["data"]}


def _run_traced(**annotations: Any) -> graphtrail.Trajectory:
    agent = graphtrail.trace_agent(kg_agent.build_agent(), name="kg-agent")
    with graphtrail.capture() as cap, graphtrail.tracer.run_annotations(**annotations):
        agent.invoke(kg_agent.agent_input())
    (traj,) = cap.trajectories
    return traj


def test_phoenix_files_runs_under_the_service_and_shows_entity_events(
    phoenix_server: PhoenixServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No project configured: Phoenix files the run under the service name (not "default"),
    replays under ``<service>-replay``, and each tool span carries a ``graphtrail.entities`` event."""
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    service = f"gt-phx-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("OTEL_SERVICE_NAME", service)
    provider = graphtrail.configure(exporter="otlp", endpoint=phoenix_server.otlp_http_endpoint, protocol="http/protobuf")
    traj = _run_traced()
    replay = _run_traced(attributes={"graphtrail.condition": "hide-top1"}, replay=True)
    assert provider.force_flush(timeout_millis=30_000)

    spans = wait_for_spans(phoenix_server, service, traj.trace_id, expected_span_ids(traj))
    assert_graphtrail_trace(spans, traj)
    assert {service, f"{service}-replay"} <= _projects(phoenix_server)
    assert fetch_spans(phoenix_server, service, replay.trace_id) == []  # the replay is not among the real runs
    replayed = wait_for_spans(phoenix_server, f"{service}-replay", replay.trace_id, expected_span_ids(replay))
    (root,) = [s for s in replayed if s["parent_id"] is None]
    assert root["attributes"]["graphtrail.condition"] == "hide-top1"

    for span in spans:
        if not span["name"].startswith("execute_tool "):
            continue
        ids = json.loads(span["attributes"]["graphtrail.entities.visited"])
        events = [e for e in span.get("events") or [] if e["name"] == "graphtrail.entities"]
        if not ids:
            assert events == []
            continue
        (event,) = events
        assert list(event["attributes"]["graphtrail.entity.ids"]) == ids
        listed = json.loads(event["attributes"]["graphtrail.entities"])
        assert [e["id"] for e in listed] == ids and all("name" in e and "type" in e for e in listed)


def test_configured_project_wins(phoenix_server: PhoenixServer) -> None:
    project = f"gt-project-{uuid.uuid4().hex[:8]}"
    provider = graphtrail.configure(
        exporter="otlp", endpoint=phoenix_server.otlp_http_endpoint, protocol="http/protobuf",
        service_name="gt-phx-service", project=project,
    )
    traj = _run_traced()
    assert provider.force_flush(timeout_millis=30_000)
    spans = wait_for_spans(phoenix_server, project, traj.trace_id, expected_span_ids(traj))
    assert_graphtrail_trace(spans, traj)
