"""Import a user's ``path/to/file.py`` (``--agent my_agent.py:build``) under a private name of its own.

Registered under its file stem, a user's ``json.py`` would take the place of the
standard ``json`` in ``sys.modules`` (or, with ``json`` loaded already, lose its own
entry, so dataclasses and pydantic would resolve its annotations in the wrong
module), and two ``my_agent.py`` in different folders would share one entry. So the
file is loaded as ``_graphtrail_user_<digest>.<stem>``, the digest taken from its
folder's resolved path: the same file always gets the same name, two files never
share one. That name sits in a package of its own whose ``__path__`` is the file's
folder, so ``from . import tools`` finds the sibling ``tools.py``; the folder also
goes first on ``sys.path`` (once), so ``import tools`` works too, as when the file
is run as a script.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path

from .errors import InputError

__all__ = ["PREFIX", "private_name", "import_user_file"]

#: What every private package name starts with (never ``graphtrail.``: the CLI treats those modules as its own).
PREFIX = "_graphtrail_user_"


def private_name(path: Path) -> tuple[str, str]:
    """(package, module) names for the file at ``path``: derived from its resolved folder and its stem."""
    folder = path.resolve().parent
    package = PREFIX + hashlib.sha256(str(folder).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return package, f"{package}.{path.stem}"


def _package(name: str, folder: Path) -> types.ModuleType:
    """The private package standing for ``folder`` (made once; its ``__init__.py``, if any, is not run)."""
    existing = sys.modules.get(name)
    if existing is not None:
        return existing
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [str(folder)]
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    return package


def import_user_file(path: Path, shown: str) -> types.ModuleType:
    """Run the user's ``path`` as a module and return it; :class:`InputError` (naming ``shown``) when it fails."""
    folder = path.resolve().parent
    package_name, name = private_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"cannot import {shown}", "use a .py file or an importable module name")
    _package(package_name, folder)
    module = importlib.util.module_from_spec(spec)
    # In sys.modules while it runs, as `import` does: its dataclasses and pydantic models look their module up there.
    sys.modules[name] = module
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if not isinstance(exc, Exception):
            raise  # Ctrl-C, SystemExit: not an import error
        raise InputError(f"importing {shown} failed: {type(exc).__name__}: {exc}", "--debug shows the traceback") from exc
    return module
