"""Moved to :mod:`graphtrail.evaluators.scoring.metrics`; kept so old imports work."""

from .scoring.metrics import *  # noqa: F401,F403
from .scoring.metrics import __all__  # noqa: F401
