"""Bad arguments and ``--help`` are answered before anything heavy is imported.

LangChain, NumPy, NetworkX, SciPy, the OTel SDK and graphtrail's agents and
evaluators take seconds to import on a small machine. A user who mistyped a path
must not wait for them: each case runs the CLI in a fresh interpreter and lists
which of those modules the answer loaded (none may be). The CLI checks names
against light copies (``graphtrail.cli.names``); the last test keeps the copies
equal to the library's lists.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("langchain_core", "langgraph", "numpy", "networkx", "scipy", "matplotlib", "opentelemetry.sdk",
         "graphtrail.agents", "graphtrail.evaluators", "graphtrail.tracer")

PROBE = """
import json, sys
from graphtrail.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "heavy": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)

CASES = [
    ["--help"],
    ["eval", "--help"],
    ["report", "missing.json"],
    ["traces", "missing.jsonl"],
    ["kg", "info", "missing.tsv"],
    ["kg", "import", "countries", "--to", "graph.txt"],
    ["run", "--kg", "missing.tsv", "-q", "countries", "-o", "out"],
    ["run", "--kg", "countries", "-q", "missing.jsonl", "-o", "out"],
    ["run", "--kg", "countries", "-q", "countries", "-o", "out", "--agent", "missing.py:build"],
    ["eval", "--kg", "countries", "-q", "countries", "-o", "out", "-c", "cited_remval"],
    ["eval", "--kg", "countries", "-q", "countries", "-o", "out", "--variant", "agentik"],
    ["eval", "--kg", "countries", "-q", "countries", "-o", "out", "--resume", "--force"],
    ["demo", "--force", "true"],
    ["traces", "t.jsonl", "--format", "xml"],
]


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_answered_without_heavy_imports(args: list[str], tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["code"] == (0 if "--help" in args else 2), proc.stderr
    assert result["heavy"] == [], f"{' '.join(args)} imported {result['heavy']} before answering"


def test_the_clis_names_are_the_librarys() -> None:
    from graphtrail.agents import BASELINES, VARIANTS
    from graphtrail.kg.backends import is_graph_database
    from graphtrail.cli import names
    from graphtrail.evaluators import CONDITIONS
    from graphtrail.evaluators.replay.cache import RUNS_FILE

    assert names.CONDITIONS == tuple(CONDITIONS)
    assert names.VARIANTS == tuple(VARIANTS) and names.BASELINES == tuple(BASELINES)
    assert names.RUNS_FILE == RUNS_FILE
    for value in ("bolt://h:7687", "neo4j+s://h", "lbug:x", "g.LBUG", "countries", "g.json", "bolt.tsv", "x/neo4j"):
        assert names.looks_like_graph_database(value) == is_graph_database(value), value
