"""The evaluators' layout: replay -> records <- scoring <- report, old import paths kept, ``replay`` the function."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import subprocess
import sys
import warnings
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
    for path in (EVALUATORS / package).rglob("*.py"):  # subfolders too (replay/exact, replay/filtered)
        up = len(path.relative_to(EVALUATORS).parts)  # the import level that reaches graphtrail.evaluators
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = []
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == up and node.module is not None:
                found.add(node.module.split(".")[0])  # from ..X import -> graphtrail.evaluators.X
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("graphtrail.evaluators."):
                found.add(node.module.split(".")[2])
        out[str(path.relative_to(EVALUATORS / package))] = found
    return out


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [("scoring", {"replay", "report", "api"}), ("report", {"replay", "api"}), ("replay", {"scoring", "report", "api"})],
)
def test_data_flows_one_way(package: str, forbidden: set[str]) -> None:
    for module, targets in _runtime_imports(package).items():
        assert not targets & forbidden, f"{package}/{module} imports {sorted(targets & forbidden)}"


#: The filter route's modules, moved into ``replay/filtered/`` beside ``replay/exact/`` (issue 28, item 9).
FILTERED = ("filters", "tablefilter", "withheld", "names", "tools", "interception", "scope", "method", "leaks",
            "textleaks", "overfilter")
MOVED = {f"graphtrail.evaluators.replay.{m}": f"graphtrail.evaluators.replay.filtered.{m}" for m in FILTERED}
MOVED["graphtrail.evaluators.interception"] = "graphtrail.evaluators.replay.filtered.interception"


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_a_moved_module_warns_and_is_the_same_module(old: str, new: str) -> None:
    module = importlib.import_module(new)
    saved = sys.modules.pop(old, None)  # a path imported before warns no more: import it afresh
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            __import__(old)  # no importlib frame in between: the warning points at this line
        shim = sys.modules[old]
    finally:
        if saved is not None:
            sys.modules[old] = saved
    assert shim is module
    assert getattr(sys.modules[old.rpartition(".")[0]], old.rpartition(".")[2], module) is module
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in caught]
    message = str(deprecations[0].message)
    assert old in message and new in message and "0.3.0" in message
    assert deprecations[0].filename == __file__  # the importing line, not graphtrail's shim


def test_a_moved_module_keeps_its_names_for_from_imports() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from graphtrail.evaluators.replay.filters import _artifact_names, filter_tool_output
        from graphtrail.evaluators.replay.leaks import EntityNames
    from graphtrail.evaluators.replay.filtered import filters, leaks

    assert filter_tool_output is filters.filter_tool_output and _artifact_names is filters._artifact_names
    assert EntityNames is leaks.EntityNames


def _old_path_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = ["graphtrail", *path.relative_to(EVALUATORS.parent).with_suffix("").parts]
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        found += [t for t in targets if t in MOVED]
    return found


def test_graphtrail_never_imports_a_moved_path() -> None:
    shims = {Path(importlib.util.find_spec("graphtrail").origin).parent.joinpath(*m.split(".")[1:]).with_suffix(".py")
             for m in MOVED}
    bad = {str(p): found for p in EVALUATORS.parent.rglob("*.py")
           if p not in shims and (found := _old_path_imports(p))}
    assert bad == {}


_NO_WARNING = """
import json, sys, tempfile, warnings
from pathlib import Path
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import graphtrail
    from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
    from graphtrail.evaluators import evaluate
    from langchain.agents import create_agent
    sys.path.insert(0, sys.argv[1])
    from movies import StandInModel, movie_people, search_movies
    out = Path(tempfile.mkdtemp())
    kg = load_kg("countries")
    evaluate(lambda g: create_graphrag_agent("offline", g), load_questions("countries-demo")[:1], graph=kg,
             conditions=["uncited_removal", "cited_removal"], out_dir=out / "factory")
    evaluate(create_agent(StandInModel(), [search_movies, movie_people]),
             [{"id": "q1", "question": "Who directed Inception?", "answers": ["Christopher Nolan"]}],
             out_dir=out / "filtered")
root = str(Path(graphtrail.__file__).parent)
print(json.dumps([f"{w.filename}:{w.lineno}: {w.message}" for w in caught
                  if issubclass(w.category, DeprecationWarning)
                  and (w.filename.startswith(root) or str(w.message).startswith("graphtrail."))]))
"""


def test_graphtrail_itself_triggers_no_deprecation_warning() -> None:
    # A fresh interpreter: an old path imported earlier in this process would not warn again.
    examples = Path(__file__).resolve().parents[1] / "examples"
    done = subprocess.run([sys.executable, "-c", _NO_WARNING, str(examples)], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
