"""Issue 22, parts 4-5 against a live Phoenix: questions from production traces are replayed, and the
verdicts land as span annotations on exactly the production runs' root spans.

The production runs are exported to a real Phoenix server (tests/phoenix_server.py) and to a
jsonl file; ``graphtrail eval --from-traces`` reads the file with no answers file;
``graphtrail annotate --phoenix`` writes through Phoenix's client; the annotations are read
back through Phoenix's REST API.
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
from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
from graphtrail.cli import main
from tests.phoenix_server import PhoenixServer
from tests.test_phoenix_integration import wait_for_spans

pytestmark = pytest.mark.phoenix

MODEL = "offline:cite=endpoints,unsupported=0.5,seed=1"
CONDITIONS = "baseline,cited_removal,uncited_removal,uncited_mask"


@pytest.fixture(autouse=True)
def _restore_graphtrail_defaults() -> Iterator[None]:
    yield
    graphtrail.configure()


def _annotations(server: PhoenixServer, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
    from phoenix.client import Client

    return [dict(a) for a in Client(base_url=server.base_url).spans.get_span_annotations(span_ids=span_ids, project_identifier=project)]


def test_verdicts_land_on_the_production_root_spans(phoenix_server: PhoenixServer, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    project = f"prod-{uuid.uuid4().hex[:8]}"
    traces = tmp_path / "traces.jsonl"
    graphtrail.configure(exporter=["jsonl", "otlp"], path=traces, endpoint=phoenix_server.otlp_http_endpoint, project=project)
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, load_kg("countries")), name="kg-agent")
    questions = load_questions("countries-demo")[:4]
    with graphtrail.capture() as cap:
        for q in [*questions, questions[0]]:  # a repeated question: one evaluation, both runs annotated
            agent.invoke({"messages": [("user", q.question)]})
    graphtrail.tracer.flush()
    prod = cap.trajectories
    for traj in prod:
        wait_for_spans(phoenix_server, project, traj.trace_id, {traj.span_id})

    out = tmp_path / "eval"
    code = main(["eval", "--kg", "countries", "--from-traces", str(traces), "--sample", "3", "--seed", "7",
                 "--model", MODEL, "--conditions", CONDITIONS, "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "changed output" in printed and "accuracy" not in printed.lower().split("changed outputs")[1].split("citation support")[0]
    sampled = [json.loads(line) for line in (out / "questions-from-traces.jsonl").read_text().splitlines()]
    assert len(sampled) == 3 and len({q["question"] for q in sampled}) == 3

    assert main(["annotate", str(out), "--phoenix", phoenix_server.base_url]) == 0
    assert main(["annotate", str(out / "results.json"), "--phoenix", phoenix_server.base_url]) == 0  # again: updated, not doubled
    results = json.loads((out / "results.json").read_text())
    rows = {q["question_id"]: q for q in results["questions"]}

    annotated_roots = {span_id for q in sampled for _, span_id in q["production_traces"]}
    others = {t.span_id for t in prod} - annotated_roots
    children = [s.span_id for t in prod for s in t.steps]
    deadline, found = time.monotonic() + 30, []
    while time.monotonic() < deadline:
        found = [a for a in _annotations(phoenix_server, project, sorted(annotated_roots | others) + children)
                 if a["name"] == "graphtrail.provenance"]
        if {a["span_id"] for a in found} >= annotated_roots:
            break
        time.sleep(0.5)
    assert sorted(a["span_id"] for a in found) == sorted(annotated_roots), "one annotation per production root, none elsewhere"
    by_span = {a["span_id"]: a for a in found}
    for q in sampled:
        row = rows[q["id"]]
        changed = {c for c, r in row["changed"].items() if c != "baseline" and r and r > (row.get("noise") or 0)}
        for _, span_id in q["production_traces"]:
            ann = by_span[span_id]
            assert ann["annotator_kind"] == "CODE"
            assert set(ann["metadata"]["changed"]) == changed
            assert ann["metadata"]["deciding_uncited"] == row["hidden_influence"]
            assert ann["result"]["label"] in {"hidden-influence", "cited-evidence", "unchanged"}
            for condition in changed:
                assert condition in ann["result"]["explanation"]
    # the repeated question's two production runs both carry its verdict
    assert any(len(q["production_traces"]) == 2 for q in sampled) == (questions[0].question in {q["question"] for q in sampled})
