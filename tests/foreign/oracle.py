"""The oracle of the ablation tests: the same agent, rerun on data with the run's entities really deleted.

``evaluate`` filters what the agent's tools return; whether that equals the
agent on a graph without those entities is what an oracle can say. Each
non-baseline run of an evaluation is rerun here by a *fresh* agent (so caches
of the evaluated one cannot help it), with the run's hidden and masked sets
deleted from the world's data (``world.REMOVED``), outside any evaluation:
no graphtrail filter is involved. A condition ``evaluate`` marks valid must
give, run for run, the oracle's answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import graphtrail
from graphtrail.evaluators import RunRecord
from graphtrail.evaluators.replay.runner import AgentRunner

from .world import REMOVED, WITHHELD


def load_records(out_dir: Path) -> list[RunRecord]:
    """The runs of an evaluation, the last record of each key winning (as resume reads them)."""
    found: dict[str, RunRecord] = {}
    for line in (out_dir / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = RunRecord.model_validate_json(line)
            found[record.key.as_str()] = record
    return list(found.values())


def oracle_answer(build: Callable[[], Any], question: str, hidden: list[str], masked: list[str],
                  text_blocked: list[str] = (), **trace: Any) -> str | None:  # type: ignore[assignment]
    """The answer of a fresh agent on data without ``hidden`` (with ``masked`` names masked and ``text_blocked``
    entities' text deleted); ``trace``: trace_agent's options."""
    token = REMOVED.set((frozenset(hidden), frozenset(masked)))
    withheld = WITHHELD.set(frozenset(text_blocked))
    try:
        agent = graphtrail.trace_agent(build(), **trace)  # built on the ablated data (a graph loaded at build time)
        with graphtrail.capture() as cap:
            output = asyncio.run(AgentRunner(agent)(question))
    finally:
        REMOVED.reset(token)
        WITHHELD.reset(withheld)
    if cap.last is not None:
        return cap.last.answer
    from graphtrail.evaluators.replay.runner import answer_from_output

    return answer_from_output(output)[0]


def check_against_oracle(report: Any, out_dir: Path, build: Callable[[], Any], **trace: Any) -> dict[str, int]:
    """Every run of every valid condition equals the oracle; returns the runs checked per condition."""
    checked: dict[str, int] = {}
    wrong = []
    for record in load_records(out_dir):
        condition = record.key.condition
        row = report.condition(condition)
        if condition == "baseline" or row is None or not row.valid:
            continue
        assert record.status != "error", record.error
        truth = oracle_answer(build, record.question, record.hidden, record.masked, record.text_blocked, **trace)
        checked[condition] = checked.get(condition, 0) + 1
        if truth != record.answer:
            wrong.append((condition, record.key.variant, record.hidden, record.masked, record.answer, truth))
    assert wrong == [], f"valid conditions that differ from the oracle: {wrong}"
    return checked
