"""Old module paths, kept for a while: the old name *is* the new module, and importing it warns.

Why: users' code and older docs import modules that have since moved. Breaking those imports
on upgrade is a surprise; keeping them silently forever hides the layout. So an old path is a
two-line module that calls :func:`moved`: it puts the new module in ``sys.modules`` under the
old name (the same object, so private names and monkeypatching behave as before) and emits a
``DeprecationWarning`` naming the new path and the version that removes the old one. The
warning points at the importing line (importlib's own frames are skipped by ``warnings``).
graphtrail itself never imports an old path, so it never triggers the warning.

An old *package* path needs one more step. Its submodules would otherwise be found through the
new package's ``__path__`` and loaded a second time under the old dotted name: two copies of
one module, with two copies of its classes (``isinstance`` fails across them) and its state.
So :func:`moved` also puts a finder first on ``sys.meta_path`` that answers ``old.X`` with the
module ``new.X`` itself, warning in the same words.

The module imports nothing from graphtrail.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

__all__ = ["moved", "REMOVAL"]

#: The release that drops the old paths moved in this one.
REMOVAL = "0.3.0"


def _message(old: str, new: str, removal: str) -> str:
    return f"{old} has moved to {new}; import it from there (the old path is removed in graphtrail {removal})"


def moved(old: str, new: str, removal: str = REMOVAL) -> ModuleType:
    """Make module ``old`` an alias of ``new`` and warn that ``old`` goes in graphtrail ``removal``.

    When ``new`` is a package, ``old.X`` becomes an alias of ``new.X`` the same way.
    """
    module = importlib.import_module(new)
    warnings.warn(
        _message(old, new, removal),
        DeprecationWarning,
        stacklevel=3,  # moved() -> the old module -> (importlib, skipped) -> the importing line
    )
    sys.modules[old] = module
    if hasattr(module, "__path__") and not any(
        isinstance(f, _OldSubmodules) and f.old == old for f in sys.meta_path
    ):
        sys.meta_path.insert(0, _OldSubmodules(old, new, removal))
    return module


class _OldSubmodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``old.X`` as the module ``new.X`` (the same object), with the moved warning."""

    def __init__(self, old: str, new: str, removal: str) -> None:
        self.old, self.new, self.removal = old, new, removal

    def _new_name(self, fullname: str) -> str | None:
        if not fullname.startswith(self.old + "."):
            return None
        return self.new + fullname[len(self.old):]

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = self._new_name(fullname)
        if new is None or importlib.util.find_spec(new) is None:
            return None  # not ours, or no such module at the new path either: the import fails as usual
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # a placeholder; exec_module puts the real module in its place

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        new = self._new_name(old)
        assert new is not None
        target = importlib.import_module(new)
        # exec_module -> (importlib, skipped) -> the importing line
        warnings.warn(_message(old, new, self.removal), DeprecationWarning, stacklevel=2)
        sys.modules[old] = target
