"""Old module paths, kept for a while: the old name *is* the new module, and importing it warns.

Why: users' code and older docs import modules that have since moved. Breaking those imports
on upgrade is a surprise; keeping them silently forever hides the layout. So an old path is a
two-line module that calls :func:`moved`: it puts the new module in ``sys.modules`` under the
old name (the same object, so private names and monkeypatching behave as before) and emits a
``DeprecationWarning`` naming the new path and the version that removes the old one. The
warning points at the importing line (importlib's own frames are skipped by ``warnings``).
graphtrail itself never imports an old path, so it never triggers the warning.

The module imports nothing from graphtrail.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType

__all__ = ["moved", "REMOVAL"]

#: The release that drops the old paths moved in this one.
REMOVAL = "0.3.0"


def moved(old: str, new: str, removal: str = REMOVAL) -> ModuleType:
    """Make module ``old`` an alias of ``new`` and warn that ``old`` goes in graphtrail ``removal``."""
    module = importlib.import_module(new)
    warnings.warn(
        f"{old} has moved to {new}; import it from there (the old path is removed in graphtrail {removal})",
        DeprecationWarning,
        stacklevel=3,  # moved() -> the old module -> (importlib, skipped) -> the importing line
    )
    sys.modules[old] = module
    return module
