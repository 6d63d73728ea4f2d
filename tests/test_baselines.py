"""Baselines share the agents' result shape, retrieve through the graph tools, and trace like agents."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import graphtrail
from graphtrail.agents import GraphFilter, answer_from_result, create_graphrag_agent, graphrag_local, llm_only, rag, use_filter
from tests.fakes import ScriptedChatModel, tool_call
from tests.test_tools import tiny_kg


def shape_ok(result) -> None:
    messages = result["messages"]
    assert isinstance(messages[0], HumanMessage)
    ai, reply = messages[-2], messages[-1]
    assert isinstance(ai, AIMessage) and ai.tool_calls[0]["name"] == "submit_answer"
    assert isinstance(reply, ToolMessage) and reply.tool_call_id == ai.tool_calls[0]["id"]


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda kg: llm_only("offline"), "unknown"),  # the heuristic knows nothing without the graph
        (lambda kg: rag("offline", kg), "Kenyan shilling"),
        (lambda kg: graphrag_local("offline", kg), "Kenyan shilling"),
    ],
)
def test_baselines_answer_with_the_agents_shape(make, expected):
    result = make(tiny_kg()).invoke({"messages": [HumanMessage("What is the currency of Kenya?")]})
    shape_ok(result)
    answer, citations, status = answer_from_result(result)
    assert (answer, status) == (expected, "ok")
    if expected != "unknown":
        assert citations == ["E1", "E3"]


def test_graphrag_local_is_one_hop_only():
    result = graphrag_local("offline", tiny_kg()).invoke("What is the capital of the country that borders Kenya?")
    assert answer_from_result(result)[0] == "unknown"  # the second hop is outside the local context


def test_baseline_context_goes_to_a_single_model_call_and_respects_the_filter():
    seen = []

    def policy(messages):
        seen.append(messages[-1].content)
        return AIMessage(content="", tool_calls=[tool_call("submit_answer", {"answer": "x", "citations": []})])

    model = ScriptedChatModel(policy=policy)
    graphrag_local(model, tiny_kg()).invoke("What is the capital of Kenya?")
    assert len(model.calls) == 1 and "Nairobi" in seen[0] and "Question: What is the capital of Kenya?" in seen[0]
    with use_filter(GraphFilter(hidden=frozenset({"E2"}))):
        rag(model, tiny_kg()).invoke("What is the capital of Kenya?")
    assert "Nairobi" not in seen[-1]


def test_text_answer_without_submit_is_kept():
    model = ScriptedChatModel(script=[AIMessage(content="It is Nairobi [E:E2].")])
    result = llm_only(model).invoke("What is the capital of Kenya?")
    assert answer_from_result(result) == ("It is Nairobi.", ["E2"], "ok")  # markers stripped as the tracer strips them


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    graphtrail.configure(tracer_provider=provider)
    yield exporter
    graphtrail.configure(exporter="none")


@pytest.mark.parametrize("kind", ["agent", "graphrag_local"])
def test_traced_end_to_end(spans, kind):
    kg = tiny_kg()
    runnable = create_graphrag_agent("offline", kg, "evidence_first") if kind == "agent" else graphrag_local("offline", kg)
    traced = graphtrail.trace_agent(runnable)
    with graphtrail.capture() as cap:
        result = traced.invoke({"messages": [HumanMessage("What is the currency of Kenya?")]})
    (traj,) = cap.trajectories
    assert (traj.answer, traj.citations, traj.status) == answer_from_result(result)
    assert traj.answer == "Kenyan shilling" and traj.citations == ["E1", "E3"]
    assert {"E1", "E3"} <= set(traj.visited)
    assert all(cid in traj.visited for cid in traj.citations)
    assert any(step.tool == "get_neighbors" and step.edges for step in traj.steps)
    assert spans.get_finished_spans()
