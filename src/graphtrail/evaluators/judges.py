"""Moved to :mod:`graphtrail.evaluators.scoring.judges`; kept so old imports work."""

from .scoring.judges import *  # noqa: F401,F403
from .scoring.judges import __all__  # noqa: F401
