"""Issue 22, part 4: ``eval --from-traces`` on production traces with no answers file, and the span links.

Small on purpose: 3 production questions, a repeat among them, 3 conditions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphtrail
from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
from graphtrail.cli import main
from graphtrail.evaluators.replay.fromtraces import production_links, questions_from_traces
from graphtrail.tracer import Trajectory

MODEL = "offline:cite=endpoints,unsupported=0.5,seed=1"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[Trajectory]]]:
    path = tmp_path_factory.mktemp("prod") / "traces.jsonl"
    graphtrail.configure(exporter="jsonl", path=path)
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, load_kg("countries")), name="kg-agent")
    qs = load_questions("countries-demo")[:3]
    try:
        with graphtrail.capture() as cap:
            for q in [*qs, qs[1]]:
                agent.invoke({"messages": [("user", q.question)]})
        graphtrail.tracer.flush()
        yield path, list(cap.trajectories)
    finally:
        graphtrail.configure()


def _roots(path: Path) -> list[dict[str, Any]]:
    docs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [span for doc in docs for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]
            if span["name"].startswith("invoke_agent")]


def test_eval_from_traces_runs_without_answers_and_reports_changed_outputs(
    traces: tuple[Path, list[Trajectory]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, prod = traces
    out = tmp_path / "eval"
    code = main(["eval", "--kg", "countries", "--from-traces", str(path), "--model", MODEL,
                 "--conditions", "baseline,cited_removal,uncited_removal", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "changed outputs per condition" in printed and "no gold answers" in printed
    table = printed.split("changed outputs per condition")[1].split("citation support")[0]
    assert "accuracy" not in table  # nothing to grade against: not shown
    results = json.loads((out / "results.json").read_text())
    changed = {row["condition"]: row["changed_rate"] for row in results["conditions"]}
    assert changed["cited_removal"] is not None and changed["uncited_removal"] is not None
    for condition in ("cited_removal", "uncited_removal"):
        assert f"{changed[condition]:.0%}" in table
    # three distinct questions; the repeated one keeps both production runs
    sampled = [json.loads(line) for line in (out / "questions-from-traces.jsonl").read_text().splitlines()]
    assert len(sampled) == 3 and sorted(q["runs"] for q in sampled) == [1, 1, 2]
    # every replay's root links to the production runs its question came from
    by_question = {q["id"]: {tuple(p) for p in q["production_traces"]} for q in sampled}
    replays = _roots(out / "replay-traces.jsonl")
    assert replays
    for span in replays:
        attrs = {a["key"]: a["value"].get("stringValue") for a in span["attributes"]}
        links = {(link["traceId"], link["spanId"]) for link in span.get("links", [])}
        assert by_question[attrs["graphtrail.question_id"]] <= links
    assert {pair for pairs in by_question.values() for pair in pairs} == {(t.trace_id, t.span_id) for t in prod}


def test_answers_file_grades_matching_questions_and_shows_accuracy(
    traces: tuple[Path, list[Trajectory]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = traces
    out = tmp_path / "graded"
    code = main(["eval", "--kg", "countries", "--from-traces", str(path), "--answers", "countries-demo", "--sample", "2",
                 "--model", MODEL, "--conditions", "baseline,cited_removal", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "graded by countries-demo" in printed
    assert "accuracy" in printed.split("changed outputs per condition")[1].split("citation support")[0]
    results = json.loads((out / "results.json").read_text())
    assert all(q["gold"] for q in results["questions"])


def test_sampling_is_seeded_and_independent_of_file_order(traces: tuple[Path, list[Trajectory]]) -> None:
    _, prod = traces
    first = questions_from_traces(prod, sample=2, seed=3)
    again = questions_from_traces(list(reversed(prod)), sample=2, seed=3)
    assert [q["id"] for q in first] == [q["id"] for q in again]
    assert len({q["id"] for s in range(6) for q in questions_from_traces(prod, sample=1, seed=s)}) > 1
    assert production_links({"production_traces": [["not-hex", "x"], [prod[0].trace_id, prod[0].span_id]]}) == [
        (prod[0].trace_id, prod[0].span_id)
    ]


@pytest.mark.parametrize(
    "extra, words",
    [
        ([], "pass --questions or --from-traces"),
        (["--questions", "countries-demo", "--from-traces", "FILE"], "alternatives"),
        (["--questions", "countries-demo", "--sample", "2"], "--sample and --answers apply to --from-traces"),
    ],
)
def test_bad_eval_source_is_one_line_and_exit_2(extra: list[str], words: str, traces: tuple[Path, list[Trajectory]],
                                                tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = [str(traces[0]) if a == "FILE" else a for a in extra]
    assert main(["eval", "--kg", "countries", "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err


def test_annotate_without_a_destination_or_results_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["annotate", str(tmp_path), "--phoenix", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "results file not found" in err
    assert main(["annotate", str(tmp_path)]) == 2
    assert "nowhere to annotate" in capsys.readouterr().err
