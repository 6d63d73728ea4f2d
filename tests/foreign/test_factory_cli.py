"""``graphtrail eval --agent file.py:make_agent --graph DATA``: the factory route from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphtrail.cli import main

AGENT = '''
from tests.foreign import passages as world
from tests.foreign.test_factory_route import state_channel_agent

def make_agent(graph):          # the data comes in positionally: any parameter name
    return state_channel_agent(graph)

def scientists():
    return world.graph()
'''


def _write(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "factory_cli_agent.py"  # any name: the CLI loads each file under a private name (cli/userfile.py)
    agent.write_text(AGENT, encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    from . import passages as world

    questions.write_text("".join(json.dumps(q) + "\n" for q in world.questions()), encoding="utf-8")
    return agent, questions


def test_eval_with_graph_runs_the_factory_route(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent, questions = _write(tmp_path)
    out = tmp_path / "out"
    code = main(["eval", "--agent", f"{agent}:make_agent", "--graph", f"{agent}:scientists", "--questions", str(questions),
                 "--out", str(out), "-c", "uncited_removal,leave_one_out"])
    err = capsys.readouterr().err
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    rows = {r["condition"]: r for r in results["conditions"]}
    assert rows["uncited_removal"]["method"] == "exact" and rows["uncited_removal"]["valid"]
    assert rows["uncited_removal"]["changed_rate"] == 1.0  # the subject really gone: "I don't know"
    assert "exact, the agent ran on really-ablated data" in (out / "report.md").read_text()


def test_graph_without_agent_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, questions = _write(tmp_path)
    code = main(["eval", "--kg", "countries", "--graph", "countries", "--questions", str(questions), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--graph needs --agent" in err
