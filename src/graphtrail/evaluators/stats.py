"""Moved to :mod:`graphtrail.evaluators.scoring.stats`; kept so old imports work."""

from .scoring.stats import *  # noqa: F401,F403
from .scoring.stats import __all__  # noqa: F401
