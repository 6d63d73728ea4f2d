"""graphtrail: see which knowledge-graph entities shaped an agent's answer.

The public API is deliberately small:

- :func:`trace_agent` wraps an agent (any LangChain Runnable, compiled LangGraph
  graph, or a plain sync/async function) so that each run becomes one
  OpenTelemetry trace and one :class:`Trajectory`.
- :func:`capture` collects the trajectories of the runs inside a ``with`` block.
- :func:`configure` chooses where spans go (OTLP, console, JSONL file, none).
- :func:`instrument` / :func:`uninstrument` trace every LangChain run globally,
  for code whose nested calls drop ``config``.

Agents live in :mod:`graphtrail.agents`, replay evaluation in
:mod:`graphtrail.evaluators`.

Imports: only the leaf :mod:`graphtrail._version` at import time; the names
above come from :mod:`graphtrail.tracer` on first use (lazily, so that
``import graphtrail`` and the CLI's start-up stay cheap). No subpackage imports
this module back: the tracer reads the version from ``_version`` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

__all__ = [
    "trace_agent",
    "capture",
    "configure",
    "instrument",
    "uninstrument",
    "Trajectory",
    "GraphTrailHandler",
    "__version__",
]

if TYPE_CHECKING:  # pragma: no cover
    from .tracer import GraphTrailHandler, Trajectory, capture, configure, instrument, trace_agent, uninstrument


def __getattr__(name: str) -> Any:
    # Lazy so that ``import graphtrail`` (and the CLI's start-up) stays cheap.
    if name in __all__ and name != "__version__":
        from . import tracer

        return getattr(tracer, name)
    raise AttributeError(f"module 'graphtrail' has no attribute {name!r}")


def __dir__() -> list[str]:
    # The lazy names above are not module attributes until first used: list them so tab completion
    # finds them. The typing helpers imported above (Any, TYPE_CHECKING, annotations) are not API.
    import types

    dunders = {n for n in globals() if n.startswith("__")}
    subpackages = {n for n, v in globals().items() if isinstance(v, types.ModuleType) and not n.startswith("_")}
    return sorted(dunders | subpackages | set(__all__))
