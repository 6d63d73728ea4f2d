"""The replay's cheap paths (issue 19) behave exactly like the slow ones they replace.

- the prompt string built inside a replay run (evaluators/replay/promptkey.py) tells
  conversations apart exactly when LangChain's serialisation, minus ids and metadata, does;
- outside a replay run, or for a model with its own cache, LangChain's prompt is untouched;
- the graph tools of an in-memory graph answer ``ainvoke`` on the event loop, filtered.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.load import dumps
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from graphtrail.agents import GraphFilter, load_kg, use_filter
from graphtrail.agents.tools import make_graph_tools
from graphtrail.evaluators.replay import promptkey
from graphtrail.evaluators.replay.reuse import PrefixReuseCache, installed, prompt_key, reuse_scope
from tests.fakes import ScriptedChatModel, tool_call


def _conversation(**change: Any) -> list[Any]:
    ai = {"content": "", "tool_calls": [tool_call("get_entity", {"entity_id": "E1"}, "c1")]}
    ai.update(change.get("ai", {}))
    tool = {"content": "Kenya (country)", "tool_call_id": "c1", "name": "get_entity"}
    tool.update(change.get("tool", {}))
    return [
        SystemMessage(content="Answer from the graph."),
        HumanMessage(content=change.get("question", "What is the capital of Kenya?")),
        AIMessage(**ai),
        ToolMessage(**tool),
    ]


VARIANTS = {
    "same": _conversation(),
    "other ids and metadata": _conversation(
        ai={"id": "run-9", "usage_metadata": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
            "response_metadata": {"total_cost": 0}},
        tool={"id": "msg-2"},
    ),
    "question": _conversation(question="What is the capital of Peru?"),
    "tool output": _conversation(tool={"content": "[hidden]"}),
    "tool call args": _conversation(ai={"tool_calls": [tool_call("get_entity", {"entity_id": "E2"}, "c1")]}),
    "tool call id": _conversation(ai={"tool_calls": [tool_call("get_entity", {"entity_id": "E1"}, "c2")]},
                                  tool={"tool_call_id": "c2"}),
    "tool status": _conversation(tool={"status": "error"}),
    "tool name": _conversation(tool={"name": "get_neighbors"}),
    "artifact": _conversation(tool={"artifact": {"entities": ["E1"]}}),
    "ai text": _conversation(ai={"content": "Let me look."}),
}


def _langchain_key(messages: list[Any]) -> str:
    normalized = [m.model_copy(update={"id": None}) if getattr(m, "id", None) is not None else m for m in messages]
    return prompt_key(dumps(normalized), "llm")


def test_fast_prompt_tells_conversations_apart_exactly_as_langchains_prompt() -> None:
    names = list(VARIANTS)
    for a in names:
        for b in names:
            slow = _langchain_key(VARIANTS[a]) == _langchain_key(VARIANTS[b])
            fast = prompt_key(promptkey.canonical_prompt(VARIANTS[a]), "llm") == prompt_key(
                promptkey.canonical_prompt(VARIANTS[b]), "llm")
            assert fast == slow, (a, b)
    assert prompt_key(promptkey.canonical_prompt(VARIANTS["same"]), "llm") == prompt_key(
        promptkey.canonical_prompt(VARIANTS["other ids and metadata"]), "llm")


class _Recording(InMemoryCache):
    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[str] = []

    def lookup(self, prompt: str, llm_string: str) -> Any:
        self.prompts.append(prompt)
        return super().lookup(prompt, llm_string)

    async def alookup(self, prompt: str, llm_string: str) -> Any:
        return self.lookup(prompt, llm_string)


def _model(**kwargs: Any) -> ScriptedChatModel:
    return ScriptedChatModel(script=[AIMessage(content="Nairobi")], **kwargs)


QUESTION = VARIANTS["same"][:2]


def test_fast_prompt_only_inside_a_replay_scope_and_only_for_the_global_cache() -> None:
    before = _Recording()  # the global cache a user had installed: the reuse cache falls back to it outside runs
    own = _Recording()  # a model's own cache
    from langchain_core.globals import get_llm_cache, set_llm_cache

    saved = get_llm_cache()
    set_llm_cache(before)
    try:
        reuse = PrefixReuseCache()
        with installed(reuse):
            model = _model()
            with reuse_scope(reuse, "ns") as first:
                model.invoke(QUESTION)
                asyncio.run(_model(cache=own).ainvoke(QUESTION))
                assert reuse.graphtrail_prompt_mode() == "reuse"
            with reuse_scope(reuse, "ns") as second:
                asyncio.run(model.ainvoke(QUESTION))  # same conversation, same namespace: answered from the store
            assert reuse.graphtrail_prompt_mode() is None
            model.invoke(QUESTION)  # outside any replay run: the user's cache sees LangChain's prompt
    finally:
        set_llm_cache(saved)
    assert (first.model_calls, first.reused_calls, second.model_calls, second.reused_calls) == (1, 0, 0, 1)
    assert len(model.calls) == 2  # the scoped first call and the unscoped last one
    assert own.prompts == [dumps(QUESTION)]
    assert before.prompts == [dumps(QUESTION)]


def test_naive_replay_builds_no_prompt() -> None:
    reuse = PrefixReuseCache(reuse=False)
    with installed(reuse), reuse_scope(reuse, "ns") as counters:
        assert reuse.graphtrail_prompt_mode() == "naive"
        _model().invoke(QUESTION)
        _model().invoke(QUESTION)
    assert (counters.model_calls, counters.reused_calls, len(reuse.store)) == (2, 0, 0)


@pytest.fixture(scope="module")
def kg() -> Any:
    return load_kg("countries")


def test_in_memory_graph_tools_answer_on_the_event_loop_filtered(kg: Any) -> None:
    tools = {t.name: t for t in make_graph_tools(kg)}
    eid = next(e for e in kg.entity_ids() if kg.entity(e).name == "Kenya")
    threads: list[int] = []
    original = tools["get_entity"].func

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return original(*args, **kwargs)

    tools["get_entity"].func = spy

    async def go() -> tuple[int, str, str]:
        shown = await tools["get_entity"].ainvoke({"entity_id": eid})
        with use_filter(GraphFilter(hidden=frozenset({eid}))):
            hidden = await tools["get_entity"].ainvoke({"entity_id": eid})
        return threading.get_ident(), shown, hidden

    loop_thread, shown, hidden = asyncio.run(go())
    assert threads == [loop_thread, loop_thread]
    assert "Kenya" in shown
    assert "Kenya" not in hidden
