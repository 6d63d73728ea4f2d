"""Each agent variant's citation rule, end-of-run and step limit, driven by a scripted model on a real LangGraph agent."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from graphtrail.agents import answer_from_result, create_graphrag_agent
from graphtrail.agents.graphrag import system_prompt_for
from tests.fakes import ScriptedChatModel, tool_call
from tests.test_tools import tiny_kg


def ai(*calls) -> AIMessage:
    return AIMessage(content="", tool_calls=list(calls))


def run(agent, question="What is the capital of Kenya?"):
    return agent.invoke({"messages": [HumanMessage(question)]})


def submit_replies(result) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "submit_answer"]


SEARCH = tool_call("search_entities", {"query": "Kenya"}, "s1")
NEIGHBORS = tool_call("get_neighbors", {"entity_id": "E1", "relation": "capital"}, "n1")


def submit(cites, call_id):
    return tool_call("submit_answer", {"answer": "Nairobi", "citations": cites}, call_id)


def test_agentic_accepts_any_citation_and_ends_the_run():
    model = ScriptedChatModel(script=[ai(SEARCH), ai(submit(["E1", "E999"], "a1")), ai(SEARCH)])
    result = run(create_graphrag_agent(model, tiny_kg(), "agentic"))
    assert answer_from_result(result) == ("Nairobi", ["E1", "E999"], "ok")
    assert len(model.calls) == 2  # the accepted submission ended the run: no third model call
    assert submit_replies(result)[0].status != "error"


def test_evidence_first_rejects_unread_citations_then_accepts_after_reading():
    model = ScriptedChatModel(
        script=[
            ai(SEARCH, NEIGHBORS),
            ai(submit(["E1", "E2"], "a1")),  # seen in search/neighbour lists, but not read in detail
            ai(tool_call("get_entity", {"entity_id": "E1"}, "g1"), tool_call("read_text_unit", {"unit_id": "T1"}, "t1")),
            ai(submit(["E1", "E2"], "a2")),  # E1 via get_entity, E2 via a text unit that mentions it
        ]
    )
    result = run(create_graphrag_agent(model, tiny_kg(), "evidence_first"))
    first, second = submit_replies(result)
    assert first.status == "error"
    assert "E1" in first.content and "E2" in first.content and "get_entity" in first.content
    assert second.status != "error"
    assert answer_from_result(result) == ("Nairobi", ["E1", "E2"], "ok")
    assert set(result["graphtrail_read"]) == {"E1", "E2", "E3", "E6"}


def test_evidence_first_only_names_the_unread_ids():
    model = ScriptedChatModel(
        script=[ai(tool_call("get_entity", {"entity_id": "E1"}, "g1")), ai(submit(["E1", "E4"], "a1"))]
    )
    result = run(create_graphrag_agent(model, tiny_kg(), "evidence_first", max_steps=3))
    (reply,) = submit_replies(result)
    assert reply.status == "error" and "E4" in reply.content and "E1," not in reply.content
    assert answer_from_result(result) == (None, [], "no_answer")


def test_visited_only_rejects_unvisited_citations():
    model = ScriptedChatModel(
        script=[
            ai(SEARCH),
            ai(submit(["E1", "E2"], "a1")),  # Nairobi (E2) was never returned by a tool
            ai(NEIGHBORS),
            ai(submit(["E1", "E2"], "a2")),
        ]
    )
    result = run(create_graphrag_agent(model, tiny_kg(), "visited_only"))
    first, second = submit_replies(result)
    assert first.status == "error" and "E2" in first.content and "E1," not in first.content
    assert second.status != "error"
    assert answer_from_result(result) == ("Nairobi", ["E1", "E2"], "ok")
    assert result["graphtrail_visited"][:2] == ["E1", "E3"] and "E2" in result["graphtrail_visited"]


def test_visited_only_does_not_count_reads_in_the_same_turn_as_the_submission():
    # The state the rule checks is the one before this turn's tool calls: the model had not seen E2 yet.
    model = ScriptedChatModel(script=[ai(SEARCH), ai(NEIGHBORS, submit(["E2"], "a1"))])
    result = run(create_graphrag_agent(model, tiny_kg(), "visited_only", max_steps=2))
    assert submit_replies(result)[0].status == "error"


@pytest.mark.parametrize("variant", ["agentic", "evidence_first", "visited_only"])
def test_step_limit_ends_gracefully_with_no_answer(variant):
    def searching_forever(messages):
        n = sum(isinstance(m, AIMessage) for m in messages)
        return ai(tool_call("search_entities", {"query": f"Kenya {n}"}, f"s{n}"))

    model = ScriptedChatModel(policy=searching_forever)
    result = run(create_graphrag_agent(model, tiny_kg(), variant, max_steps=4))
    assert len(model.calls) == 4
    assert answer_from_result(result) == (None, [], "no_answer")
    assert "limit" in result["messages"][-1].content


def test_step_limit_says_what_langchains_call_limit_middleware_says():
    # Same model, same limit: graphtrail's one-hook limit and LangChain's ModelCallLimitMiddleware end the
    # run with the same message, which the tracer reads as a limit, not an answer.
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelCallLimitMiddleware

    from graphtrail.agents.tools import make_graph_tools
    from graphtrail.tracer.extract import is_limit_message

    def searching_forever(messages):
        n = sum(isinstance(m, AIMessage) for m in messages)
        return ai(tool_call("search_entities", {"query": f"Kenya {n}"}, f"s{n}"))

    ours = run(create_graphrag_agent(ScriptedChatModel(policy=searching_forever), tiny_kg(), "agentic", max_steps=3))
    kg = tiny_kg()
    theirs = run(
        create_agent(
            ScriptedChatModel(policy=searching_forever),
            make_graph_tools(kg),
            middleware=[ModelCallLimitMiddleware(run_limit=3, exit_behavior="end")],
        )
    )
    assert ours["messages"][-1].content == theirs["messages"][-1].content
    assert is_limit_message(ours["messages"][-1].content)


def test_step_limit_counts_each_run_of_a_checkpointed_thread_afresh():
    from langgraph.checkpoint.memory import InMemorySaver

    def two_searches_then_submit(messages):
        since_user = 0
        for m in reversed(messages):
            if isinstance(m, HumanMessage):
                break
            since_user += isinstance(m, AIMessage)
        if since_user < 2:
            return ai(tool_call("search_entities", {"query": "Kenya"}, f"s{len(messages)}"))
        return ai(submit(["E1"], f"a{len(messages)}"))

    model = ScriptedChatModel(policy=two_searches_then_submit)
    agent = create_graphrag_agent(model, tiny_kg(), "agentic", max_steps=3, trace=False)
    agent.checkpointer = InMemorySaver()  # the compiled graph keeps the thread's state between runs
    thread = {"configurable": {"thread_id": "t1"}}
    first = agent.invoke({"messages": [HumanMessage("What is the capital of Kenya?")]}, thread)
    second = agent.invoke({"messages": [HumanMessage("And again?")]}, thread)
    assert len(second["messages"]) > len(first["messages"]) + 1  # the second run saw the first one's messages
    # 3 calls each: a count carried over from the first run would stop the second after none
    assert answer_from_result(first)[2] == "ok" and answer_from_result(second)[2] == "ok"
    assert len(model.calls) == 6


def test_a_model_step_is_two_graph_nodes():
    # The rules hook does the limit too: no separate limit hooks before and after every model call.
    agent = create_graphrag_agent(ScriptedChatModel(script=[]), tiny_kg(), "agentic", trace=False)
    nodes = set(agent.get_graph().nodes) - {"__start__", "__end__"}
    assert nodes == {"graphtrail_rules.before_model", "model", "tools"}


def test_bad_tool_arguments_come_back_as_error_messages():
    model = ScriptedChatModel(
        script=[ai(tool_call("get_neighbors", {"entity_id": "E1", "direction": "sideways"}, "b1")), ai(submit([], "a1"))]
    )
    result = run(create_graphrag_agent(model, tiny_kg(), "agentic"))
    bad = next(m for m in result["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "b1")
    assert bad.status == "error" and "direction" in bad.content


async def test_concurrent_runs_keep_their_own_visited_and_read_state():
    # Run A reads E1 before citing it; run B cites E1 without reading. Under evidence_first only B is rejected,
    # even though both runs share one compiled agent and run concurrently.
    def policy(messages):
        question = messages[1].content if len(messages) > 1 else messages[0].content
        n = sum(isinstance(m, AIMessage) for m in messages)
        if "read" in question:
            steps = [ai(tool_call("get_entity", {"entity_id": "E1"}, "g")), ai(submit(["E1"], "a"))]
        else:
            steps = [ai(SEARCH), ai(submit(["E1"], "a"))]
        return steps[n] if n < len(steps) else AIMessage(content="giving up")

    agent = create_graphrag_agent(ScriptedChatModel(policy=policy), tiny_kg(), "evidence_first", max_steps=2)
    results = await asyncio.gather(
        *[agent.ainvoke({"messages": [HumanMessage(q)]}) for q in ["read first", "cite blindly", "read first"]]
    )
    assert [answer_from_result(r)[2] for r in results] == ["ok", "no_answer", "ok"]


def test_variant_prompts_and_bad_variant():
    assert "read it in detail" in system_prompt_for("evidence_first")
    assert "returned" in system_prompt_for("visited_only")
    with pytest.raises(ValueError, match="variant"):
        create_graphrag_agent(ScriptedChatModel(), tiny_kg(), "greedy")
