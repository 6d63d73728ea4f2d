"""The ``graphtrail`` command line: a thin Typer front end over tracer, agents and evaluators.

``main`` is the console-script entry point (``graphtrail = "graphtrail.cli:main"``)
and what ``python -m graphtrail`` runs.
"""

from .main import main

__all__ = ["main"]
