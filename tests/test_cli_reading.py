"""The command line as a reader meets it: --version, one style of error line, progress when piped,
labelled and filterable replay traces, and output folders git ignores."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import graphtrail
from graphtrail._heartbeat import Heartbeat
from graphtrail.cli.main import suggest_option
from tests.test_cli import ROOT, assert_input_error, call, run_cli

pytestmark = pytest.mark.timeout(240)

DEMO_MODEL = "offline:cite=endpoints,noise=0.2,seed=1"


# ----------------------------------------------------------------------------- --version
@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    code, out, err = call(capsys, flag)
    assert code == 0 and err == "" and out == f"graphtrail {graphtrail.__version__}\n"


# ----------------------------------------------------------------------------- error lines
def test_every_error_line_has_one_prefix(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cases = [
        ("frobnicate",),                                             # unknown command
        ("eval", "--kg", "countries", "-q", "countries"),            # missing option of a subcommand
        ("eval", "--kg", "countries", "-q", "countries", "--out", str(tmp_path), "--trials", "0"),  # bad value
        ("run", "--kg", str(tmp_path / "none.tsv"), "-q", "countries", "--out", str(tmp_path)),  # bad input file
        ("kg", "info", "--bogus"),                                   # unknown option, nested command
    ]
    for args in cases:
        code, _, err = call(capsys, *args)
        assert_input_error(code, err)
        assert err.startswith("graphtrail: error: "), err
        assert not re.match(r"graphtrail \w+.*: error", err), err


def test_unknown_options_get_only_plausible_suggestions(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(capsys, "eval", "--bogus")
    assert_input_error(code, err, "no such option: --bogus", "graphtrail eval --help")
    assert "--out" not in err and "did you mean" not in err  # '--' alone made click suggest --out
    code, _, err = call(capsys, "eval", "--trails", "3")
    assert_input_error(code, err, "no such option: --trails; did you mean --trials?")
    options = ["--kg", "--questions", "--out", "--trials", "--resume", "--seed"]
    assert suggest_option("--bogus", options) is None
    assert suggest_option("--resum", options) == "--resume" and suggest_option("--ouy", options) == "--out"


def test_not_found_is_worded_one_way(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "missing")
    cases = {
        "knowledge graph": ("kg", "info", missing),
        "questions file": ("run", "--kg", "countries", "-q", missing, "--out", str(tmp_path / "o")),
        "trace file": ("traces", missing),
        "results file": ("report", missing),
        "agent module file": ("run", "--kg", "countries", "-q", "countries", "--out", str(tmp_path / "o"),
                              "--agent", f"{missing}.py:build"),
    }
    for what, args in cases.items():
        code, _, err = call(capsys, *args)
        assert_input_error(code, err, f"graphtrail: error: {what} not found: {missing}")

    # The library says it the same way (what reaches the CLI when it is called from code).
    from graphtrail.agents import KGError, QuestionsError, load_kg, load_questions
    from graphtrail.evaluators.report import ReportError, load_report

    for loader, exc, what in ((load_kg, KGError, "knowledge graph"), (load_questions, QuestionsError, "questions file"),
                              (load_report, ReportError, "results file")):
        with pytest.raises(exc, match=f"^{what} not found: "):
            loader(missing)


# ----------------------------------------------------------------------------- progress when piped
def test_heartbeat_line_and_phases() -> None:
    out = io.StringIO()
    beat = Heartbeat("baseline", 4, stream=out, every=3600)
    beat.advance(3)
    beat.tick()
    assert re.fullmatch(r"graphtrail: baseline 3/4 runs \(75%\), \d+ s elapsed\n", out.getvalue())
    with beat:  # a started heartbeat closes a finished phase with its last line, and ends with one
        beat.advance()
        beat.phase("ablations", 10)
        beat.advance(10)
    lines = out.getvalue().splitlines()[1:]
    assert [line.split(",")[0] for line in lines] == ["graphtrail: baseline 4/4 runs (100%)", "graphtrail: ablations 10/10 runs (100%)"]
    beat.phase("baseline", 2)
    beat.note("3 ablation runs done early")  # conditions that started early (docs/ablations.md, Order of work)
    assert re.fullmatch(r"graphtrail: baseline 0/2 runs \(0%\) · 3 ablation runs done early, \d+ s elapsed", beat.line())
    beat.phase("ablations", 5)
    assert "done early" not in beat.line()


@pytest.fixture(scope="module")
def small_eval(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """An evaluation with stdout piped (not a terminal), as in CI logs."""
    out = tmp_path_factory.mktemp("piped") / "eval"
    proc = run_cli("eval", "--kg", "countries", "-q", "countries-demo", "--limit", "4", "--model", DEMO_MODEL,
                   "-c", "baseline,uncited_removal,uncited_mask", "--out", str(out),
                   env={"GRAPHTRAIL_PROGRESS_EVERY": "0.2"})
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_eval_and_run_report_progress_on_stderr_when_piped(small_eval: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    _, proc = small_eval
    lines = proc.stderr.splitlines()
    assert lines and all(re.fullmatch(r"graphtrail: (replay|baseline|ablations) \d+/\d+ runs( \(\d+%\))?"
                                      r"( · \d+ ablation runs? done early)?, \d+ s elapsed", x) for x in lines), lines
    assert any(x.startswith("graphtrail: baseline 12/12 runs (100%)") for x in lines)  # 4 questions x 3 trials
    assert lines[-1].startswith("graphtrail: ablations 8/8 runs (100%)")
    assert "graphtrail:" not in proc.stdout  # the report on stdout stays clean

    run = run_cli("run", "--kg", "countries", "-q", "countries-demo", "--limit", "2", "--out", str(tmp_path / "run"))
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines()[-1].startswith("graphtrail: answering 2/2 questions (100%)")


# ----------------------------------------------------------------------------- replay traces
def test_replay_traces_show_and_filter_by_condition_and_question(small_eval: tuple[Path, subprocess.CompletedProcess[str]], capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = small_eval
    traces = out / "replay-traces.jsonl"
    proc = run_cli("traces", str(traces))
    assert proc.returncode == 0, proc.stderr
    titles = [line for line in proc.stdout.splitlines() if line.startswith("╭")]
    assert len(titles) == 12 + 4 + 4  # baseline trials, uncited removal, uncited mask
    assert sum("[uncited_removal · countries-" in t for t in titles) == 4 and sum("[baseline · " in t for t in titles) == 12
    assert "by condition: baseline 12, uncited_removal 4, uncited_mask 4" in " ".join(proc.stdout.split())

    qid = "countries-0111"
    proc = run_cli("traces", str(traces), "--condition", "uncited_mask,uncited_removal", "--question", qid)
    assert proc.returncode == 0, proc.stderr
    titles = [line for line in proc.stdout.splitlines() if line.startswith("╭")]
    assert len(titles) == 2 and all(qid in t and ("uncited_mask" in t or "uncited_removal" in t) for t in titles)
    assert "20 run(s)" in proc.stdout and "2 matching" in proc.stdout

    code, _, err = call(capsys, "traces", str(traces), "--condition", "cited_removal")
    assert_input_error(code, err, "no run in", "--condition cited_removal", "conditions in the file: baseline, uncited_removal, uncited_mask")
    code, out, err = call(capsys, "traces", str(traces), "--condition", "baseline", "--format", "jaeger")
    assert code == 0, err  # the filters hold for conversions too: only the baseline replays' traces
    roots = [s for t in json.loads(out)["data"] for s in t["spans"] if not s["references"]]
    assert len(roots) == 12 and all({"key": "graphtrail.condition", "type": "string", "value": "baseline"} in s["tags"] for s in roots)


# ----------------------------------------------------------------------------- .gitignore
def test_gitignore_covers_the_documented_output_folders() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    texts = [(ROOT / "README.md").read_text(encoding="utf-8"), (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in (ROOT / "examples").glob("*.py")]
    folders = set()
    for text in texts:
        text = text.replace("\\\n", " ")  # a command continued on the next line is one command
        folders |= set(re.findall(r"(?:graphtrail \w+|python \S+)[^\n`]*?--out ([a-z][\w.-]+)", text))  # commands only
        folders |= set(re.findall(r"out_dir=\"([\w.-]+)\"", text))
        folders |= set(re.findall(r"\"--out\", default=\"([\w.-]+)\"", text))
    assert {"graphtrail-demo", "eval-out"} <= folders
    for folder in sorted(folders):
        proc = subprocess.run(["git", "check-ignore", "-q", f"{folder}/report.html"], cwd=ROOT)
        assert proc.returncode == 0, f"{folder}/ is not in .gitignore"


# ----------------------------------------------------------------------------- hostile data strings
def test_mathtext_and_html_in_question_data_do_not_break_eval_or_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A question id with two dollars used to be parsed as matplotlib mathtext and crash after every run was done.
    first = (ROOT / "src" / "graphtrail" / "data" / "countries-demo.questions.jsonl").read_text(encoding="utf-8").splitlines()[0]
    record = json.loads(first)
    record.update(id="usd$_{$1", answers=["<script>alert(1)</script>", *record["answers"]])
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = tmp_path / "eval"
    # In-process (the entry point the console script calls): the data path is the same, without two
    # interpreter start-ups.
    code, _, err = call(capsys, "eval", "--kg", "countries", "-q", str(questions), "--model", DEMO_MODEL,
                        "-c", "baseline,uncited_removal,leave_one_out", "--out", str(out))
    assert code == 0, err
    for name in ("results.json", "report.md", "report.html", "accuracy.png", "traversal.png"):
        assert (out / name).is_file(), name
    assert "<script>" not in (out / "report.md").read_text(encoding="utf-8")
    code, _, err = call(capsys, "report", str(out / "results.json"), "--html", "--out", str(tmp_path / "again"))
    assert code == 0, err
    assert "usd$_{$1" in (tmp_path / "again" / "report.html").read_text(encoding="utf-8")
