"""examples/06_compare_in_ci: the workflow's own commands, run locally as GitHub Actions would run them.

The steps that need the network (checkout, setup-python, pip install, the PR
comment, the artifact upload) are left out; every other ``run:`` is executed
with bash, the workflow's ``env``, and ``GITHUB_OUTPUT``/``GITHUB_STEP_SUMMARY``
files. ``graphtrail`` on PATH is this checkout's code.
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
OFFLINE_STEPS = ("evaluate", "compare", "gate")


def _expand(script: str, outputs: dict[str, str]) -> str:
    """Substitute the ``${{ steps.X.outputs.Y }}`` expressions the offline steps use."""
    def value(m: re.Match[str]) -> str:
        return outputs[m.group(1)]

    return re.sub(r"\$\{\{\s*steps\.\w+\.outputs\.(\w+)\s*\}\}", value, script)


def test_workflow_runs_offline_and_catches_the_uncited_entity(tmp_path: Path) -> None:
    workflow = yaml.safe_load((EXAMPLE / "provenance-gate.yml").read_text(encoding="utf-8"))
    assert workflow[True] == {"pull_request": None}  # YAML reads the key `on` as True
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
    # the PR's agent (v2) leans on uncited bridge entities: the gate fails the build with exit 1
    assert outputs["exit_code"] == "1" and codes["gate"] == 1
    comment = (tmp_path / "provenance-compare.md").read_text(encoding="utf-8")
    assert comment.startswith("### graphtrail compare: ❌")
    assert "hidden influencer(s) appeared" in comment and "BASE support-agent-v1 · graphtrail-offline → NEW support-agent-v2" in comment
    assert "- `hidden_influencers>0`: hidden influencers 0 -> " in comment and "- `coverage<-0.05`: coverage" in comment
    assert MarkdownIt("gfm-like", {"linkify": False}).render(comment).count("<table>") == 3
    assert summary.read_text(encoding="utf-8").strip() == comment.strip()
    assert (tmp_path / "provenance-eval" / "compare.html").exists()  # uploaded with the evaluation
