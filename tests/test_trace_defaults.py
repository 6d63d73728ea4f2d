"""graphtrail's own agent is traced by default, once, and ``capture()`` says when nothing was traced."""

from __future__ import annotations

import asyncio
import logging

import pytest
from langchain_core.messages import HumanMessage

import graphtrail
from graphtrail.agents import create_graphrag_agent
from graphtrail.evaluators import ReplayJob, RunKey, replay
from graphtrail.tracer._safety import reset_warnings
from tests.test_tools import tiny_kg

QUESTION = "What is the capital of Kenya?"


def test_reference_agent_is_traced_by_default() -> None:
    with graphtrail.capture() as cap:
        create_graphrag_agent("offline", tiny_kg()).invoke({"messages": [HumanMessage(QUESTION)]})
    assert len(cap) == 1
    traj = cap.last
    assert traj.name == "graphrag-agentic" and traj.answer == "Nairobi" and traj.citations and traj.steps


def test_trace_false_opts_out_and_capture_warns(caplog: pytest.LogCaptureFixture) -> None:
    reset_warnings()
    agent = create_graphrag_agent("offline", tiny_kg(), trace=False)
    assert not hasattr(agent, "graphtrail_handler")
    with caplog.at_level(logging.WARNING, logger="graphtrail"), graphtrail.capture() as cap:
        agent.invoke({"messages": [HumanMessage(QUESTION)]})
    assert len(cap) == 0
    assert [r.getMessage() for r in caplog.records if "trace_agent" in r.getMessage()]


def test_wrapping_again_or_replaying_does_not_trace_twice() -> None:
    agent = graphtrail.trace_agent(create_graphrag_agent("offline", tiny_kg()), name="mine")
    with graphtrail.capture() as cap:
        agent.invoke({"messages": [HumanMessage(QUESTION)]})
    assert [t.name for t in cap] == ["mine"]

    job = ReplayJob(key=RunKey(agent="a", model="m", question_id="q", condition="baseline"), question=QUESTION)
    with graphtrail.capture() as outer:
        records = asyncio.run(replay(create_graphrag_agent("offline", tiny_kg()), [job]))
    assert len(outer) == 1  # one root per run, not one per tracing layer
    assert records[0].trajectory is not None and records[0].answer == "Nairobi"
