"""Issue 22, parts 1-3: per-run provenance signals, OTel metrics on a real Prometheus scrape, ``traces stats``.

The agent is the bundled one with the offline model set to cite, for some
questions, an entity its tools never revealed (``unsupported=0.5``). Everything
real: the OTel SDK, the jsonl exporter, the standard Prometheus exporter serving
/metrics on loopback, the CLI entry point.
"""

from __future__ import annotations

import json
import logging
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

import graphtrail
from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
from graphtrail.cli import main
from graphtrail.tracer import trajectories_from_otlp_json
from graphtrail.tracer.metrics import get_metric_reader, prometheus_address
from graphtrail.tracer.provenance import provenance_signals
from tests.servers import free_port

MODEL = "offline:cite=endpoints,unsupported=0.5,seed=1"


@dataclass
class Production:
    trajectories: list[Any]
    traces: Path
    scrape: str


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Production]:
    """The demo's 12 questions answered once each, traced to a jsonl file, metrics served for Prometheus."""
    out = tmp_path_factory.mktemp("production")
    traces = out / "traces.jsonl"
    graphtrail.configure(exporter="jsonl", path=traces, metrics="prometheus", prometheus_port=free_port())
    kg = load_kg("countries")
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, kg), name="kg-agent")
    try:
        with graphtrail.capture() as cap:
            for q in load_questions("countries-demo"):
                agent.invoke({"messages": [("user", q.question)]})
        graphtrail.tracer.flush()
        host, port = prometheus_address()  # type: ignore[misc]
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as resp:
            scrape = resp.read().decode()
        yield Production(list(cap.trajectories), traces, scrape)
    finally:
        graphtrail.configure()


def _never_revealed(traj: Any) -> list[str]:
    """Computed independently of the signals: citations whose source lists no step."""
    return [cid for cid, src in traj.citation_sources.items() if not src.steps]


def test_unsupported_citations_are_on_the_trajectory_and_the_span(production: Production) -> None:
    trajs = production.trajectories
    flagged = [t for t in trajs if t.provenance.unsupported_citations]
    assert 0 < len(flagged) < len(trajs), "unsupported=0.5 should flag some runs, not all"
    rebuilt = {t.trace_id: t for t in trajectories_from_otlp_json(production.traces)}
    for t in trajs:
        assert t.provenance.unsupported_citations == _never_revealed(t)
        assert set(t.provenance.grounded_citations) == set(t.citations) - set(_never_revealed(t))
        assert t.provenance.hops == sum(1 for s in t.steps if s.tool != "submit_answer")
        # the root span carries the same signals: the file read back holds them
        assert rebuilt[t.trace_id].provenance == t.provenance
    for t in flagged:
        (invented,) = t.provenance.unsupported_citations
        assert invented not in t.visited and invented == t.citations[-1]


def test_root_span_attributes_are_plain_values_a_backend_can_search(production: Production) -> None:
    lines = [json.loads(line) for line in production.traces.read_text().splitlines() if line.strip()]
    roots = [span for doc in lines for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]
             if span["name"] == "invoke_agent kg-agent"]
    assert len(roots) == len(production.trajectories)
    counts = []
    for span in roots:
        attrs = {a["key"]: a["value"] for a in span["attributes"]}
        counts.append(int(attrs["graphtrail.provenance.unsupported_count"]["intValue"]))
        assert "boolValue" in attrs.get("graphtrail.provenance.answer_revealed", {"boolValue": True})
    assert sum(counts) == sum(len(t.provenance.unsupported_citations) for t in production.trajectories)


def _samples(scrape: str) -> dict[str, float]:
    """Sample name -> value, summed over label sets."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(scrape):
        for sample in family.samples:
            out[sample.name] = out.get(sample.name, 0.0) + sample.value
    return out


def test_prometheus_scrape_on_loopback_shows_the_counters(production: Production) -> None:
    samples = _samples(production.scrape)
    trajs = production.trajectories
    assert samples["graphtrail_runs_total"] == len(trajs)
    assert samples["graphtrail_provenance_unsupported_runs_total"] == sum(1 for t in trajs if t.provenance.unsupported_citations)
    assert samples["graphtrail_provenance_unsupported_citations_total"] == sum(len(_never_revealed(t)) for t in trajs)
    assert samples["graphtrail_provenance_grounded_citations_total"] == sum(len(t.citations) - len(_never_revealed(t)) for t in trajs)
    # GenAI semantic-convention histograms, one observation per model call / per token type
    calls = sum(len(t.model_calls) for t in trajs)
    assert samples["gen_ai_client_operation_duration_seconds_count"] == calls
    assert samples["gen_ai_client_token_usage_count"] == 2 * calls
    assert samples["gen_ai_client_token_usage_sum"] == sum((c.input_tokens or 0) + (c.output_tokens or 0) for t in trajs for c in t.model_calls)
    assert samples["gen_ai_invoke_agent_duration_seconds_count"] == len(trajs)
    # low-cardinality labels only: agent, model, provider, status; never ids
    labels = {k for fam in text_string_to_metric_families(production.scrape) if fam.name == "graphtrail_runs"
              for s in fam.samples for k in s.labels}
    assert {"gen_ai_agent_name", "gen_ai_request_model", "graphtrail_status"} <= labels
    assert not any("trace" in k or "question" in k for k in labels)


def test_traces_stats_lists_exactly_the_runs_with_unsupported_citations(
    production: Production, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json, out_html = tmp_path / "stats.json", tmp_path / "stats.html"
    code = main(["traces", "stats", str(production.traces), "--json", str(out_json), "--html", str(out_html)])
    printed = capsys.readouterr().out
    assert code == 0
    stats = json.loads(out_json.read_text())
    expected = {t.trace_id for t in production.trajectories if _never_revealed(t)}
    assert {r["trace_id"] for r in stats["unsupported_runs"]} == expected
    for trace_id in expected:  # printed whole, so the user can paste it into the backend's search
        assert trace_id in printed
    others = {t.trace_id for t in production.trajectories} - expected
    assert not any(trace_id in printed for trace_id in others)
    d = stats["distributions"]
    assert d["runs"] == len(production.trajectories)
    assert d["runs_with_unsupported_citations"] == len(expected)
    # the most often uncited entity really is left uncited in that many runs
    top = stats["uncited_entities"][0]
    assert top["runs"] == sum(1 for t in production.trajectories if top["id"] in t.visited_uncited)
    assert sum(r["runs"] for r in stats["trend"]["rows"]) == d["runs"]
    page = out_html.read_text()
    assert page.count("data:image/png;base64,") == 2 and all(t in page for t in expected)


def test_traces_stats_leaves_evaluation_replays_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mixed.jsonl"
    graphtrail.configure(exporter="jsonl", path=path)
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, load_kg("countries")), name="kg-agent")
    question = load_questions("countries-demo")[0].question
    try:
        agent.invoke({"messages": [("user", question)]})
        with graphtrail.tracer.run_annotations(attributes={"graphtrail.condition": "baseline"}, metadata={"condition": "baseline"}, replay=True):
            agent.invoke({"messages": [("user", question)]})
        graphtrail.tracer.flush()
    finally:
        graphtrail.configure()
    assert main(["traces", "stats", str(path), "--json", str(tmp_path / "s.json")]) == 0
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["distributions"]["runs"] == 1 and stats["replays_skipped"] == 1


@pytest.mark.parametrize(
    "argv, words",
    [
        (["traces", "stats"], "nothing to read"),
        (["traces", "stats", "--jaeger", "http://127.0.0.1:9", "--since", "5x"], "--since '5x' is not a duration"),
        (["traces", "stats", "FILE", "--by", "week"], "--by 'week' is not a period"),
        (["traces", "stats", "FILE", "--service", "x"], "--service and --since apply to --jaeger"),
        (["traces", "stats", "FILE", "--jaeger", "http://127.0.0.1:9"], "not both"),
        (["traces", "stats", "--jaeger", f"http://127.0.0.1:{free_port()}"], "cannot reach Jaeger"),
    ],
)
def test_bad_stats_input_is_one_line_and_exit_2(
    argv: list[str], words: str, production: Production, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(production.traces) if a == "FILE" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and err.startswith("graphtrail: error:")


def test_metrics_that_fail_never_break_the_agent(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from graphtrail.tracer import _safety, signals

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a bug in graphtrail's metrics")

    _safety.reset_warnings()
    graphtrail.configure(metrics="memory")
    monkeypatch.setattr(signals, "record_run", broken)
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, load_kg("countries")), name="kg-agent")
    try:
        with caplog.at_level(logging.WARNING, logger="graphtrail"), graphtrail.capture() as cap:
            for q in load_questions("countries-demo")[:2]:
                result = agent.invoke({"messages": [("user", q.question)]})
                assert result["messages"]
    finally:
        graphtrail.configure()
    assert [t.provenance is not None for t in cap.trajectories] == [True, True]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "metrics" in r.getMessage()]
    assert len(warnings) == 1


def test_signals_that_fail_still_leave_the_root_its_visited_attributes(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The root's visited/uncited/citation-source attributes are set in the same call as the
    signals' (one set_attributes): when the signals cannot be computed, they are still set."""
    from graphtrail.tracer import _safety, signals
    from graphtrail.tracer.config import get_memory_exporter

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a bug in graphtrail's signals")

    _safety.reset_warnings()
    graphtrail.configure(exporter="memory")
    monkeypatch.setattr(signals, "provenance_signals", broken)
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, load_kg("countries")), name="kg-agent")
    try:
        with caplog.at_level(logging.WARNING, logger="graphtrail"), graphtrail.capture() as cap:
            assert agent.invoke({"messages": [("user", load_questions("countries-demo")[0].question)]})["messages"]
        graphtrail.tracer.flush()
        exporter = get_memory_exporter()
        assert exporter is not None
        roots = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    finally:
        graphtrail.configure()
    assert [t.provenance for t in cap.trajectories] == [None]
    attrs = dict(roots[-1].attributes or {})
    visited = json.loads(attrs["graphtrail.visited"])
    assert visited and visited == cap.trajectories[0].visited
    assert "graphtrail.visited_uncited" in attrs and "graphtrail.citation_sources" in attrs
    assert not any(k.startswith("graphtrail.provenance.") for k in attrs)
    assert any("provenance signals" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_replays_are_not_counted_in_the_metrics() -> None:
    graphtrail.configure(metrics="memory")
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, load_kg("countries")), name="kg-agent")
    question = load_questions("countries-demo")[0].question
    try:
        agent.invoke({"messages": [("user", question)]})
        with graphtrail.tracer.run_annotations(replay=True):
            agent.invoke({"messages": [("user", question)]})
        data = get_metric_reader().get_metrics_data()
    finally:
        graphtrail.configure()
    runs = [p.value for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
            if m.name == "graphtrail.runs" for p in m.data.data_points]
    assert runs == [1]


def test_bad_metrics_choice_is_refused_before_anything_changes() -> None:
    with pytest.raises(ValueError, match="metrics must be one of"):
        graphtrail.configure(metrics="statsd")


@pytest.mark.parametrize(
    "citations, steps, answer, names, question, expected",
    [
        # grounded vs unsupported; an empty hop
        (["E1", "E9"], [["E1", "E2"], []], "Kenya", {"E1": ["Kenya"]}, None,
         dict(grounded_citations=["E1"], unsupported_citations=["E9"], answer_revealed=True, visited=2,
              visited_uncited=1, uncited_share=0.5, hops=2, empty_hops=1)),
        # a sentence answer names a revealed entity the question does not name
        ([], [["p1", "m1"]], "Inception was directed by Christopher Nolan.", {"p1": ["Christopher Nolan"], "m1": ["Inception"]},
         "Who directed Inception?", dict(answer_revealed=True, visited_uncited=2)),
        # the answer names only what the question named: the answer's entity was not revealed
        ([], [["m1"]], "Inception was directed by someone.", {"m1": ["Inception"]}, "Who directed Inception?",
         dict(answer_revealed=False)),
        # abstentions and yes/no name no entity; nothing visited: no share
        (["E1"], [], "unknown", {}, None, dict(answer_revealed=None, uncited_share=None, unsupported_citations=["E1"])),
        ([], [["E1"]], "Yes", {"E1": ["Kenya"]}, None, dict(answer_revealed=None)),
    ],
)
def test_signals_rules(citations: list[str], steps: list[list[str]], answer: str, names: dict[str, list[str]],
                       question: str | None, expected: dict[str, Any]) -> None:
    got = provenance_signals(citations, steps, answer=answer, names=names, question=question)
    for key, value in expected.items():
        assert getattr(got, key) == value, key


def test_stats_read_back_through_jaeger_json_equal_the_files(production: Production, tmp_path: Path) -> None:
    """The Jaeger reader inverts Jaeger's OTLP translation (``otlp_to_jaeger`` mirrors it and is checked against a
    live Jaeger in test_jaeger_integration.py): the same runs, signals and statistics come back."""
    from graphtrail.cli.jaegersource import jaeger_to_otlp
    from graphtrail.cli.tracefiles import otlp_documents, otlp_to_jaeger, read_json_records
    from graphtrail.cli.tracestats import compute_stats

    jaeger = otlp_to_jaeger(otlp_documents(read_json_records(production.traces), production.traces))["data"]
    back = trajectories_from_otlp_json([json.dumps(jaeger_to_otlp(jaeger))])
    from_file = trajectories_from_otlp_json(production.traces)
    assert [t.provenance for t in back] == [t.provenance for t in from_file]
    a = compute_stats(back, source="x").to_json()
    b = compute_stats(from_file, source="x").to_json()
    for key in ("distributions", "uncited_entities"):
        assert a[key] == b[key]
    assert [r["trace_id"] for r in a["unsupported_runs"]] == [r["trace_id"] for r in b["unsupported_runs"]]
