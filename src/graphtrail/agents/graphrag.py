"""Agentic GraphRAG agents: the paper's three agentic variants on LangChain's ``create_agent``.

- ``agentic``: the model walks the graph with the seven tools and submits an
  answer with entity citations; nothing checks the citations.
- ``evidence_first``: a submission is rejected unless every cited entity was
  *read in detail* earlier in the run. An entity counts as read when
  ``get_entity`` returned it, or when ``read_text_unit`` returned a passage
  that mentions it (the passage is its evidence). Seeing an id in a search
  result or a neighbour list is not reading it.
- ``visited_only``: a submission is rejected if it cites an entity id that no
  tool returned in this run (a "visited" entity is any entity in any graph
  tool's artifact).

A rejected ``submit_answer`` comes back to the model as a ``ToolMessage`` with
``status="error"`` naming the offending ids and what to do, so the model can
read and resubmit. An accepted submission ends the run.

Per-run bookkeeping (visited and read entity ids) lives in the agent *state*
(``graphtrail_visited`` / ``graphtrail_read``, merged by a set-union reducer
and updated by :class:`GraphRulesMiddleware`), never in module globals, so
concurrent runs of one agent never mix. Every run is bounded by
``max_steps`` model calls: a run that hits the limit ends with LangChain's
call-limit message (as ``ModelCallLimitMiddleware`` with ``exit_behavior="end"``
words it) and no accepted answer ("no answer"), never an exception. The rules
middleware counts and checks the limit in the same ``before_model`` hook that
ends a run after an accepted answer, so each model step is two graph nodes
(that hook, the model) instead of four: replays spend their CPU in LangGraph's
per-node work, and there are thousands of them per evaluation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, Literal, NotRequired

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain.agents.middleware.types import OmitFromInput, PrivateStateAttr
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from pydantic import BaseModel, Field

from ..kg.graph import KnowledgeGraph
from .hookhop import call_hook_directly
from .rebind import from_template, shape_key
from .models import resolve_model
from .tools import SUBMIT_ANSWER, make_graph_tools

__all__ = [
    "create_graphrag_agent",
    "GraphRulesMiddleware",
    "VARIANTS",
    "Variant",
    "system_prompt_for",
    "DEFAULT_MAX_STEPS",
]

Variant = Literal["agentic", "evidence_first", "visited_only"]
VARIANTS: tuple[str, ...] = ("agentic", "evidence_first", "visited_only")
DEFAULT_MAX_STEPS = 15

BASE_PROMPT = """You answer questions with a knowledge graph, using tools.
- search_entities finds an entity's id by name; get_entity reads one entity in detail (description, relation labels, text unit ids).
- get_neighbors follows a relation label from an entity (direction "out", "in" or "both"); read_text_unit reads a source passage.
- search_communities and read_community show clusters of related entities.
Follow the relations the question names, hop by hop, starting from the entity it names.
When you know the answer, call submit_answer with the answer (the entity name, or "yes"/"no") and citations: the ids of the entities on your reasoning path."""

EVIDENCE_RULE = """Evidence rule: before you cite an entity you must read it in detail, with get_entity on its id (or read_text_unit on a passage that mentions it). A submission citing an entity you have not read is rejected."""

VISITED_RULE = """Citation rule: cite only entity ids that a tool returned in this conversation. A submission citing any other id is rejected."""


def system_prompt_for(variant: str) -> str:
    """The default system prompt of a variant: the task, plus the variant's citation rule."""
    _check_variant(variant)
    extra = {"evidence_first": EVIDENCE_RULE, "visited_only": VISITED_RULE}.get(variant)
    return BASE_PROMPT + ("\n" + extra if extra else "")


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")


def _union(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Reducer: ordered set union, so parallel tool calls' updates merge."""
    out = dict.fromkeys(left or ())
    out.update(dict.fromkeys(right or ()))
    return list(out)


class GraphRulesState(AgentState):
    """Agent state plus the entities this run has visited and read in detail."""

    graphtrail_visited: NotRequired[Annotated[list[str], OmitFromInput, _union]]
    graphtrail_read: NotRequired[Annotated[list[str], OmitFromInput, _union]]
    # model calls this run has started; untracked, so a checkpointed thread's next run starts at 0
    graphtrail_model_calls: NotRequired[Annotated[int, UntrackedValue, PrivateStateAttr]]


class _SubmitArgs(BaseModel):
    answer: str = Field(description="The answer")
    citations: list[str] = Field(default_factory=list, description="Cited entity ids")


def _rejecting_submit(reason: str) -> BaseTool:
    # Runs in place of submit_answer so the rejection is a real (error) tool
    # run: the tracer gets its span, the model gets a ToolMessage with status="error".
    def reject(answer: str, citations: list[str] | None = None) -> str:
        raise ToolException(reason)

    return StructuredTool.from_function(
        reject, name=SUBMIT_ANSWER, description="submit_answer (rejected)", args_schema=_SubmitArgs, handle_tool_error=True
    )


def _entity_ids(artifact: Any) -> list[str]:
    if isinstance(artifact, dict):
        return [str(e["id"]) for e in artifact.get("entities") or () if isinstance(e, dict) and e.get("id") is not None]
    return []


class GraphRulesMiddleware(AgentMiddleware):
    """Tracks visited/read entities in state, enforces a variant's citation rule, ends after an accepted answer.

    With ``max_steps``, it also ends a run before its ``max_steps + 1``-th model call,
    appending the limit message LangChain's ``ModelCallLimitMiddleware`` appends (which
    graphtrail's tracer reads as "stopped at a limit").
    """

    state_schema = GraphRulesState

    def __init__(self, variant: str = "agentic", max_steps: int | None = None) -> None:
        super().__init__()
        _check_variant(variant)
        if max_steps is not None and max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.variant = variant
        self.max_steps = max_steps

    @property
    def name(self) -> str:
        return "graphtrail_rules"

    # -------------------------------------------------------------- rules
    def rejection(self, citations: Sequence[str], state: Any) -> str | None:
        """Why a submission citing ``citations`` breaks this variant's rule, or ``None``."""
        state = state if isinstance(state, dict) else {}
        cited = [str(c) for c in citations]
        if self.variant == "evidence_first":
            read = set(state.get("graphtrail_read") or ())
            missing = [c for c in cited if c not in read]
            if missing:
                return (
                    "Submission rejected (evidence rule): you have not read these cited entities in detail: "
                    + ", ".join(missing)
                    + ". Call get_entity on each of them (or read_text_unit on a passage that mentions them), "
                    "then submit again."
                )
        elif self.variant == "visited_only":
            visited = set(state.get("graphtrail_visited") or ())
            missing = [c for c in cited if c not in visited]
            if missing:
                return (
                    "Submission rejected (citation rule): no tool returned these cited ids in this conversation: "
                    + ", ".join(missing)
                    + ". Cite only ids that tools returned (or look them up first), then submit again."
                )
        return None

    def _before_call(self, request: ToolCallRequest) -> ToolCallRequest:
        call = request.tool_call
        if call["name"] != SUBMIT_ANSWER:
            return request
        citations = (call.get("args") or {}).get("citations") or []
        if not isinstance(citations, list):
            citations = [citations]
        reason = self.rejection(citations, request.state)
        return request.override(tool=_rejecting_submit(reason)) if reason else request

    @staticmethod
    def _after_call(request: ToolCallRequest, result: ToolMessage | Command) -> ToolMessage | Command:
        if not isinstance(result, ToolMessage) or result.status == "error" or result.name == SUBMIT_ANSWER:
            return result
        visited = _entity_ids(result.artifact)
        read: list[str] = []
        if request.tool_call["name"] == "get_entity" or request.tool_call["name"] == "read_text_unit":
            read = visited
        if not visited:
            return result
        return Command(update={"messages": [result], "graphtrail_visited": visited, "graphtrail_read": read})

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command]
    ) -> ToolMessage | Command:
        request = self._before_call(request)
        return self._after_call(request, handler(request))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]]
    ) -> ToolMessage | Command:
        request = self._before_call(request)
        return self._after_call(request, await handler(request))

    # -------------------------------------------------------------- ending
    @staticmethod
    def _accepted(state: Any) -> bool:
        messages = state.get("messages", []) if isinstance(state, dict) else []
        for msg in reversed(messages):
            if isinstance(msg, (AIMessage, HumanMessage)):  # a new user turn on a thread starts a new question
                return False
            if isinstance(msg, ToolMessage) and msg.name == SUBMIT_ANSWER and msg.status != "error":
                return True
        return False

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        # Reads nothing but ``self``: compiling a graph disassembles a node's function when it names globals
        # (looking for subgraphs), and the factory route compiles an agent per ablation.
        return self._step(state)

    def _step(self, state: Any) -> dict[str, Any] | None:
        if self._accepted(state):
            return {"jump_to": "end"}
        if self.max_steps is None:
            return None
        calls = (state.get("graphtrail_model_calls") if isinstance(state, dict) else None) or 0
        if calls >= self.max_steps:
            # the wording of ModelCallLimitMiddleware(run_limit=..., exit_behavior="end")
            limit = AIMessage(content=f"Model call limits exceeded: run limit ({calls}/{self.max_steps})")
            return {"jump_to": "end", "messages": [limit]}
        return {"graphtrail_model_calls": calls + 1}

    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._step(state)


def create_graphrag_agent(
    model: BaseChatModel | str,
    kg: KnowledgeGraph,
    variant: Variant | str = "agentic",
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    system_prompt: str | None = None,
    name: str | None = None,
    tools: Sequence[BaseTool] | None = None,
    top_k: int = 8,
    neighbor_limit: int = 25,
    middleware: Sequence[AgentMiddleware] = (),
    trace: bool = True,
    **model_kwargs: Any,
) -> Any:
    """A LangGraph agent that answers questions over ``kg`` with the seven graph tools.

    Args:
        model: a LangChain chat model, ``"offline"`` (the embedded heuristic
            policy), or an ``init_chat_model`` string; see :func:`resolve_model`.
        kg: the knowledge graph the tools read (through the active ablation filter).
        variant: ``"agentic"``, ``"evidence_first"`` or ``"visited_only"`` (see module docs).
        max_steps: the most model calls a run may make; at the limit the run ends
            with no accepted answer instead of raising.
        system_prompt: replaces the variant's default prompt (:func:`system_prompt_for`);
            the citation rule is enforced either way.
        name: the graph's name (and the trace's root name); default ``graphrag-<variant>``.
        tools: replaces the default tools (e.g. to add your own); must include ``submit_answer``.
        middleware: extra LangChain middleware, run after graphtrail's.
        trace: return the agent traced (:func:`graphtrail.trace_agent`), so that
            ``with graphtrail.capture(): agent.invoke(...)`` yields a trajectory
            with no extra step; ``False`` returns the bare compiled graph.
            ``trace_agent`` and ``evaluate`` never trace it twice.

    Agents of one shape (the same model instance or ``"offline"`` spec, variant, limits, prompt
    and name; graphtrail's tools, no extra middleware) are compiled once and copied with each
    graph's tools (:mod:`.rebind`): so they share one model instance, as agents built from one do.

    Invoke with ``{"messages": [("user", question)]}``; the result is the usual
    ``{"messages": [...]}`` state (see :func:`graphtrail.agents.answer_from_result`).
    """
    _check_variant(variant)
    if max_steps < 1:
        raise ValueError("max_steps must be at least 1")

    def compile_agent(chat_model: BaseChatModel, tool_list: list[BaseTool]) -> Any:
        if SUBMIT_ANSWER not in {t.name for t in tool_list}:
            raise ValueError("the tools must include submit_answer (see graphtrail.agents.tools.make_submit_answer_tool)")
        rules = GraphRulesMiddleware(variant, max_steps=max_steps)
        compiled = create_agent(
            chat_model,
            tool_list,
            system_prompt=system_prompt if system_prompt is not None else system_prompt_for(variant),
            middleware=[rules, *middleware],
            name=name or f"graphrag-{variant}",
        )
        call_hook_directly(compiled, rules)  # no LangSmith thread hops around every tool call while LangSmith is off
        return compiled

    agent = None
    key = shape_key(model, variant, max_steps, system_prompt, name, top_k, neighbor_limit)
    if key is not None and tools is None and not middleware and not model_kwargs:  # .rebind: compiled once per shape
        template_tools = lambda: make_graph_tools(KnowledgeGraph(name="template"), top_k=top_k, neighbor_limit=neighbor_limit)  # noqa: E731
        agent = from_template(key, model, lambda: compile_agent(resolve_model(model), template_tools()),
                              make_graph_tools(kg, top_k=top_k, neighbor_limit=neighbor_limit))
    if agent is None:
        chat_model = resolve_model(model, **model_kwargs)
        agent = compile_agent(chat_model, list(tools) if tools is not None else
                              make_graph_tools(kg, top_k=top_k, neighbor_limit=neighbor_limit))
    if not trace:
        return agent
    from ..tracer import trace_agent

    return trace_agent(agent, name=agent.name)
