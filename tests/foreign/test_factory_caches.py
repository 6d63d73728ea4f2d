"""What the factory route keeps between runs never serves one ablation's data for another's.

The factory route (``evaluate(make_agent, questions, graph=G)``) builds an agent per
distinct ablation; what makes that cheap is kept between runs: the agent per
ablation (``AgentFactory``), graphtrail's own agent compiled once per shape and
copied with each graph's tools (``agents.rebind``), one index of the catalogue's
names read by two readers (``EntityNames.sharing``), passages found in one pass
(``ValueIndex._within``), and the catalogue's described relations read without
building the others (``KnowledgeGraph.described_relations``). Each test here would
fail if its cache answered for the wrong data.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
from graphtrail.agents.tools import make_graph_tools
from graphtrail.evaluators.replay.exact.factory import AgentFactory
from graphtrail.evaluators.replay.exact.recognise import ValueIndex, _norm
from graphtrail.evaluators.replay.filtered.leaks import EntityNames
from graphtrail.kg import KnowledgeGraph
from graphtrail.kg.views import GraphFilter


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    return load_kg("countries")


def _transcript(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(type(m).__name__, m.content, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", None) or []])
            for m in result["messages"]]


def test_a_templated_agent_runs_on_its_own_graph_as_a_full_build_does(kg: KnowledgeGraph) -> None:
    """Agents of one shape are one template copied with each graph's tools: each answers from its own graph."""
    ids = list(kg.entity_ids())
    questions = [q.question for q in load_questions("countries")[:12]]
    rng = random.Random(7)

    async def run() -> None:
        views = [kg.filtered(GraphFilter(hidden=frozenset(rng.sample(ids, 60)), masked=frozenset(rng.sample(ids, 20)),
                                         text_blocked=frozenset(rng.sample(ids, 20)))) for _ in questions]
        templated = [create_graphrag_agent("offline", view, "agentic", trace=False) for view in views]
        tool_nodes = {id(agent.nodes["tools"].bound) for agent in templated}
        assert len(tool_nodes) == len(views)  # each its own tool node
        differ = 0
        for question, view, agent in zip(questions, views, templated):
            full = create_graphrag_agent("offline", view, "agentic", trace=False, tools=make_graph_tools(view))  # compiled in full
            got = _transcript(await agent.ainvoke({"messages": [("user", question)]}))
            assert got == _transcript(await full.ainvoke({"messages": [("user", question)]}))
            whole = _transcript(await create_graphrag_agent("offline", kg, "agentic", trace=False).ainvoke(
                {"messages": [("user", question)]}))
            differ += got != whole
        assert differ, "no ablation changed a transcript: the test cannot tell the graphs apart"

    asyncio.run(run())


class _Built:
    """A stand-in agent: remembers the data it was built on."""

    def __init__(self, data: Any) -> None:
        self.data = data

    async def ainvoke(self, _input: Any, config: Any = None) -> Any:
        return {"messages": []}


def test_the_factory_builds_once_per_distinct_ablation_and_never_serves_another(kg: KnowledgeGraph) -> None:
    built: list[Any] = []

    def make_agent(data: Any) -> _Built:
        built.append(data)
        return _Built(data)

    factory = AgentFactory(make_agent, kg)
    assert len(built) == 1 and factory.agent_for(None).data is kg  # the baseline, built once
    ids = list(kg.entity_ids())
    first = GraphFilter(hidden=frozenset(ids[:3]))
    agent = factory.agent_for(first)
    assert factory.agent_for(first) is agent and factory.agent_for(GraphFilter(hidden=frozenset(ids[:3]))) is agent
    assert len(built) == 2 and agent.data.graph_filter == first
    # the same hidden set with a mask, or the same entities masked instead: other data, other agents
    others = [GraphFilter(hidden=frozenset(ids[:3]), masked=frozenset(ids[3:4])), GraphFilter(masked=frozenset(ids[:3])),
              GraphFilter(text_blocked=frozenset(ids[:3]))]
    for graph_filter in others:
        other = factory.agent_for(graph_filter)
        assert other is not agent and other.data.graph_filter == graph_filter
    assert len(built) == 5
    # filters made and dropped one after another (their ids are reused): each gets the agent of its own sets
    for i in range(200):
        graph_filter = GraphFilter(hidden=frozenset({ids[i % 40]}), masked=frozenset({ids[40 + i % 7]}))
        assert factory.agent_for(graph_filter).data.graph_filter == graph_filter
    assert len(built) == 5 + len({(i % 40, i % 7) for i in range(200)})


def test_two_readers_of_one_names_index_never_see_each_others_ids(kg: KnowledgeGraph) -> None:
    names = EntityNames(kg)
    twin = names.sharing()
    assert twin.kg_only and names.kg_only and twin.index() is names.index()  # one index, built once
    text = "the record X9Q1 and Kenya"
    before = twin.matches(text)
    names.ensure(["X9Q1"])  # an id no KG holds: the model-input check looks for it from now on
    assert any(("X9Q1", True) in match for match in names.matches(text))
    assert twin.matches(text) == before and not any(("X9Q1", True) in m for m in twin.matches(text))
    assert not names.kg_only and twin.kg_only
    twin.ensure(["Y7Z2"])
    assert not any(("Y7Z2", True) in m for m in names.matches("Y7Z2"))
    assert any(("Y7Z2", True) in m for m in twin.matches("Y7Z2"))


def test_passages_found_in_one_pass_are_those_a_search_per_passage_finds(kg: KnowledgeGraph) -> None:
    index = ValueIndex(kg)
    passages = list(index.passages)
    short = KnowledgeGraph(name="short")
    short.add_entity("a", "Alpha")
    short.add_entity("b", "Beta")
    short.add_text_unit("u1", "Alpha met Beta.", ["a", "b"])  # shorter than a probe: searched whole
    short.add_text_unit("u2", "Beta", ["b"])
    rng = random.Random(3)
    for idx, pool in ((index, passages), (ValueIndex(short), list(ValueIndex(short).passages))):
        for _ in range(300):
            parts = rng.sample(pool, min(3, len(pool)))
            text = _norm(" ".join([rng.choice(["", "x", "see: "]) + parts[0], *(p[: rng.randrange(len(p) + 1)] for p in parts[1:]),
                                   rng.choice(parts)]))
            assert idx._within(text) == [p for p in idx.passages if p in text]


def test_described_relations_are_the_relations_with_a_description(kg: KnowledgeGraph) -> None:
    assert list(kg.described_relations()) == [r for r in kg.relations() if r.description]
    ids = list(kg.entity_ids())
    view = kg.filtered(GraphFilter(hidden=frozenset(ids[::3])))
    assert list(view.described_relations()) == [r for r in view.relations() if r.description]
    bare = KnowledgeGraph()
    bare.add_entity("a")
    bare.add_entity("b")
    bare.add_relation("a", "r", "b")
    assert list(bare.described_relations()) == []


def test_networkx_and_pandas_are_ablated_when_imported_after_other_data_was() -> None:
    """Ablating a KnowledgeGraph imports neither library; a graph or DataFrame of one imported later still ablates."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import sys
        from graphtrail.kg import KnowledgeGraph
        from graphtrail.kg.views import GraphFilter
        from graphtrail.evaluators.replay.exact.ablate import ablated, catalogue
        before = {name: name in sys.modules for name in ("networkx", "pandas")}
        kg = KnowledgeGraph()
        kg.add_entity("a", "Alpha")
        kg.add_entity("b", "Beta")
        hide_a = GraphFilter(hidden=frozenset({"a"}))
        assert list(ablated(kg, hide_a).entity_ids()) == ["b"] and catalogue(kg) is kg
        assert {name: name in sys.modules for name in before} == before, "ablating a KnowledgeGraph imported a library"
        import networkx as nx
        import pandas as pd
        graph = nx.Graph()
        graph.add_node("a", name="Alpha")
        graph.add_node("b", name="Beta")
        assert list(ablated(graph, hide_a).nodes) == ["b"]
        frame = pd.DataFrame({"id": ["a", "b"], "name": ["Alpha", "Beta"]})
        assert list(ablated(frame, hide_a)["id"]) == ["b"]
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.strip() == "ok", done.stderr
