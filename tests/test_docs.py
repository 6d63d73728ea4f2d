"""Every Python and shell block of README.md and docs/*.md runs, as written.

A page added to docs/ is picked up with no change here. The blocks of one page
run in order in one folder (a later block may read what an earlier one wrote,
as a reader following the page would), which holds the sample files the pages
name (tests/data/docs: ``my_graph.tsv``, ``q.jsonl``, ``triples.tsv``). Python
blocks can import ``examples/`` modules, as when run from that folder. Blocks
that need Docker, a key or a long build are marked skipped with the reason
(docs/architecture.md, "Writing docs"); tests/docs_blocks.py says how blocks run.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from pytest_codeblocks import extract_from_file

import graphtrail
from tests.docs_blocks import UnrunnableCommand, mark_objects, run_shell_block, shell_commands, subprocess_env

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SAMPLES = Path(__file__).resolve().parent / "data" / "docs"
EXAMPLES = ROOT / "examples"
SRC = Path(graphtrail.__file__).resolve().parent.parent  # the graphtrail under test, for subprocesses
LANGUAGES = {"python": "python", "py": "python", "bash": "shell", "sh": "shell", "shell": "shell"}


def _blocks() -> list[Any]:
    params = []
    for page in PAGES:
        for block in extract_from_file(page):
            kind = LANGUAGES.get((block.syntax or "").split()[0] if block.syntax else "")
            if kind is None:
                continue
            name = f"{page.relative_to(ROOT)}:{block.lineno}"
            params.append(pytest.param(page, kind, block, id=name, marks=mark_objects(block.marks)))
    return params


BLOCKS = _blocks()


@pytest.fixture(scope="session")
def page_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    return {}


def _page_dir(page_dirs: dict[Path, Path], page: Path, factory: pytest.TempPathFactory) -> Path:
    if page not in page_dirs:
        folder = factory.mktemp(page.stem)
        for sample in SAMPLES.iterdir():
            shutil.copy(sample, folder / sample.name)
        page_dirs[page] = folder
    return page_dirs[page]


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("page", "kind", "block"), BLOCKS)
def test_block_runs(page: Path, kind: str, block: Any, page_dirs: dict[Path, Path],
                    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    if block.importorskip:
        pytest.importorskip(block.importorskip)
    folder = _page_dir(page_dirs, page, tmp_path_factory)
    if kind == "shell":
        procs = run_shell_block(block.code, folder, subprocess_env([SRC, EXAMPLES]))
        output = "".join(p.stdout for p in procs)
    else:
        monkeypatch.chdir(folder)
        monkeypatch.syspath_prepend(str(EXAMPLES))
        # configure(exporter="otlp") in a page must find no collector: a closed loopback port.
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(block.code, f"{page.name}:{block.lineno}", "exec"), {"__name__": "__main__"})  # noqa: S102
        finally:
            graphtrail.configure(exporter="none")
        output = out.getvalue()
    if block.expected_output is not None:
        assert output.strip() == block.expected_output.strip()


def test_every_page_is_read_and_marks_parse() -> None:
    """The pages are found, and a block whose mark is mistyped fails here rather than vanishing."""
    assert ROOT / "README.md" in PAGES and ROOT / "docs" / "cli.md" in PAGES
    ids = [p.id for p in BLOCKS]
    assert any(i.startswith("README.md:") for i in ids) and any(i.startswith("docs/") for i in ids)


def test_shell_blocks_are_split_as_a_shell_would() -> None:
    code = 'pip install -e . && graphtrail demo --out d  # a comment\nOTEL_X=1 graphtrail traces d/t.jsonl \\\n    --limit 1\n'
    commands = shell_commands(code)
    assert [c.argv for c in commands] == [["pip", "install", "-e", "."], ["graphtrail", "demo", "--out", "d"],
                                          ["graphtrail", "traces", "d/t.jsonl", "--limit", "1"]]
    assert commands[2].env == {"OTEL_X": "1"}


def test_a_program_the_docs_test_cannot_run_fails_with_the_way_out(tmp_path: Path) -> None:
    with pytest.raises(UnrunnableCommand, match="pytest.mark.skip"):
        run_shell_block("docker compose up -d", tmp_path, subprocess_env([SRC]))
    with pytest.raises(AssertionError, match="exited 2"):
        run_shell_block("graphtrail kg info missing.tsv", tmp_path, subprocess_env([SRC]))
