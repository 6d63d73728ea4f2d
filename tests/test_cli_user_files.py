"""--agent path/to/file.py:FACTORY: each user file is its own module, whatever its name.

A file named like a module already loaded (json.py) and two files with one name
(my_agent.py in two folders) must not share a sys.modules entry: Python looks a
class's module up there (dataclasses for ClassVar, typing.get_type_hints, pydantic,
pickle), so a shared entry resolves the user's annotations in someone else's module.
Siblings in the user's folder stay importable, relatively and absolutely.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphtrail.cli.errors import InputError
from graphtrail.cli.inputs import load_agent_factory
from graphtrail.cli.userfile import PREFIX


@pytest.fixture(autouse=True)
def _clean_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Leave sys.path and sys.modules as they were (the user files and their siblings go away)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


SETTINGS = """
from __future__ import annotations
import dataclasses
from typing import ClassVar

@dataclasses.dataclass
class Settings:
    kind: ClassVar[str] = "agent"   # a class constant, not a field: dataclasses reads ClassVar in this module
    model: str = "m"

def build(model=None, kg=None):
    return Settings
"""


def test_a_file_named_like_a_loaded_module_is_its_own_module(tmp_path: Path) -> None:
    user = _write(tmp_path / "agents" / "json.py", SETTINGS)
    build = load_agent_factory(f"{user}:build")
    settings = build()
    assert [f.name for f in dataclasses.fields(settings)] == ["model"]  # ClassVar resolved in the user's module
    assert sys.modules["json"] is json and json.dumps([1]) == "[1]"  # the standard json is untouched
    assert inspect.getmodule(build).__file__ == str(user)
    assert build.__module__.startswith(PREFIX) and build.__module__.endswith(".json")


def test_two_files_with_one_name_in_two_folders_do_not_collide(tmp_path: Path) -> None:
    # a/ imports its sibling relatively, b/ absolutely (as a script would): both must find their own
    a = _write(tmp_path / "a" / "my_agent.py", """
from __future__ import annotations
from .tools import NAME

class Config:
    budget: Budget

class Budget:
    pass

def build(model=None, kg=None):
    return NAME, Config
""")
    _write(tmp_path / "a" / "tools.py", "NAME = 'agent a'\n")
    b = _write(tmp_path / "b" / "my_agent.py", """
from __future__ import annotations
import b_tools

class Config:
    limit: Limit

class Limit:
    pass

def build(model=None, kg=None):
    return b_tools.NAME, Config
""")
    _write(tmp_path / "b" / "b_tools.py", "NAME = 'agent b'\n")
    build_a, build_b = load_agent_factory(f"{a}:build"), load_agent_factory(f"{b}:build")
    (name_a, config_a), (name_b, config_b) = build_a(), build_b()
    assert (name_a, name_b) == ("agent a", "agent b")
    # get_type_hints looks each class's module up in sys.modules: each finds its own names
    assert typing.get_type_hints(config_a)["budget"].__name__ == "Budget"
    assert typing.get_type_hints(config_b)["limit"].__name__ == "Limit"
    assert build_a.__module__ != build_b.__module__
    assert inspect.getmodule(build_a).__file__ == str(a) and inspect.getmodule(build_b).__file__ == str(b)
    # the same file loaded again gets the same name (a stable identity for one path)
    assert load_agent_factory(f"{a}:build").__module__ == build_a.__module__
    assert sys.path.count(str(a.parent.resolve())) == 1


def test_a_file_that_fails_to_import_leaves_no_module_behind(tmp_path: Path) -> None:
    user = _write(tmp_path / "broken.py", "raise RuntimeError('no database')\n")
    with pytest.raises(InputError, match="RuntimeError: no database"):
        load_agent_factory(f"{user}:build")
    assert not [n for n in sys.modules if n.startswith(PREFIX) and n.endswith(".broken")]
