"""Moved to :mod:`graphtrail.evaluators.scoring.judges`: this old path warns on import and is removed in graphtrail 0.3.0."""

from .._moved import moved

moved(__name__, "graphtrail.evaluators.scoring.judges")
