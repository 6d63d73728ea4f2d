"""examples/06_compare_in_ci: the workflow's own commands, run locally as GitHub Actions would run them.

The steps that need the network (checkout, setup-python, pip install, the PR
comment, the artifact upload) are left out; every other ``run:`` is executed
with bash, the workflow's ``env``, and ``GITHUB_OUTPUT``/``GITHUB_STEP_SUMMARY``
files. ``graphtrail`` on PATH is this checkout's code; ``gh`` is a stand-in that
plays the main branch's last successful run, whose artifact holds the committed
baseline (or, in the second pass, finds no run, so the step falls back to it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "06_compare_in_ci"
OFFLINE_STEPS = ("evaluate", "baseline", "compare", "gate")
#: ``gh run list`` / ``gh run download`` as GitHub would answer them, from the committed baseline.
FAKE_GH = """#!/bin/sh
[ -n "$GH_NO_RUNS" ] && exit 1
case "$1 $2" in
  "run list") echo 4242 ;;
  "run download") mkdir -p "$7" && cp "{baseline}" "$7/results.json" ;;
  *) exit 1 ;;
esac
"""


def _expand(script: str, outputs: dict[str, str]) -> str:
    """Substitute the ``${{ steps.X.outputs.Y }}`` expressions the offline steps use."""
    def value(m: re.Match[str]) -> str:
        return outputs[m.group(1)]

    return re.sub(r"\$\{\{\s*steps\.\w+\.outputs\.(\w+)\s*\}\}", value, script)


def test_workflow_runs_offline_and_catches_the_uncited_entity(tmp_path: Path) -> None:
    workflow = yaml.safe_load((EXAMPLE / "provenance-gate.yml").read_text(encoding="utf-8"))
    assert workflow[True] == {"push": {"branches": ["main"]}, "pull_request": None}  # YAML reads the key `on` as True
    steps = workflow["jobs"]["provenance"]["steps"]
    offline = [s for s in steps if s.get("id") in OFFLINE_STEPS]
    assert [s["id"] for s in offline] == list(OFFLINE_STEPS)
    assert any("gh pr comment" in s.get("run", "") for s in steps)  # it does post the markdown

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "graphtrail"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m graphtrail "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH.format(baseline=EXAMPLE / "baseline" / "results.json"), encoding="utf-8")
    gh.chmod(0o755)
    github_output, summary = tmp_path / "github_output", tmp_path / "summary.md"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "GITHUB_"))},
        **{k: str(v) for k, v in workflow["env"].items()},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT / "src"),
        "GITHUB_OUTPUT": str(github_output),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    outputs: dict[str, str] = {}
    codes: dict[str, int] = {}
    for step in offline:
        proc = subprocess.run(["bash", "-e", "-c", _expand(step["run"], outputs)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=240)
        codes[step["id"]] = proc.returncode
        if github_output.exists():
            outputs.update(line.split("=", 1) for line in github_output.read_text().splitlines() if "=" in line)
        if step["id"] != "gate":
            assert proc.returncode == 0, (step["id"], proc.stderr[-2000:])
    # the PR's agent (v2) leans on uncited bridge entities: the default gate fails the build with exit 1
    assert outputs["path"] == "main-eval/results.json" and (tmp_path / "main-eval" / "results.json").exists()
    assert outputs["exit_code"] == "1" and codes["gate"] == 1
    comment = (tmp_path / "provenance-compare.md").read_text(encoding="utf-8")
    assert comment.startswith("### graphtrail compare: ❌")
    assert "hidden influencer(s) appeared (worse)" in comment and "BASE support-agent-v1 · graphtrail-offline → NEW support-agent-v2" in comment
    assert "- `hidden_influencers>0:significant`: hidden influencers 0 -> " in comment
    assert "- `coverage<0:significant`: coverage" in comment and ", worse, changed" in comment
    assert MarkdownIt("gfm-like", {"linkify": False}).render(comment).count("<table>") == 3
    assert summary.read_text(encoding="utf-8").strip() == comment.strip()  # the job summary is the comment
    assert (tmp_path / "provenance-compare" / "compare.html").exists()  # uploaded as an artifact
    assert not (tmp_path / "provenance-eval" / "compare.html").exists()  # compare writes only into --out

    # main has no evaluation yet: the step falls back to the committed baseline
    (tmp_path / "main-eval").rename(tmp_path / "main-eval-1")
    baseline = next(s for s in offline if s["id"] == "baseline")
    github_output.write_text("", encoding="utf-8")
    proc = subprocess.run(["bash", "-e", "-c", baseline["run"]], cwd=tmp_path, env={**env, "GH_NO_RUNS": "1"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "::notice::main has no evaluation yet" in proc.stdout
    assert github_output.read_text().strip() == f"path={workflow['env']['BASELINE']}"
