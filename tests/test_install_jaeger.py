"""scripts/install_jaeger.sh without building anything: its refusals and its cache check."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "install_jaeger.sh"


def _run(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GRAPHTRAIL_BIN_CACHE": str(cache)}
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60, check=False)


def test_cached_only_refuses_to_build(tmp_path: Path) -> None:
    proc = _run("--cached-only", cache=tmp_path)
    assert proc.returncode == 2 and "--cached-only" in proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_unknown_flag_is_a_usage_error(tmp_path: Path) -> None:
    proc = _run("--bogus", cache=tmp_path)
    assert proc.returncode == 64 and "usage" in proc.stderr


def test_a_cached_binary_that_runs_is_reused(tmp_path: Path) -> None:
    fake = tmp_path / "jaeger-v1.76.0"
    fake.write_text("#!/bin/sh\n[ \"$1\" = version ] && echo fake\n", encoding="utf-8")
    fake.chmod(0o755)
    proc = _run("--cached-only", cache=tmp_path)
    assert proc.returncode == 0 and "already built" in proc.stderr
    fake.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")  # a broken binary is not trusted
    assert _run("--cached-only", cache=tmp_path).returncode == 2
