"""Issue 22, part 4: ``eval --from-traces`` on production traces with no answers file, and the span links.

Small on purpose: 3 production questions, a repeat among them, 3 conditions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
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
    code = main(["eval", "--kg", "countries", "--from-traces", str(path), "--model", MODEL, "--trials", "2",
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
    _check_gold_free_reports(out, results)


class _Tables(HTMLParser):
    """The header and rows of every ``<table id=...>`` in report.html, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._table = dict(attrs).get("id") or ""
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _md_section_table(md: str, heading: str) -> list[list[str]]:
    section = md.split(f"## {heading}\n")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("|") and not line.startswith("|---")]
    # cells as a reader sees them: CommonMark backslash escapes of punctuation (graphtrail._markdown writes some) undone
    return [[re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", cell.strip()) for cell in line.strip("|").split(" | ")] for line in lines]


def _html_tables(page: str) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(page)
    return parser.tables


def _check_gold_free_reports(out: Path, results: dict[str, Any]) -> None:
    """No gold: the written reports lead with changed outputs, equal to results.json's, and show no accuracy."""
    assert all(row["accuracy"] is None for row in results["conditions"])  # the rows stay, accuracy null
    assert all(q["baseline_correct"] is None for q in results["questions"])
    noise = results["stats"]["noise_floor_answer"]
    assert noise is not None  # two trials: the baseline's own noise is measured
    expected = {}
    for row in results["conditions"]:
        over = None if row["condition"] == "baseline" else f"{100 * (row['changed_rate'] - noise):+.0f} pts"
        expected[row["label"]] = (f"{100 * row['changed_rate']:.0f}%", over or "–")
    md = (out / "report.md").read_text()
    assert "No gold answers: accuracy is not shown" in md
    assert "## Accuracy per condition" not in md and "McNemar" not in md
    md_table = _md_section_table(md, "Changed outputs per condition")
    page = (out / "report.html").read_text()
    html_tables = _html_tables(page)
    for table in (md_table, html_tables["conditions"]):
        header, rows = table[0], table[1:]
        assert not any("accuracy" in h.lower() for h in header)
        changed, over = header.index("Output changed"), header.index("Change over noise")
        assert changed == 1  # changed outputs lead
        assert {row[0]: (row[changed], row[over]) for row in rows} == expected
    findings = md.split("## Findings\n")[1].split("\n## ")[0]
    assert "accuracy" not in findings.lower()
    cited = next(r for r in results["conditions"] if r["condition"] == "cited_removal")
    assert f"Removing the cited entities changed {100 * cited['changed_rate']:.0f}% of outputs" in findings
    for table in (_md_section_table(md, "Per question"), html_tables["questions"]):
        assert "Gold" not in table[0] and "Correct" not in table[0] and len(table) == 1 + len(results["questions"])
    assert "No gold answers: accuracy is not shown" in page
    assert 'id="accuracy-plot"' not in page and not (out / "accuracy.png").exists()
    assert 'id="changed-plot"' in page and (out / "changed.png").exists()


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


def test_some_questions_graded_shows_accuracy_for_those_only_labelled_with_the_count(
    traces: tuple[Path, list[Trajectory]], tmp_path: Path
) -> None:
    path, _ = traces
    first = load_questions("countries-demo")[0]
    answers = tmp_path / "one-answer.jsonl"
    answers.write_text(json.dumps({"id": first.id, "question": first.question, "answers": list(first.answers)}) + "\n")
    out = tmp_path / "partial"
    code = main(["eval", "--kg", "countries", "--from-traces", str(path), "--answers", str(answers), "--model", MODEL,
                 "--conditions", "baseline,cited_removal", "--out", str(out)])
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    graded = [q for q in results["questions"] if q["baseline_correct"] is not None]
    assert len(graded) == 1 and len(results["questions"]) == 3
    base = next(r for r in results["conditions"] if r["condition"] == "baseline")
    assert base["accuracy"] == float(graded[0]["baseline_correct"]) and base["n_questions"] == 1
    md = (out / "report.md").read_text()
    assert "1 of 3 questions is graded" in md and "No gold answers" not in md
    for table in (_md_section_table(md, "Accuracy per condition"), _html_tables((out / "report.html").read_text())["conditions"]):
        assert table[0][1] == "Accuracy, 1 of 3 graded [95% CI]"
        assert table[1][1].startswith(f"{100 * base['accuracy']:.0f}%")


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


# ---------------------------------------------------------------- the model the traces recorded (issue 28, item 7)


@pytest.fixture(scope="module")
def openai_traces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Production traces whose model spans say ``gpt-4o-mini`` (the offline model under that name)."""
    from graphtrail.agents.offline import OfflineChatModel

    path = tmp_path_factory.mktemp("prod-openai") / "traces.jsonl"
    graphtrail.configure(exporter="jsonl", path=path)
    model = OfflineChatModel(cite="endpoints", model_name="gpt-4o-mini")
    agent = graphtrail.trace_agent(create_graphrag_agent(model, load_kg("countries")), name="kg-agent")
    try:
        for q in load_questions("countries-demo")[:2]:
            agent.invoke({"messages": [("user", q.question)]})
        graphtrail.tracer.flush()
        yield path
    finally:
        graphtrail.configure()


def test_from_traces_refuses_a_recorded_model_it_cannot_create_without_model(
    openai_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    base = ["eval", "--kg", "countries", "--from-traces", str(openai_traces), "--conditions", "baseline,uncited_removal"]
    code = main([*base, "--out", str(tmp_path / "refused")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "'gpt-4o-mini' (openai:gpt-4o-mini)" in err and "cannot be created here" in err and "--model" in err
    assert not (tmp_path / "refused" / "results.json").exists()

    out = tmp_path / "offline"
    assert main([*base, "--model", "offline", "--out", str(out)]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "replaying with model offline" in printed and "recorded gpt-4o-mini" in printed.replace("\n", " ")
    meta = json.loads((out / "results.json").read_text())["meta"]
    assert meta["recorded_model"] == "gpt-4o-mini" and "graphtrail-offline" in meta["model"]
    for report in ("report.md", "report.html"):
        text = (out / report).read_text()
        if report == "report.md":  # the header table: the replayed model and the recorded one, each named once
            assert "| model the traces recorded | gpt-4o-mini |" in text and f"| model | {meta['model']} |" in text
        else:
            assert "<th>model the traces recorded</th><td>gpt-4o-mini</td>" in text and f">{meta['model']}</td>" in text


def test_from_traces_replays_the_recorded_model_when_it_can(
    traces: tuple[Path, list[Trajectory]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = traces  # recorded by the offline model: replayed by it, no --model needed
    out = tmp_path / "same"
    code = main(["eval", "--kg", "countries", "--from-traces", str(path), "--conditions", "baseline,uncited_removal",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    meta = json.loads((out / "results.json").read_text())["meta"]
    assert meta["recorded_model"] == "graphtrail-offline" and meta["model_name"] == "offline"
