"""Moved to :mod:`graphtrail.evaluators.scoring.stats`: this old path warns on import and is removed in graphtrail 0.3.0."""

from .._moved import moved

moved(__name__, "graphtrail.evaluators.scoring.stats")
