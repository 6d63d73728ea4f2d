"""The BaseTool.run/arun interception and the coverage guard's bookkeeping, one piece at a time."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from graphtrail.agents import GraphFilter, use_filter
from graphtrail.evaluators import RunKey, RunRecord, register_tool_filter, unregister_tool_filter
from graphtrail.evaluators.replay.filtered.interception import coverage_of, filtering, install
from graphtrail.evaluators.replay.filtered.leaks import EntityNames, input_leaks
from graphtrail.evaluators.replay.seen import recording
from graphtrail.evaluators.scoring.coverage import NOTHING_REVEALED, condition_coverage
from graphtrail.tracer import Entity, Step, Trajectory
from tests.fakes import ScriptedChatModel

HIDE_D1 = GraphFilter(hidden=frozenset({"d1"}))


@tool
def crew_text(film_id: str) -> str:
    """Plain-text crew of a film (no ids: the way many tools answer)."""
    return "Director 1 directed Film 1.\nProducer 1 produced Film 1.\n"


@tool
def crew_json(film_id: str) -> str:
    """Crew as JSON."""
    return json.dumps([{"id": "d1", "name": "Director 1"}, {"id": "c1", "name": "Producer 1"}])


def test_patch_is_installed_once_and_inert_outside_a_replay_run() -> None:
    install()
    run = BaseTool.run
    install()
    assert BaseTool.run is run
    # a filter alone (no evaluation scope) does not reach an unwrapped tool: only evaluations turn the patch on
    with use_filter(HIDE_D1):
        assert "d1" in crew_json.invoke({"film_id": "m1"})


def test_scope_filters_and_counts_sync_and_async_calls() -> None:
    with use_filter(HIDE_D1), filtering(HIDE_D1) as scope:
        out = json.loads(crew_json.invoke({"film_id": "m1"}))
        also = json.loads(crew_json.run({"film_id": "m1"}))
    assert [e["id"] for e in out] == [e["id"] for e in also] == ["c1"]
    assert scope.routed["crew_json"] == 2


async def test_scope_reaches_ainvoke_of_a_sync_tool() -> None:
    with use_filter(HIDE_D1), filtering(HIDE_D1) as scope:
        out = json.loads(await crew_json.ainvoke({"film_id": "m1"}))
    assert [e["id"] for e in out] == ["c1"] and scope.routed["crew_json"] == 1


def test_plain_text_uses_names_the_baseline_saw() -> None:
    with use_filter(HIDE_D1), filtering(HIDE_D1, names={"d1": "Director 1"}):
        out = crew_text.invoke({"film_id": "m1"})
    assert out == "Producer 1 produced Film 1.\n"


def test_a_filter_that_leaves_hidden_ids_is_caught_by_what_the_model_was_given() -> None:
    """The tool went through a (registered, broken) filter: counted as filtered; the model-input check finds the leak."""
    register_tool_filter("crew_json", lambda output, f: output)  # a registered filter that forgets to filter
    model = ScriptedChatModel(script=[AIMessage(content="ok")])
    try:
        with use_filter(HIDE_D1), filtering(HIDE_D1) as scope, recording() as seen:
            out = crew_json.invoke({"film_id": "m1"})
            model.invoke([HumanMessage("Who directed Film 1?"), ToolMessage(out, name="crew_json", tool_call_id="c1")])
    finally:
        unregister_tool_filter("crew_json")
    assert coverage_of(scope, None) == {"crew_json": {"filtered": 1, "unfiltered": 0}}
    assert input_leaks(seen, HIDE_D1, EntityNames(), "Who directed Film 1?") == {"tool 'crew_json'": ["d1"]}


def _traj(*tools: tuple[str, list[str]]) -> Trajectory:
    return Trajectory(
        run_id="r",
        steps=[Step(index=i + 1, tool=name, entities=[Entity(id=e) for e in ids]) for i, (name, ids) in enumerate(tools)],
    )


def _rec(condition: str, trajectory: Trajectory | None, coverage: dict[str, dict[str, int]] | None) -> RunRecord:
    key = RunKey(agent="a", model="m", question_id="q", condition=condition)
    return RunRecord(key=key, question="?", trajectory=trajectory, tool_coverage=coverage)


def test_traced_steps_beyond_routed_calls_are_unfiltered() -> None:
    with use_filter(HIDE_D1), filtering(HIDE_D1) as scope:
        crew_json.invoke({"film_id": "m1"})
    traj = _traj(("crew_json", ["c1"]), ("crew_json", ["d1", "c1"]), ("lookup", []))
    assert coverage_of(scope, traj) == {
        "crew_json": {"filtered": 1, "unfiltered": 1},
        "lookup": {"filtered": 0, "unfiltered": 1},
    }


def test_only_tools_that_revealed_entities_at_baseline_invalidate() -> None:
    base = _rec("baseline", _traj(("crew", ["d1"]), ("echo", [])), None)
    escaped_echo = _rec("cited_removal", None, {"crew": {"filtered": 1, "unfiltered": 0}, "echo": {"filtered": 0, "unfiltered": 2}})
    escaped_crew = _rec("uncited_removal", None, {"crew": {"filtered": 0, "unfiltered": 1}})
    found = condition_coverage([base, escaped_echo, escaped_crew])
    assert found["cited_removal"].valid and (found["cited_removal"].filtered, found["cited_removal"].unfiltered) == (1, 2)
    assert not found["uncited_removal"].valid and found["uncited_removal"].escaped == ["crew"]


def test_nothing_revealed_invalidates_every_condition() -> None:
    base = _rec("baseline", _traj(("echo", [])), None)
    found = condition_coverage([base, _rec("cited_removal", None, None)])
    assert found["cited_removal"].reason == NOTHING_REVEALED


def test_old_records_without_counts_stay_valid() -> None:
    base = _rec("baseline", _traj(("crew", ["d1"])), None)
    assert condition_coverage([base, _rec("cited_removal", None, None)])["cited_removal"].valid


def test_numeric_ids_are_checked_in_structure_not_as_text() -> None:
    """Integer ids (as graph databases hand out) must not match counts and years in the text; names still do."""
    numeric = GraphFilter(hidden=frozenset({"7"}))

    @tool
    def people(query: str) -> dict[str, Any]:
        """People, with a count that happens to equal a hidden id."""
        return {"count": 7, "rows": [{"id": 7, "name": "Seven"}, {"id": 8, "name": "Eight"}], "note": "7 results"}

    model = ScriptedChatModel(script=[AIMessage(content="ok")])

    def seen_by_model(filtered: bool) -> dict[str, list[str]]:
        with use_filter(numeric), filtering(numeric), recording() as seen:
            out = people.invoke({"query": "x"})
            model.invoke([HumanMessage("q"), ToolMessage(json.dumps(out), name="people", tool_call_id="c1")])
        if filtered:
            assert [r["id"] for r in out["rows"]] == [8]
        return input_leaks(seen, numeric, EntityNames(revealed={"7": ["Seven"], "8": ["Eight"]}), "q")

    assert seen_by_model(True) == {}  # "count": 7 and "7 results" are no leak
    register_tool_filter("people", lambda output, f: output)
    try:
        assert seen_by_model(False) == {"tool 'people'": ["7"]}  # found by its name
    finally:
        unregister_tool_filter("people")


@tool(response_format="content_and_artifact")
def made_by(film_id: str) -> tuple[str, list[dict[str, Any]]]:
    """One sentence that cannot be cut between the people it names."""
    return "Director 1 and Producer 1 made Film 1.", [{"id": "d1", "name": "Director 1"}, {"id": "c1", "name": "Producer 1"},
                                                      {"id": "m1", "name": "Film 1"}]


def test_a_filter_that_removes_kept_entities_is_over_filtering() -> None:
    hide_c1 = GraphFilter(hidden=frozenset({"c1"}))
    with use_filter(hide_c1), filtering(hide_c1) as scope:
        assert made_by.invoke({"film_id": "m1"}) == ""  # the sentence goes whole, the director and film with it
        crew_text.invoke({"film_id": "m1"})  # cut at its line: nothing kept is lost
    coverage = coverage_of(scope, None)
    assert coverage["made_by"] == {"filtered": 1, "unfiltered": 0, "over_filtered": 1}
    assert "over_filtered" not in coverage["crew_text"]
    base = _rec("baseline", _traj(("made_by", ["d1"])), None)
    found = condition_coverage([base, _rec("uncited_removal", None, coverage)])["uncited_removal"]
    assert not found.valid and found.over_filtered == ["made_by"] and "'made_by'" in found.reason


def test_masked_names_go_everywhere_and_relationship_tuples_go_whole() -> None:
    from graphtrail.evaluators.replay.filtered.filters import filter_tool_output

    record = [{"p": {"name": "Director 1"}, "r": [{"name": "Director 1"}, "DIRECTED", {"name": "Film 1"}], "note": "by Director 1"}]
    masked = filter_tool_output("q", record, GraphFilter(masked=frozenset({"d1"})), names={"d1": "Director 1"})
    assert "Director 1" not in json.dumps(masked) and json.dumps(masked).count("[masked entity] d1") == 3
    rels = {"title": "Film 1", "relations": [["DIRECTED_BY", {"name": "Director 1"}], ["PRODUCED_BY", {"name": "Producer 1"}]]}
    hidden = filter_tool_output("q", rels, GraphFilter(hidden=frozenset({"Director 1"})))
    assert hidden["relations"] == [["PRODUCED_BY", {"name": "Producer 1"}]]


def test_phrase_reader_finds_what_trying_every_width_at_every_word_finds() -> None:
    # The reader skips words that start no known phrase; check it against the plain longest-first scan
    # over every position, on the bundled graph's names and texts made of them (overlaps, shared first
    # words, case-kept codes, ids), plus an id only an ablation met (ensure()).
    import random

    from graphtrail.agents import load_kg
    from graphtrail.evaluators.replay.filtered import leaks

    kg = load_kg("countries")
    names = EntityNames(kg)
    names.ensure(["X_ONLY_SEEN_7"])
    folded, exact = names.index()

    def scan_everything(text: str) -> tuple:
        kept = leaks._WORD.findall(leaks.normalize(text, fold=False))
        low = [w.casefold() for w in kept]
        def longest_at(i: int) -> tuple[int, Any]:
            phrases = ((w, folded.get(" ".join(low[i:i + w])) or exact.get(" ".join(kept[i:i + w])))
                       for w in range(min(leaks._MAX_WORDS, len(kept) - i), 0, -1))
            return next(((w, hit) for w, hit in phrases if hit), (1, None))

        out, i = [], 0
        while i < len(kept):
            width, hit = longest_at(i)
            out += [hit] if hit else []
            i += width
        return tuple(out)

    rng = random.Random(7)
    records = list(kg.entities())
    vocabulary = [r.name for r in records] + [r.id for r in records] + ["X_ONLY_SEEN_7", "the", "of", "and", "AND", "US"]
    texts = [e.description or "" for e in records[:200]]
    texts += [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 30))) for _ in range(500)]
    found = 0
    for text in texts:
        expected = scan_everything(text)
        assert names.matches(text) == expected, text
        found += len(expected)
    assert found > 1000  # the texts do name many entities
