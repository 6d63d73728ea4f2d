"""Trace files are read as streams (issue 29, item 5).

``traces``, ``traces stats`` and ``eval --from-traces`` read one line at a time and
handle each trace once it is complete, so memory holds the traces in flight, not the
file (benchmarks/bounded_inputs.py measures RSS and time on hundreds of MB). Here:
what streaming changes that a test can see. ``--limit`` stops reading (a broken line
after the limit is never reached), a FIFO or a device is refused at once with exit 2,
what the stream yields equals what the whole-file reader rebuilt, and an input too
large for memory is exit 2, not an internal error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphtrail
from graphtrail.agents import create_graphrag_agent, load_kg, load_questions
from graphtrail.cli.main import main
from graphtrail.cli.tracefiles import iter_json_records
from graphtrail.cli.tracestream import iter_runs, slim
from graphtrail.tracer import Trajectory, signals_of, trajectories_from_otlp_json

MODEL = "offline:cite=endpoints,unsupported=0.5,seed=1"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[Trajectory]]]:
    path = tmp_path_factory.mktemp("stream") / "traces.jsonl"
    graphtrail.configure(exporter="jsonl", path=path)
    agent = graphtrail.trace_agent(create_graphrag_agent(MODEL, load_kg("countries")), name="kg-agent")
    try:
        with graphtrail.capture() as cap:
            for q in load_questions("countries-demo")[:3]:
                agent.invoke({"messages": [("user", q.question)]})
        graphtrail.tracer.flush()
        yield path, list(cap.trajectories)
    finally:
        graphtrail.configure()


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_stream_rebuilds_what_the_whole_file_reader_did(traces: tuple[Path, list[Trajectory]]) -> None:
    path, captured = traces
    streamed = [run.trajectory for run in iter_runs(iter_json_records(path), path)]
    whole = trajectories_from_otlp_json(str(path))
    key = lambda t: t.run_id  # noqa: E731
    assert sorted(streamed, key=key) == sorted(whole, key=key)
    assert {t.run_id for t in streamed} == {t.run_id for t in captured}


def test_a_slim_run_keeps_what_stats_and_sampling_read(traces: tuple[Path, list[Trajectory]]) -> None:
    from graphtrail.cli.tracestats import compute_stats
    from graphtrail.evaluators.replay.fromtraces import questions_from_traces

    path, _ = traces
    runs = [run.trajectory for run in iter_runs(iter_json_records(path), path)]
    small = [slim(t) for t in runs]
    for full, digest in zip(runs, small):
        assert signals_of(digest) == signals_of(full)
        assert list(digest.visited_uncited) == full.visited_uncited
        assert not hasattr(digest, "steps")
    assert compute_stats(small, source="x").to_json() == compute_stats(runs, source="x").to_json()
    assert questions_from_traces(small) == questions_from_traces(runs)


def _with_broken_tail(path: Path, tmp_path: Path) -> Path:
    broken = tmp_path / "broken.jsonl"
    broken.write_text(path.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    return broken


def test_limit_stops_reading_before_a_broken_line(traces: tuple[Path, list[Trajectory]], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    broken = _with_broken_tail(traces[0], tmp_path)
    code, _, err = _run(capsys, "traces", str(broken))
    assert code == 2 and "is not JSON" in err  # the whole file is read: the broken line is found
    code, out, err = _run(capsys, "traces", str(broken), "--limit", "1")
    assert code == 0, err
    assert "showing the first 1 run(s)" in " ".join(out.split()) and "not read" in out
    code, out, err = _run(capsys, "traces", str(broken), "--format", "otlp-json", "--limit", "1")
    assert code == 0, err
    assert len({s["traceId"] for rs in json.loads(out)["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]}) == 1


def test_conversions_stream_every_trace(traces: tuple[Path, list[Trajectory]], capsys: pytest.CaptureFixture[str]) -> None:
    path, captured = traces
    code, out, err = _run(capsys, "traces", str(path), "--format", "jaeger")
    assert code == 0, err
    assert sorted(t["traceID"] for t in json.loads(out)["data"]) == sorted(t.trace_id for t in captured)
    code, out, err = _run(capsys, "traces", str(path), "--format", "otlp-json")
    assert code == 0, err
    spans = [s for rs in json.loads(out)["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    written = [s for line in path.read_text().splitlines() for rs in json.loads(line)["resourceSpans"]
               for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert sorted(s["spanId"] for s in spans) == sorted(s["spanId"] for s in written)


def test_from_traces_limit_reads_only_as_far_as_it_needs(traces: tuple[Path, list[Trajectory]], tmp_path: Path) -> None:
    from graphtrail.cli.fromtraces import _first_questions
    from graphtrail.cli.statscmd import load_trajectories

    broken = _with_broken_tail(traces[0], tmp_path)
    first, _ = load_trajectories(broken, jaeger=None, service=None, since=None, keep=_first_questions(1))
    assert len({t.question for t in first}) == 1
    with pytest.raises(Exception, match="is not JSON"):
        load_trajectories(broken, jaeger=None, service=None, since=None)


@pytest.mark.parametrize("command", [["traces"], ["traces", "stats"], ["eval", "--kg", "countries", "-o", "out", "--from-traces"]],
                         ids=" ".join)
def test_a_fifo_or_a_device_is_refused_at_once(command: list[str], tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for source in (str(fifo), "/dev/zero"):
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "graphtrail", *command, source], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "not a regular file" in lines[0], proc.stderr
        assert time.monotonic() - started < 100  # no hang (a FIFO with no writer would block forever)


def test_a_device_as_results_json_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "report", "/dev/zero")
    assert code == 2 and "not a regular file" in err and "internal error" not in err


def test_running_out_of_memory_on_an_input_is_exit_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                      traces: tuple[Path, list[Trajectory]]) -> None:
    from graphtrail.cli import tracefiles

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(tracefiles, "check_record", exhausted)
    code, _, err = _run(capsys, "traces", "stats", str(traces[0]))
    assert code == 2 and "out of memory" in err and "internal error" not in err


def test_an_over_long_line_and_an_oversized_document_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from graphtrail.cli import tracefiles

    monkeypatch.setattr(tracefiles, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(tracefiles, "MAX_DOCUMENT_BYTES", 1000)
    long_line = tmp_path / "long.jsonl"
    long_line.write_text(json.dumps({"resourceSpans": [], "pad": "x" * 2000}) + "\n")
    code, _, err = _run(capsys, "traces", str(long_line))
    assert code == 2 and "line 1 is longer than" in err
    document = tmp_path / "doc.json"
    document.write_text(json.dumps({"resourceSpans": [], "pad": "x" * 2000}, indent=2))
    code, _, err = _run(capsys, "traces", str(document))
    assert code == 2 and "one JSON document" in err and "JSON lines" in err
