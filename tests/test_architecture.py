"""The package's floors, read from the source (docs/architecture.md).

Why a test: the layout only stays a layout while something fails when it erodes. These
checks walk every ``import`` in ``src/graphtrail`` -- the ones inside functions too,
since a lazy import is still a dependency -- and fail on an import circle, on a floor
importing one above it, and on a module grown past the size a reader can hold.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "graphtrail"
MAX_LINES = 600

# What each floor may not import (docs/architecture.md, "Floors").
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "graphtrail.tracer": ("graphtrail.kg", "graphtrail.agents", "graphtrail.evaluators", "graphtrail.cli"),
    "graphtrail.kg": ("graphtrail.tracer", "graphtrail.agents", "graphtrail.evaluators", "graphtrail.cli"),
    "graphtrail.agents": ("graphtrail.evaluators", "graphtrail.cli"),
    "graphtrail.evaluators": ("graphtrail.cli",),
    "graphtrail.evaluators.scoring": ("graphtrail.evaluators.replay", "graphtrail.evaluators.report"),
    "graphtrail.evaluators.report": ("graphtrail.evaluators.replay",),
    "graphtrail.evaluators.comparison": ("graphtrail.evaluators.replay",),
    "graphtrail.evaluators.history": ("graphtrail.evaluators.replay",),
}


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The graphtrail module that ``name`` (a module or a name in one) lives in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")
            if not is_package:
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            origin = ".".join(base) + (f".{node.module}" if node.module else "")
        else:
            origin = node.module or ""
        # `from pkg import sub` depends on the submodule, `from pkg import name` on pkg.
        names = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in MODULES else origin for a in node.names]
    return [t for t in (_owner(n) for n in names if n.startswith("graphtrail")) if t]


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(module: str, path: Path, is_package: bool) -> set[str]:
    out: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.update(t for t in _targets(module, is_package, node) if t != module)
            elif isinstance(node, ast.If) and _is_type_checking(node):
                continue  # annotations only: no run-time dependency
            else:
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    child = getattr(node, field, None)
                    if isinstance(child, list):
                        visit([c for c in child if isinstance(c, ast.AST)])  # type: ignore[arg-type]
                if isinstance(node, (ast.ExceptHandler, ast.match_case)):
                    visit(node.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return out


def _graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for module, (path, is_package) in MODULES.items():
        graph.add_node(module)
        for target in _imports(module, path, is_package):
            graph.add_edge(module, target)
    return graph


GRAPH = _graph()


def test_the_walker_sees_lazy_imports() -> None:
    # The walker must see imports inside functions, or the cycle test could not fail.
    tree = ast.parse("def f():\n    from graphtrail.tracer import config\n")
    node = tree.body[0].body[0]  # type: ignore[attr-defined]
    assert _targets("graphtrail.kg", True, node) == ["graphtrail.tracer.config"]
    assert GRAPH.number_of_edges() > 100


def test_no_import_circles() -> None:
    circles = [sorted(c) for c in nx.strongly_connected_components(GRAPH) if len(c) > 1]
    assert circles == [], f"import circles: {circles}"


@pytest.mark.parametrize("floor", sorted(FORBIDDEN))
def test_floors_point_one_way(floor: str) -> None:
    bad = sorted(
        (source, target)
        for source, target in GRAPH.edges
        if (source == floor or source.startswith(floor + "."))
        and any(target == f or target.startswith(f + ".") for f in FORBIDDEN[floor])
    )
    assert bad == [], f"{floor} imports a floor above it: {bad}"


def test_no_module_is_too_long() -> None:
    long = {
        str(path.relative_to(SRC)): n
        for path, _ in MODULES.values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines: {long}"


def test_every_package_says_what_it_holds() -> None:
    bare = [m for m, (path, is_package) in MODULES.items() if is_package and ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) is None]
    assert bare == []
