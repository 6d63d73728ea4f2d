"""graphtrail.tracer: LangChain/LangGraph runs as OpenTelemetry traces and Trajectories.

The tracer does not import :mod:`graphtrail.agents`: it works on anyone's agent.
See docs/spans.md for every span and attribute.

Imports: LangChain, OpenTelemetry and, from graphtrail, only the leaf modules
``_version``, ``_lines``, ``_display`` and ``_secrets``; never ``graphtrail`` itself,
:mod:`graphtrail.kg`, :mod:`graphtrail.agents` or :mod:`graphtrail.evaluators`.
Inside, a recorded run flows one way: ``handler`` (LangChain callbacks ->
records) -> ``roots`` and ``spans`` (records -> spans, Steps, ModelCalls,
Trajectory); ``wrap`` puts a handler on an agent.
"""

from .config import configure, flush, get_memory_exporter, get_tracer_provider
from .extract import DEFAULT_CITATION_PATTERN, register_extractor, unregister_extractor
from .handler import GraphTrailHandler
from .jsonl import JsonlSpanExporter, spans_to_otlp_json
from .provenance import ProvenanceSignals, signals_of
from .rebuild import trajectories_from_otlp_json, trajectories_from_spans
from .scope import Capture, capture, run_annotations
from .trajectory import CitationSource, Edge, Entity, ModelCall, Step, Trajectory
from .wrap import TracedRunnable, instrument, is_instrumented, trace_agent, uninstrument

__all__ = [
    "trace_agent",
    "capture",
    "configure",
    "instrument",
    "uninstrument",
    "is_instrumented",
    "GraphTrailHandler",
    "TracedRunnable",
    "run_annotations",
    "register_extractor",
    "unregister_extractor",
    "DEFAULT_CITATION_PATTERN",
    "flush",
    "get_memory_exporter",
    "get_tracer_provider",
    "JsonlSpanExporter",
    "spans_to_otlp_json",
    "trajectories_from_spans",
    "trajectories_from_otlp_json",
    "Capture",
    "Trajectory",
    "Step",
    "ModelCall",
    "Entity",
    "Edge",
    "CitationSource",
    "ProvenanceSignals",
    "signals_of",
]
