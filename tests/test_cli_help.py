"""``--help`` reads like a well-kept CLI, and usage errors say what is accepted.

Every command in the click tree is checked, so a command added later is held to
the same rules: no Typer type placeholders (``<bool>``, ``<int>``, ``<list[str]>``,
``{results}``) in its help, one line with exit code 2 for a bad value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main

from graphtrail.cli.app import app
from graphtrail.cli.main import main


def _commands(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    command = command or typer.main.get_command(app)
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = [path for path, _ in _commands()]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error_line(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("graphtrail: error: ")
    return lines[0]


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "graphtrail")
def test_help_has_no_type_placeholders(capsys: pytest.CaptureFixture[str], path: tuple[str, ...]) -> None:
    code, out, _ = run(capsys, *path, "--help")
    assert code == 0
    assert out.startswith(f"Usage: graphtrail{' ' if path else ''}{' '.join(path)} ")
    for placeholder in ("<bool>", "<int", "<str>", "<list", "<path>", "x>=", "{"):
        assert placeholder not in out, f"{placeholder!r} in the help of {' '.join(path)}:\n{out}"
    assert "╭" not in out  # plain text, no boxes: it wraps on any terminal


def test_help_names_values_by_what_they_are(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "eval", "--help")
    for shown in ("--out DIR", "--limit N", "--trials N", "--otlp URL", "--agent MODULE:FACTORY", "--citations names|markers"):
        assert shown in out
    assert re.search(r"^\s+--force\s+Overwrite", out, re.M)  # a flag shows no value
    _, out, _ = run(capsys, "report", "--help")
    assert "Usage: graphtrail report [OPTIONS] RESULTS.json" in out
    _, out, _ = run(capsys, "traces", "--help")
    assert "--format <summary|jaeger|otlp-json>" in out


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["traces", "t.jsonl", "--format", "xml"], ["--format 'xml' is not accepted", "summary, jaeger, otlp-json"]),
        (["traces", "t.jsonl", "-fxml"], ["--format 'xml' is not accepted"]),
        (["traces", "t.jsonl", "--format=xml"], ["--format 'xml' is not accepted"]),
        (["demo", "--force", "true"], ["--force is a flag and takes no value, got 'true'", "pass --force alone"]),
        (["eval", "--kg", "k", "-q", "q", "-o", "o", "--no-reuse", "false"], ["--no-reuse is a flag", "--reuse or --no-reuse"]),
        (["traces", "t.jsonl", "--limit", "x"], ["--limit takes a whole number, got 'x'"]),
        (["traces", "t.jsonl", "--limit", "0"], ["--limit must be at least 1, got '0'"]),
        (["report", "a.json", "b.json"], ["unexpected argument 'b.json'"]),
        (["eval", "--kg", "k", "-q", "q", "-o", "o", "--citations", "x"], ["--citations 'x' is not accepted", "names, markers"]),
    ],
)
def test_bad_values_get_one_line_that_lists_what_is_accepted(
    capsys: pytest.CaptureFixture[str], args: list[str], needles: list[str]
) -> None:
    line = one_error_line(*run(capsys, *args)[::2])
    for needle in needles:
        assert needle in line
    assert "Value error" not in line and "Input should be" not in line


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "graphtrail")
def test_every_help_states_the_exit_codes(capsys: pytest.CaptureFixture[str], path: tuple[str, ...]) -> None:
    _, out, _ = run(capsys, *path, "--help")
    codes = out.split("Exit codes:", 1)[1]
    for code in ("0", "1", "2", "130"):
        assert re.search(rf"^\s+{code}\s+\S", codes, re.M), f"exit {code} missing from the help of {' '.join(path)}"
    if path == ("compare",):
        assert "gate failed" in codes


def test_the_top_help_lists_every_command_and_traces_stats_is_named_as_typed(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--help")
    listed = set(re.findall(r"^  (\w+(?: stats)?)\s{2,}", out.split("Commands:", 1)[1], re.M))
    assert listed >= {"demo", "run", "eval", "report", "compare", "traces", "traces stats", "annotate", "kg"}
    _, out, _ = run(capsys, "traces", "stats", "--help")
    assert out.startswith("Usage: graphtrail traces stats [OPTIONS] [FILE]")
    _, out, _ = run(capsys, "traces", "--help")
    assert "graphtrail traces stats FILE" in " ".join(out.split())


def test_placeholders_are_the_same_words_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    allowed = {"DIR", "FILE", "N", "URL", "KG", "MODEL", "MODULE:FACTORY", "VARIANT", "LIST", "ID", "NAME", "DURATION", "RULES", "P",
               "TARGET", "SEED", "CONCURRENCY", "TRIALS", "DATA", "FIELD", "RESULTS.json", "RESULTS", "BASE", "NEW", "[FILE]", "COMMAND", "[ARGS]...",
               "[OPTIONS]"}
    for path in COMMANDS:
        _, out, _ = run(capsys, *path, "--help")
        for word in re.findall(r"(?:--[\w-]+|-\w)[ =]([A-Z][A-Z0-9_.:]+)\b", out):
            assert word in allowed, f"{word} in the help of {' '.join(path) or 'graphtrail'}"
