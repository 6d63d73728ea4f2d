"""Replay runner: user-tool filters, automatic wrapping, prefix reuse, caches, concurrency.

The agent is a real ``create_agent`` graph with plain JSON tools (no graphtrail
artifacts) and a scripted, deterministic model that reacts to what the tools
return, like a real model would.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

import graphtrail
from graphtrail.agents import GraphFilter, use_filter
from graphtrail.evaluators import (
    AblationMiddleware,
    PrefixReuseCache,
    ReplayJob,
    ReuseStore,
    RunCache,
    RunKey,
    generic_filter,
    load_records,
    register_tool_filter,
    replay,
    unregister_tool_filter,
    wrap_agent_tools,
)
from graphtrail.evaluators.replay.reuse import installed, reuse_scope
from graphtrail.evaluators.replay.filtered.filters import filter_tool_output
from tests.fakes import ScriptedChatModel, tool_call

QUESTION = "Which currency is used in the country whose capital is Nairobi?"

ENTITIES = {
    "N": {"id": "N", "name": "Nairobi", "type": "city"},
    "X": {"id": "X", "name": "Nairobi National Park", "type": "park"},
    "K": {"id": "K", "name": "Kenya", "type": "country", "description": "East African country"},
    "S": {"id": "S", "name": "Kenyan shilling", "type": "currency", "description": "money"},
    "W": {"id": "W", "name": "Swahili", "type": "language"},
}


def make_tools() -> list[Any]:
    @tool
    def search(query: str) -> str:
        """Search entities by name."""
        return json.dumps([ENTITIES["N"], ENTITIES["X"]])

    @tool
    def neighbors(entity_id: str) -> str:
        """Entities linked to an entity."""
        if entity_id == "N":
            return json.dumps({"entities": [ENTITIES["K"]], "edges": [{"source": "K", "relation": "capital", "target": "N"}]})
        return json.dumps({"entities": [], "edges": []})

    @tool
    def facts(entity_id: str) -> str:
        """Facts about a country."""
        if entity_id == "K":
            return json.dumps([ENTITIES["S"], ENTITIES["W"]])
        return json.dumps([])

    @tool
    def submit_answer(answer: str, citations: list[str]) -> str:
        """Submit the final answer with the entity ids it relies on."""
        return "accepted"

    return [search, neighbors, facts, submit_answer]


def _last_json(messages: list[Any]) -> Any:
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    return json.loads(tool_messages[-1].content) if tool_messages else None


def policy(messages: list[Any]) -> AIMessage:
    """search -> neighbors(first result) -> facts(country) -> submit; falls back when things vanish."""
    n = sum(1 for m in messages if isinstance(m, ToolMessage))
    if n >= 4:
        return AIMessage(content="done")  # after submit_answer
    last = _last_json(messages)

    def call(name: str, args: dict[str, Any]) -> AIMessage:
        return AIMessage(content="", tool_calls=[tool_call(name, args, f"call_{n}")])

    if n == 0:
        return call("search", {"query": "Nairobi"})
    if n == 1:
        first = last[0]["id"] if last else "none"
        return call("neighbors", {"entity_id": first})
    if n == 2:
        countries = last.get("entities") or []
        return call("facts", {"entity_id": countries[0]["id"] if countries else "none"})
    if n == 3:
        currency = [e for e in last if e.get("type") == "currency"]
        if currency:
            name = currency[0]["name"]
            return call("submit_answer", {"answer": name, "citations": [currency[0]["id"], "K"]})
    return call("submit_answer", {"answer": "unknown", "citations": []})


def make_agent(middleware: list[Any] | None = None) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(policy=policy)
    agent = create_agent(model, make_tools(), middleware=middleware or [], name="user-agent")
    return agent, model


def tool_contents(state: dict[str, Any]) -> dict[str, str]:
    return {m.name: m.content for m in state["messages"] if isinstance(m, ToolMessage)}


# ---------------------------------------------------------------- the generic filter


F = GraphFilter(hidden=frozenset({"N"}), masked=frozenset({"K"}), text_blocked=frozenset({"S"}))


def test_generic_filter_on_dicts_and_lists() -> None:
    out = generic_filter(
        {
            "entities": [ENTITIES["N"], ENTITIES["K"], ENTITIES["S"], ENTITIES["W"]],
            "edges": [{"source": "K", "relation": "capital", "target": "N"}, {"source": "K", "relation": "currency", "target": "S"}],
            "ids": ["N", "W"],
            "passages": [{"text": "Nairobi is ...", "entity_ids": ["N"]}, {"text": "Swahili ...", "entity_ids": ["W"]}],
        },
        F,
    )
    assert [e["id"] for e in out["entities"]] == ["K", "S", "W"]
    assert out["entities"][0]["name"] == "[masked entity] K" and out["entities"][0]["description"] == ""
    assert out["entities"][1]["name"] == "Kenyan shilling" and out["entities"][1]["description"] == ""
    assert out["entities"][2] == ENTITIES["W"]
    assert out["edges"] == [{"source": "K", "relation": "currency", "target": "S"}]
    assert out["ids"] == ["W"]
    assert out["passages"] == [{"text": "Swahili ...", "entity_ids": ["W"]}]


def test_generic_filter_on_json_text_and_lines() -> None:
    text = json.dumps([ENTITIES["N"], ENTITIES["W"]])
    assert json.loads(generic_filter(text, F)) == [ENTITIES["W"]]
    lines = "2 entities:\n" + json.dumps(ENTITIES["N"]) + "\n" + json.dumps(ENTITIES["K"]) + "\n"
    kept = generic_filter(lines, F).splitlines()
    assert kept[0] == "2 entities:" and len(kept) == 2 and json.loads(kept[1])["name"] == "[masked entity] K"
    assert generic_filter(json.dumps({"entity_id": "N", "name": "Nairobi"}), F) == json.dumps({"error": "entity not found"})
    assert generic_filter("no json here", F) == "no json here"
    assert generic_filter(42, F) == 42


def test_plain_text_content_with_artifact_names() -> None:
    content = "Nairobi (N) is the capital.\nKenya uses the shilling.\nSwahili is spoken."
    artifact = {"entities": [ENTITIES["N"], ENTITIES["K"], ENTITIES["W"]]}
    new_content, new_artifact = filter_tool_output("custom", (content, artifact), F, content_and_artifact=True)
    assert new_content == "[masked entity] K uses the shilling.\nSwahili is spoken."
    assert [e["id"] for e in new_artifact["entities"]] == ["K", "W"]


def test_registered_filter_wins_over_the_generic_one() -> None:
    seen = []

    def only_upper(output: Any, graph_filter: GraphFilter) -> Any:
        seen.append(graph_filter)
        return output.upper()

    register_tool_filter("shout", only_upper)
    try:
        assert filter_tool_output("shout", json.dumps([ENTITIES["N"]]), F) == json.dumps([ENTITIES["N"]]).upper()
        assert filter_tool_output("shout", "x", None) == "x"  # no filter: untouched, not called
        assert seen == [F]
    finally:
        unregister_tool_filter("shout")
    with pytest.raises(TypeError):
        register_tool_filter("bad", "not callable")  # type: ignore[arg-type]


# ---------------------------------------------------------------- installing on a user's agent


async def test_wrapping_a_create_agent_filters_tools_and_traces() -> None:
    agent, _ = make_agent()
    assert wrap_agent_tools(agent) == 4
    assert wrap_agent_tools(agent) == 0  # idempotent
    traced = graphtrail.trace_agent(agent)

    plain = await traced.ainvoke({"messages": [("user", QUESTION)]})
    with graphtrail.capture() as cap, use_filter(GraphFilter(hidden=frozenset({"S"}), masked=frozenset({"K"}))):
        filtered = await traced.ainvoke({"messages": [("user", QUESTION)]})
    assert "Kenyan shilling" in tool_contents(plain)["facts"]
    contents = tool_contents(filtered)
    assert '"S"' not in contents["facts"] and "Swahili" in contents["facts"]
    assert "[masked entity] K" in contents["neighbors"] and "Kenya" not in contents["neighbors"]
    (traj,) = cap.trajectories
    assert "S" not in traj.visited and {"N", "K", "W"} <= set(traj.visited)
    assert traj.answer == "unknown"


async def test_ablation_middleware_is_the_declared_alternative() -> None:
    agent, _ = make_agent(middleware=[AblationMiddleware()])
    with use_filter(GraphFilter(hidden=frozenset({"N"}))):
        state = await agent.ainvoke({"messages": [("user", QUESTION)]})
    contents = tool_contents(state)
    assert "Nairobi National Park" in contents["search"] and '"N"' not in contents["search"]
    plain = await agent.ainvoke({"messages": [("user", QUESTION)]})
    assert '"id": "N"' in tool_contents(plain)["search"]


# ---------------------------------------------------------------- prefix reuse


def jobs_for(filters: dict[str, GraphFilter]) -> list[ReplayJob]:
    return [
        ReplayJob(key=RunKey(agent="a", model="m", question_id="q1", condition=name), question=QUESTION, graph_filter=f)
        for name, f in filters.items()
    ]


FILTERS = {
    "baseline": GraphFilter(),
    "hide_currency": GraphFilter(hidden=frozenset({"S"})),  # changes the 3rd tool response
    "hide_city": GraphFilter(hidden=frozenset({"N"})),  # changes the 1st
    "hide_park": GraphFilter(hidden=frozenset({"X"})),  # changes the 1st, answer unchanged
    "mask_language": GraphFilter(masked=frozenset({"W"})),  # changes the 3rd, answer unchanged
}


async def run_suite(reuse: bool) -> tuple[list[Any], int]:
    agent, model = make_agent()
    wrap_agent_tools(agent)
    traced = graphtrail.trace_agent(agent)
    cache = PrefixReuseCache(reuse=reuse)
    with installed(cache):
        base = await replay(traced, jobs_for({"baseline": FILTERS["baseline"]}), reuse_cache=cache)
        rest = await replay(traced, jobs_for({k: v for k, v in FILTERS.items() if k != "baseline"}), reuse_cache=cache, concurrency=2)
    return base + rest, len(model.calls)


async def test_prefix_reuse_gives_identical_results_with_fewer_calls() -> None:
    with_reuse, calls_reuse = await run_suite(True)
    without, calls_plain = await run_suite(False)

    def outcome(r: Any) -> tuple:
        return (r.key.condition, r.answer, r.citations, r.status, r.trajectory.visited, [s.args for s in r.trajectory.steps])

    assert [outcome(r) for r in with_reuse] == [outcome(r) for r in without]
    answers = {r.key.condition: r.answer for r in with_reuse}
    assert answers == {"baseline": "Kenyan shilling", "hide_currency": "unknown", "hide_city": "unknown", "hide_park": "Kenyan shilling", "mask_language": "Kenyan shilling"}
    # naive replay calls the model for every step of every run; the counters agree with the model
    assert calls_plain == sum(r.model_calls for r in without) == 5 * 5  # five runs of five calls
    assert calls_reuse == sum(r.model_calls for r in with_reuse) < calls_plain
    div = {r.key.condition: (r.divergence_step, r.model_calls, r.reused_calls) for r in with_reuse}
    assert div["baseline"] == (1, 5, 0)
    assert div["hide_currency"] == (4, 2, 3)  # calls 1-3 saw the baseline's conversation
    assert div["mask_language"] == (4, 2, 3)
    assert div["hide_city"] == (2, 4, 1)
    assert div["hide_park"] == (2, 4, 1)
    assert all(r.reused_calls == 0 for r in without)
    # reused chat spans still reach the tracer (callbacks fire on cache hits)
    assert all(len(r.trajectory.model_calls) == r.model_calls + r.reused_calls for r in with_reuse)
    assert all(r.input_tokens == 10 * r.model_calls for r in with_reuse)


class SlowScriptedModel(ScriptedChatModel):
    """The scripted policy behind a network-like delay; optionally the first call fails after it."""

    delay: float = 0.02
    failures: list[int] = []  # calls (1-based, over all copies) that raise

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        await asyncio.sleep(self.delay)
        if len(self.calls) + 1 in self.failures:
            self.calls.append(1)
            raise RuntimeError("model endpoint dropped the request")
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


async def run_concurrent_twins(failures: list[int]) -> tuple[list[Any], int]:
    """Two runs whose conversations agree all the way (their filters hide the same visible entity), at once."""
    model = SlowScriptedModel(policy=policy, failures=failures)
    agent = create_agent(model, make_tools(), name="user-agent")
    wrap_agent_tools(agent)
    cache = PrefixReuseCache()
    twins = {"hide_park": FILTERS["hide_park"], "hide_park_and_ghost": GraphFilter(hidden=frozenset({"X", "ghost"}))}
    with installed(cache):
        records = await replay(graphtrail.trace_agent(agent), jobs_for(twins), reuse_cache=cache, concurrency=2)
    return records, len(model.calls)


async def test_concurrent_runs_wait_for_a_shared_prompt_in_flight() -> None:
    records, calls = await run_concurrent_twins(failures=[])
    # without single flight both runs would send each of their 5 calls: 10
    assert calls == 5 == sum(r.model_calls for r in records)
    assert sorted(r.reused_calls for r in records) == [0, 5]
    assert [r.answer for r in records] == ["Kenyan shilling", "Kenyan shilling"]


async def test_a_failed_call_in_flight_releases_its_waiters() -> None:
    records, calls = await run_concurrent_twins(failures=[1])
    failed = [r for r in records if r.status == "error"]
    ok = [r for r in records if r.status != "error"]
    assert len(failed) == 1 and len(ok) == 1 and "dropped the request" in (failed[0].error or "")
    # the waiter did not hang: when the owner's call failed it called the model itself
    assert ok[0].answer == "Kenyan shilling" and ok[0].model_calls == 5 and calls == 6


async def test_sync_calls_on_worker_threads_also_wait_for_a_shared_prompt() -> None:
    class SlowSync(ScriptedChatModel):
        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            import time

            time.sleep(0.05)
            return super()._generate(messages, stop, run_manager, **kwargs)

    model = SlowSync(policy=policy)
    cache = PrefixReuseCache()

    def run(namespace: str) -> Any:
        with reuse_scope(cache, namespace) as counters:
            model.invoke([("user", QUESTION)])
        return counters

    with installed(cache):
        twins = await asyncio.gather(*(asyncio.to_thread(run, "ns") for _ in range(2)))
        other = await asyncio.to_thread(run, "other-trial")  # another namespace never shares
    assert sorted((c.model_calls, c.reused_calls) for c in twins) == [(0, 1), (1, 0)]
    assert (other.model_calls, other.reused_calls) == (1, 0) and len(model.calls) == 2


async def test_reuse_store_persists_and_tolerates_a_torn_line(tmp_path: Any) -> None:
    path = tmp_path / "reuse.jsonl"
    agent, model = make_agent()
    traced = graphtrail.trace_agent(agent)
    cache = PrefixReuseCache(ReuseStore(path))
    with installed(cache):
        await replay(traced, jobs_for({"baseline": GraphFilter()}), reuse_cache=cache)
    assert len(model.calls) == 5
    with path.open("a") as fh:
        fh.write('{"ns": "torn')  # killed mid-write
    store = ReuseStore(path)
    assert len(store) == 5
    agent2, model2 = make_agent()
    cache2 = PrefixReuseCache(store)
    with installed(cache2):
        (rec,) = await replay(graphtrail.trace_agent(agent2), jobs_for({"baseline": GraphFilter()}), reuse_cache=cache2)
    assert len(model2.calls) == 0 and rec.reused_calls == 5 and rec.answer == "Kenyan shilling"


async def test_reuse_scope_is_inert_outside_replays() -> None:
    agent, model = make_agent()
    cache = PrefixReuseCache()
    with installed(cache):
        for _ in range(2):
            await agent.ainvoke({"messages": [("user", QUESTION)]})  # no scope: no reuse, no counting
        assert len(model.calls) == 10 and len(cache.store) == 0
        with reuse_scope(cache, "ns") as counters:
            await agent.ainvoke({"messages": [("user", QUESTION)]})
        assert counters.model_calls == 5
    from langchain_core.globals import get_llm_cache

    assert get_llm_cache() is None  # restored


# ---------------------------------------------------------------- cache and concurrency


async def test_run_cache_skips_finished_keys_and_keeps_old_files(tmp_path: Any) -> None:
    agent, model = make_agent()
    traced = graphtrail.trace_agent(agent)
    jobs = jobs_for({"baseline": GraphFilter(), "hide_currency": FILTERS["hide_currency"]})
    first = await replay(traced, jobs, cache=RunCache(tmp_path))
    calls = len(model.calls)
    (tmp_path / "runs.jsonl").open("a").write('{"key": {"agent"')  # torn last line
    again = await replay(traced, jobs, cache=RunCache(tmp_path, resume=True))
    assert len(model.calls) == calls  # nothing recomputed
    assert [r.model_dump() for r in again] == [r.model_dump() for r in first]
    assert len(load_records(tmp_path / "runs.jsonl")) == 2
    fresh = RunCache(tmp_path, resume=False)  # does not overwrite the old runs
    assert fresh.moved_aside is not None and len(load_records(fresh.moved_aside)) == 2 and len(fresh) == 0


async def test_concurrency_limit_is_respected() -> None:
    active = peak = 0

    async def agent(question: str) -> str:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        return "ok"

    jobs = [ReplayJob(key=RunKey(agent="a", model="m", question_id=f"q{i}", condition="baseline"), question="?") for i in range(12)]
    records = await replay(agent, jobs, concurrency=3)
    assert peak == 3 and len(records) == 12 and all(r.answer == "ok" for r in records)
    with pytest.raises(ValueError):
        await replay(agent, jobs, concurrency=0)


async def test_agent_errors_become_error_records() -> None:
    def agent(question: str) -> str:
        raise RuntimeError("tool backend down")

    (rec,) = await replay(agent, [ReplayJob(key=RunKey(agent="a", model="m", question_id="q", condition="baseline"), question="?")])
    assert rec.status == "error" and "tool backend down" in (rec.error or "")
