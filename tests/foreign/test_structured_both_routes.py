"""Structured output (``create_agent(..., response_format=...)``) through both routes, against the oracle.

Issue 28 item 8 names structured output among the styles to prove, and "Done
when" asks for every style in tests/foreign/ through the factory route (every
condition equals the oracle) and through the filter route (no valid condition
differs from it). test_structured.py runs structured agents over the film world
through the filter route only; this one builds a structured agent from a dict of
records (tests/foreign/passages.py) so the factory route can rebuild it on
really-ablated data, and runs it through both. The answer and its sources come
from ``structured_response`` (a pydantic model: ``answer``, ``sources``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, ToolMessage
from pydantic import BaseModel

from graphtrail.evaluators import evaluate
from tests.fakes import tool_call

from . import passages as world
from .oracle import load_records
from .passages import answer_text, calls, human, record_tools, rounds, scripted, subject_of
from .test_factory_route import OPTIONS, oracle_answer


class Finding(BaseModel):
    answer: str
    sources: list[str]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _policy(messages: list[Any]) -> AIMessage:
    """Find the subject, read the colleague and the institute, answer through the schema's tool."""
    n, subject = rounds(messages), subject_of(human(messages))
    if n == 0:
        return calls(0, ("find_person", {"name": subject}))
    outs = [m for m in messages if isinstance(m, ToolMessage)]
    person = _json(str(outs[0].content)) or {}
    colleague_id = (person.get("colleagues") or [None])[0]
    institute_id = (person.get("works_at") or [None])[0]
    if n == 1 and colleague_id is not None:
        wanted = [("get_record", {"record_id": colleague_id})]
        wanted += [("get_record", {"record_id": institute_id})] if institute_id is not None else []
        return calls(1, *wanted)
    read = [_json(str(m.content)) or {} for m in outs[1:]]
    colleague = read[0] if read else {}
    institute = read[1].get("name") if len(read) > 1 else None
    text = answer_text(colleague.get("name"), colleague.get("description"), institute)
    sources = [i for i, shown in ((colleague_id, colleague), (institute_id, institute)) if i and shown]
    return AIMessage(content="", tool_calls=[tool_call("Finding", {"answer": text, "sources": sources}, "final")])


def structured_agent(data: Any) -> Any:
    """Tools over a dict of id -> record, the answer in ``structured_response``."""

    find_person, get_record = record_tools(data)

    return create_agent(scripted(_policy, "scripted-structured-records"), [find_person, get_record],
                        response_format=ToolStrategy(Finding), name="structured-records")


BASELINE = {"q1": "Otto Hahn (German chemist who discovered fission) at Kaiser Wilhelm Institute",
            "q2": "Pierre Curie (French physicist who studied magnetism) at Sorbonne"}


def _check(report: Any, out: Path, route: str) -> set[str]:
    records = load_records(out)
    assert {r.key.question_id: r.answer for r in records if r.key.condition == "baseline"} == BASELINE
    assert {q.question_id: q.citations for q in report.questions} == {"q1": ["p2", "i1"], "q2": ["p4", "i2"]}
    wrong, checked = [], set()
    for record in records:
        condition = record.key.condition
        if condition == "baseline" or not report.condition(condition).valid:
            continue
        assert record.route == route, record
        cut = (frozenset(record.hidden), frozenset(record.masked), frozenset(record.text_blocked))
        truth = oracle_answer(structured_agent, world.records(cut), record.question)
        checked.add(condition)
        if truth != record.answer:
            wrong.append((condition, record.key.variant, cut, record.answer, truth))
    assert wrong == [], f"valid conditions that differ from the oracle: {wrong}"
    return checked


def test_the_factory_route_equals_the_oracle_in_every_condition(tmp_path: Path) -> None:
    report = evaluate(structured_agent, world.questions(), graph=world.records(), out_dir=tmp_path, **OPTIONS)
    checked = _check(report, tmp_path, "factory")
    invalid = {r.condition: r.invalid_reason for r in report.conditions if not r.valid}
    assert invalid == {}, invalid
    assert checked >= {"cited_removal", "uncited_removal", "uncited_mask", "leave_one_out", "text_only_isolation"}
    assert {r.method for r in report.conditions if r.condition != "baseline"} == {"exact"}
    assert report.condition("cited_removal").accuracy == 0.0  # the ablation reached the answer


def test_the_filter_route_has_no_valid_condition_that_differs_from_the_oracle(tmp_path: Path) -> None:
    report = evaluate(structured_agent(world.records()), world.questions(), world.knowledge_graph(), out_dir=tmp_path,
                      **OPTIONS)
    checked = _check(report, tmp_path, "filter")
    invalid = {r.condition: r.invalid_reason for r in report.conditions if not r.valid}
    assert invalid == {}, invalid  # JSON records filtered by id: nothing correctly filtered is refused
    assert checked and {r.method for r in report.conditions if r.condition in checked} <= {"filtered", "exact"}
    assert report.condition("cited_removal").accuracy == 0.0
