"""Every command that writes follows the output-folder rules (graphtrail._outdir).

For each of them (run, eval, eval --from-traces, report, compare --out,
traces --output, traces stats --json/--html): a folder whose ``.graphtrail.lock``
names a live process is refused with exit 2 and one line, and nothing is written;
symlinks planted under every name a command writes, pointing outside, are
replaced or refused, never written through. Nothing outside the folder changes.
The library's ``evaluate(out_dir=...)`` refuses a folder holding an earlier
evaluation unless ``force=True`` or ``resume=True``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from graphtrail._outdir import LOCK, MARKER, OutDirHoldsResults
from graphtrail.cli.main import main

pytestmark = pytest.mark.timeout(300)

#: Every file name any of the commands writes, planted as a symlink in the folder.
WRITTEN = (
    "traces.jsonl", "trajectories.jsonl", "answers.jsonl", "results.json", "report.md", "report.html", "runs.jsonl",
    "reuse.jsonl", "replay-traces.jsonl", "accuracy.png", "influence.png", "traversal.png", "questions-from-traces.jsonl",
    "compare.md", "compare.json", "compare.html", "jaeger.json", "stats.json", "stats.html",
)


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sources")
    assert main(["run", "--kg", "countries", "-q", "countries-demo", "--limit", "2", "--out", str(root / "run")]) == 0
    assert main(["eval", "--kg", "countries", "-q", "countries-demo", "--limit", "2", "--conditions", "baseline",
                 "--out", str(root / "eval")]) == 0
    return {"traces": root / "run" / "traces.jsonl", "results": root / "eval" / "results.json"}


COMMANDS: dict[str, Callable[[Path, dict[str, Path]], list[str]]] = {
    "run": lambda o, s: ["run", "--kg", "countries", "-q", "countries-demo", "--limit", "1", "--out", str(o), "--force"],
    "eval": lambda o, s: ["eval", "--kg", "countries", "-q", "countries-demo", "--limit", "1", "--conditions", "baseline",
                          "--out", str(o), "--force"],
    "from-traces": lambda o, s: ["eval", "--kg", "countries", "--from-traces", str(s["traces"]), "--conditions", "baseline",
                                 "--out", str(o), "--force"],
    "report": lambda o, s: ["report", str(s["results"]), "--html", "--out", str(o)],
    "compare": lambda o, s: ["compare", str(s["results"]), str(s["results"]), "--fail-on", "none", "--out", str(o)],
    "traces": lambda o, s: ["traces", str(s["traces"]), "--format", "jaeger", "--output", str(o / "jaeger.json")],
    "traces-stats": lambda o, s: ["traces", "stats", str(s["traces"]), "--json", str(o / "stats.json"),
                                  "--html", str(o / "stats.html")],
}


#: ``demo`` runs the whole pipeline (a minute): checked against a live lock only; it writes through run's and eval's code.
LOCKED_COMMANDS = {**COMMANDS, "demo": lambda o, s: ["demo", "--out", str(o), "--force"]}


def _snapshot(root: Path, skip: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink() and skip not in p.parents}


@pytest.mark.parametrize("command", list(LOCKED_COMMANDS))
def test_a_live_lock_refuses_every_writer(command: str, sources: dict[str, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER).write_text("", encoding="utf-8")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (out / LOCK).write_text(f"{holder.pid}\n", encoding="ascii")
        capsys.readouterr()
        code = main(LOCKED_COMMANDS[command](out, sources))
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, (command, err)
    assert len(err) == 1 and err[0].startswith("graphtrail: error: ") and f"pid {holder.pid}" in err[0], err
    assert sorted(p.name for p in out.iterdir()) == sorted([MARKER, LOCK])  # nothing written


@pytest.mark.parametrize("command", list(COMMANDS))
def test_planted_symlinks_are_never_written_through(command: str, sources: dict[str, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER).write_text("", encoding="utf-8")
    victims = tmp_path / "victims"
    victims.mkdir()
    for name in WRITTEN:
        (victims / name).write_text(f"precious {name}\n", encoding="utf-8")
        (out / name).symlink_to(victims / name)
    before = _snapshot(tmp_path, out)
    capsys.readouterr()
    code = main(COMMANDS[command](out, sources))
    err = capsys.readouterr().err.strip().splitlines()
    assert _snapshot(tmp_path, out) == before, command  # no victim changed, nothing appeared outside
    if code == 2:  # refused: one line (a link it would append to, or a results.json it would not describe)
        assert len(err) == 1 and err[0].startswith("graphtrail: error: "), err
    else:
        assert code == 0, (command, err)
        written = [p for p in out.iterdir() if p.name in WRITTEN and not p.is_symlink()]
        assert written, f"{command} wrote nothing"


def test_evaluate_refuses_an_earlier_evaluation_without_force(tmp_path: Path) -> None:
    from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
    from graphtrail.evaluators import evaluate

    kg = load_kg("countries")
    questions = load_questions("countries-demo")[:1]
    agent = create_graphrag_agent("offline", kg)
    out = tmp_path / "eval-out"
    evaluate(agent, questions, kg=kg, conditions=["baseline"], out_dir=out, progress=False)
    first = (out / "results.json").read_bytes()
    with pytest.raises(OutDirHoldsResults, match="holds an earlier evaluation .*results.json.*--force"):
        evaluate(agent, questions, kg=kg, conditions=["baseline"], out_dir=out, progress=False)
    assert (out / "results.json").read_bytes() == first
    evaluate(agent, questions, kg=kg, conditions=["baseline"], out_dir=out, progress=False, resume=True)
    evaluate(agent, questions, kg=kg, conditions=["baseline"], out_dir=out, progress=False, force=True)
    assert "force" in str(__import__("inspect").signature(evaluate))


def test_report_out_refuses_a_folder_holding_another_evaluation(sources: dict[str, Path], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / MARKER).write_text("", encoding="utf-8")
    (other / "results.json").write_text("{}", encoding="utf-8")
    (other / "report.md").write_text("the other evaluation's report", encoding="utf-8")
    capsys.readouterr()
    assert main(["report", str(sources["results"]), "--out", str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds an earlier evaluation (results.json)" in err[0] and "--force" in err[0]
    assert (other / "report.md").read_text(encoding="utf-8") == "the other evaluation's report"
    assert main(["report", str(sources["results"]), "--out", str(other), "--force"]) == 0
    # its own folder: the reports beside results.json are rendered again, no --force needed
    assert main(["report", str(sources["results"])]) == 0
    assert main(["report", str(sources["results"]), "--out", str(sources["results"].parent)]) == 0
