"""Chains, as langchain-community and langchain-classic write them.

``GraphQAChain`` reads its graph directly (no tool call), so no ablation can
reach what it reads: evaluation must say so rather than report numbers. Its
answer is the ``result`` key of its output, and its legacy ``run``/``__call__``
calls are traced when the chain is wrapped with ``trace_agent``.
"""

from __future__ import annotations

import logging
import re
import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage

import graphtrail
from graphtrail.evaluators import CoverageError, evaluate
from graphtrail.tracer._safety import reset_warnings
from tests.fakes import ScriptedChatModel

from .world import EVAL_OPTIONS, N_FILMS, questions

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community announces its sunset on import
    community = pytest.importorskip("langchain_community", reason="the 'graph' extra (langchain-community) is not installed")
    from langchain_community.chains.graph_qa.base import GraphQAChain
    from langchain_community.graphs.networkx_graph import KnowledgeTriple, NetworkxEntityGraph


def film_graph() -> Any:
    graph = NetworkxEntityGraph()
    for i in range(1, N_FILMS + 1):
        graph.add_triple(KnowledgeTriple(f"Film {i}", "was directed by", f"Director {i}"))
        graph.add_triple(KnowledgeTriple(f"Film {i}", "was produced by", f"Producer {i}"))
    return graph


def chain_model() -> ScriptedChatModel:
    """Extracts "Film N" when asked for entities; answers from the triplets it is given."""

    def policy(messages: list[Any]) -> AIMessage:
        prompt = str(messages[-1].content)
        if prompt.startswith("Extract all entities"):
            asked = prompt.rsplit("Begin!", 1)[-1]
            m = re.search(r"Film \d+", asked)
            return AIMessage(content=m.group(0) if m else "NONE")
        m = re.search(r"was directed by (Director \d+)", prompt)
        return AIMessage(content=m.group(1) if m else "I don't know.")

    return ScriptedChatModel(policy=policy, model_name="scripted-chain")


def make_chain() -> Any:
    return GraphQAChain.from_llm(chain_model(), graph=film_graph())


def test_graph_qa_chain_answer_is_read_and_its_ablations_refused() -> None:
    chain = make_chain()
    report = evaluate(chain, questions(2), input_builder=lambda q: {"query": q}, **EVAL_OPTIONS)
    # the answer came from the chain's "result" key
    assert [q.baseline_answer for q in report.questions] == ["Director 1", "Director 2"]
    assert report.condition("baseline").accuracy == 1.0
    # it cites nothing: the citation conditions have no numbers, and say why
    assert report.cited_nothing and report.condition("cited_removal").not_applicable
    # nothing the chain read went through a tool: the conditions that ran removed nothing it used
    row = report.condition("uncited_removal")
    assert not row.valid and "no tool output of the baseline runs revealed" in row.invalid_reason
    with pytest.raises(CoverageError, match="(?i)no tool output of the baseline"):
        evaluate(chain, questions(1), input_builder=lambda q: {"query": q}, strict=True, **EVAL_OPTIONS)


def test_legacy_run_and_call_are_traced() -> None:
    traced = graphtrail.trace_agent(make_chain(), name="graph-qa")
    with graphtrail.capture() as cap:
        assert traced.run("Who directed Film 3?") == "Director 3"
        out = traced({"query": "Who directed Film 4?"})
    assert out["result"] == "Director 4"
    assert [(t.name, t.answer, t.status) for t in cap] == [("graph-qa", "Director 3", "ok"), ("graph-qa", "Director 4", "ok")]
    # one trace per call: the inner LLM chains are children, not roots
    assert len({t.trace_id for t in cap}) == 2


def test_capture_warns_when_the_chain_is_not_traced(caplog: pytest.LogCaptureFixture) -> None:
    reset_warnings()
    chain = make_chain()
    with caplog.at_level(logging.WARNING, logger="graphtrail"), graphtrail.capture() as cap:
        chain.run("Who directed Film 5?")
    assert len(cap) == 0
    warned = [r.getMessage() for r in caplog.records if "capture() saw LangChain runs" in r.getMessage()]
    assert len(warned) == 1 and "trace_agent" in warned[0]


def test_capture_does_not_warn_when_traced_or_idle(caplog: pytest.LogCaptureFixture) -> None:
    reset_warnings()
    traced = graphtrail.trace_agent(make_chain())
    with caplog.at_level(logging.WARNING, logger="graphtrail"):
        with graphtrail.capture() as cap:
            traced.invoke({"query": "Who directed Film 6?"})
        with graphtrail.capture():
            pass
    assert len(cap) == 1 and cap.last.answer == "Director 6"
    assert not [r for r in caplog.records if "capture() saw" in r.getMessage()]
