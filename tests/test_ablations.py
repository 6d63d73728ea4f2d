"""Ablation builders: each condition's exact filter sets, and what graphtrail's tools then return."""

from __future__ import annotations

import pytest

from graphtrail.agents import GraphFilter, KnowledgeGraph, use_filter
from graphtrail.agents.tools import make_graph_tools
from graphtrail.evaluators import AblationError, condition_filters, random_removal_candidates
from graphtrail.tracer.trajectory import Edge, Entity, Step, Trajectory


def tiny_kg() -> KnowledgeGraph:
    kg = KnowledgeGraph(name="tiny")
    kg.add_entity("K", "Kenya", "country", "A country in East Africa.")
    kg.add_entity("N", "Nairobi", "city", "Capital of Kenya.")
    kg.add_entity("S", "Kenyan shilling", "currency", "Currency of Kenya.")
    kg.add_entity("W", "Swahili", "language", "A Bantu language.")
    kg.add_entity("U", "Uganda", "country", "A country bordering Kenya.")
    kg.add_entity("T", "Tanzania", "country", "A country bordering Kenya.")
    kg.add_entity("M", "Mombasa", "city", "A port city.")
    kg.add_entity("Z", "Zambia", "country", "Far away.")
    kg.add_relation("K", "capital", "N")
    kg.add_relation("K", "currency", "S")
    kg.add_relation("K", "language", "W")
    kg.add_relation("K", "borders", "U")
    kg.add_relation("K", "borders", "T")
    kg.add_relation("M", "located in", "K")
    kg.add_relation("T", "borders", "Z")
    kg.add_text_unit("T1", "Nairobi is the capital of Kenya.", ["N", "K"])
    kg.add_text_unit("T2", "Swahili is spoken in Kenya and Tanzania.", ["W", "K", "T"])
    return kg


def baseline() -> Trajectory:
    """Visited N, K, S, W (in that order); cites S and K; an edge shows U without visiting it."""
    return Trajectory(
        run_id="r0",
        question="Which currency is used in the country whose capital is Nairobi?",
        answer="Kenyan shilling",
        citations=["S", "K"],
        steps=[
            Step(index=1, tool="search_entities", entities=[Entity(id="N", name="Nairobi", type="city")]),
            Step(
                index=2,
                tool="get_neighbors",
                entities=[Entity(id="K", name="Kenya", type="country")],
                edges=[Edge(source="K", relation="capital", target="N"), Edge(source="K", relation="borders", target="U")],
            ),
            Step(
                index=3,
                tool="get_neighbors",
                entities=[Entity(id="S", name="Kenyan shilling", type="currency"), Entity(id="W", name="Swahili", type="language")],
            ),
        ],
    )


QUESTION = {"id": "q1", "question": "Which currency ...", "answers": ["Kenyan shilling"], "topic_ids": ["N"]}


def only(pairs: list[tuple[str, GraphFilter]]) -> GraphFilter:
    assert len(pairs) == 1 and pairs[0][0] == ""
    return pairs[0][1]


def test_baseline_is_the_empty_filter() -> None:
    f = only(condition_filters("baseline", baseline(), tiny_kg()))
    assert f.is_empty and f.label == "baseline"


def test_cited_removal_hides_exactly_the_citations() -> None:
    f = only(condition_filters("cited_removal", baseline(), tiny_kg()))
    assert f.hidden == {"S", "K"} and not f.masked and not f.text_blocked


def test_uncited_conditions_use_visited_but_uncited() -> None:
    removal = only(condition_filters("uncited_removal", baseline()))
    mask = only(condition_filters("uncited_mask", baseline()))
    assert removal.hidden == {"N", "W"} and not removal.masked
    assert mask.masked == {"N", "W"} and not mask.hidden and not mask.text_blocked


def test_isolation_with_a_kg_covers_every_non_cited_entity() -> None:
    kg = tiny_kg()
    full = only(condition_filters("full_isolation", baseline(), kg))
    text = only(condition_filters("text_only_isolation", baseline(), kg))
    everything_else = {"N", "W", "U", "T", "M", "Z"}
    assert full.hidden == everything_else and not full.text_blocked
    assert text.text_blocked == everything_else and not text.hidden


def test_isolation_without_a_kg_covers_what_the_run_saw() -> None:
    full = only(condition_filters("full_isolation", baseline()))
    # visited-uncited, plus U which only appeared as an edge endpoint
    assert full.hidden == {"N", "W", "U"}


def test_leave_one_out_has_one_variant_per_visited_entity() -> None:
    pairs = condition_filters("leave_one_out", baseline())
    assert [v for v, _ in pairs] == ["N", "K", "S", "W"]
    assert all(f.hidden == {v} for v, f in pairs)
    assert len({f.label for _, f in pairs}) == 4


def test_random_subsets_are_seeded_bernoulli_masks_over_visited() -> None:
    a = condition_filters("random_subsets", baseline(), seed=3, question=QUESTION, n_subsets=40)
    b = condition_filters("random_subsets", baseline(), seed=3, question=QUESTION, n_subsets=40)
    c = condition_filters("random_subsets", baseline(), seed=4, question=QUESTION, n_subsets=40)
    assert [v for v, _ in a] == [str(i) for i in range(40)]
    assert a == b and a != c
    visited = set(baseline().visited)
    dropped = [f.hidden for _, f in a]
    assert all(d <= visited for d in dropped)
    rate = sum(len(d) for d in dropped) / (40 * len(visited))
    assert 0.3 < rate < 0.7  # p = 0.5
    assert len(set(dropped)) > 5


def test_random_removal_draws_matched_non_visited_entities() -> None:
    kg = tiny_kg()
    draws = set()
    for seed in range(30):
        f = only(condition_filters("random_removal", baseline(), kg, seed=seed, question=QUESTION))
        assert len(f.hidden) == 2  # as many as there are citations
        assert not f.hidden & set(baseline().visited)
        # K (country) is matched with a country; S (currency) has no other currency -> any candidate
        assert f.hidden & {"U", "T", "Z"}
        draws.add(f.hidden)
    assert len(draws) > 1  # random among the best matches, not one fixed neighbour
    same = {only(condition_filters("random_removal", baseline(), kg, seed=7, question=QUESTION)).hidden for _ in range(3)}
    assert len(same) == 1


def test_random_removal_prefers_close_degree() -> None:
    kg = KnowledgeGraph()
    kg.add_entity("Q", "Quest", "topic")
    kg.add_entity("C", "Cited", "thing")
    kg.add_relation("Q", "about", "C")
    kg.add_relation("C", "near", "X0")
    # ten same-type candidates two hops from the visited set: five with C's degree, five hubs
    for i in range(10):
        kg.add_entity(f"D{i}", f"Cand {i}", "thing")
        kg.add_relation("X0", "link", f"D{i}")
        if i >= 5:
            for j in range(12):
                kg.add_relation(f"D{i}", "spoke", f"H{i}_{j}")
    kg.add_entity("X0", "Hub", "other")
    traj = Trajectory(run_id="r", citations=["C"], steps=[Step(index=1, tool="t", entities=[Entity(id="Q"), Entity(id="C")])])
    assert "D0" in random_removal_candidates(traj, kg)
    picks = {next(iter(only(condition_filters("random_removal", traj, kg, seed=s)).hidden)) for s in range(40)}
    assert picks <= {f"D{i}" for i in range(5)}


def test_random_removal_without_kg_uses_edge_endpoints() -> None:
    f = only(condition_filters("random_removal", baseline(), seed=0, question=QUESTION))
    # U is the only entity seen but not visited; the second pick falls back to visited-uncited
    assert "U" in f.hidden and len(f.hidden) == 2


def test_unknown_condition_and_bad_parameters_raise() -> None:
    with pytest.raises(AblationError):
        condition_filters("nope", baseline())
    with pytest.raises(AblationError):
        condition_filters("random_subsets", baseline(), n_subsets=0)


def _tools(kg: KnowledgeGraph) -> dict:
    return {t.name: t for t in make_graph_tools(kg)}


def _call(tool, **args) -> str:
    return tool.invoke({"type": "tool_call", "name": tool.name, "id": "c1", "args": args}).content


def _ids(tool, **args) -> set[str]:
    """Entity ids in the tool's artifact (what the tracer records)."""
    artifact = tool.invoke({"type": "tool_call", "name": tool.name, "id": "c1", "args": args}).artifact or {}
    ids = {e["id"] for e in artifact.get("entities", [])}
    return ids | {x for e in artifact.get("edges", []) for x in (e["source"], e["target"])}


def test_graph_tools_under_each_condition() -> None:
    kg, traj = tiny_kg(), baseline()
    tools = _tools(kg)
    assert {"N", "S", "W", "U", "T", "M"} <= _ids(tools["get_neighbors"], entity_id="K", direction="both")

    with use_filter(only(condition_filters("cited_removal", traj, kg))):
        assert "K" not in _ids(tools["get_neighbors"], entity_id="N")
        assert "K" not in _ids(tools["search_entities"], query="Kenya")
        assert not _ids(tools["get_entity"], entity_id="S")
    with use_filter(only(condition_filters("uncited_mask", traj, kg))):
        assert "N" in _ids(tools["get_neighbors"], entity_id="K", direction="both")
        out = _call(tools["get_neighbors"], entity_id="K", direction="both")
        assert "Nairobi" not in out and "[masked entity] N" in out
    with use_filter(only(condition_filters("text_only_isolation", traj, kg))):
        assert "East Africa" in _call(tools["get_entity"], entity_id="K")  # K is cited: its text stays
        assert "Nairobi" in _call(tools["get_neighbors"], entity_id="K", direction="both")  # structure stays
        assert "Capital of Kenya" not in _call(tools["get_entity"], entity_id="N")
        assert "Nairobi is the capital" not in _call(tools["read_text_unit"], unit_id="T1")
    with use_filter(only(condition_filters("full_isolation", traj, kg))):
        assert _ids(tools["get_neighbors"], entity_id="K", direction="both") == {"K", "S"}
    with use_filter(condition_filters("leave_one_out", traj, kg)[0][1]):  # hides N
        assert _ids(tools["get_neighbors"], entity_id="K", direction="both") == {"K", "S", "W", "U", "T", "M"}
    # outside any filter the graph is whole again
    assert "N" in _ids(tools["get_neighbors"], entity_id="K", direction="both")
