"""Run the code blocks of graphtrail's Markdown pages: the machinery behind tests/test_docs.py.

Blocks are found with pytest-codeblocks' parser (``extract_from_file``), so a
page marks a block the way that tool documents, in an HTML comment right above
it that renders as nothing:

- ``<!--pytest.mark.skip(reason="needs Docker")-->``: not run, the reason shown;
- ``<!--pytest-codeblocks:importorskip(ladybug)-->``: skipped when the module is missing;
- ``<!--pytest-codeblocks:cont-->``: the block continues the one before;
- ``<!--pytest-codeblocks:expected-output-->`` after a block: the next block is what it prints.

Python blocks run in this process. Shell blocks run command by command:
``graphtrail ...`` and ``python ...`` with the interpreter running the tests
(so the graphtrail under test answers), ``VAR=value`` prefixes as environment,
``&&`` and ``;`` as separators. ``pip install``, ``python -m venv`` and
activating a virtual environment are taken as done: the tests run in the
installed environment. Any other program fails the test with a pointer
to the skip mark, so a page never claims a command nobody ran.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ShellCommand", "shell_commands", "run_shell_block", "UnrunnableCommand"]

RUNNABLE = ("graphtrail", "python", "python3")


class UnrunnableCommand(Exception):
    """A shell block names a program the docs test does not run."""


@dataclass(frozen=True)
class ShellCommand:
    """One command of a shell block: its environment prefix and its words."""

    env: dict[str, str]
    argv: list[str]


def _logical_lines(code: str) -> list[str]:
    """Lines with backslash continuations joined."""
    lines: list[str] = []
    pending = ""
    for raw in code.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def shell_commands(code: str) -> list[ShellCommand]:
    """The commands of a shell block, in order; comments and blank lines dropped."""
    commands: list[ShellCommand] = []
    for line in _logical_lines(code):
        words: list[str] = []
        for word in [*shlex.split(line, comments=True), "&&"]:
            if word not in ("&&", ";"):
                words.append(word)
                continue
            if words:
                env = {}
                while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
                    name, value = words.pop(0).split("=", 1)
                    env[name] = value
                commands.append(ShellCommand(env=env, argv=words))
            words = []
    return commands


def _argv(command: ShellCommand) -> list[str] | None:
    """What to run for ``command``, ``None`` to pass over it, or :class:`UnrunnableCommand`."""
    head, *rest = command.argv
    if head == "graphtrail":
        return [sys.executable, "-m", "graphtrail", *rest]
    if head in ("pip", "pip3") and rest[:1] == ["install"]:
        return None  # the environment under test is the installed one
    if head in (".", "source") or (head in ("python", "python3") and rest[:2] == ["-m", "venv"]):
        return None  # setting up a virtual environment: the tests already run in one
    if head in ("python", "python3"):
        return [sys.executable, *rest]
    raise UnrunnableCommand(
        f"the docs test runs only {', '.join(RUNNABLE)} and pip install, not {head!r}; mark the block "
        '<!--pytest.mark.skip(reason="needs ...")--> (see docs/architecture.md, "Writing docs")'
    )


def run_shell_block(code: str, cwd: Path, env: dict[str, str], timeout: float = 600) -> list[subprocess.CompletedProcess[str]]:
    """Run every command of a shell block in ``cwd``; raise AssertionError on the first that fails."""
    done: list[subprocess.CompletedProcess[str]] = []
    for command in shell_commands(code):
        argv = _argv(command)
        if argv is None:
            continue
        proc = subprocess.run(argv, cwd=cwd, env={**env, **command.env}, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise AssertionError(
                f"`{shlex.join(command.argv)}` exited {proc.returncode} in {cwd}\n"
                f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
            )
        done.append(proc)
    return done


def subprocess_env(extra_path: list[Path]) -> dict[str, str]:
    """The environment commands run in: graphtrail under test first on PYTHONPATH, no OTLP collector."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in extra_path), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["COLUMNS"] = "120"
    return env


def mark_objects(marks: list[str]) -> list[Any]:
    """The pytest marks a block's comments name (evaluated as pytest-codeblocks does)."""
    import pytest

    return [eval(mark, {"pytest": pytest, "sys": sys, "os": os}) for mark in marks]  # noqa: S307 - our own pages
