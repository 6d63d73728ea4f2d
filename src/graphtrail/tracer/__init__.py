"""graphtrail.tracer: LangChain/LangGraph runs as OpenTelemetry traces and Trajectories.

The tracer does not import :mod:`graphtrail.agents`: it works on anyone's agent.
"""

from .trajectory import CitationSource, Edge, Entity, ModelCall, Step, Trajectory

__all__ = ["Trajectory", "Step", "ModelCall", "Entity", "Edge", "CitationSource"]
