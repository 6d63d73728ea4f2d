"""LadybugDB import: any folder name, errors that quote no statement, and no leftovers after a kill.

The import builds the database in a working folder beside the target. A
subprocess runs a real import and is paused inside it (its engine's ``COPY``
of the relations waits), then killed: after SIGTERM the folder is gone at
once; after SIGKILL the next import into the same folder removes it, while a
running import's folder is never touched.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from graphtrail.agents import KGError, KnowledgeGraph, load_kg
from graphtrail.kg.backends import import_graph

pytest.importorskip("ladybug")
pytest.importorskip("pyarrow")

SRC = Path(__file__).resolve().parents[1] / "src"
#: How an import's working folder is named (the part of its name a later import looks for).
PREFIX = ".graphtrail-import-"


def small_kg() -> KnowledgeGraph:
    kg = KnowledgeGraph(name="small")
    kg.add_entity("a", "A")
    kg.add_entity("b", "B")
    kg.add_relation("a", "next", "b")
    kg.add_text_unit("t", "A then B", ["a", "b"])
    return kg


@pytest.mark.parametrize("folder", ["it's", "back\\slash", "both'\\ $x `y` \"z\"", "new\nline"])
def test_any_target_folder_name_imports_and_reads_back(folder: str, tmp_path: Path) -> None:
    parent = tmp_path / folder
    parent.mkdir()
    target = parent / "g.lbug"
    import_graph(small_kg(), target)
    kg = load_kg(target)
    try:
        assert sorted(kg.entity_ids()) == ["a", "b"] and [r.relation for r in kg.out_relations("a")] == ["next"]
        assert kg.text_unit("t").entity_ids == ("a", "b")
    finally:
        kg.close()
    assert sorted(p.name for p in parent.iterdir()) == ["g.lbug"]


class _Dangling(KnowledgeGraph):
    """A graph whose relation points at an entity it does not hold: the engine refuses the COPY."""

    def relations(self):  # type: ignore[no-untyped-def]
        yield from super().relations()
        from graphtrail.kg.records import Relation

        yield Relation("a", "to nowhere", "ghost", "")


def test_an_engine_error_names_the_target_and_quotes_no_statement(tmp_path: Path) -> None:
    kg = _Dangling(name="dangling")
    kg.add_entity("a", "A")
    parent = tmp_path / "it's a back\\slash"
    parent.mkdir()
    with pytest.raises(KGError) as info:
        import_graph(kg, parent / "g.lbug")
    message = str(info.value)
    assert message.startswith(f"{parent / 'g.lbug'}: LadybugDB import failed")
    assert "COPY" not in message and "FROM" not in message and "\n" not in message
    assert list(parent.iterdir()) == []


_PAUSED_IMPORT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import ladybug
    from graphtrail.agents import load_kg
    from graphtrail.kg.backends import import_graph

    real = ladybug.Connection.execute
    def execute(self, query, parameters=None):
        if query.startswith("COPY RELATION"):
            Path(sys.argv[2]).write_text("paused")
            time.sleep(600)
        return real(self, query, parameters)
    ladybug.Connection.execute = execute
    import_graph(load_kg("countries"), sys.argv[1])
    """
)


def _start_paused_import(target: Path, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    ready = tmp_path / f"ready-{target.stem}"
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen([sys.executable, "-c", _PAUSED_IMPORT, str(target), str(ready)], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the import did not reach its COPY: {proc.communicate()[1].decode()[-2000:]}")
        time.sleep(0.05)
    return proc, ready


def _working_folders(parent: Path) -> list[Path]:
    return [p for p in parent.iterdir() if p.name.startswith(PREFIX)]


def test_sigterm_stops_the_import_and_removes_its_working_folder(tmp_path: Path) -> None:
    parent = tmp_path / "graphs"
    parent.mkdir()
    from graphtrail.kg.backends.scratch import sweep

    proc, _ = _start_paused_import(parent / "g.lbug", tmp_path)
    try:
        assert len(_working_folders(parent)) == 1
        assert sweep(parent) == [] and len(_working_folders(parent)) == 1  # a running import is left alone
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert list(parent.iterdir()) == []


def test_after_sigkill_the_next_import_removes_the_leftover(tmp_path: Path) -> None:
    parent = tmp_path / "graphs"
    parent.mkdir()
    proc, _ = _start_paused_import(parent / "first.lbug", tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    (leftover,) = _working_folders(parent)
    assert leftover.name.startswith(f"{PREFIX}{proc.pid}-")
    import_graph(small_kg(), parent / "second.lbug")
    assert sorted(p.name for p in parent.iterdir()) == ["second.lbug"]
