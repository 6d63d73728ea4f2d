"""Agents that answer with ``create_agent(..., response_format=...)``: the answer is in ``structured_response``.

The answer and its sources are read from the structured response (a pydantic
model, a dataclass or a TypedDict) under the fields users name (``answer``;
``sources``/``citations``/``evidence``), or under ``answer_field=`` /
``citations_field=``. Every valid condition equals the oracle. An evaluation
whose baseline runs gave no answer graphtrail could read stops with one line
saying what to pass, and reports no condition.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel
from typing_extensions import TypedDict

import graphtrail
from graphtrail.evaluators import EvaluationError, evaluate
from tests.fakes import ScriptedChatModel, tool_call

from .oracle import check_against_oracle
from .test_oracle import CONDITIONS, OPTIONS
from .world import Spy, dict_tools, make_model, questions


class FilmAnswer(BaseModel):
    answer: str
    sources: list[str]


@dataclasses.dataclass
class FilmFinding:
    answer: str
    evidence: list[dict[str, Any]]  # records, not bare ids: {"id": ..., "why": ...}


class FilmReply(TypedDict):
    answer: str
    citations: list[str]


class FilmVerdict(BaseModel):
    """Fields graphtrail cannot guess: ``answer_field="director"``, ``citations_field="film_ids"``."""

    director: str
    film_ids: list[str]


def _structured_policy(schema: type, fields: tuple[str, str]) -> Any:
    """The world's model, answering through the schema's tool (LangChain's ToolStrategy) instead of in text."""
    base = make_model(Spy())
    answer_key, sources_key = fields

    def policy(messages: list[BaseMessage]) -> AIMessage:
        msg = base.policy(messages)
        if msg.tool_calls:
            return msg
        ids = re.findall(r"\[E:([^\]]+)\]", str(msg.content))
        text = re.sub(r"\s*\[E:[^\]]+\]", "", str(msg.content)).strip()
        sources: list[Any] = [{"id": i, "why": "read in a tool result"} for i in ids] if schema is FilmFinding else ids
        return AIMessage(content="", tool_calls=[tool_call(schema.__name__, {answer_key: text, sources_key: sources}, "final")])

    return policy


def _agent(schema: type, fields: tuple[str, str], data: Any = None) -> Any:
    """``data``: world.dict_tools' (the factory route builds the agent from it)."""
    model = ScriptedChatModel(policy=_structured_policy(schema, fields), model_name="scripted-structured")
    return create_agent(model, dict_tools(data=data), response_format=ToolStrategy(schema), name="structured-films")


STYLES = {
    "pydantic": (FilmAnswer, ("answer", "sources")),
    "dataclass": (FilmFinding, ("answer", "evidence")),
    "typeddict": (FilmReply, ("answer", "citations")),
}


@pytest.mark.parametrize("style", list(STYLES))
def test_structured_response_is_read_and_valid_conditions_equal_the_oracle(style: str, tmp_path: Path) -> None:
    schema, fields = STYLES[style]

    def build() -> Any:
        return _agent(schema, fields)

    report = evaluate(build(), questions(2), out_dir=tmp_path, **OPTIONS)
    base = report.condition("baseline")
    assert base.accuracy == 1.0 and base.valid
    assert {q.question_id: q.citations for q in report.questions} == {"q1": ["d1", "m1"], "q2": ["d2", "m2"]}
    assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
    assert report.condition("cited_removal").accuracy == 0.0
    assert set(check_against_oracle(report, tmp_path, build)) == set(CONDITIONS)


def test_the_tracer_reads_a_structured_response() -> None:
    with graphtrail.capture() as cap:
        graphtrail.trace_agent(_agent(FilmAnswer, ("answer", "sources"))).invoke({"messages": [("user", "Who directed Film 1?")]})
    assert (cap.last.answer, cap.last.citations, cap.last.status) == ("Director 1", ["d1", "m1"], "ok")


def test_fields_it_cannot_guess_stop_the_evaluation_with_what_to_pass(tmp_path: Path) -> None:
    agent = _agent(FilmVerdict, ("director", "film_ids"))
    with pytest.raises(EvaluationError) as info:
        evaluate(agent, questions(2), out_dir=tmp_path / "unread", **OPTIONS)
    text = str(info.value)
    assert "no baseline run produced a readable answer" in text and "answer_field=" in text
    assert "director, film_ids" in text  # the structured response's own fields, to pick from
    assert "\n" not in text and "cited no entities" not in text
    assert not (tmp_path / "unread" / "results.json").exists()  # no condition is reported

    report = evaluate(agent, questions(2), out_dir=tmp_path / "named", answer_field="director", citations_field="film_ids", **OPTIONS)
    assert report.condition("baseline").accuracy == 1.0
    assert report.questions[0].citations == ["d1", "m1"]
    assert all(row.valid for row in report.conditions), [(r.condition, r.invalid_reason) for r in report.conditions]
    check_against_oracle(report, tmp_path / "named", lambda: _agent(FilmVerdict, ("director", "film_ids")),
                         answer_field="director", citations_field="film_ids")


def verdict_agent(kg: Any = None) -> Any:
    """``graphtrail eval --agent tests.foreign.test_structured:verdict_agent`` (no KG needed)."""
    return _agent(FilmVerdict, ("director", "film_ids"))


def test_cli_exits_2_with_one_line_and_reads_the_named_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphtrail.cli import main

    qfile = tmp_path / "films.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in questions(1)), encoding="utf-8")
    base = ["eval", "-q", str(qfile), "--agent", "tests.foreign.test_structured:verdict_agent",
            "-c", "baseline,cited_removal", "--trials", "1", "--no-reuse"]
    code = main([*base, "--out", str(tmp_path / "unread")])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error" in line]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert "no baseline run produced a readable answer" in errors[0] and "--answer-field" in errors[0]

    code = main([*base, "--out", str(tmp_path / "named"), "--answer-field", "director", "--citations-field", "film_ids"])
    assert code == 0, capsys.readouterr().err
    saved = json.loads((tmp_path / "named" / "results.json").read_text())
    assert {c["condition"]: c["accuracy"] for c in saved["conditions"]} == {"baseline": 1.0, "cited_removal": 0.0}


def test_sources_given_by_name_are_the_entities_the_run_saw() -> None:
    base = make_model(Spy())

    def policy(messages: list[BaseMessage]) -> AIMessage:
        msg = base.policy(messages)
        if msg.tool_calls:
            return msg
        text = re.sub(r"\s*\[E:[^\]]+\]", "", str(msg.content)).strip()
        return AIMessage(content="", tool_calls=[tool_call("FilmAnswer", {"answer": text, "sources": [text, "Film 1", "nowhere"]}, "f")])

    agent = create_agent(ScriptedChatModel(policy=policy), dict_tools(), response_format=ToolStrategy(FilmAnswer))
    with graphtrail.capture() as cap:
        graphtrail.trace_agent(agent).invoke({"messages": [("user", "Who directed Film 1?")]})
    assert cap.last.citations == ["d1", "m1", "nowhere"]  # names the tools showed become ids; the rest stays as given
