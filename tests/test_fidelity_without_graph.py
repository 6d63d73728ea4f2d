"""Own agent, no --kg, no topic ids: fidelity says what was not given and what to pass (issue 30, item 6).

The report used to show "Trajectory fidelity – over 0 questions" and each question "the answer
is not reachable from a topic entity", when the cause was that neither a graph nor the
questions' topic ids were given.
"""

from __future__ import annotations

from graphtrail.evaluators.scoring.metrics import NO_TOPIC_NOR_KG, trajectory_fidelity
from graphtrail.tracer import Entity, Step, Trajectory


def _run(answer: str) -> Trajectory:
    steps = [Step(index=1, tool="search", entities=[Entity(id="A", name="Alpha")]),
             Step(index=2, tool="search", entities=[Entity(id="B", name="Beta")])]  # no edge joins A and B
    return Trajectory(run_id="r", question="Which?", answer=answer, citations=["B"], steps=steps)


def test_no_graph_and_no_topic_ids_names_the_cause_and_the_fix() -> None:
    fid = trajectory_fidelity(_run("Beta"), question={"id": "q", "question": "Which?", "answers": ["Beta"]}, kg=None)
    assert fid.recall is None and fid.reason == NO_TOPIC_NOR_KG
    assert "--kg" in fid.reason and "topic_ids" in fid.reason


def test_with_topic_ids_the_path_reason_stays_the_paths() -> None:
    question = {"id": "q", "question": "Which?", "answers": ["Beta"], "topic_ids": ["A"]}
    fid = trajectory_fidelity(_run("Beta"), question=question, kg=None)
    assert fid.recall is None and fid.reason == "the answer is not reachable from a topic entity"
