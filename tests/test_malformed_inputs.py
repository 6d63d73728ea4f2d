"""Malformed graph files and questions: a typed error naming the file (and row, column, question), exit 2, one line.

GraphRAG parquet of the wrong shape (lists, numbers, infinities, bytes where
text or ids belong, a missing community id), GraphML with an empty node id,
and ``evaluate()`` answers of any type.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphtrail.agents import KGError, create_graphrag_agent, load_kg
from graphtrail.cli import main
from graphtrail.evaluators import EvaluationError, evaluate

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def _tables() -> dict[str, Any]:
    return {
        "entities": pd.DataFrame(
            {"id": ["e1", "e2"], "title": ["A", "B"], "type": ["x", "y"], "description": ["d", "e"], "text_unit_ids": [["t1"], ["t1"]]}
        ),
        "relationships": pd.DataFrame({"id": ["r1"], "source": ["A"], "target": ["B"], "description": ["rel"]}),
        "text_units": pd.DataFrame({"id": ["t1"], "text": ["A and B"], "entity_ids": [["e1", "e2"]]}),
        "communities": pd.DataFrame(
            {"id": ["c0"], "community": [0], "level": [1], "title": ["C"], "entity_ids": [["e1", "e2"]], "relationship_ids": [["r1"]]}
        ),
    }


def _write(folder: Path, table: str | None = None, change: Callable[[Any], Any] | None = None) -> Path:
    folder.mkdir()
    for name, frame in _tables().items():
        (change(frame) if name == table and change else frame).to_parquet(folder / f"{name}.parquet")
    return folder


#: (table, change, what the one line must say)
BAD_PARQUET = {
    "level_word": ("communities", lambda d: d.assign(level=["high"]), "communities.parquet row 1, column 'level': expected a whole number, found str 'high'"),
    "level_infinite": ("communities", lambda d: d.assign(level=[float("inf")]), "column 'level': expected a whole number, found infinity"),
    "level_fraction": ("communities", lambda d: d.assign(level=[1.5]), "column 'level': expected a whole number"),
    "community_null_no_id": ("communities", lambda d: d.drop(columns=["id"]).assign(community=[None]), "communities.parquet row 1, column 'community': missing"),
    "community_list": ("communities", lambda d: d.assign(community=[[1]]), "column 'community': expected text, found a list"),
    "members_number": ("communities", lambda d: d.assign(entity_ids=[7]), "column 'entity_ids': expected a list of ids, found int"),
    "members_mapping": ("communities", lambda d: d.assign(entity_ids=[{"a": 1}]), "column 'entity_ids': expected a list of ids, found a mapping"),
    "unit_ids_number": ("entities", lambda d: d.assign(text_unit_ids=[1, 2]), "entities.parquet row 1, column 'text_unit_ids': expected a list of ids"),
    "title_list": ("entities", lambda d: d.assign(title=[["A"], ["B"]]), "entities.parquet row 1, column 'title': expected text, found a list"),
    "title_number": ("entities", lambda d: d.assign(title=[1.5, 2.5]), "column 'title': expected text, found float"),
    "title_bad_bytes": ("entities", lambda d: d.assign(title=[b"\xff", b"B"]), "column 'title': bytes that are not UTF-8 text"),
    "description_infinite": ("entities", lambda d: d.assign(description=[float("inf"), 1.0]), "column 'description': expected text, found infinity"),
    "entity_id_missing": ("entities", lambda d: d.assign(id=[None, "e2"]), "entities.parquet row 1, column 'id': missing"),
    "source_list": ("relationships", lambda d: d.assign(source=[["A"]]), "relationships.parquet row 1, column 'source': expected text, found a list"),
    "unit_text_number": ("text_units", lambda d: d.assign(text=[3.5]), "text_units.parquet row 1, column 'text': expected text, found float"),
    "unit_id_missing": ("text_units", lambda d: d.assign(id=[None]), "text_units.parquet row 1, column 'id': missing"),
    "unit_members_number": ("text_units", lambda d: d.assign(entity_ids=[5]), "column 'entity_ids': expected a list of ids, found int"),
}


@pytest.mark.parametrize("case", sorted(BAD_PARQUET))
def test_graphrag_parquet_of_a_wrong_shape_is_one_line_exit_2(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table, change, expected = BAD_PARQUET[case]
    folder = _write(tmp_path / case, table, change)
    with pytest.raises(KGError) as info:
        load_kg(folder)
    assert expected in str(info.value)
    assert main(["kg", "info", str(folder)]) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err and "internal error" not in err


def test_graphrag_values_keep_their_meaning(tmp_path: Path) -> None:
    """UTF-8 bytes are text (not ``"b'A'"``), whole-number levels and numeric community ids are read as such."""
    folder = _write(
        tmp_path / "typed", "entities", lambda d: d.assign(title=[b"A", b"B"], description=[None, "\u00e9".encode()])
    )
    (folder / "communities.parquet").unlink()
    _tables()["communities"].assign(level=[2.0], community=[3.0]).to_parquet(folder / "communities.parquet")
    kg = load_kg(folder)
    assert kg.entity("e1").name == "A" and kg.entity("e2").name == "B"
    assert kg.entity("e1").description == "" and kg.entity("e2").description == "\u00e9"
    assert [r.source for r in kg.relations()] == ["e1"]
    assert kg.communities["3"].level == 2 and kg.communities["3"].entity_ids == ("e1", "e2")
    assert kg.text_unit("t1").entity_ids == ("e1", "e2")


def test_graphml_with_an_empty_node_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "g.graphml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
        '<graph edgedefault="directed"><node id=""/><node id="b"/><edge source="" target="b"/></graph></graphml>'
    )
    with pytest.raises(KGError, match="g.graphml: a <node> with an empty id"):
        load_kg(path)
    assert main(["kg", "info", str(path)]) == 2
    err = capsys.readouterr().err
    assert "g.graphml" in err and "empty id" in err and len(err.strip().splitlines()) == 1


BAD_ANSWERS = {
    "number": (42, "field 'answers': expected a list of strings, got int"),
    "string": ("Nairobi", "got a single string"),
    "bytes": (b"Nairobi", "got bytes"),
    "mapping": ({"a": 1}, "got dict"),
    "numbers": ([1, 2], "field 'answers' item 0: expected a string, got int"),
    "nested": ([["x"]], "item 0: expected a string, got list"),
    "none_item": (["Nairobi", None], "item 1: expected a string, got NoneType"),
}


@pytest.fixture(scope="module")
def agent_and_kg() -> tuple[Any, Any]:
    kg = load_kg("countries")
    return create_graphrag_agent("offline", kg), kg


@pytest.mark.parametrize("case", sorted(BAD_ANSWERS))
def test_evaluate_refuses_answers_of_a_wrong_type(case: str, agent_and_kg: tuple[Any, Any], tmp_path: Path) -> None:
    answers, expected = BAD_ANSWERS[case]
    agent, kg = agent_and_kg
    question = {"id": "q1", "question": "What is the capital of Kenya?", "answers": answers}
    with pytest.raises(EvaluationError) as info:
        evaluate(agent, [question], kg, conditions=[], out_dir=tmp_path / "out", progress=False)
    assert "question #0 ('q1')" in str(info.value) and expected in str(info.value)
    assert not (tmp_path / "out").exists()  # refused before anything ran or was written


@pytest.mark.parametrize("answers", ["42", '"Nairobi"', "[1]", '{"a": 1}', "[null]"])
def test_cli_questions_with_answers_of_a_wrong_type_exit_2(answers: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "Capital of Kenya?"})[:-1] + f', "answers": {answers}}}\n')
    assert main(["eval", "--kg", "countries", "-q", str(questions), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "q.jsonl line 1: field 'answers" in err and len(err.strip().splitlines()) == 1
