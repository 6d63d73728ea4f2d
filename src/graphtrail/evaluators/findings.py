"""Moved to :mod:`graphtrail.evaluators.scoring.findings`; kept so old imports work."""

from .scoring.findings import *  # noqa: F401,F403
from .scoring.findings import __all__  # noqa: F401
