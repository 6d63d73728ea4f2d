"""Issue 29, item 2: metric labels are bounded, whatever the traffic names its runs or its models.

Real parts: LangChain runnables traced by graphtrail's handler, the OTel SDK's
MeterProvider with an InMemoryMetricReader, and the standard Prometheus exporter
serving /metrics on loopback. The runnables are cheap (a lambda, a scripted chat
model) so 10,000 runs take seconds.
"""

from __future__ import annotations

import urllib.request
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableLambda
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from prometheus_client.parser import text_string_to_metric_families

import graphtrail
from graphtrail.tracer import GraphTrailHandler
from graphtrail.tracer.cardinality import LABEL_BOUNDS, MAX_LABEL_LENGTH, MAX_RUN_NAMES, OTHER
from graphtrail.tracer.metrics import prometheus_address
from tests.fakes import ScriptedChatModel
from tests.servers import free_port

RUNS = 10_000


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    yield
    graphtrail.configure()


def _points(reader: InMemoryMetricReader, name: str) -> list[Any]:
    data = reader.get_metrics_data()
    return [p for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics if m.name == name
            for p in m.data.data_points]


def _series(reader: InMemoryMetricReader) -> Counter[str]:
    """Data points (= series) per metric."""
    data = reader.get_metrics_data()
    return Counter(m.name for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
                   for _ in m.data.data_points)


def _run_many(run_names: int, runs: int, reader: Any) -> None:
    graphtrail.configure(metrics=reader, metrics_run_names=run_names)
    handler = GraphTrailHandler()  # no name given in code: the root is named by LangChain's run name
    step = RunnableLambda(lambda x: x)
    for i in range(runs):
        step.invoke(i, config={"callbacks": [handler], "run_name": f"request-{i:05d}"})


def test_unique_run_names_never_become_labels_by_default() -> None:
    """10,000 runs, each with its own run name: one series per metric, not 10,000."""
    reader = InMemoryMetricReader()
    graphtrail.configure(metrics=reader)
    handler = GraphTrailHandler()
    step = RunnableLambda(lambda x: x)
    with graphtrail.capture() as cap:
        for i in range(3):
            step.invoke(i, config={"callbacks": [handler], "run_name": f"request-{i:05d}"})
    assert [t.name for t in cap.trajectories] == ["request-00000", "request-00001", "request-00002"]  # spans keep it
    for i in range(3, RUNS):
        step.invoke(i, config={"callbacks": [handler], "run_name": f"request-{i:05d}"})
    runs = _points(reader, "graphtrail.runs")
    assert sum(p.value for p in runs) == RUNS  # every run counted...
    assert [p.attributes["gen_ai.agent.name"] for p in runs] == [OTHER]  # ...under one label
    series = _series(reader)
    assert max(series.values()) == 1, series


def test_run_names_let_in_are_capped() -> None:
    cap, runs_ = 20, 2_000
    reader = InMemoryMetricReader()
    _run_many(cap, runs_, reader)
    runs = _points(reader, "graphtrail.runs")
    names = Counter({p.attributes["gen_ai.agent.name"]: p.value for p in runs})
    assert sum(names.values()) == runs_
    assert len(names) == cap + 1  # the first 20 names, then "other"
    assert names[OTHER] == runs_ - cap and names["request-00000"] == 1 and "request-00020" not in names
    assert max(_series(reader).values()) <= cap + 1


def test_run_names_on_prometheus_stay_under_the_bound() -> None:
    """The same through a real /metrics scrape: the page stays small."""
    graphtrail.configure(metrics="prometheus", prometheus_port=free_port(), metrics_run_names=5)
    handler = GraphTrailHandler()
    step = RunnableLambda(lambda x: x)
    for i in range(RUNS):
        step.invoke(i, config={"callbacks": [handler], "run_name": f"request-{i:05d}"})
    host, port = prometheus_address()  # type: ignore[misc]
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as resp:
        page = resp.read().decode()
    families = {f.name: f for f in text_string_to_metric_families(page)}
    runs = [s for s in families["graphtrail_runs"].samples if s.name == "graphtrail_runs_total"]
    assert sum(s.value for s in runs) == RUNS
    assert len({s.labels["gen_ai_agent_name"] for s in runs}) == 6
    assert len(page) < 100_000  # was 13.6 MB for 300 runs named per request


def test_names_given_in_code_are_labels_up_to_their_bound() -> None:
    bound = LABEL_BOUNDS["gen_ai.agent.name"]
    reader = InMemoryMetricReader()
    graphtrail.configure(metrics=reader)
    step = RunnableLambda(lambda x: x)
    for i in range(bound + 30):
        step.invoke(i, config={"callbacks": [GraphTrailHandler(name=f"agent-{i}")]})
    names = Counter({p.attributes["gen_ai.agent.name"]: p.value for p in _points(reader, "graphtrail.runs")})
    assert len(names) == bound + 1 and names[OTHER] == 30 and names["agent-0"] == 1


class _DatedModel(ScriptedChatModel):
    """A provider that reports a new model string in every response (a dated or routed model)."""

    def _respond(self, messages: list[BaseMessage]) -> AIMessage:
        msg = super()._respond(messages)
        msg.response_metadata = {**msg.response_metadata, "model_name": f"gpt-x-{len(self.calls):05d}-" + "v" * 300}
        return msg


def test_per_response_model_strings_are_capped() -> None:
    bound = LABEL_BOUNDS["gen_ai.response.model"]
    reader = InMemoryMetricReader()
    graphtrail.configure(metrics=reader)
    model = _DatedModel(script=[AIMessage(content="ok")])
    agent = graphtrail.trace_agent(RunnableLambda(lambda x: x) | model, name="chat")
    calls = 600
    for i in range(calls):
        agent.invoke([("user", f"q{i}")])
    points = _points(reader, "gen_ai.client.operation.duration")
    assert sum(p.count for p in points) == calls
    responses = Counter(p.attributes.get("gen_ai.response.model") for p in points)
    assert len(responses) == bound + 1 and OTHER in responses
    assert all(len(v) <= MAX_LABEL_LENGTH for v in responses)  # a long string is cut, not a 300-char label
    assert len(_points(reader, "gen_ai.client.token.usage")) == 2 * (bound + 1)


@pytest.mark.parametrize("bad", [-1, MAX_RUN_NAMES + 1, True, "10", 2.5])
def test_a_bad_run_names_cap_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="metrics_run_names"):
        graphtrail.configure(metrics="memory", metrics_run_names=bad)


def test_histogram_observations_reach_every_reader_and_stay_bounded_without_a_collection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Runs' histogram observations wait for a collection (off the agent's thread); with nobody collecting,
    a background hand-over keeps the waiting list bounded; nothing is lost or counted twice."""
    import time

    from graphtrail.tracer import metrics

    monkeypatch.setattr(metrics, "_DRAIN_AT", 50)
    first, second = InMemoryMetricReader(), InMemoryMetricReader()
    from opentelemetry.sdk.metrics import MeterProvider

    graphtrail.configure(meter_provider=MeterProvider(metric_readers=[first, second]))
    handler = GraphTrailHandler(name="lambda")
    step = RunnableLambda(lambda x: x)
    runs = 100  # 2 observations per run (duration, hops): the list fills up 4 times
    for i in range(runs):
        step.invoke(i, config={"callbacks": [handler]})
    inst = metrics._state.instruments
    assert inst is not None
    deadline = time.monotonic() + 10
    while len(inst.pending) >= 50 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(inst.pending) < 50
    for reader in (first, second):  # each reader sees every run once
        (point,) = _points(reader, "gen_ai.invoke_agent.duration")
        assert point.count == runs
        (count,) = _points(reader, "graphtrail.runs")
        assert count.value == runs


def test_a_secret_in_a_model_string_is_not_a_label() -> None:
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0" * 2
    reader = InMemoryMetricReader()
    graphtrail.configure(metrics=reader)

    class _LeakyModel(ScriptedChatModel):
        def _respond(self, messages: list[BaseMessage]) -> AIMessage:
            msg = super()._respond(messages)
            msg.response_metadata = {**msg.response_metadata, "model_name": f"gpt-x {secret}"}
            return msg

    agent = graphtrail.trace_agent(RunnableLambda(lambda x: x) | _LeakyModel(script=[AIMessage(content="ok")]), name="chat")
    agent.invoke([("user", "q")])
    labels = [v for p in _points(reader, "gen_ai.client.operation.duration") for v in p.attributes.values()]
    assert labels and not any(secret in str(v) for v in labels)
