"""Span attribute names graphtrail writes (documented in docs/spans.md)."""

from __future__ import annotations

# OpenTelemetry GenAI semantic conventions
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
# content="full" only: semconv message JSON (graphtrail.tracer.genai)
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"

# OpenInference (Arize Phoenix)
OPENINFERENCE_SPAN_KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
INPUT_MIME_TYPE = "input.mime_type"
TOOL_NAME = "tool.name"
LLM_MODEL_NAME = "llm.model_name"
LLM_TOKEN_COUNT_PROMPT = "llm.token_count.prompt"
LLM_TOKEN_COUNT_COMPLETION = "llm.token_count.completion"

# LangGraph
LANGGRAPH_NODE = "langgraph.node"
LANGGRAPH_STEP = "langgraph.step"

# graphtrail: every tool span
STEP = "graphtrail.step"
STEP_ARGS = "graphtrail.step.args"
STEP_ERROR = "graphtrail.step.error"
ENTITIES_VISITED = "graphtrail.entities.visited"
ENTITIES = "graphtrail.entities"
EDGES_TRAVERSED = "graphtrail.edges.traversed"
# graphtrail: the span event per tool call listing the entities it revealed
ENTITIES_EVENT = "graphtrail.entities"
EVENT_ENTITY_IDS = "graphtrail.entity.ids"
EVENT_ENTITY_COUNT = "graphtrail.entity.count"
# graphtrail: every chat span
MODEL_CALL = "graphtrail.model_call"
MESSAGES_OMITTED = "graphtrail.messages.omitted"
TOOL_CALLS = "graphtrail.tool_calls"
# graphtrail: the root span
RUN_ID = "graphtrail.run_id"
QUESTION = "graphtrail.question"
ANSWER = "graphtrail.answer"
CITATIONS = "graphtrail.citations"
VISITED = "graphtrail.visited"
VISITED_UNCITED = "graphtrail.visited_uncited"
CITATION_SOURCES = "graphtrail.citation_sources"
STATUS = "graphtrail.status"
ERROR = "graphtrail.error"
METADATA = "graphtrail.metadata"
CONTENT_MODE = "graphtrail.content"
# any span ended by LangGraph control flow (GraphInterrupt, ParentCommand)
CONTROL_FLOW = "graphtrail.control_flow"
# graphtrail: the root span's per-run provenance signals (tracer/provenance.py, docs/production.md)
PROV_GROUNDED = "graphtrail.provenance.grounded_citations"
PROV_UNSUPPORTED = "graphtrail.provenance.unsupported_citations"
PROV_UNSUPPORTED_COUNT = "graphtrail.provenance.unsupported_count"
PROV_ANSWER_REVEALED = "graphtrail.provenance.answer_revealed"
PROV_VISITED_COUNT = "graphtrail.provenance.visited_count"
PROV_VISITED_UNCITED_COUNT = "graphtrail.provenance.visited_uncited_count"
PROV_UNCITED_SHARE = "graphtrail.provenance.uncited_share"
PROV_HOPS = "graphtrail.provenance.hops"
PROV_EMPTY_HOPS = "graphtrail.provenance.empty_hops"
PROV_TOOL_ERRORS = "graphtrail.provenance.tool_errors"
