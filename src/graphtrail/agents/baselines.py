"""The paper's three non-agentic baselines, with the agents' result shape.

Each is a LangChain Runnable taking ``{"messages": [...]}`` (or a question
string) and returning ``{"messages": [...input, AIMessage, ToolMessage]}``:
one model call, bound to ``submit_answer``, whose call is executed like an
agent's, so the tracer and the evaluators treat baselines and agents alike.

- :func:`llm_only`: the question alone; the model answers from what it knows.
- :func:`rag`: the text units that best match the question (rapidfuzz
  token-set ranking), read with the ``read_text_unit`` tool, as context.
- :func:`graphrag_local`: entities found by ``search_entities`` on the
  question, their one-hop neighbourhood (``get_neighbors``) and their text
  units, as context.

Retrieval goes through the same graph tools the agents use, invoked with the
run's config: the tools' callbacks fire, so a trace shows what was retrieved
(visited entities), and the active ablation filter applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool

from ..kg.graph import KnowledgeGraph
from .models import resolve_model
from .tools import SUBMIT_ANSWER, make_graph_tools, search_text_units
from ..kg.views import active_filter

__all__ = ["llm_only", "rag", "graphrag_local", "BASELINES"]

BASELINE_SYSTEM = (
    "Answer the question. Call submit_answer with the answer (the entity name, or yes/no) and, as citations, "
    "the ids of the entities your answer rests on."
)


def _input_messages(inputs: Any) -> list[BaseMessage]:
    if isinstance(inputs, str):
        return [HumanMessage(inputs)]
    if isinstance(inputs, Mapping):
        inputs = inputs.get("messages", [])
    out: list[BaseMessage] = []
    for m in inputs:
        if isinstance(m, BaseMessage):
            out.append(m)
        elif isinstance(m, tuple) and len(m) == 2:
            out.append(HumanMessage(str(m[1])) if m[0] in ("user", "human") else SystemMessage(str(m[1])))
        elif isinstance(m, Mapping):
            out.append(HumanMessage(str(m.get("content", ""))))
        else:
            out.append(HumanMessage(str(m)))
    return out


def _question(messages: list[BaseMessage]) -> str:
    for m in messages:
        if isinstance(m, HumanMessage):
            return m.text if isinstance(m.text, str) else str(m.content)
    raise ValueError("a baseline needs a user message with the question")


def _bind_submit(model: BaseChatModel, submit: BaseTool) -> Runnable:
    try:
        return model.bind_tools([submit], tool_choice=SUBMIT_ANSWER)
    except (NotImplementedError, TypeError, ValueError):
        return model.bind_tools([submit])


def _prompt(question: str, context: str) -> list[BaseMessage]:
    body = f"Question: {question}"
    if context:
        body += f"\n\nContext (from a knowledge graph):\n{context}"
    return [SystemMessage(BASELINE_SYSTEM), HumanMessage(body)]


Retriever = Callable[[str, RunnableConfig], str]


def _tool_call(tool: BaseTool, n: int, **args: Any) -> dict[str, Any]:
    return {"name": tool.name, "args": args, "id": f"retrieve_{n}_{tool.name}", "type": "tool_call"}


def _baseline(name: str, model: BaseChatModel | str, tools: dict[str, BaseTool], retrieve: Retriever | None) -> Runnable:
    chat = resolve_model(model)
    submit = tools[SUBMIT_ANSWER]
    bound = _bind_submit(chat, submit)

    def finish(messages: list[BaseMessage], reply: BaseMessage, config: RunnableConfig) -> dict[str, Any]:
        out = [*messages, reply]
        if isinstance(reply, AIMessage):
            for call in reply.tool_calls:
                if call["name"] == SUBMIT_ANSWER:
                    out.append(submit.invoke({**call, "type": "tool_call"}, config=config))
                else:
                    out.append(ToolMessage(f"Tool {call['name']!r} is not available here.", tool_call_id=call["id"] or "", status="error"))
        return {"messages": out}

    def run(inputs: Any, config: RunnableConfig) -> dict[str, Any]:
        messages = _input_messages(inputs)
        question = _question(messages)
        context = retrieve(question, config) if retrieve else ""
        return finish(messages, bound.invoke(_prompt(question, context), config=config), config)

    async def arun(inputs: Any, config: RunnableConfig) -> dict[str, Any]:
        messages = _input_messages(inputs)
        question = _question(messages)
        context = retrieve(question, config) if retrieve else ""  # retrieval is local and fast
        return finish(messages, await bound.ainvoke(_prompt(question, context), config=config), config)

    return RunnableLambda(run, afunc=arun, name=name)


def llm_only(model: BaseChatModel | str = "offline") -> Runnable:
    """The question alone, one model call: what the model knows without the graph."""
    from .tools import make_submit_answer_tool

    return _baseline("llm_only", model, {SUBMIT_ANSWER: make_submit_answer_tool()}, None)


def rag(model: BaseChatModel | str, kg: KnowledgeGraph, *, k: int = 5) -> Runnable:
    """Classic RAG: the ``k`` text units most similar to the question as context, one model call."""
    tools = {t.name: t for t in make_graph_tools(kg)}

    def retrieve(question: str, config: RunnableConfig) -> str:
        hits = search_text_units(kg if active_filter() is None else kg.filtered(active_filter()), question, limit=k)
        reads = [tools["read_text_unit"].invoke(_tool_call(tools["read_text_unit"], i, unit_id=uid), config=config) for i, (uid, _) in enumerate(hits)]
        return "\n".join(str(m.content) for m in reads if m.status != "error")

    return _baseline("rag", model, tools, retrieve)


def graphrag_local(model: BaseChatModel | str, kg: KnowledgeGraph, *, n_entities: int = 3, units_per_entity: int = 2) -> Runnable:
    """Non-agentic GraphRAG: searched entities, their neighbourhood and text units as context, one model call."""
    tools = {t.name: t for t in make_graph_tools(kg, top_k=n_entities, neighbor_limit=40)}

    def retrieve(question: str, config: RunnableConfig) -> str:
        n = 0

        def call(name: str, **args: Any) -> ToolMessage:
            nonlocal n
            n += 1
            return tools[name].invoke(_tool_call(tools[name], n, **args), config=config)

        found = call("search_entities", query=question)
        parts = [str(found.content)]
        entity_ids = [e["id"] for e in (found.artifact or {}).get("entities", [])]
        for eid in entity_ids:
            nb = call("get_neighbors", entity_id=eid, direction="both")
            parts.append(str(nb.content))
            detail = call("get_entity", entity_id=eid)
            units = (detail.artifact or {}).get("text_units", []) if detail.status != "error" else []
            for uid in units[:units_per_entity]:
                unit = call("read_text_unit", unit_id=uid)
                if unit.status != "error":
                    parts.append(str(unit.content))
        return "\n".join(parts)

    return _baseline("graphrag_local", model, tools, retrieve)


#: name -> factory(model, kg) for the three baselines.
BASELINES: dict[str, Callable[..., Runnable]] = {
    "llm_only": lambda model, kg=None: llm_only(model),
    "rag": rag,
    "graphrag_local": graphrag_local,
}
