"""Text-blocked descriptions are checked in what the model saw, like hidden names are.

``text_only_isolation`` keeps every entity but the cited ones with its
structure and withholds its description. An agent whose ``@dynamic_prompt``
writes the graph's descriptions into the system prompt gives the model exactly
what the condition withheld: the condition must be invalid, the channel named.
The same agent reading descriptions only through its tools (which the
evaluation filters) stays valid. Descriptions come from the KG, and without
one from what the baseline runs' tools showed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, dynamic_prompt
from langchain_core.tools import tool

from graphtrail.evaluators import evaluate
from graphtrail.evaluators.replay.filtered.textleaks import DescriptionSpans
from graphtrail.kg import KnowledgeGraph

from .world import Spy, crew_of, make_model, questions, search_rows

DESCRIPTIONS = {
    "film": "{name} was shot over thirty winter nights on a frozen lake in northern Finland.",
    "director": "{name} trained as a marine biologist before turning to documentary cinema in the nineties.",
    "producer": "{name} financed the whole project by selling a family vineyard near Bordeaux.",
}
OPTIONS: dict[str, Any] = {"conditions": ["text_only_isolation", "uncited_removal"], "baseline_repeats": 1,
                           "progress": False, "n_boot": 50, "paper_reference": False}


def _description(entity: dict[str, Any]) -> str:
    return DESCRIPTIONS[entity.get("role", entity["type"])].format(name=entity["name"])


def films_kg() -> KnowledgeGraph:
    kg = KnowledgeGraph(name="films")
    for i in (1, 2):
        (film,) = search_rows(f"Film {i}")
        kg.add_entity(film["id"], film["name"], "film", _description(film))
        for person in crew_of(film["id"])["entities"]:
            kg.add_entity(person["id"], person["name"], "person", _description(person))
            kg.add_relation(person["id"], "directed" if person["role"] == "director" else "produced", film["id"])
    return kg


def _tools() -> list[Any]:
    """Tools that show descriptions beside ids: the evaluation's filter withholds the text-blocked ones."""

    @tool
    def search(query: str) -> list[dict[str, Any]]:
        """Find films by title."""
        return [{**row, "description": _description(row)} for row in search_rows(query)]

    @tool
    def crew(film_id: str) -> dict[str, Any]:
        """The people who made a film, with what is known about them."""
        data = crew_of(film_id)
        return {**data, "entities": [{**p, "description": _description(p)} for p in data["entities"]]}

    return [search, crew]


@dynamic_prompt
def graph_background(request: ModelRequest) -> str:
    """What the graph says about the asked film's people, written into the system prompt (no filter reaches it)."""
    question = str(request.state["messages"][0].content)
    lines = [_description(p) for row in search_rows(question) for p in crew_of(row["id"])["entities"]]
    return "You answer questions about films. Background:\n" + "\n".join(lines)


def test_descriptions_in_a_dynamic_prompt_make_text_only_isolation_invalid(tmp_path: Path) -> None:
    agent = create_agent(make_model(Spy()), _tools(), middleware=[graph_background], name="background-films")
    report = evaluate(agent, questions(2), films_kg(), out_dir=tmp_path, **OPTIONS)
    row = report.condition("text_only_isolation")
    assert not row.valid and "system prompt" in row.invalid_reason, row.invalid_reason
    assert "c1" in row.invalid_reason and "d1" not in row.invalid_reason  # the producers' text; the cited director keeps his
    assert report.condition("uncited_removal").valid is False  # the prompt names the hidden producer too


def test_without_a_kg_the_descriptions_the_tools_showed_are_looked_for(tmp_path: Path) -> None:
    agent = create_agent(make_model(Spy()), _tools(), middleware=[graph_background], name="background-films")
    report = evaluate(agent, questions(2), out_dir=tmp_path, **OPTIONS)
    row = report.condition("text_only_isolation")
    assert not row.valid and "system prompt (c1" in row.invalid_reason, row.invalid_reason


def test_descriptions_read_through_filtered_tools_stay_valid(tmp_path: Path) -> None:
    agent = create_agent(make_model(Spy()), _tools(), name="described-films")
    for kg, out in ((films_kg(), tmp_path / "kg"), (None, tmp_path / "nokg")):
        report = evaluate(agent, questions(2), kg, out_dir=out, **OPTIONS)
        assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
        assert report.condition("text_only_isolation").accuracy == 1.0


def test_the_span_rule() -> None:
    spans = DescriptionSpans(films_kg(), {"x9": ["too short to tell apart"], "x8": ["A film."]})
    quoted = "Note: Producer 1 financed the whole project by selling a family VINEYARD near Bordeaux!"
    assert spans.leaked(quoted, {"c1"}) == {"c1"}  # case and punctuation do not matter
    assert spans.leaked(quoted, {"c2"}) == set()  # not withheld: no leak
    assert spans.leaked("the whole project by selling a family", {"c1", "c2"}) == set()  # 7 words
    # a span every producer's description holds is a leak only when all of them are withheld
    shared = "financed the whole project by selling a family vineyard near Bordeaux"  # 11 words: holds an indexed span
    assert spans.leaked(shared, {"c1"}) == set() and spans.leaked(shared, {"c1", "c2"}) == {"c1", "c2"}
    assert spans.leaked(quoted, {"c1"}, question=quoted) == set()  # what the question says is no leak
    # a description under 8 words is looked for whole from 3 words on (issue 28); a part of it, or 2 words, is ordinary text
    assert spans.leaked("Note: it is TOO short to tell apart.", {"x9"}) == {"x9"}
    assert spans.leaked("too short to tell", {"x9"}) == set() and spans.leaked("a film", {"x8"}) == set()
