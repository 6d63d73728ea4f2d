"""The ``graphtrail`` command line through its real entry points.

Error paths run ``graphtrail.cli.main`` in-process (it is the console-script
entry point) and check the contract: exit code 2 and exactly one line on
stderr saying what is wrong and what to do, never a traceback. The pipeline
commands run as subprocesses (``python -m graphtrail`` and the ``graphtrail``
script), so tracing configuration never leaks into other tests.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from graphtrail.cli import main

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------- helpers
def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    """``python -m graphtrail ARGS`` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "graphtrail", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the entry point in-process; return (exit code, stdout, stderr)."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_input_error(code: int, err: str, *needles: str) -> None:
    """Exit 2, one stderr line, no traceback, and the line says what is wrong."""
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


# tiny MetaQA-style film graph, in every format the loaders read
FILM_TRIPLES = [
    ("Inception", "director", "Christopher Nolan"),
    ("Interstellar", "director", "Christopher Nolan"),
    ("Christopher Nolan", "birthplace", "London"),
    ("Barbie", "director", "Greta Gerwig"),
    ("Greta Gerwig", "birthplace", "Sacramento"),
    ("Inception", "genre", "Science fiction"),
]
FILM_QUESTIONS = [
    {"id": "f1", "question": "What is the director of Inception?", "answers": ["Christopher Nolan"]},
    {"id": "f2", "question": "What is the birthplace of the director of Barbie?", "answers": ["Sacramento"]},
]


def film_graph() -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    for head, rel, tail in FILM_TRIPLES:
        for node in (head, tail):
            g.add_node(node.lower().replace(" ", "_"), name=node, type="entity")
        g.add_edge(head.lower().replace(" ", "_"), tail.lower().replace(" ", "_"), key=rel, relation=rel)
    return g


def write_triples(path: Path) -> Path:
    path.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in FILM_TRIPLES), encoding="utf-8")
    return path


def write_node_link(path: Path) -> Path:
    path.write_text(json.dumps(nx.node_link_data(film_graph(), edges="links")), encoding="utf-8")
    return path


def write_graphml(path: Path) -> Path:
    g = nx.MultiDiGraph()
    for node, data in film_graph().nodes(data=True):
        g.add_node(node, **data)
    for s, t, data in film_graph().edges(data=True):
        g.add_edge(s, t, relation=data["relation"])
    nx.write_graphml(g, path)
    return path


def write_graphrag_folder(folder: Path) -> Path:
    """A tiny Microsoft GraphRAG output folder (entities, relationships, text_units, communities)."""
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    names = sorted({n for h, _, t in FILM_TRIPLES for n in (h, t)})
    ids = {n: f"e{i}" for i, n in enumerate(names)}
    pd.DataFrame(
        {
            "id": [ids[n] for n in names],
            "human_readable_id": list(range(len(names))),
            "title": [n.upper() for n in names],  # GraphRAG upper-cases titles
            "type": ["FILM" if n in ("Inception", "Interstellar", "Barbie") else "ENTITY" for n in names],
            "description": [f"{n} appears in the film notes." for n in names],
            "text_unit_ids": [["t0"] for _ in names],
        }
    ).to_parquet(folder / "entities.parquet")
    pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(len(FILM_TRIPLES))],
            "source": [h.upper() for h, _, _ in FILM_TRIPLES],
            "target": [t.upper() for _, _, t in FILM_TRIPLES],
            "description": [f"{h} has {r} {t}" for h, r, t in FILM_TRIPLES],
            "weight": [1.0] * len(FILM_TRIPLES),
        }
    ).to_parquet(folder / "relationships.parquet")
    pd.DataFrame(
        {"id": ["t0"], "text": [". ".join(f"{h} has {r} {t}" for h, r, t in FILM_TRIPLES) + "."], "entity_ids": [[ids[n] for n in names]]}
    ).to_parquet(folder / "text_units.parquet")
    pd.DataFrame(
        {"id": ["c0"], "community": [0], "level": [0], "title": ["Films"], "entity_ids": [[ids[n] for n in names]]}
    ).to_parquet(folder / "communities.parquet")
    return folder


def write_questions(path: Path, questions: list[dict[str, Any]] = FILM_QUESTIONS) -> Path:
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return path


def runs_by_condition(out: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    seen = set()
    for line in (out / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        key = json.loads(line)["key"]
        ident = tuple(sorted(key.items()))
        if ident not in seen:
            seen.add(ident)
            counts[key["condition"]] += 1
    return counts


# ----------------------------------------------------------------------------- entry points
def test_console_script_and_python_m_both_work() -> None:
    exe = shutil.which("graphtrail")
    assert exe, "the graphtrail console script is not installed (pip install -e .)"
    proc = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "demo" in proc.stdout and "eval" in proc.stdout
    proc = run_cli("kg", "--help")
    assert proc.returncode == 0 and "info" in proc.stdout


# ----------------------------------------------------------------------------- error paths
def test_unknown_command_and_missing_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert_input_error(*call(capsys, "frobnicate")[::2], "no such command")
    code, _, err = call(capsys, "run", "--kg", "countries", "--out", "x")
    assert_input_error(code, err, "--questions", "graphtrail run --help")


def test_missing_kg_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    q = write_questions(tmp_path / "q.jsonl")
    code, _, err = call(capsys, "run", "--kg", str(tmp_path / "nope.tsv"), "-q", str(q), "-o", str(tmp_path / "o"))
    assert_input_error(code, err, "nope.tsv", "not found")
    code, _, err = call(capsys, "kg", "info", "no_such_bundled_graph")
    assert_input_error(code, err, "no_such_bundled_graph", "bundled")


def test_wrong_kg_format(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "graph.graphml"
    bad.write_text("<graphml><graph><node id='a'></graph>", encoding="utf-8")
    code, _, err = call(capsys, "kg", "info", str(bad))
    assert_input_error(code, err, "graph.graphml")
    bad_json = tmp_path / "graph.json"
    bad_json.write_text('{"nodes": [', encoding="utf-8")
    assert_input_error(*call(capsys, "kg", "info", str(bad_json))[::2], "graph.json")
    empty_dir = tmp_path / "not_graphrag"
    empty_dir.mkdir()
    assert_input_error(*call(capsys, "kg", "info", str(empty_dir))[::2], "GraphRAG")


def test_bad_questions_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    kg = write_triples(tmp_path / "films.tsv")
    missing = tmp_path / "missing.jsonl"
    code, _, err = call(capsys, "run", "--kg", str(kg), "-q", str(missing), "-o", str(tmp_path / "o"))
    assert_input_error(code, err, "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q1", "question": "What is the director of Inception?"}\n', encoding="utf-8")
    code, _, err = call(capsys, "run", "--kg", str(kg), "-q", str(bad), "-o", str(tmp_path / "o"))
    assert_input_error(code, err, "bad.jsonl", "answers")
    assert not (tmp_path / "o").exists()  # nothing written for bad input


def test_unknown_condition(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = call(capsys, "eval", "--kg", "countries", "-q", "countries-demo", "-o", str(tmp_path / "o"), "-c", "baseline,cited_remval")
    assert_input_error(code, err, "unknown condition 'cited_remval'", "cited_removal")


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("no_colon_here", "MODULE:FACTORY"),
        ("graphtrail_no_such_module:build", "cannot import agent module"),
        ("json:no_such_factory", "has no attribute 'no_such_factory'"),
        ("json:__doc__", "neither a factory function nor an agent"),
    ],
)
def test_bad_agent_factory(capsys: pytest.CaptureFixture[str], tmp_path: Path, spec: str, needle: str) -> None:
    code, _, err = call(capsys, "run", "--kg", "countries", "-q", "countries-demo", "-o", str(tmp_path / "o"), "--agent", spec)
    assert_input_error(code, err, needle)


def test_agent_factory_that_raises_or_fails_to_import(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "broken_agent.py").write_text("def build(model, kg):\n    raise RuntimeError('no database')\n", encoding="utf-8")
    (tmp_path / "syntax_agent.py").write_text("def build(:\n", encoding="utf-8")
    base = ["run", "--kg", "countries", "-q", "countries-demo", "-o", str(tmp_path / "o")]
    code, _, err = call(capsys, *base, "--agent", f"{tmp_path / 'broken_agent.py'}:build")
    assert_input_error(code, err, "raised RuntimeError: no database")
    code, _, err = call(capsys, *base, "--agent", f"{tmp_path / 'syntax_agent.py'}:build")
    assert_input_error(code, err, "SyntaxError")


def test_agent_and_variant_choices(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    base = ["run", "--kg", "countries", "-q", "countries-demo", "-o", str(tmp_path / "o")]
    assert_input_error(*call(capsys, *base, "--variant", "agentik")[::2], "unknown variant 'agentik'", "evidence_first")
    assert_input_error(*call(capsys, *base, "--variant", "rag", "--agent", "m:f")[::2], "alternatives")


@pytest.mark.parametrize(
    ("model", "needle"),
    [("nosuchprovider:model-x", "unknown model provider 'nosuchprovider'"), ("gpt-4o", "'offline' or 'provider:model'"), ("offline:temperature=2", "offline")],
)
def test_bad_model(capsys: pytest.CaptureFixture[str], tmp_path: Path, model: str, needle: str) -> None:
    code, _, err = call(capsys, "run", "--kg", "countries", "-q", "countries-demo", "-o", str(tmp_path / "o"), "--model", model)
    assert_input_error(code, err, needle)


def test_existing_results_are_never_overwritten(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("precious", encoding="utf-8")
    (out / "traces.jsonl").write_text("precious", encoding="utf-8")
    code, _, err = call(capsys, "eval", "--kg", "countries", "-q", "countries-demo", "-o", str(out))
    assert_input_error(code, err, "already holds results", "--resume", "--force")
    code, _, err = call(capsys, "run", "--kg", "countries", "-q", "countries-demo", "-o", str(out))
    assert_input_error(code, err, "traces.jsonl", "--force")
    code, _, err = call(capsys, "demo", "--out", str(out))
    assert_input_error(code, err, "--force")
    code, _, err = call(capsys, "eval", "--kg", "countries", "-q", "countries-demo", "-o", str(out), "--resume", "--force")
    assert_input_error(code, err, "--resume and --force")
    assert (out / "results.json").read_text(encoding="utf-8") == "precious"
    assert (out / "traces.jsonl").read_text(encoding="utf-8") == "precious"
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    assert_input_error(*call(capsys, "run", "--kg", "countries", "-q", "countries-demo", "-o", str(a_file))[::2], "is a file")


def test_bad_trace_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert_input_error(*call(capsys, "traces", str(tmp_path / "none.jsonl"))[::2], "trace file not found")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert_input_error(*call(capsys, "traces", str(empty))[::2], "empty")
    torn = tmp_path / "torn.jsonl"
    torn.write_text('{"resourceSpans": []}\n{"resourceSp\n', encoding="utf-8")
    assert_input_error(*call(capsys, "traces", str(torn))[::2], "line 2 is not JSON")
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}', encoding="utf-8")
    assert_input_error(*call(capsys, "traces", str(other))[::2], "neither OTLP/JSON spans nor trajectories")
    assert_input_error(*call(capsys, "traces", str(other), "--format", "jaeger")[::2], "no OTLP spans")
    code, _, err = call(capsys, "traces", str(other), "--format", "zipkin")
    assert_input_error(code, err, "--format")


def test_bad_results_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert_input_error(*call(capsys, "report", str(tmp_path / "results.json"))[::2], "results file not found")
    bogus = tmp_path / "results.json"
    bogus.write_text('{"conditions": []}', encoding="utf-8")
    assert_input_error(*call(capsys, "report", str(bogus))[::2], "not a graphtrail results.json")


def test_genuine_bugs_exit_1_and_debug_shows_them(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from graphtrail.cli import pipeline

    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a graphtrail bug")

    monkeypatch.setattr(pipeline, "show_traces", explode)
    code, _, err = call(capsys, "traces", str(tmp_path / "x.jsonl"))
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "internal error: RuntimeError: a graphtrail bug" in err and "--debug" in err
    with pytest.raises(RuntimeError, match="a graphtrail bug"):
        main(["traces", str(tmp_path / "x.jsonl"), "--debug"])


# ----------------------------------------------------------------------------- kg info
@pytest.mark.parametrize("fmt", ["triples", "node-link", "graphml", "graphrag"])
def test_kg_info_on_each_format(capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str) -> None:
    path = {
        "triples": lambda: write_triples(tmp_path / "films.tsv"),
        "node-link": lambda: write_node_link(tmp_path / "films.json"),
        "graphml": lambda: write_graphml(tmp_path / "films.graphml"),
        "graphrag": lambda: write_graphrag_folder(tmp_path / "graphrag_output"),
    }[fmt]()
    code, out, err = call(capsys, "kg", "info", str(path), "--samples", "3", "--communities")
    assert code == 0, err
    counts = {m[0]: int(m[1]) for m in re.findall(r"^  (entities|relations|text units|communities): (\d+)$", out, re.M)}
    assert counts["entities"] == len({n for h, _, t in FILM_TRIPLES for n in (h, t)})
    assert counts["relations"] == len(FILM_TRIPLES)
    if "communities" not in counts:  # none in the file: computed only when asked for
        assert "not computed" in out
        code, out, err = call(capsys, "kg", "info", str(path), "--samples", "3", "--communities")
        assert code == 0, err
        counts = {m[0]: int(m[1]) for m in re.findall(r"^  (entities|relations|text units|communities): (\d+)$", out, re.M)}
    assert counts["communities"] >= 1
    if fmt == "graphrag":
        assert counts["text units"] == 1 and "film" in out.lower()
    else:
        assert "director" in out and "birthplace" in out  # relation labels survive the round trip
    assert "sample entities" in out


def test_kg_info_and_list_bundled(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(capsys, "kg", "list")
    assert code == 0 and "countries-demo" in out
    code, out, _ = call(capsys, "kg", "info", "countries", "--samples", "0")
    assert code == 0 and "country" in out and "capital" in out


# ----------------------------------------------------------------------------- the pipeline commands
@pytest.fixture(scope="module")
def demo_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("demo") / "demo"
    proc = run_cli("demo", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_demo_writes_traces_results_and_reports(demo_out: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, proc = demo_out
    for name in ("traces.jsonl", "trajectories.jsonl", "answers.jsonl", "replay-traces.jsonl", "runs.jsonl",
                 "results.json", "report.md", "report.html"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    from graphtrail.evaluators import DEFAULT_CONDITIONS

    assert [c["condition"] for c in results["conditions"]] == list(DEFAULT_CONDITIONS)  # the full suite
    answers = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(answers) == results["stats"]["n_questions"] > 0
    assert all(a["trace_id"] and a["visited"] for a in answers)
    # the short table and where the files are
    assert "cited_removal" in proc.stdout and str(out / "report.html") in proc.stdout
    # the run's accuracy and the replay baseline's are labelled, and why they differ is said
    assert "accuracy of these runs (one per question)" in proc.stdout and "Two accuracies" in proc.stdout
    # the agent runs' traces are in the jsonl file, one trace per question
    trace_ids = {
        span["traceId"]
        for line in (out / "traces.jsonl").read_text(encoding="utf-8").splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    }
    assert trace_ids == {a["trace_id"] for a in answers}


def test_demo_refuses_to_overwrite(demo_out: tuple[Path, subprocess.CompletedProcess[str]], capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = demo_out
    before = (out / "results.json").read_bytes()
    code, _, err = call(capsys, "demo", "--out", str(out))
    assert_input_error(code, err, "already holds results", "--force")
    assert (out / "results.json").read_bytes() == before


def test_traces_summary_and_conversions(demo_out: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    out, _ = demo_out
    answers = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    proc = run_cli("traces", str(out / "traces.jsonl"))
    assert proc.returncode == 0, proc.stderr
    assert f"{len(answers)} run(s)" in proc.stdout
    first = answers[0]
    assert first["question"] in proc.stdout and "citations:" in proc.stdout and "visited, not cited" in proc.stdout
    assert all(c in proc.stdout for c in first["citations"])

    jaeger = tmp_path / "jaeger.json"
    proc = run_cli("traces", str(out / "traces.jsonl"), "--format", "jaeger", "--output", str(jaeger))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(jaeger.read_text(encoding="utf-8"))["data"]
    assert {t["traceID"] for t in data} == {a["trace_id"] for a in answers}
    trace = next(t for t in data if t["traceID"] == first["trace_id"])
    spans = {s["spanID"]: s for s in trace["spans"]}
    roots = [s for s in spans.values() if not s["references"]]
    assert len(roots) == 1 and roots[0]["operationName"].startswith("invoke_agent")
    assert all(ref["spanID"] in spans for s in spans.values() for ref in s["references"])  # a connected tree
    tools = [s for s in spans.values() if s["operationName"].startswith("execute_tool")]
    tags = {t["key"]: t["value"] for t in tools[0]["tags"]}
    assert "graphtrail.entities.visited" in tags and tags["graphtrail.step"] == 1
    assert trace["processes"][roots[0]["processID"]]["serviceName"] == "graphtrail"

    proc = run_cli("traces", str(out / "traces.jsonl"), "--format", "otlp-json")
    assert proc.returncode == 0, proc.stderr
    merged = json.loads(proc.stdout)
    n_spans = sum(len(ss["spans"]) for rs in merged["resourceSpans"] for ss in rs["scopeSpans"])
    assert n_spans == sum(len(t["spans"]) for t in data)

    # the indented document `--output` writes reads back as the same runs
    document = tmp_path / "otlp.json"
    proc = run_cli("traces", str(out / "traces.jsonl"), "--format", "otlp-json", "--output", str(document))
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("traces", str(document))
    assert proc.returncode == 0, proc.stderr
    assert f"{len(answers)} run(s)" in proc.stdout and first["question"] in proc.stdout

    # trajectories.jsonl is accepted too, and shows the same runs; --limit stops reading (issue 29)
    proc = run_cli("traces", str(out / "trajectories.jsonl"))
    assert proc.returncode == 0 and first["question"] in proc.stdout and f"{len(answers)} run(s)" in proc.stdout
    proc = run_cli("traces", str(out / "trajectories.jsonl"), "--limit", "1")
    assert proc.returncode == 0 and first["question"] in proc.stdout and "showing the first 1 run(s)" in " ".join(proc.stdout.split())


def test_report_rerenders_from_results(demo_out: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = demo_out
    results = tmp_path / "results.json"
    shutil.copy(out / "results.json", results)
    code, stdout, err = call(capsys, "report", str(results))
    assert code == 0, err
    assert "cited_removal" in stdout
    assert (tmp_path / "report.md").is_file() and not (tmp_path / "report.html").exists()
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == (out / "report.md").read_text(encoding="utf-8")
    code, _, err = call(capsys, "report", str(results), "--html", "--out", str(tmp_path / "again"))
    assert code == 0, err
    assert (tmp_path / "again" / "report.html").read_text(encoding="utf-8") == (out / "report.html").read_text(encoding="utf-8")
    assert results.read_bytes() == (out / "results.json").read_bytes()  # results are never rewritten


def test_run_on_users_own_files_with_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kg = write_triples(tmp_path / "films.tsv")
    questions = write_questions(tmp_path / "films.jsonl")
    out = tmp_path / "out"
    proc = run_cli("run", "--kg", str(kg), "--questions", str(questions), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["f1", "f2"]
    assert rows[0]["correct"] is True and rows[0]["answer"] == "Christopher Nolan"  # the offline model on a new graph
    assert all(r["visited"] for r in rows)
    first_trace = rows[0]["trace_id"]

    assert call(capsys, "run", "--kg", str(kg), "--questions", str(questions), "--out", str(out))[0] == 2
    proc = run_cli("run", "--kg", str(kg), "--questions", str(questions), "--out", str(out), "--force", "--limit", "1")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 1 and rows[0]["trace_id"] != first_trace
    traces = (out / "traces.jsonl").read_text(encoding="utf-8")
    assert first_trace not in traces and rows[0]["trace_id"] in traces  # replaced, not appended


def test_run_with_users_agent_factory(tmp_path: Path) -> None:
    proc = run_cli(
        "run", "--kg", "countries", "--questions", str(write_questions(tmp_path / "q.jsonl", [
            {"id": "k1", "question": "What is the currency of the country whose capital is Nairobi?", "answers": ["Kenyan shilling"]},
        ])),
        "--agent", f"{ROOT / 'examples' / 'my_agent.py'}:build_agent", "--out", str(tmp_path / "out"),
    )
    assert proc.returncode == 0, proc.stderr
    row = json.loads((tmp_path / "out" / "answers.jsonl").read_text(encoding="utf-8"))
    assert row["answer"] == "Kenyan shilling" and row["citations"] == ["nairobi", "kenya", "kes"]


def test_eval_resume_continues_and_never_redoes_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eval"
    base = ["eval", "--kg", "countries", "-q", "countries-demo", "--limit", "2", "--out", str(out)]
    # In-process throughout: the same entry point, without four interpreter start-ups.
    code, _, err = call(capsys, *base, "-c", "baseline,cited_removal")
    assert code == 0, err
    first = runs_by_condition(out)
    assert set(first) == {"baseline", "cited_removal"} and first["cited_removal"] == 2

    code, _, err = call(capsys, *base, "-c", "baseline,cited_removal")
    assert_input_error(code, err, "--resume")

    # an interrupted run: the cache lost its last records and no report was written
    lines = (out / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    (out / "runs.jsonl").write_text("\n".join(lines[:-2]) + "\n", encoding="utf-8")
    (out / "results.json").unlink()
    kept = lines[:-2]
    code, _, err = call(capsys, *base, "-c", "baseline,cited_removal,uncited_removal", "--resume")
    assert code == 0, err
    after = (out / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    assert after[: len(kept)] == kept  # finished runs were kept, not redone
    counts = runs_by_condition(out)
    assert counts["baseline"] == first["baseline"] and counts["cited_removal"] == 2 and counts["uncited_removal"] == 2
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [c["condition"] for c in results["conditions"]] == ["baseline", "cited_removal", "uncited_removal"]

    code, _, err = call(capsys, *base, "-c", "baseline", "--force")
    assert code == 0, err
    assert set(runs_by_condition(out)) == {"baseline"}
    assert list(out.glob("runs.*.jsonl")), "--force moves the old run cache aside instead of deleting it"


class _OtlpSink(http.server.BaseHTTPRequestHandler):
    received: list[tuple[str, int]] = []

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).received.append((self.path, len(body)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def otlp_sink() -> Iterator[tuple[str, list[tuple[str, int]]]]:
    _OtlpSink.received = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OtlpSink)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _OtlpSink.received
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("how", ["flag", "env"])
def test_run_also_exports_over_otlp(tmp_path: Path, otlp_sink: tuple[str, list[tuple[str, int]]], how: str) -> None:
    url, received = otlp_sink
    args = ["run", "--kg", "countries", "-q", "countries-demo", "--limit", "1", "--out", str(tmp_path / "o")]
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": url} if how == "env" else {}
    proc = run_cli(*args, *(["--otlp", url] if how == "flag" else []), env=env)
    assert proc.returncode == 0, proc.stderr
    assert received and all(path == "/v1/traces" for path, _ in received) and sum(n for _, n in received) > 0
    assert (tmp_path / "o" / "traces.jsonl").stat().st_size > 0  # the jsonl file is written as well
