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
import os
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
    ["eval", "--kg", "countries", "-q", "countries", "-o", "out", "--trials", "0"],
    ["eval", "--kg", "countries", "-q", "countries", "-o", "out", "--model", "nosuchprovider:x"],
    ["eval", "--kg", "countries", "-q", "empty.jsonl", "-o", "out"],
    ["traces", "stats", "missing.jsonl"],
    ["traces", "fifo.jsonl"],
]


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_answered_without_heavy_imports(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    os.mkfifo(tmp_path / "fifo.jsonl")
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


LANGCHAIN = ("langchain", "langchain_core", "langgraph", "langsmith")
LIGHT_PROBE = """
import json, sys
{code}
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set(%r) | {{m for m in %r if m in sys.modules}})))
"""


def _loaded(code: str, watch: tuple[str, ...] = (), cwd: Path | None = None) -> list[str]:
    probe = LIGHT_PROBE.format(code=code) % (LANGCHAIN, watch)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_knowledge_graph_package_never_imports_langchain() -> None:
    assert _loaded("import graphtrail.kg; graphtrail.kg.load_kg('countries')") == []


def test_kg_info_reads_a_graph_without_the_agents_or_langchain(tmp_path: Path) -> None:
    (tmp_path / "g.tsv").write_text("Kenya\tcapital\tNairobi\nUganda\tborders\tKenya\n", encoding="utf-8")
    code = "from graphtrail.cli.main import main; assert main(['kg', 'info', 'g.tsv']) == 0"
    assert _loaded(code, ("graphtrail.agents", "graphtrail.tracer.handler", "graphtrail.evaluators", "scipy", "networkx"), tmp_path) == []


def test_comparing_and_reading_results_need_neither_langchain_nor_scipy() -> None:
    code = "import graphtrail.evaluators.comparison as c; c.compare; c.parse_rules; import graphtrail.evaluators.report"
    assert _loaded(code, ("scipy", "networkx", "graphtrail.agents", "graphtrail.tracer.handler")) == []


def test_a_bad_gate_rule_is_answered_before_any_evaluation_is_read(tmp_path: Path) -> None:
    code = "from graphtrail.cli.main import main; assert main(['compare', 'a', 'b', '--fail-on', 'bogus']) == 2"
    assert _loaded(code, ("scipy", "graphtrail.evaluators.report", "graphtrail.agents"), tmp_path) == []


def test_the_evaluators_replay_function_is_imported_on_first_use() -> None:
    code = "import graphtrail.evaluators as e, graphtrail.evaluators.replay.fromtraces; print(file=sys.stderr)"
    assert _loaded(code, ("graphtrail.agents", "graphtrail.evaluators.replay.runner")) == []
    code = "import inspect, graphtrail.evaluators.replay.cache; from graphtrail.evaluators import replay; assert inspect.iscoroutinefunction(replay)"
    assert _loaded(code) != []  # the function, and with it the runner and LangChain


def test_annotating_through_phoenix_never_imports_phoenix() -> None:
    assert _loaded("import graphtrail.cli.annotate as a; a._to_phoenix", ("phoenix",)) == []


def test_the_written_out_whitespace_is_what_str_strip_removes() -> None:
    from graphtrail.kg.loaders.delimited import PY_WHITESPACE

    assert PY_WHITESPACE == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())


def test_the_model_providers_read_from_source_are_langchains() -> None:
    from langchain.chat_models.base import _BUILTIN_PROVIDERS

    from graphtrail.cli.inputs import _langchain_providers

    assert sorted(_langchain_providers() or []) == sorted(_BUILTIN_PROVIDERS)
