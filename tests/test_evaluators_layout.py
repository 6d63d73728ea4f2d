"""The evaluators' layout: replay -> records <- scoring <- report, old import paths kept, ``replay`` the function."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import graphtrail.evaluators as evaluators

EVALUATORS = Path(evaluators.__file__).parent


def test_replay_is_the_function_however_it_is_imported() -> None:
    from graphtrail.evaluators import replay
    from graphtrail.evaluators.replay import replay as from_package
    from graphtrail.evaluators.replay.runner import replay as from_runner

    import graphtrail.evaluators.replay.suite  # noqa: F401  (loading a submodule must not rebind the name)

    assert callable(replay) and replay is from_package is from_runner is evaluators.replay


def test_replay_is_the_function_in_a_fresh_interpreter() -> None:
    code = (
        "import inspect, graphtrail.evaluators.replay.runner\n"
        "from graphtrail.evaluators import replay\n"
        "assert inspect.iscoroutinefunction(replay), replay\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", sorted(evaluators._EXPORTS))
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(evaluators, name) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("stats", "scoring.stats"),
        ("metrics", "scoring.metrics"),
        ("findings", "scoring.findings"),
        ("judges", "scoring.judges"),
        ("interception", "replay.interception"),
    ],
)
def test_old_module_paths_still_import(old: str, new: str) -> None:
    shim = importlib.import_module(f"graphtrail.evaluators.{old}")
    module = importlib.import_module(f"graphtrail.evaluators.{new}")
    assert shim.__all__ == module.__all__
    for name in module.__all__:
        assert getattr(shim, name) is getattr(module, name)


def test_report_package_keeps_the_old_report_module_names() -> None:
    from graphtrail.evaluators import report

    for name in ("Report", "ReportError", "build_report", "load_report", "PAPER_TABLE2", "CONDITION_LABELS",
                 "SCHEMA_VERSION", "ConditionRow", "EntityRow", "QuestionRow", "Scores", "Stats", "Traversal",
                 "TraversalNode", "JUDGE_TEXT", "CITATION_CONDITIONS", "NO_CITATIONS"):
        assert hasattr(report, name), name


def _runtime_imports(package: str) -> dict[str, set[str]]:
    """Per module of ``package``: the graphtrail.evaluators modules it imports, function-level too, ``TYPE_CHECKING`` not."""
    out: dict[str, set[str]] = {}
    for path in (EVALUATORS / package).glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = []
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module is not None:
                found.add(node.module.split(".")[0])  # from ..X import -> graphtrail.evaluators.X
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("graphtrail.evaluators."):
                found.add(node.module.split(".")[2])
        out[path.name] = found
    return out


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [("scoring", {"replay", "report", "api"}), ("report", {"replay", "api"}), ("replay", {"scoring", "report", "api"})],
)
def test_data_flows_one_way(package: str, forbidden: set[str]) -> None:
    for module, targets in _runtime_imports(package).items():
        assert not targets & forbidden, f"{package}/{module} imports {sorted(targets & forbidden)}"
