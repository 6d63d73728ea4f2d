"""The factory route recognises a name inside free text, as whole words, and nothing inside a longer word.

What a run visited is read by value (ids, names, passages). A tool that answers in
sentences ("Ann Lee co-wrote it with Bob Stone") or returns a JSON field of prose
names its entities inside longer text; those are visited too, when nothing in
the output names its entities by id or whole value (then a name inside their
text is a mention). A name is a run of whole words: "Ann" is not in "Annual",
"Paris" is not in "Parisian".
"""

from __future__ import annotations

import json

from graphtrail.evaluators.replay.exact.recognise import ValueIndex, recognise
from graphtrail.kg import KnowledgeGraph
from graphtrail.kg.views import GraphFilter
from graphtrail.tracer.trajectory import Entity, Step, Trajectory


def catalogue() -> KnowledgeGraph:
    kg = KnowledgeGraph(name="people")
    kg.add_entity("e1", "Ann", "person", "an editor")
    kg.add_entity("e2", "Bob Stone", "person", "a writer")
    kg.add_entity("e3", "Paris", "place", "a city")
    kg.add_entity("e4", "Jordan", "person", "a runner")
    kg.add_entity("e5", "Jordan", "place", "a country")  # a name two entities bear says neither
    kg.add_entity("e6", "Marie Curie", "person", "a physicist", aliases=("Madame Curie",))
    kg.add_entity("Grace Hopper")  # keyed by its name: the id is the name
    return kg


def test_names_inside_a_sentence_are_recognised() -> None:
    index = ValueIndex(catalogue())
    text = "Ann co-wrote the report with Bob Stone in Paris; Madame Curie and grace hopper reviewed it."
    assert index.in_text(text) == ["e1", "e2", "e3", "e6"]  # "grace hopper": a name-like id keeps its case
    assert index.in_text("Grace Hopper reviewed it.") == ["Grace Hopper"]
    assert index.in_text("  BOB   stone\u00a0said so.") == ["e2"]  # spaces and case of a long name do not matter


def test_no_false_hits_inside_longer_words() -> None:
    index = ValueIndex(catalogue())
    assert index.in_text("The Annual report of the Parisian Bobsleigh club, by Annabel Stoner.") == []
    assert index.in_text("ann wrote it") == []  # a short name keeps its case: "ann" is no name
    assert index.in_text("Jordan ran in Jordan.") == []  # two entities bear it
    assert index.in_text("Marie went to see Curie.") == []  # not the phrase


def test_json_prose_fields_and_passages() -> None:
    index = ValueIndex(catalogue())
    output = json.dumps([{"id": "x9", "summary": "Ann met Bob Stone in Paris."}, {"title": "Annual review"}])
    assert index.in_text(output) == ["e1", "e2", "e3"]
    assert index.in_text(json.dumps({"who": "Ann", "note": "the Annual Parisian fair"})) == ["e1"]


def test_a_name_inside_a_recognised_entitys_own_text_is_a_mention() -> None:
    # an output about e6 (by id) whose description names Bob Stone visited e6, not Bob Stone
    index = ValueIndex(catalogue())
    assert index.in_text(json.dumps({"id": "e6", "description": "worked with Bob Stone in Paris"})) == ["e6"]
    assert index.in_text("Marie Curie\nShe worked with Bob Stone.") == ["e6"]  # a line that is a name


def test_a_run_that_read_a_sentence_visited_its_names() -> None:
    index = ValueIndex(catalogue())
    step = Step(index=1, tool="search", args={"q": "report"}, output="The report was written by Ann and Bob Stone.")
    trajectory = Trajectory(run_id="r", trace_id="t", span_id="s", name="a", question="q", answer="a", steps=[step])
    seen = recognise(trajectory, index, GraphFilter(masked=frozenset({"e2"})))
    assert [(e.id, e.name) for e in seen.steps[0].entities] == [("e1", "Ann"), ("e2", "[masked entity] e2")]
    # a step the tracer already read entities from (ids under known keys) is about those
    read = step.model_copy(update={"entities": [Entity(id="e3", name="Paris")]})
    seen = recognise(trajectory.model_copy(update={"steps": [read]}), index, None)
    assert [e.id for e in seen.steps[0].entities] == ["e3"]


def test_a_tool_repeating_its_own_arguments_shows_nothing() -> None:
    index = ValueIndex(catalogue())
    steps = [Step(index=1, tool="search", args={"query": "Paris"}, output="0 entities match 'Paris'. Try another name."),
             Step(index=2, tool="submit_answer", args={"answer": "Bob Stone", "citations": ["e2"]},
                  output="Answer submitted: Bob Stone (citations: e2)"),
             Step(index=3, tool="search", args={"query": "Paris"}, output="Nothing on Paris, but Ann was there.")]
    trajectory = Trajectory(run_id="r", trace_id="t", span_id="s", name="a", question="q", answer="a", steps=steps)
    seen = recognise(trajectory, index, None)
    assert [[e.id for e in step.entities] for step in seen.steps] == [[], [], ["e1"]]
