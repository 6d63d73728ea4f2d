"""Moved to :mod:`graphtrail.evaluators.replay.interception`; kept so old imports work."""

from .replay.interception import *  # noqa: F401,F403
from .replay.interception import __all__  # noqa: F401
