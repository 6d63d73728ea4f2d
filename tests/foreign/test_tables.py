"""Tools that answer with tables, and a tool whose outputs are not read as entities.

- A Markdown table with an id column (read by the tracer) and
  ``DataFrame.to_string()`` with names only (read by the evaluator with the KG's
  names): every valid condition equals the oracle (the agent rerun on
  really-ablated data), and source support is what the model was shown.
- The filter cuts exactly the row holding a hidden entity, keeps the header and
  the separator, and masks names inside cells; the over-filtering check passes
  on a right cut and catches a row that also held a kept entity.
- A tool that returned prose naming nothing the evaluation knows, beside tools
  that revealed entities, is named in report.md, report.html and results.json.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from graphtrail.evaluators import evaluate
from graphtrail.evaluators.replay.filtered.filters import filter_tool_output
from graphtrail.evaluators.replay.filtered.overfilter import lost_entities
from graphtrail.kg.views import GraphFilter
from graphtrail.tracer.extract import generic_extract
from graphtrail.tracer.tables import find_tables

from .oracle import check_against_oracle, load_records
from .tables import film_kg, film_row_agent, frame_agent, markdown_agent, trivia_agent
from .test_oracle import CONDITIONS, OPTIONS
from .world import questions

_RUNS: dict[str, tuple[Any, Path]] = {}


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One evaluation per agent style, shared by the tests of this module."""

    def get(name: str) -> tuple[Any, Path]:
        if name not in _RUNS:
            build, kg = {"markdown": (markdown_agent, None), "frame": (frame_agent, film_kg()),
                         "trivia": (trivia_agent, None)}[name]
            out = tmp_path_factory.mktemp(name)
            _RUNS[name] = (evaluate(build(), questions(2), kg, out_dir=out, **OPTIONS), out)
        return _RUNS[name]

    yield get
    _RUNS.clear()


# ---------------------------------------------------------------- the oracle


@pytest.mark.parametrize("name,build", [("markdown", markdown_agent), ("frame", frame_agent)], ids=["markdown_table", "dataframe_to_string"])
def test_table_agents_equal_the_oracle(evaluated: Any, name: str, build: Any) -> None:
    report, out = evaluated(name)
    assert report.condition("baseline").accuracy == 1.0
    assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
    assert report.condition("cited_removal").accuracy == 0.0  # the director's row is gone: the agent does not know
    assert set(check_against_oracle(report, out, build)) == set(CONDITIONS)
    for record in load_records(out):  # the table's entities are the run's: the director and the producer were visited
        if record.key.condition == "baseline":
            i = record.key.question_id[1:]
            assert {f"m{i}", f"d{i}", f"c{i}"} <= set(record.trajectory.visited)
            assert record.citations == [f"m{i}", f"d{i}"]  # read by name for the DataFrame agent, markers for Markdown
    assert report.unread_tools == []


# ---------------------------------------------------------------- source support is what the model was shown


def _shown_ids(record: Any) -> set[str]:
    """By hand, from the tool outputs the model received: ids in JSON rows and in a Markdown table's first column."""
    shown: set[str] = set()
    for step in record.trajectory.steps:
        text = step.output or ""
        if text.startswith("["):
            shown |= {row["id"] for row in json.loads(text)}
        shown |= set(re.findall(r"^\| (\w+) \|", text, re.MULTILINE)) - {"id"}
    return shown


def test_source_support_of_a_markdown_agent_is_what_its_tools_showed(evaluated: Any) -> None:
    report, out = evaluated("markdown")
    bases = [r for r in load_records(out) if r.key.condition == "baseline" and r.key.trial == 0]
    gold = {r.key.question_id: f"d{r.key.question_id[1:]}" for r in bases}
    supported = [gold[r.key.question_id] in r.citations and gold[r.key.question_id] in _shown_ids(r) for r in bases]
    grounded = [c in _shown_ids(r) for r in bases for c in r.citations]
    assert report.scores.source_support == sum(supported) / len(supported) == 1.0
    assert report.scores.grounded_citations == sum(grounded) / len(grounded) == 1.0
    assert "unsupported" not in report.scores.support_how  # the old "Source support 0% (unsupported: 2)"
    md = (out / "report.md").read_text()
    assert "| Source support | 100% of 2 answers | how: cited: 2 |" in md


# ---------------------------------------------------------------- the filter cuts the row


TABLE = "Crew of m1:\n| id | name | role |\n|---|---|---|\n| d1 | Director 1 | director |\n| c1 | Producer 1 | producer |\n"
NAMES = {"m1": "Film 1", "d1": "Director 1", "c1": "Producer 1"}


def test_a_markdown_row_naming_a_hidden_entity_goes_and_the_frame_stays() -> None:
    hidden = GraphFilter(hidden=frozenset({"d1"}))
    out = filter_tool_output("crew_table", TABLE, hidden, names=NAMES)
    assert out == "Crew of m1:\n| id | name | role |\n|---|---|---|\n| c1 | Producer 1 | producer |\n"
    assert lost_entities(TABLE, out, NAMES, hidden) == []
    by_name = filter_tool_output("crew_table", TABLE.replace("| d1 ", "| x "), hidden, names=NAMES)  # no id: the name says it
    assert "Director 1" not in by_name and "| c1 | Producer 1 | producer |" in by_name
    masked = filter_tool_output("crew_table", TABLE, GraphFilter(masked=frozenset({"c1"})), names=NAMES)
    assert masked == TABLE.replace("| Producer 1 |", "| [masked entity] c1 |")


def test_a_row_that_also_holds_a_kept_entity_is_an_over_filter() -> None:
    table = "| film | director |\n|---|---|\n| Film 1 | Director 1 |\n| Film 2 | Director 2 |\n"
    names = {"m1": "Film 1", "d1": "Director 1", "m2": "Film 2", "d2": "Director 2"}
    hidden = GraphFilter(hidden=frozenset({"d1"}))
    out = filter_tool_output("films", table, hidden, names=names)
    assert out == "| film | director |\n|---|---|\n| Film 2 | Director 2 |\n"
    assert lost_entities(table, out, names, hidden) == ["m1"]  # the film went with its director's row: invalid, not guessed


def test_a_fixed_width_line_naming_a_hidden_entity_goes_and_names_are_masked_in_cells() -> None:
    people = [{"name": "Director 1", "role": "director"}, {"name": "Producer 1", "role": "producer"},
              {"name": "Zoë Müller", "role": "writer"}]
    text = pd.DataFrame(people).to_string()
    lines = text.splitlines()
    names = {"d1": "Director 1", "c1": "Producer 1", "w1": "Zoe Muller"}  # Unicode-normalised: Zoë Müller is w1
    hidden = GraphFilter(hidden=frozenset({"w1"}))
    out = filter_tool_output("crew_frame", text, hidden, names=names)
    assert out == "\n".join(lines[:3]) + "\n"  # the last row went; the line before keeps its end
    assert lost_entities(text, out, names, hidden) == []
    masked = filter_tool_output("crew_frame", text, GraphFilter(masked=frozenset({"d1"})), names=names)
    assert masked.splitlines()[1] == lines[1].replace("Director 1", "[masked entity] d1")
    assert masked.splitlines()[2:] == lines[2:]


# ---------------------------------------------------------------- the tracer reads tables with an id column


def test_the_tracer_reads_ids_from_markdown_and_dataframe_tables_and_not_from_prose() -> None:
    frame = pd.DataFrame([{"id": "d1", "name": "Director 1"}, {"id": "c12", "name": "Producer Long 1"}])
    for text in (TABLE, frame.to_string(), frame.to_string(index=False)):
        found = generic_extract(text)
        assert [(e.id, e.name) for e in found.entities][:2] in ([("d1", "Director 1"), ("c1", "Producer 1")],
                                                               [("d1", "Director 1"), ("c12", "Producer Long 1")]), text
    prose = "Film 1 was directed by Director 1 in\nthe year that Film 2 was made too."
    assert find_tables(prose) == [] and generic_extract(prose).entities == []


def test_the_tracer_reads_ids_from_a_frame_too_wide_for_one_block() -> None:
    # ``str(df)`` of a wide frame comes in blocks of columns whose headers end in " \\"
    frame = pd.DataFrame([{"id": "d1", "name": "Director 1", "born": "1970"}, {"id": "c12", "name": "Producer Long 1", "born": "1980"}])
    text = frame.to_string(line_width=30)
    assert "\\\n" in text and "\n\n" in text  # really wrapped into blocks
    assert [(e.id, e.name) for e in generic_extract(text).entities] == [("d1", "Director 1"), ("c12", "Producer Long 1")]


# ---------------------------------------------------------------- a tool whose outputs were not read


def test_a_tool_that_revealed_nothing_while_others_did_is_named(evaluated: Any) -> None:
    report, out = evaluated("trivia")
    assert report.unread_tools == ["film_trivia"]
    assert all(row.valid for row in report.conditions)  # named, not invalid: what was read was filtered right
    sentence = "Influence not measured for tool(s) 'film_trivia'"
    assert sentence in (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    assert 'id="unread-tools"' in html and "Influence not measured for tool(s) &#x27;film_trivia&#x27;" in html
    assert json.loads((out / "results.json").read_text())["unread_tools"] == ["film_trivia"]


def test_a_names_only_table_without_a_kg_is_named_as_unread(tmp_path: Path) -> None:
    """No KG, and no other tool revealed the crew's names: the DataFrame's cells cannot be read, and the report says so."""
    report = evaluate(frame_agent(), questions(1), out_dir=tmp_path, **{**OPTIONS, "conditions": ["uncited_removal"]})
    assert report.unread_tools == ["crew_frame"]
    assert "Influence not measured for tool(s) 'crew_frame'" in (tmp_path / "report.md").read_text()


def test_table_cells_are_read_by_the_names_the_baselines_revealed() -> None:
    """No KG: a name another tool revealed (with its id) is read in a table's cells; a name two entities bear is not."""
    from graphtrail.evaluators.replay.filtered.leaks import EntityNames
    from graphtrail.evaluators.replay.tabular import read_table_entities
    from graphtrail.tracer.trajectory import Entity, Step, Trajectory

    names = EntityNames(revealed={"m1": ["Film 1"], "d1": ["Director 1"], "x1": ["Twin"], "x2": ["Twin"]})
    table = "| film | director | note |\n|---|---|---|\n| Film 1 | Director 1 | Twin |\n"
    traj = Trajectory(run_id="r", answer="Film 1 was directed by Director 1.", citations=["m1"], steps=[
        Step(index=1, tool="find_film", entities=[Entity(id="m1", name="Film 1")], output='[{"id": "m1", "name": "Film 1"}]'),
        Step(index=2, tool="films_table", output=table)])
    read = read_table_entities(traj, names, "names")
    assert read.steps[1].entity_ids == ["m1", "d1"] and read.steps[1].entities[1].name == "Director 1"
    assert read.citations == ["m1", "d1"]  # read by name again, now that the table's director is known
    assert read.citation_sources["d1"].steps == [2]
    marked = traj.model_copy(update={"citations": ["d1"]})  # not what names gave: markers, which stand as given
    assert read_table_entities(marked, names, "names").citations == ["d1"]
    assert read_table_entities(traj, names, "markers").citations == ["m1"]
    assert read_table_entities(traj, EntityNames(), "names") is traj  # nothing known: nothing read, nothing changed


def test_a_row_holding_a_kept_entity_makes_the_condition_invalid_naming_the_tool(tmp_path: Path) -> None:
    """Hiding the director alone cannot be cut out of the film's row: invalid, the tool named; the rest equals the oracle."""
    report = evaluate(film_row_agent(), questions(2), film_kg(), out_dir=tmp_path, **OPTIONS)
    assert report.condition("baseline").accuracy == 1.0
    loo = report.condition("leave_one_out")
    assert not loo.valid and "the filter could not cut out only the hidden entities from tool 'film_table'" in loo.invalid_reason
    assert report.condition("cited_removal").valid and report.condition("cited_removal").accuracy == 0.0
    checked = check_against_oracle(report, tmp_path, film_row_agent)
    assert {"cited_removal", "random_removal", "full_isolation"} <= set(checked) and "leave_one_out" not in checked
