"""``graphtrail traces`` filters the same way on every trace file and in every format.

``--question ID`` finds a run in ``run``'s traces.jsonl (whose roots carry the
question id, like a replay's), in trajectories.jsonl and in an evaluation's
replay-traces.jsonl; ``--limit`` and the filters hold for the Jaeger and
OTLP/JSON conversions too. Real runs of the offline agent on 3 bundled questions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphtrail.cli.main import main


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("filters")
    common = ["--kg", "countries", "--questions", "countries-demo", "--limit", "3"]
    assert main(["run", *common, "--out", str(root / "run")]) == 0
    assert main(["eval", *common, "--out", str(root / "eval"), "-c", "baseline,uncited_mask", "--concurrency", "1"]) == 0
    answers = [json.loads(line) for line in (root / "run" / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    return {"run": root / "run", "eval": root / "eval", "answers": answers}


def traces(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["traces", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def trace_ids(document: dict[str, Any]) -> list[str]:
    if "data" in document:
        return [t["traceID"] for t in document["data"]]
    spans = [s for rs in document["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    return list(dict.fromkeys(s["traceId"] for s in spans))


def root_attributes(document: dict[str, Any]) -> list[dict[str, Any]]:
    spans = [s for rs in document["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    return [{a["key"]: next(iter(a["value"].values())) for a in s["attributes"]} for s in spans if not s.get("parentSpanId")]


def test_run_roots_carry_the_question_id(outputs: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = traces(capsys, str(outputs["run"] / "traces.jsonl"), "--format", "otlp-json")
    assert code == 0
    by_trace = {a["trace_id"]: a["id"] for a in outputs["answers"]}
    roots = root_attributes(json.loads(out))
    assert len(roots) == len(by_trace)
    assert sorted(r["graphtrail.question_id"] for r in roots) == sorted(by_trace.values())


@pytest.mark.parametrize("file", ["traces.jsonl", "trajectories.jsonl"])
def test_question_id_filters_a_run_file(outputs: dict[str, Any], capsys: pytest.CaptureFixture[str], file: str) -> None:
    wanted = outputs["answers"][1]
    code, out, err = traces(capsys, str(outputs["run"] / file), "--question", wanted["id"])
    assert code == 0, err
    assert wanted["question"] in out and f"[{wanted['id']}]" in out
    flat = " ".join(out.split())  # the console wraps long lines at its width
    assert "3 run(s)" in flat and "1 matching" in flat
    assert all(a["question"] not in out for a in outputs["answers"] if a["id"] != wanted["id"])


def test_an_unknown_question_id_lists_the_ids_there(outputs: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = traces(capsys, str(outputs["run"] / "traces.jsonl"), "--question", "countries-9999")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "question ids in the file: " + ", ".join(a["id"] for a in outputs["answers"]) in err


@pytest.mark.parametrize("fmt", ["jaeger", "otlp-json"])
def test_limit_and_filters_hold_for_conversions(outputs: dict[str, Any], capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    run_file = str(outputs["run"] / "traces.jsonl")
    everything = trace_ids(json.loads(traces(capsys, run_file, "--format", fmt)[1]))
    assert len(everything) == 3
    assert trace_ids(json.loads(traces(capsys, run_file, "--format", fmt, "--limit", "1")[1])) == everything[:1]
    assert trace_ids(json.loads(traces(capsys, run_file, "--format", fmt, "--limit", "2")[1])) == everything[:2]
    wanted = outputs["answers"][2]
    one = trace_ids(json.loads(traces(capsys, run_file, "--format", fmt, "--question", wanted["id"])[1]))
    assert one == [wanted["trace_id"]]

    replays = str(outputs["eval"] / "replay-traces.jsonl")
    code, out, err = traces(capsys, replays, "--format", "otlp-json", "--condition", "uncited_mask", "--limit", "2")
    assert code == 0, err
    roots = root_attributes(json.loads(out))
    assert len(roots) == 2 and {r["graphtrail.condition"] for r in roots} == {"uncited_mask"}
