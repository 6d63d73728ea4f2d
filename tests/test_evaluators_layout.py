"""The evaluators' layout: replay -> records <- scoring <- report, old import paths kept, ``replay`` the function."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import subprocess
import sys
import textwrap
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
#: Older moves (the evaluators' scoring split, the kg package), once silent re-exports: they warn too.
MOVED.update({f"graphtrail.evaluators.{m}": f"graphtrail.evaluators.scoring.{m}"
              for m in ("stats", "metrics", "findings", "judges")})
MOVED["graphtrail.agents.kg"] = "graphtrail.kg"
MOVED["graphtrail.agents.search"] = "graphtrail.kg.search"
MOVED["graphtrail.agents.graphdb"] = "graphtrail.kg.backends"
#: Old package paths: ``old.X`` is ``new.X``. Each submodule its shim named before the move, and one more.
PACKAGES = {"graphtrail.agents.graphdb": "graphtrail.kg.backends", "graphtrail.agents.kg": "graphtrail.kg"}
SUBMODULES = {f"graphtrail.agents.graphdb.{m}": f"graphtrail.kg.backends.{m}"
              for m in ("cypher", "ladybug", "mapping", "neo4j", "store", "scratch")}
SUBMODULES["graphtrail.agents.kg.records"] = "graphtrail.kg.records"


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()) + sorted(SUBMODULES.items()))
def test_a_moved_module_warns_and_is_the_same_module(old: str, new: str) -> None:
    module = importlib.import_module(new)
    parent = old.rpartition(".")[0]
    if parent in PACKAGES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            importlib.import_module(parent)  # the old package's own warning is its own test's
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


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_keeps_every_public_name(old: str, new: str) -> None:
    module = importlib.import_module(new)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        shim = importlib.import_module(old)
    for name in getattr(module, "__all__", ()):
        assert getattr(shim, name) is getattr(module, name)


def test_an_old_package_path_never_loads_a_second_copy_of_a_submodule() -> None:
    # Without the submodule finder, old.X is found through new's __path__ and executed again:
    # a second module object with its own classes.
    code = (
        "import warnings; warnings.simplefilter('ignore', DeprecationWarning)\n"
        "import graphtrail.agents.graphdb.neo4j as old, graphtrail.agents.kg.graph as old_graph\n"
        "import graphtrail.kg.backends.neo4j as new, graphtrail.kg.graph as new_graph\n"
        "assert old is new and old.Neo4jStore is new.Neo4jStore, (old, new)\n"
        "assert old_graph is new_graph\n"
        "try:\n    import graphtrail.agents.graphdb.no_such_module\n"
        "except ModuleNotFoundError:\n    pass\nelse:\n    raise AssertionError('imported a module that does not exist')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_moved_module_keeps_its_names_for_from_imports() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from graphtrail.evaluators.replay.filters import _artifact_names, filter_tool_output
        from graphtrail.evaluators.replay.leaks import EntityNames
    from graphtrail.evaluators.replay.filtered import filters, leaks

    assert filter_tool_output is filters.filter_tool_output and _artifact_names is filters._artifact_names
    assert EntityNames is leaks.EntityNames


def _is_old(target: str) -> bool:
    return target in MOVED or any(target.startswith(p + ".") for p in PACKAGES)


def _old_path_imports(source: str, module: str) -> list[str]:
    """The old paths that ``source`` (the code of dotted ``module``, a package's ``__init__`` included) imports."""
    tree = ast.parse(source)
    package = module.split(".")[:-1]
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
        found += [t for t in targets if _is_old(t)]
    # import_module("graphtrail.agents.kg") and the like: a string naming an old path
    found += [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
              and _is_old(n.value)]
    return found


ROOT = Path(__file__).resolve().parents[1]


def _shim_files() -> set[Path]:
    # From the file system: an imported old path's spec is its new module's.
    files = set()
    for m in MOVED:
        base = EVALUATORS.parent.joinpath(*m.split(".")[1:])
        files.add((base / "__init__.py" if base.is_dir() else base.with_suffix(".py")).resolve())
    assert all(f.is_file() for f in files), sorted(f for f in files if not f.is_file())
    return files


def test_graphtrail_never_imports_a_moved_path() -> None:
    shims = _shim_files()
    bad = {}
    for p in EVALUATORS.parent.rglob("*.py"):
        module = ".".join(["graphtrail", *p.relative_to(EVALUATORS.parent).with_suffix("").parts])
        if p.resolve() not in shims and (found := _old_path_imports(p.read_text(encoding="utf-8"), module)):
            bad[str(p)] = found
    assert bad == {}


def test_no_test_example_benchmark_script_or_doc_imports_a_moved_path() -> None:
    here = Path(__file__).resolve()
    bad = {}
    for folder in ("tests", "examples", "benchmarks", "scripts"):
        for p in (ROOT / folder).rglob("*.py"):
            if p.resolve() != here and (found := _old_path_imports(p.read_text(encoding="utf-8"), "__main__")):
                bad[str(p)] = found
    fence = re.compile(r"^```(?:python|py)\n(.*?)^```", re.S | re.M)
    for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        for block in fence.findall(p.read_text(encoding="utf-8")):
            try:
                found = _old_path_imports(textwrap.dedent(block), "__main__")
            except SyntaxError:  # a fragment or a session transcript: read its import lines alone
                lines = "\n".join(ln.strip() for ln in block.splitlines()
                                  if ln.strip().startswith(("import ", "from ")))
                found = _old_path_imports(lines, "__main__")
            if found:
                bad.setdefault(str(p), []).extend(found)
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
