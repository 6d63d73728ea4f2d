"""Issue 22 against a live Jaeger (marker ``jaeger``): ``traces stats --jaeger`` reads back the same numbers
as the trace file, paging through Jaeger's query API; ``annotate --otlp`` leaves graphtrail-eval verdict
spans whose references point at the production traces."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphtrail
from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
from graphtrail.cli import main
from graphtrail.cli.jaegersource import fetch_jaeger_traces
from tests.jaeger_server import JaegerServer

pytestmark = pytest.mark.jaeger

MODEL = "offline:cite=endpoints,unsupported=0.5,seed=1"


@pytest.fixture(autouse=True)
def _restore_graphtrail_defaults() -> Iterator[None]:
    yield
    graphtrail.configure()


def _wait_for(server: JaegerServer, service: str, n: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if len(server.get("/api/traces", service=service, limit=1000, lookback="1h").get("data") or []) >= n:
            return
        time.sleep(0.5)
    pytest.fail(f"Jaeger never held {n} traces of {service}\n{server.log_tail()}")


def test_stats_from_jaeger_equal_stats_from_the_file(jaeger_server: JaegerServer, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    service = f"prod-{uuid.uuid4().hex[:8]}"
    traces = tmp_path / "traces.jsonl"
    graphtrail.configure(exporter=["jsonl", "otlp"], path=traces, endpoint=jaeger_server.otlp_http_endpoint, service_name=service)
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, load_kg("countries")), name="kg-agent")
    questions = load_questions("countries-demo")
    for q in questions:
        agent.invoke({"messages": [("user", q.question)]})
    graphtrail.tracer.flush()
    _wait_for(jaeger_server, service, len(questions))

    # paging: 12 traces through pages of 5 come back complete, each once
    paged = fetch_jaeger_traces(jaeger_server.query_url, service, 3600, page=5)
    assert len(paged) == len(questions) == len({t["traceID"] for t in paged})

    from_file, from_jaeger = tmp_path / "file.json", tmp_path / "jaeger.json"
    assert main(["traces", "stats", str(traces), "--json", str(from_file)]) == 0
    assert main(["traces", "stats", "--jaeger", jaeger_server.query_url, "--service", service, "--since", "1h",
                 "--json", str(from_jaeger)]) == 0
    a, b = json.loads(from_file.read_text()), json.loads(from_jaeger.read_text())
    assert a["distributions"] == b["distributions"]
    assert a["uncited_entities"] == b["uncited_entities"]
    assert [r["trace_id"] for r in a["unsupported_runs"]] == [r["trace_id"] for r in b["unsupported_runs"]]
    assert a["distributions"]["runs_with_unsupported_citations"] > 0


def test_annotate_over_otlp_links_verdict_spans_to_the_production_traces(
    jaeger_server: JaegerServer, tmp_path: Path
) -> None:
    service = f"prod-{uuid.uuid4().hex[:8]}"
    traces = tmp_path / "traces.jsonl"
    graphtrail.configure(exporter="jsonl", path=traces, service_name=service)
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, load_kg("countries")), name="kg-agent")
    for q in load_questions("countries-demo")[:2]:
        agent.invoke({"messages": [("user", q.question)]})
    graphtrail.tracer.flush()
    out = tmp_path / "eval"
    assert main(["eval", "--kg", "countries", "--from-traces", str(traces), "--model", MODEL,
                 "--conditions", "baseline,uncited_removal", "--out", str(out)]) == 0
    base = jaeger_server.otlp_http_endpoint.removesuffix("/v1/traces")
    assert main(["annotate", str(out), "--otlp", base]) == 0
    sampled = [json.loads(line) for line in (out / "questions-from-traces.jsonl").read_text().splitlines()]
    _wait_for(jaeger_server, "graphtrail-eval", 1)
    spans = [s for t in jaeger_server.get("/api/traces", service="graphtrail-eval", limit=1000, lookback="1h")["data"]
             for s in t["spans"]]
    by_name = {s["operationName"]: s for s in spans}
    for q in sampled:
        span = by_name[f"verdict {q['id']}"]
        refs = {(r["traceID"], r["spanID"]) for r in span["references"] if r["refType"] == "FOLLOWS_FROM"}
        assert {tuple(p) for p in q["production_traces"]} <= refs
        tags = {t["key"]: t["value"] for t in span["tags"]}
        assert tags["graphtrail.verdict.label"] in {"hidden-influence", "cited-evidence", "unchanged"}
