"""Answers in prose: who decides ``correct``, and a report for an agent that cites nothing (issue 9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphtrail.evaluators import EvaluationError, RunKey, RunRecord, build_report, evaluate, load_report
from graphtrail.evaluators.scoring.judges import apply_judges, cover_exact_match, exact_match, token_f1_score
from graphtrail.evaluators.records import NO_CITATIONS
from graphtrail.tracer import Trajectory

Q = {"id": "q1", "question": "Who directed Inception?", "answers": ["Christopher Nolan", "Nolan"]}
YES = {"id": "q2", "question": "Is Inception a film?", "answers": ["yes"]}


@pytest.mark.parametrize(
    "answer, cover, exact",
    [
        ("Christopher Nolan", True, True),
        ("The answer is Christopher Nolan.", True, False),
        ("It was directed by christopher nolan!", True, False),
        ("Nolan.", True, True),
        ("Christopher Nolans", False, False),  # whole words only
        ("Steven Spielberg", False, False),
        ("", False, False),
        (None, False, False),
    ],
)
def test_cover_exact_match_beside_exact_match(answer, cover, exact):
    assert cover_exact_match(answer, Q) is cover
    assert exact_match(answer, Q) is exact


def test_yes_no_and_no_gold():
    assert cover_exact_match("Yes, it is a 2010 film.", YES) is True
    assert cover_exact_match("No.", YES) is False
    assert cover_exact_match("Nolan", {"id": "x", "question": "?", "answers": []}) is None


def _rec(condition: str, answer: str | None, citations: list[str], qid: str = "q1", variant: str = "", **kw) -> RunRecord:
    traj = Trajectory(run_id=f"{qid}-{condition}-{variant}", answer=answer, citations=citations)
    return RunRecord(key=RunKey(agent="a", model="m", question_id=qid, condition=condition, variant=variant),
                     question=Q["question"], answer=answer, citations=citations, trajectory=traj, **kw)


def test_apply_judges_fills_correct_with_cover_and_exact_separately():
    (rec,) = apply_judges([_rec("baseline", "The answer is Christopher Nolan.", [])], [Q])
    assert rec.correct is True and rec.exact is False and rec.f1 == pytest.approx(token_f1_score(rec.answer, Q))
    # a judge named by correctness= still decides
    (rec,) = apply_judges([_rec("baseline", "The answer is Christopher Nolan.", [])], [Q],
                          judges=[lambda a, q, c: False], correctness="<lambda>")
    assert rec.correct is False and rec.exact is False


def test_report_of_an_agent_that_cites_nothing(tmp_path: Path):
    records = [
        _rec("baseline", "The answer is Christopher Nolan.", []),
        _rec("cited_removal", "The answer is Christopher Nolan.", []),
        _rec("uncited_removal", "I don't know.", [], hidden=["p1"]),
    ]
    report = build_report(records, [Q], meta={"not_applicable": {"full_isolation": NO_CITATIONS}}, n_boot=50)
    assert report.cited_nothing
    rows = {r.condition: r for r in report.conditions}
    # cited_removal ran (hand-built records) but means nothing; full_isolation did not run at all
    for name in ("cited_removal", "full_isolation"):
        assert rows[name].not_applicable == NO_CITATIONS
        assert rows[name].accuracy is None and rows[name].delta is None and rows[name].mcnemar_p is None
    assert rows["uncited_removal"].not_applicable is None and rows["uncited_removal"].accuracy == 0.0
    assert report.scores.accuracy["cited_removal"] is None
    assert "cited_removal" not in report.questions[0].accuracy
    report.write(tmp_path)
    again = load_report(tmp_path / "results.json")
    assert again.cited_nothing and again.condition("cited_removal").not_applicable == NO_CITATIONS
    md = (tmp_path / "report.md").read_text()
    assert md.index("The agent cited no entities") < md.index("## Accuracy per condition")
    assert "Correct means cover exact match" in md


def test_report_of_an_agent_that_cites_sometimes_gets_a_note():
    q2 = {**Q, "id": "q2"}
    records = [
        _rec("baseline", "The answer is Christopher Nolan.", ["p1"]),
        _rec("cited_removal", "I don't know.", [], hidden=["p1"]),
        _rec("baseline", "Nolan", [], qid="q2"),
        _rec("cited_removal", "Nolan", [], qid="q2"),
    ]
    report = build_report(records, [Q, q2], n_boot=50)
    assert not report.cited_nothing and report.condition("cited_removal").not_applicable is None
    assert any("1 of 2 questions' baseline runs cited no entity (q2)" in n for n in report.stats.notes)


def test_report_names_the_deciding_judge():
    records = [_rec("baseline", "Christopher Nolan", ["p1"])]
    assert "cover exact match" in build_report(records, [Q], n_boot=10).to_dict()["correctness"].replace("_", " ")
    report = build_report(records, [Q], n_boot=10, judges=[lambda a, q, c: True], correctness="<lambda>")
    assert report.correctness == "<lambda>"
    from graphtrail.evaluators.report.render import judge_line

    assert "the judge '<lambda>'" in judge_line(report)
    report = build_report(records, [Q], n_boot=10, meta={"correctness": "llm_judge"})
    assert "LLM judge" in judge_line(report)


def test_evaluate_rejects_a_bad_citations_option():
    with pytest.raises(EvaluationError, match="'markers', 'names' or a callable"):
        evaluate(lambda q: "x", [Q], citations="ids", progress=False)


def test_evaluate_citations_option_keeps_the_users_tracing_options():
    import graphtrail
    from graphtrail.evaluators.replay.agent import traced_agent
    from langgraph.graph import END, START, MessagesState, StateGraph

    graph = StateGraph(MessagesState)
    graph.add_node("n", lambda s: {"messages": []})
    graph.add_edge(START, "n")
    graph.add_edge("n", END)
    traced = graphtrail.trace_agent(graph.compile(), name="mine", content="ids-only")
    again = traced_agent(traced, "markers")
    assert again.graphtrail_handler.options.citations == "markers"
    assert again.graphtrail_handler.options.name == "mine" and again.graphtrail_handler.options.content == "ids-only"
    assert traced_agent(traced, None) is traced

    @graphtrail.trace_agent
    def fn(q):
        return q

    with pytest.raises(EvaluationError, match="pass citations= to trace_agent"):
        traced_agent(fn, "markers")


def test_cli_rejects_a_bad_citations_mode_in_one_line(tmp_path: Path):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "graphtrail", "eval", "--kg", "countries", "-q", "countries-demo", "--out",
         str(tmp_path / "out"), "--citations", "ids"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert "--citations 'ids' is not accepted; choose from: names, markers" in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()
