"""The OpenAI path end to end, against a real OpenAI-compatible server on loopback.

The server is llama-cpp-python serving SmolLM2-135M-Instruct (see
``tests/llamacpp_server.py``; install with ``scripts/install_llamacpp.sh``).
A 135M model is weak at tools, so these tests prove the *wiring* — requests
reach the server with the key, tool calls come back parsed, the agent is
traced with real token counts — and that a real model's messy output (no tool
call, empty messages, bad arguments, loops) ends a run gracefully. They do not
check that answers are right.

Generation is kept short (few tokens, at most two model calls per run): the
module takes ~10 s on an idle 2-core machine (a minute or two when other jobs
load it, mostly the model's first pass over the agent's ~700-token prompt).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain_openai", reason="needs the openai extra: pip install 'graphtrail[openai]'")

import openai  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402

import graphtrail  # noqa: E402
from graphtrail.agents import KnowledgeGraph, answer_from_result, create_graphrag_agent, make_graph_tools  # noqa: E402
from graphtrail.tracer import flush, get_memory_exporter, trajectories_from_spans  # noqa: E402
from tests.llamacpp_server import LlamaCppServer  # noqa: E402 - the llamacpp_server fixture is tests/conftest.py's

pytestmark = [pytest.mark.llamacpp, pytest.mark.timeout(300)]

MAX_TOKENS = 64
QUESTION = "What is the capital of Kenya?"

# How llama-cpp-python's server (0.3.x, chatml-function-calling) differs from
# OpenAI, and what the client does about it:
# - a request without ``tool_choice`` is treated as one without tools, and
#   LangChain's agents send none: ask for "auto" on every call;
# - it reads ``max_tokens``, not the ``max_completion_tokens`` that ChatOpenAI
#   sends: pass it in ``extra_body``;
# - with tools it ignores ``max_tokens`` altogether but honours ``stop``, and a
#   135M model's arguments can run on to the end of the context window (minutes
#   on 2 cores): stop at the first newline, which ends such a run-on quickly
#   (the arguments then fail to parse, a messy output the agent must survive).
LLAMACPP_REQUEST_KWARGS: dict[str, Any] = {
    "model_kwargs": {"tool_choice": "auto"},
    "extra_body": {"max_tokens": MAX_TOKENS},
    "stop": ["\n"],
}


class LlamaCppChatOpenAI(ChatOpenAI):
    """ChatOpenAI that sends ``""`` instead of ``null`` content on assistant tool-call messages.

    OpenAI (and so ChatOpenAI) sends ``"content": null`` beside ``tool_calls``;
    llama-cpp-python's server rejects that with a 500 (its request schema
    wants a string), so without this every second turn of an agent fails.
    """

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        for message in payload.get("messages", []):
            if message.get("role") == "assistant" and message.get("content") is None:
                message["content"] = ""
        return payload


def chat_model(server: LlamaCppServer, **overrides: Any) -> ChatOpenAI:
    settings: dict[str, Any] = dict(
        base_url=server.base_url,
        api_key=server.api_key,
        model=server.model,
        temperature=0,
        max_tokens=MAX_TOKENS,
        timeout=180,
        max_retries=0,  # a retry would hide a failing request and double the wait
        **LLAMACPP_REQUEST_KWARGS,
    )
    settings.update(overrides)
    return LlamaCppChatOpenAI(**settings)


def small_kg() -> KnowledgeGraph:
    kg = KnowledgeGraph(name="east-africa")
    kg.add_entity("Q114", "Kenya", type="country", description="A country in East Africa.")
    kg.add_entity("Q3870", "Nairobi", type="city", description="The capital and largest city of Kenya.")
    kg.add_entity("Q15", "Africa", type="continent")
    kg.add_entity("Q7838", "Swahili", type="language")
    kg.add_relation("Q114", "capital", "Q3870", "Kenya's seat of government")
    kg.add_relation("Q114", "continent", "Q15")
    kg.add_relation("Q114", "official language", "Q7838")
    kg.add_text_unit("T1", "Kenya's capital is Nairobi.", ["Q114", "Q3870"])
    kg.add_text_unit("T2", "Swahili is an official language of Kenya.", ["Q114", "Q7838"])
    kg.compute_communities(seed=0)
    return kg


def chat_requests(server: LlamaCppServer) -> int:
    """Chat completions the server has answered so far (from its access log)."""
    return server.log_path.read_text(errors="replace").count('"POST /v1/chat/completions HTTP/1.1" 200')


def span_strings(spans: Any) -> Iterator[str]:
    """Every string a span carries: name, attributes, event attributes, links, resource."""
    for span in spans:
        yield span.name
        for attrs in (span.attributes, span.resource.attributes, *(e.attributes for e in span.events),
                      *(link.attributes for link in span.links)):
            for key, value in (attrs or {}).items():
                yield str(key)
                yield str(value)


@pytest.fixture
def memory() -> Iterator[Any]:
    """graphtrail configured with its in-memory exporter; restored to "none" after."""
    graphtrail.configure(exporter="memory")
    yield get_memory_exporter()
    graphtrail.configure(exporter="none")


# ---------------------------------------------------------------- plain client


def test_chat_openai_reaches_the_server_with_its_key(llamacpp_server: LlamaCppServer) -> None:
    before = chat_requests(llamacpp_server)
    reply = chat_model(llamacpp_server, model_kwargs={}, extra_body={"max_tokens": 16}).invoke("Say hello.")
    assert isinstance(reply, AIMessage) and isinstance(reply.content, str)
    usage = reply.usage_metadata
    assert usage is not None and usage["input_tokens"] > 0 and 0 < usage["output_tokens"] <= 16
    assert chat_requests(llamacpp_server) == before + 1

    # The server really checks the key, so the call above proves it was sent.
    with pytest.raises(openai.AuthenticationError):
        chat_model(llamacpp_server, api_key="sk-wrong").invoke("Say hello.")


@tool
def lookup_capital(country: str) -> str:
    """Look up the capital city of a country."""
    return {"kenya": "Nairobi"}.get(country.strip().lower(), "unknown")


def test_bind_tools_with_a_named_choice_returns_a_parsed_tool_call(llamacpp_server: LlamaCppServer) -> None:
    # A named tool_choice makes the server constrain the arguments to the
    # tool's JSON schema, so this must parse whatever the model's skill.
    # max_tokens is honoured on this path, so no newline stop (JSON may hold newlines).
    model = chat_model(llamacpp_server, model_kwargs={}, stop=None).bind_tools([lookup_capital], tool_choice="lookup_capital")
    reply = model.invoke("What is the capital of Kenya?")
    assert not reply.invalid_tool_calls
    (call,) = reply.tool_calls
    assert call["name"] == "lookup_capital" and call["id"]
    assert set(call["args"]) == {"country"} and isinstance(call["args"]["country"], str)
    # The parsed call runs the real tool and answers that call.
    assert lookup_capital.invoke(call).tool_call_id == call["id"]


def test_bind_tools_auto_gives_tool_calls_or_a_plain_reply(llamacpp_server: LlamaCppServer) -> None:
    tools = make_graph_tools(small_kg())
    names = {t.name for t in tools}
    model = chat_model(llamacpp_server).bind_tools(tools)
    reply = model.invoke("Use the tools to find the capital of Kenya.")
    assert isinstance(reply, AIMessage)
    assert reply.usage_metadata and reply.usage_metadata["input_tokens"] > 0
    # Whatever the model chose, LangChain parsed it into the standard shape:
    # calls of tools that exist, with dict arguments, or a (possibly empty) text reply.
    for call in reply.tool_calls:
        assert call["name"] in names and isinstance(call["args"], dict) and call["id"]
    if not reply.tool_calls:
        assert isinstance(reply.content, str)


# ---------------------------------------------------------------- traced agent


def _model_for(how: str, server: LlamaCppServer) -> tuple[Any, dict[str, Any], int]:
    """The agent's ``model`` argument, its extra kwargs and a step limit, the two ways users pass them.

    Through a model string (``resolve_model`` -> ``init_chat_model``) the client
    is the stock ChatOpenAI, whose second turn this server rejects (see
    :class:`LlamaCppChatOpenAI`), so that run is limited to one model call.
    """
    if how == "instance":
        return chat_model(server), {}, 2
    kwargs = dict(base_url=server.base_url, api_key=server.api_key, temperature=0, max_tokens=MAX_TOKENS,
                  timeout=180, max_retries=0, **LLAMACPP_REQUEST_KWARGS)
    return f"openai:{server.model}", kwargs, 1


@pytest.mark.parametrize(("how", "variant"), [("instance", "agentic"), ("string", "evidence_first")])
def test_graphrag_agent_on_a_real_model_ends_gracefully_and_is_traced(
    llamacpp_server: LlamaCppServer, memory: Any, how: str, variant: str
) -> None:
    kg = small_kg()
    model, model_kwargs, max_steps = _model_for(how, llamacpp_server)
    agent = graphtrail.trace_agent(create_graphrag_agent(model, kg, variant, max_steps=max_steps, **model_kwargs))
    tool_names = {t.name for t in make_graph_tools(kg)}

    before = chat_requests(llamacpp_server)
    with graphtrail.capture() as cap:
        result = agent.invoke({"messages": [("user", QUESTION)]})
    flush()

    # The standard result shape, whatever the model did.
    assert isinstance(result, dict) and isinstance(result.get("messages"), list) and result["messages"]
    answer, citations, status = answer_from_result(result)
    assert status in ("ok", "no_answer")
    assert (answer is None) == (status == "no_answer") and isinstance(citations, list)

    (traj,) = cap.trajectories
    assert traj.status in ("ok", "no_answer") and traj.error is None
    assert traj.question == QUESTION

    # Every model call was a real request to the server, with its token counts.
    assert 1 <= len(traj.model_calls) <= max_steps
    assert chat_requests(llamacpp_server) - before == len(traj.model_calls)
    for call in traj.model_calls:
        assert call.model == llamacpp_server.model  # the name the server answered with
        assert call.input_tokens and call.input_tokens > 0
        assert call.output_tokens is not None and call.output_tokens >= 0
        assert set(call.tool_calls) <= tool_names
    # Whatever tools ran were graph tools, and what they revealed is in the graph.
    assert all(step.tool in tool_names for step in traj.steps)
    assert set(traj.visited) <= set(kg.entity_ids())

    # The spans tell the same story, and the API key is nowhere in them.
    spans = get_memory_exporter().get_finished_spans()
    assert trajectories_from_spans(spans) == [traj]
    chat_spans = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chat_spans) == len(traj.model_calls)
    assert all(s.attributes.get("gen_ai.usage.input_tokens", 0) > 0 for s in chat_spans)
    leaked = [text for text in span_strings(spans) if llamacpp_server.api_key in text]
    assert not leaked
    assert llamacpp_server.api_key not in traj.to_json()
    assert llamacpp_server.api_key not in json.dumps(traj.metadata, default=str)

    # The tracer reads the run's answer as the agents do (docs/architecture.md §3):
    # a run that hits the step limit has no answer, whatever text the limit left.
    assert (traj.status, traj.answer, traj.citations) == (status, answer, citations)
