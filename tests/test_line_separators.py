"""U+2028, U+2029 and U+0085 inside JSON strings: every file graphtrail writes reads back.

JSON allows these characters unescaped in strings and ``json.dumps(ensure_ascii=False)``
writes them as they are; ``str.splitlines()`` breaks lines at them. So every reader
splits at ``\\n`` only (graphtrail/_lines.py). These tests write each kind of file
graphtrail produces with the characters inside strings and read it back through
graphtrail's own readers and commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from graphtrail._lines import split_lines
from graphtrail.agents import KnowledgeGraph, answer_from_result, create_graphrag_agent, load_questions
from graphtrail.cli.main import main
from graphtrail.evaluators.replay.cache import load_records
from graphtrail.tracer import trajectories_from_otlp_json

ODD = "\u2028\u2029\u0085"


def test_split_lines_breaks_at_newline_only() -> None:
    text = f'{{"a": "x{ODD}y"}}\r\n{{"b": "\f\v"}}\n'
    assert split_lines(text) == [f'{{"a": "x{ODD}y"}}', '{"b": "\f\v"}']
    assert split_lines(text, keepends=True) == [f'{{"a": "x{ODD}y"}}\r\n', '{"b": "\f\v"}\n']
    assert split_lines("a\n\nb") == ["a", "", "b"] and split_lines("") == []


def test_questions_file_with_separators_inside_strings(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    records = [
        {"id": f"q{ODD}1", "question": f"What is the capital{ODD} of Kenya?", "answers": [f"Nai{ODD}robi"]},
        {"id": "q2", "question": "And of Uganda?", "answers": ["Kampala"]},
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    assert "\u2028" in path.read_text(encoding="utf-8")  # written raw, as JSON allows
    questions = load_questions(str(path))
    assert [(q.id, q.question, q.answers) for q in questions] == [(r["id"], r["question"], r["answers"]) for r in records]


def test_offline_model_reads_entity_ids_with_separators() -> None:
    """The offline model parses tool outputs line by line: an id holding U+2028 must stay whole."""
    kg = KnowledgeGraph(name="odd")
    for eid, name, etype in [(f"p{ODD}3", "Galileo Galilei", "person"), (f"p{ODD}4", "Pisa", "city")]:
        kg.add_entity(eid, name, etype)
    kg.add_relation(f"p{ODD}3", "birthplace", f"p{ODD}4")
    result = create_graphrag_agent("offline", kg).invoke({"messages": [HumanMessage("What is the birthplace of Galileo Galilei?")]})
    answer, citations, status = answer_from_result(result)
    assert (answer, citations, status) == ("Pisa", [f"p{ODD}3", f"p{ODD}4"], "ok")


@pytest.fixture(scope="module")
def run_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``graphtrail run`` and ``graphtrail eval`` over a questions file whose strings hold the characters."""
    base = tmp_path_factory.mktemp("seps")
    bundled = Path(__file__).resolve().parents[1] / "src/graphtrail/data/countries-demo.questions.jsonl"
    first = json.loads(bundled.read_text(encoding="utf-8").split("\n")[0])
    first["question"] = first["question"] + f" {ODD}"
    first["id"] = first["id"] + ODD
    first["answers"] = first["answers"] + [f"alias{ODD}"]
    questions = base / "q.jsonl"
    questions.write_text(json.dumps(first, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["run", "--kg", "countries", "-q", str(questions), "--out", str(base / "run")]) == 0
    assert main(["eval", "--kg", "countries", "-q", str(questions), "--out", str(base / "eval"), "-c", "baseline,cited_removal"]) == 0
    return base, questions


def test_traces_and_trajectories_files_read_back(run_out: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, questions = run_out
    question = json.loads(questions.read_text(encoding="utf-8"))["question"]
    trajs = trajectories_from_otlp_json(base / "run" / "traces.jsonl")
    assert [t.question for t in trajs] == [question]
    lines = split_lines((base / "run" / "trajectories.jsonl").read_text(encoding="utf-8"))
    assert len(lines) == 1 and json.loads(lines[0])["question"] == question
    capsys.readouterr()
    for name in ("traces.jsonl", "trajectories.jsonl", "answers.jsonl"):
        code = main(["traces", str(base / "run" / name)]) if name != "answers.jsonl" else 0
        out = capsys.readouterr()
        assert code == 0, out.err
        if name != "answers.jsonl":
            assert "Mongolia" in out.out  # the summary shows the question
    for raw in split_lines((base / "run" / "answers.jsonl").read_text(encoding="utf-8")):
        json.loads(raw)


def test_eval_files_read_back_and_resume(run_out: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, questions = run_out
    out = base / "eval"
    records = load_records(out / "runs.jsonl")
    assert records and all(r.key.question_id.endswith(ODD) for r in records)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results
    before = (out / "runs.jsonl").read_text(encoding="utf-8")
    assert main(["eval", "--kg", "countries", "-q", str(questions), "--out", str(out), "-c", "baseline,cited_removal", "--resume"]) == 0
    assert (out / "runs.jsonl").read_text(encoding="utf-8").startswith(before)  # finished runs reused, not redone
    assert len(load_records(out / "runs.jsonl")) == len(records)
    assert main(["report", str(out / "results.json"), "--out", str(base / "rerender")]) == 0
