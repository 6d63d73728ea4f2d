"""Per-agent tracing options: what one handler (one traced agent) does beyond the global ``configure()``.

A leaf of the tracer: ``GraphTrailHandler(...)`` and ``trace_agent(...)`` both
check their keyword arguments here, and the recorded runs keep the options
they were started with, so neither needs the other to know them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ._content import ContentMode, check_content_mode
from .citations import CitationMode, check_citation_mode
from .extract import CitationParser, Extractor, compile_pattern


@dataclass(slots=True)
class TraceOptions:
    """What a handler does beyond the global configure(): per-agent settings."""

    name: str | None = None
    extractors: Mapping[str, Extractor] | None = None
    citation_pattern: re.Pattern[str] = field(default_factory=lambda: compile_pattern(None))
    citation_parser: CitationParser | None = None
    content: ContentMode | None = None
    conversation_key: str = "thread_id"
    node_spans: bool | None = None  # None: configure()'s choice
    citations: CitationMode = "names"  # how a free-text answer's citations are read (tracer/citations.py)
    answer_field: str | None = None  # the structured response's answer field (tracer/structured.py)
    citations_field: str | None = None  # ... and its sources field


def trace_options(
    name: str | None = None,
    *,
    extractors: Mapping[str, Extractor] | None = None,
    citation_pattern: str | re.Pattern[str] | None = None,
    citation_parser: CitationParser | None = None,
    content: ContentMode | None = None,
    conversation_key: str = "thread_id",
    node_spans: bool | None = None,
    citations: CitationMode = "names",
    answer_field: str | None = None,
    citations_field: str | None = None,
) -> TraceOptions:
    """Checked per-agent options, shared by ``GraphTrailHandler(...)`` and ``trace_agent(...)``."""
    if content is not None:
        check_content_mode(content)
    check_citation_mode(citations)
    for label, value in (("answer_field", answer_field), ("citations_field", citations_field)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{label} must be a field name, got {value!r}")
    return TraceOptions(
        name=name,
        extractors=dict(extractors) if extractors else None,
        citation_pattern=compile_pattern(citation_pattern),
        citation_parser=citation_parser,
        content=content,
        conversation_key=conversation_key,
        node_spans=node_spans,
        citations=citations,
        answer_field=answer_field,
        citations_field=citations_field,
    )
