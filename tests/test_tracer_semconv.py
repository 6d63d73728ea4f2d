"""Spans as GenAI-aware backends expect them (issue 13): semantic-convention names,
types and required attributes, provider names, completion models, message content
per content mode, the entities event, and the service/project a run is filed under.

The name check reads the installed ``opentelemetry-semantic-conventions`` package;
it carries names and enum values but no types, so the types below are the GenAI
semconv registry's (``semantic-conventions-genai``, model/gen-ai/registry.yaml),
with ``any``-typed structured values recorded as JSON strings, as the spec allows.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.messages import AIMessage
from langchain_core.prompts import PromptTemplate
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as semconv

import graphtrail
from graphtrail.tracer import get_memory_exporter, run_annotations
from graphtrail.tracer.genai import provider_name
from tests.fakes import ScriptedChatModel, tool_call, unique_id
from tests.test_tracer_kit import TOOLS, ask, build_create_agent, build_toolnode_graph, kg_policy, memory  # noqa: F401

# The registry's types for the attributes graphtrail writes ("json": type any, sent as a JSON string).
SEMCONV_TYPES: dict[str, type | str] = {
    "gen_ai.operation.name": str,
    "gen_ai.provider.name": str,
    "gen_ai.agent.name": str,
    "gen_ai.conversation.id": str,
    "gen_ai.request.model": str,
    "gen_ai.response.model": str,
    "gen_ai.usage.input_tokens": int,
    "gen_ai.usage.output_tokens": int,
    "gen_ai.tool.name": str,
    "gen_ai.tool.type": str,
    "gen_ai.tool.call.id": str,
    "gen_ai.input.messages": "json",
    "gen_ai.output.messages": "json",
    "gen_ai.tool.call.arguments": "json",
    "gen_ai.tool.call.result": str,  # any; graphtrail sends the text the model read
}
# Required per operation (gen_ai.request.model is required "if available": checked below).
REQUIRED = {
    "invoke_agent": {"gen_ai.operation.name", "gen_ai.provider.name"},
    "chat": {"gen_ai.operation.name", "gen_ai.provider.name"},
    "text_completion": {"gen_ai.operation.name", "gen_ai.provider.name"},
    "execute_tool": {"gen_ai.operation.name", "gen_ai.tool.name"},
}
SEMCONV_NAMES = {v for k, v in vars(semconv).items() if k.startswith("GEN_AI_") and isinstance(v, str)}
OPERATIONS = {e.value for e in semconv.GenAiOperationNameValues}
WELL_KNOWN_PROVIDERS = {e.value for e in semconv.GenAiProviderNameValues}


def _gen_ai(span: Any) -> dict[str, Any]:
    return {k: v for k, v in span.attributes.items() if k.startswith("gen_ai.")}


def _check_semconv(spans: Any) -> set[str]:
    """Every gen_ai.* name exists, has its type, and each operation's required names are there."""
    seen: set[str] = set()
    for span in spans:
        attrs = _gen_ai(span)
        for name, value in attrs.items():
            assert name in SEMCONV_NAMES, f"{span.name}: {name} is not a GenAI semconv attribute"
            expected = SEMCONV_TYPES[name]
            if expected == "json":
                assert isinstance(value, str)
                json.loads(value)
            else:
                assert type(value) is expected, f"{span.name}: {name}={value!r} is not {expected}"
            seen.add(name)
        operation = attrs.get("gen_ai.operation.name")
        assert operation in OPERATIONS, f"{span.name}: operation {operation!r}"
        missing = REQUIRED[operation] - attrs.keys()
        assert not missing, f"{span.name} lacks required {missing}"
        if operation in ("chat", "text_completion") and span.name != operation:  # the model is known
            assert span.name == f"{operation} {attrs['gen_ai.request.model']}"
    return seen


# ---------------------------------------------------------------- semconv check


@pytest.mark.parametrize("content", ["full", "ids-only", "none"])
def test_every_gen_ai_attribute_is_a_semconv_name_with_its_type_and_requirements(content: str) -> None:
    graphtrail.configure(exporter="memory", content=content)
    try:
        agent = graphtrail.trace_agent(build_create_agent(), name="kg")
        agent.invoke(ask(4), {"configurable": {"thread_id": "t-4"}})
        spans = get_memory_exporter().get_finished_spans()
    finally:
        graphtrail.configure(exporter="none")
    seen = _check_semconv(spans)
    content_names = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}
    if content == "full":
        assert content_names <= seen
    else:
        assert not seen & content_names, "message content must not leave the process outside content='full'"
    root = next(s for s in spans if s.name == "invoke_agent kg")
    # The scripted model has no provider package: LangChain derives a label from its class name.
    assert root.attributes["gen_ai.provider.name"] == next(
        s.attributes["gen_ai.provider.name"] for s in spans if s.name.startswith("chat ")
    )


# ---------------------------------------------------------------- provider names


def test_langchain_provider_labels_map_to_the_well_known_values() -> None:
    cases = {
        "openai": "openai", "azure": "azure.ai.openai", "anthropic": "anthropic", "amazon_bedrock": "aws.bedrock",
        "google_vertexai": "gcp.vertex_ai", "google_genai": "gcp.gemini", "mistral": "mistral_ai", "groq": "groq",
        "deepseek": "deepseek", "perplexity": "perplexity", "xai": "x_ai", "cohere": "cohere", "ibm": "ibm.watsonx.ai",
        "azure_ai": "azure.ai.inference",
    }
    for label, expected in cases.items():
        assert provider_name(label) == expected
        assert expected in WELL_KNOWN_PROVIDERS, expected
    assert provider_name("ollama") == "ollama"  # well known in the GenAI registry, not yet in this package's enum
    assert provider_name("my-own-llm") == "my-own-llm"  # unknown labels pass through


class _OpenAIChatStub(BaseHTTPRequestHandler):
    """Answers any chat completion like Azure OpenAI would: one tool call, then an answer."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, body))  # type: ignore[attr-defined]
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_s1", "type": "function",
                "function": {"name": "search", "arguments": json.dumps({"query": "Q-5"})},
            }]}
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": "It uses Gamma 5 [E:N5-a]"}, "stop"
        payload = json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def azure_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OpenAIChatStub)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_azure_openai_agent_is_recorded_under_azure_ai_openai(memory: Any, azure_endpoint: str) -> None:
    pytest.importorskip("langchain_openai")
    from langchain.agents import create_agent
    from langchain_openai import AzureChatOpenAI

    model = AzureChatOpenAI(
        azure_endpoint=azure_endpoint, api_key="not-a-key", api_version="2024-06-01", azure_deployment="gpt-4o",
        max_retries=0,
    )
    agent = graphtrail.trace_agent(create_agent(model, TOOLS, name="azure-agent"))
    agent.invoke(ask(5))
    spans = memory.get_finished_spans()
    _check_semconv(spans)
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == 2
    assert {s.attributes["gen_ai.provider.name"] for s in chats} == {"azure.ai.openai"}
    root = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert root.attributes["gen_ai.provider.name"] == "azure.ai.openai"
    out = json.loads(chats[0].attributes["gen_ai.output.messages"])
    assert out == [{"role": "assistant", "finish_reason": "tool_calls", "parts": [
        {"type": "tool_call", "id": "call_s1", "name": "search", "arguments": {"query": "Q-5"}}]}]
    assert json.loads(chats[1].attributes["gen_ai.output.messages"])[0]["finish_reason"] == "stop"


# ---------------------------------------------------------------- completion models


def test_a_completion_llm_is_a_text_completion_span(memory: Any) -> None:
    llm = FakeListLLM(responses=["Paris [E:N1-a]"])
    chain = PromptTemplate.from_template("Q: {question}\nA:") | llm
    traced = graphtrail.trace_agent(chain, name="completer")
    traced.invoke({"question": "Capital of France?"})
    spans = memory.get_finished_spans()
    _check_semconv(spans)
    (span,) = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "text_completion"]
    assert span.name == "text_completion" or span.name.startswith("text_completion ")
    assert span.attributes["openinference.span.kind"] == "LLM"
    assert json.loads(span.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Q: Capital of France?\nA:"}]}]
    out = json.loads(span.attributes["gen_ai.output.messages"])
    assert out[0]["parts"] == [{"type": "text", "content": "Paris [E:N1-a]"}] and out[0]["finish_reason"]
    assert not any(s.attributes.get("gen_ai.operation.name") == "chat" for s in spans)


# ---------------------------------------------------------------- message content


def test_full_mode_messages_follow_the_conversation_in_semconv_format(memory: Any) -> None:
    graphtrail.trace_agent(build_create_agent(), name="kg").invoke(ask(6))
    spans = memory.get_finished_spans()
    chats = sorted((s for s in spans if s.name.startswith("chat ")), key=lambda s: s.attributes["graphtrail.model_call"])
    first, second = (json.loads(c.attributes["gen_ai.input.messages"]) for c in chats[:2])
    assert first == [{"role": "user", "parts": [{"type": "text", "content": "Which currency does Q-6 use?"}]}]
    # the second call resends the question, the model's tool call and the tool's answer
    assert [m["role"] for m in second] == ["user", "assistant", "tool"]
    call = second[1]["parts"][0]
    assert call["type"] == "tool_call" and call["name"] == "search" and call["arguments"] == {"query": "Q-6"}
    response = second[2]["parts"][0]
    assert response["type"] == "tool_call_response" and response["id"] == call["id"]
    assert json.loads(response["response"])["results"][0]["id"] == "N6-a"
    # the first reply is the tool call the second call resends
    assert json.loads(chats[0].attributes["gen_ai.output.messages"])[0]["parts"] == [call]
    tools = {s.attributes["gen_ai.tool.name"]: s for s in spans if s.name.startswith("execute_tool")}
    assert json.loads(tools["search"].attributes["gen_ai.tool.call.arguments"]) == {"query": "Q-6"}
    assert tools["search"].attributes["gen_ai.tool.call.result"] == response["response"]


def test_secrets_in_tool_arguments_are_redacted_in_messages_too(memory: Any) -> None:
    from langchain_core.tools import tool

    @tool
    def lookup(query: str, api_key: str) -> str:
        """Look something up with a key."""
        return json.dumps([{"id": "E1", "name": "One"}])

    def policy(messages: list[Any]) -> AIMessage:
        if any(m.type == "tool" for m in messages):
            return AIMessage("done [E:E1]")
        return AIMessage("", tool_calls=[tool_call("lookup", {"query": "one", "api_key": "sk-SECRET"}, unique_id())])

    from langchain.agents import create_agent

    graphtrail.trace_agent(create_agent(ScriptedChatModel(policy=policy), [lookup])).invoke(ask(1))
    spans = memory.get_finished_spans()
    dumped = json.dumps([dict(s.attributes) for s in spans])
    assert "sk-SECRET" not in dumped
    tool_span = next(s for s in spans if s.name == "execute_tool lookup")
    assert json.loads(tool_span.attributes["gen_ai.tool.call.arguments"]) == {"query": "one", "api_key": "<redacted>"}


def test_long_conversations_and_outputs_stay_under_the_cap() -> None:
    limit = 160
    cap = 4 * limit

    def policy(messages: list[Any]) -> AIMessage:
        n = sum(1 for m in messages if m.type == "ai")
        if n < 12:
            return AIMessage("thinking " * 40, tool_calls=[tool_call("search", {"query": f"Q-{n}"}, unique_id())])
        return AIMessage("done")

    graphtrail.configure(exporter="memory", max_value_length=limit)
    try:
        agent = build_toolnode_graph(ScriptedChatModel(policy=policy))
        graphtrail.trace_agent(agent, name="long").invoke(ask(1), {"recursion_limit": 100})
        spans = get_memory_exporter().get_finished_spans()
    finally:
        graphtrail.configure(exporter="none")
    chats = sorted((s for s in spans if s.name.startswith("chat ")), key=lambda s: s.attributes["graphtrail.model_call"])
    assert len(chats) == 13
    for span in chats:
        for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
            assert len(span.attributes[key]) <= cap + 40, (key, len(span.attributes[key]))
    last = chats[-1]
    messages = json.loads(last.attributes["gen_ai.input.messages"])  # still JSON: whole messages are left out
    assert messages[0]["role"] == "user" and "Q-1" in messages[0]["parts"][0]["content"]
    omitted = last.attributes["graphtrail.messages.omitted"]
    assert omitted > 0 and len(messages) + omitted == 1 + 2 * 12  # question + 12 (call, result) pairs
    assert "graphtrail.messages.omitted" not in chats[0].attributes
    for span in spans:
        if span.name.startswith("execute_tool"):
            assert len(span.attributes["gen_ai.tool.call.result"]) <= limit + 40


# ---------------------------------------------------------------- entities event


@pytest.mark.parametrize("content", ["full", "none"])
def test_each_tool_call_has_an_entities_event(content: str) -> None:
    graphtrail.configure(exporter="memory", content=content)
    try:
        graphtrail.trace_agent(build_create_agent(), name="kg").invoke(ask(7))
        spans = get_memory_exporter().get_finished_spans()
    finally:
        graphtrail.configure(exporter="none")
    tools = {s.attributes["gen_ai.tool.name"]: s for s in spans if s.name.startswith("execute_tool")}
    (event,) = [e for e in tools["search"].events if e.name == "graphtrail.entities"]
    assert list(event.attributes["graphtrail.entity.ids"]) == ["N7-a", "N7-b"]
    assert event.attributes["graphtrail.entity.count"] == 2
    assert tools["search"].start_time <= event.timestamp <= tools["search"].end_time
    if content == "full":
        listing = json.loads(event.attributes["graphtrail.entities"])
        assert listing == [{"id": "N7-a", "name": "Alpha 7", "type": "city"}, {"id": "N7-b", "name": "Beta 7", "type": None}]
        assert tools["search"].attributes["graphtrail.entities"] == event.attributes["graphtrail.entities"]  # kept
    else:
        assert "graphtrail.entities" not in event.attributes
    (n_event,) = [e for e in tools["neighbors"].events if e.name == "graphtrail.entities"]
    # the neighbour, and the edge's other end: every entity a tool output names is revealed (issue 9)
    assert list(n_event.attributes["graphtrail.entity.ids"]) == ["N7-c", "N7-a"]
    assert not [e for e in tools["submit_answer"].events if e.name == "graphtrail.entities"]  # revealed nothing


# ---------------------------------------------------------------- services and projects


def _resource(span: Any) -> dict[str, Any]:
    return dict(span.resource.attributes)


def test_project_defaults_to_the_service_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "kg-bot")
    graphtrail.configure(exporter="memory")
    try:
        graphtrail.trace_agent(build_create_agent(), name="kg").invoke(ask(1))
        spans = get_memory_exporter().get_finished_spans()
        graphtrail.configure(exporter="memory", project="kg-experiments")
        graphtrail.trace_agent(build_create_agent(), name="kg").invoke(ask(1))
        spans2 = get_memory_exporter().get_finished_spans()
    finally:
        graphtrail.configure(exporter="none")
    assert {(r["service.name"], r["openinference.project.name"]) for r in map(_resource, spans)} == {("kg-bot", "kg-bot")}
    assert {(r["service.name"], r["openinference.project.name"]) for r in map(_resource, spans2)} == {
        ("kg-bot", "kg-experiments")}


def test_replays_are_exported_under_their_own_service() -> None:
    graphtrail.configure(exporter="memory", service_name="kg-bot")
    try:
        agent = graphtrail.trace_agent(build_create_agent(), name="kg")
        agent.invoke(ask(1))
        with run_annotations(attributes={"graphtrail.condition": "hide-top1", "graphtrail.question_id": "q1"}, replay=True):
            agent.invoke(ask(2))
        spans = get_memory_exporter().get_finished_spans()
        graphtrail.configure(exporter="memory", service_name="kg-bot", replay_service="kg-ablations")
        with run_annotations(replay=True):
            agent.invoke(ask(3))
        custom = get_memory_exporter().get_finished_spans()
    finally:
        graphtrail.configure(exporter="none")
    real = [s for s in spans if s.resource.attributes["service.name"] == "kg-bot"]
    replayed = [s for s in spans if s.resource.attributes["service.name"] == "kg-bot-replay"]
    assert len(real) == len(replayed) > 1 and len(real) + len(replayed) == len(spans)
    assert all("Q-1" in s.attributes.get("graphtrail.question", "Q-1") for s in real)
    assert all("Q-2" in s.attributes.get("graphtrail.question", "Q-2") for s in replayed)
    (replay_root,) = [s for s in replayed if s.parent is None]
    assert replay_root.attributes["graphtrail.condition"] == "hide-top1"
    assert replay_root.attributes["graphtrail.question_id"] == "q1"
    assert replay_root.resource.attributes["openinference.project.name"] == "kg-bot-replay"
    assert {s.resource.attributes["service.name"] for s in custom} == {"kg-ablations"}


def test_replays_of_an_app_provider_keep_its_exporters_and_resource() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop", "deployment.environment": "test"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    graphtrail.configure(tracer_provider=provider)
    try:
        agent = graphtrail.trace_agent(build_create_agent(), name="kg")
        agent.invoke(ask(1))
        with run_annotations(replay=True):
            agent.invoke(ask(2))
    finally:
        graphtrail.configure(exporter="none")
    by_service: dict[str, int] = {}
    for span in exporter.get_finished_spans():
        assert span.resource.attributes["deployment.environment"] == "test"
        by_service[span.resource.attributes["service.name"]] = by_service.get(span.resource.attributes["service.name"], 0) + 1
    assert set(by_service) == {"shop", "shop-replay"} and by_service["shop"] == by_service["shop-replay"]
    assert "openinference.project.name" not in provider.resource.attributes  # the app's provider is left alone


def test_bad_service_settings_are_rejected() -> None:
    for kwargs in ({"project": ""}, {"replay_service": "  "}, {"service_name": ""}):
        with pytest.raises(ValueError, match="non-empty"):
            graphtrail.configure(exporter="none", **kwargs)


def test_evaluation_replays_are_marked_as_replays() -> None:
    from graphtrail.evaluators.records import RunKey
    from graphtrail.evaluators.replay.runner import ReplayJob, _traced_scope
    from graphtrail.tracer.scope import active_annotations

    key = RunKey(agent="a", model="m", question_id="q9", condition="hide-top1", variant="v", trial=0, seed=1)
    with _traced_scope(ReplayJob(key=key, question="?")):
        ann = active_annotations()
    assert ann is not None and ann.replay
    assert ann.attributes["graphtrail.condition"] == "hide-top1" and ann.attributes["graphtrail.question_id"] == "q9"


def test_the_fast_message_encoder_writes_what_the_general_one_does() -> None:
    from langchain_core.messages import ChatMessage, HumanMessage, SystemMessage, ToolMessage

    from graphtrail.tracer.genai import _encode_message, message_dict

    messages = [
        HumanMessage("Which currency does Kenya use? \u00e9\u4e2d \"quoted\""),
        SystemMessage("You answer with citations."),
        AIMessage(""),
        AIMessage("Let me look.", tool_calls=[tool_call("search", {"query": "Kenya", "token": "t-1"}, "c1")]),
        AIMessage("", tool_calls=[tool_call("a", {"x": 1}, "c2"), tool_call("b", {"y": [1, 2]}, "c3")]),
        ToolMessage("x" * 100, tool_call_id="c1"),
        HumanMessage([{"type": "text", "text": "parts"}, {"type": "text", "text": " too"}]),
        ChatMessage(role="user", content="custom"),
    ]
    for mode in ("full", "ids-only"):
        for message in messages:
            fast = _encode_message(message, mode, 40)
            assert json.loads(fast) == message_dict(message, mode, 40), message
    assert "t-1" not in _encode_message(messages[3], "full", 40)
