"""Question files and answer checking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphtrail.agents import KnowledgeGraph, Question, QuestionsError, load_questions
from graphtrail.agents.answers import is_correct, normalize_answer, token_f1


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_jsonl_minimal_and_full_records(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qs.jsonl",
        [
            {"id": 1, "question": "What is the capital of Kenya?", "answers": ["Nairobi"]},
            "",
            {"id": "q2", "question": "Q?", "answers": ["x"], "answer_ids": ["E1"], "topic_ids": ["E2"], "hops": 2, "kind": "2-hop", "path": ["a", "b"]},
        ],
    )
    first, second = load_questions(path)
    assert first.id == "1" and first.answer_ids == [] and first.hops is None
    assert (second.answer_ids, second.topic_ids, second.hops, second.kind) == (["E1"], ["E2"], 2, "2-hop")
    assert second.metadata == {"path": ["a", "b"]}, "unknown keys are kept, not dropped"
    with pytest.raises(Exception):
        second.id = "changed"  # frozen


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"id": "a", "question": "Q?"', r"line 2 column \d+: invalid JSON"),
        ('{"id": "a", "question": "Q?"}', r"line 2: missing required field 'answers'"),
        ('{"id": "a", "question": "Q?", "answers": "Nairobi"}', r"line 2: field 'answers': .*expected a list of strings"),
        ('{"id": "a", "question": "Q?", "answers": []}', r"line 2: field 'answers': expected at least one answer"),
        ('{"id": "a", "question": "  ", "answers": ["x"]}', r"line 2: field 'question': .*must not be empty"),
        ('{"id": "a", "question": "Q?", "answers": ["x"], "hops": "two"}', r"line 2: field 'hops'"),
        ('["not", "an", "object"]', r"line 2: expected a JSON object"),
        ('{"id": "q0", "question": "Q?", "answers": ["x"]}', r"line 2: duplicate question id 'q0' \(first at line 1\)"),
    ],
)
def test_jsonl_errors_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", ['{"id": "q0", "question": "Q?", "answers": ["x"]}', line])
    with pytest.raises(QuestionsError, match=r"bad\.jsonl " + message):
        load_questions(path)


def test_metaqa_text_format(tmp_path: Path) -> None:
    path = tmp_path / "qa_test.txt"
    path.write_text("what movies did [Joe Thomas] appear in\tThe Inbetweeners Movie|The Inbetweeners 2\n")
    (q,) = load_questions(path)
    assert q.question == "what movies did Joe Thomas appear in"
    assert q.answers == ["The Inbetweeners Movie", "The Inbetweeners 2"]
    assert q.metadata == {"topic_names": ["Joe Thomas"]}
    path.write_text("no tab here\n")
    with pytest.raises(QuestionsError, match=r"qa_test\.txt line 1: expected 'question<TAB>answer1\|answer2'"):
        load_questions(path)


def test_missing_file_and_bundled_names(tmp_path: Path) -> None:
    with pytest.raises(QuestionsError, match="not a bundled question set"):
        load_questions(tmp_path / "none.jsonl")
    demo = load_questions("countries-demo")
    assert all(isinstance(q, Question) for q in demo)


# --------------------------------------------------------------------------- answers


@pytest.mark.parametrize(
    "text, normalized",
    [
        ("The Euro", "euro"),
        ("  Nairobi.  ", "nairobi"),
        ("São Tomé and Príncipe", "sao tome and principe"),
        ("Washington, D.C.", "washington d c"),
        ("an apple a day", "apple day"),
        (None, ""),
    ],
)
def test_normalize_answer(text, normalized) -> None:
    assert normalize_answer(text) == normalized


def kenya_question() -> Question:
    return Question(id="q", question="What language is spoken in Kenya?", answers=["English", "Swahili"], answer_ids=["E1", "E2"])


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("english", True),
        ("Swahili.", True),
        ("E2", True),
        ("[E:E1]", True),
        ("Swahili [E:E2]", True),
        ("English and Swahili", True),
        ("English, Swahili", True),
        ("English, French", False),  # hedging with a wrong item earns nothing
        ("[E:E1] [E:E9]", False),
        ("French", False),
        ("", False),
        (None, False),
        ("They speak English there", False),  # only with contains=True
    ],
)
def test_is_correct(answer, expected) -> None:
    assert is_correct(answer, kenya_question()) is expected


def test_is_correct_accepts_kg_aliases_of_gold_ids() -> None:
    kg = KnowledgeGraph()
    kg.add_entity("E1", "English", "language", aliases=["en"])
    kg.add_entity("E2", "Swahili", "language", aliases=["Kiswahili", "sw"])
    q = kenya_question()
    assert not is_correct("Kiswahili", q)
    assert is_correct("Kiswahili", q, kg)
    assert is_correct("SW", q, kg)


def test_is_correct_yes_no_and_lenient_contains() -> None:
    yes = Question(id="c", question="Do Kenya and Uganda share a border?", answers=["yes"])
    assert is_correct("Yes, they do.", yes)
    assert is_correct("YES", yes)
    assert not is_correct("No.", yes)
    assert not is_correct("Nairobi", yes)
    assert is_correct("They speak English there", kenya_question(), contains=True)
    assert not is_correct("They speak French there", kenya_question(), contains=True)
    assert is_correct("nairobi", ["Nairobi"]), "a plain list of golds works too"


def test_token_f1() -> None:
    assert token_f1("Kenyan Shilling", ["Kenyan Shilling", "KES"]) == 1.0
    assert token_f1("the shilling", ["Kenyan Shilling"]) == pytest.approx(2 / 3)
    assert token_f1("Euro", ["Kenyan Shilling"]) == 0.0
    assert token_f1(None, ["x"]) == 0.0
    assert token_f1("Nairobi", Question(id="q", question="?", answers=["Nairobi"])) == 1.0
