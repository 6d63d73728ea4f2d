"""The root span of an agent run: its attributes at the start and at the end, and the run's Trajectory.

At the start (``start_root``) the root records what it will carry: the agent's
name, the question, the conversation id and any ``run_annotations()``
(attributes, links, metadata); its span starts then only for a decorated
function, whose body runs inside it. At the end (``finish_root``) it reads the
answer and citations, builds the children's spans (spans.py), sets what needs
their ids (visited, visited-but-uncited, citation sources) and, when a
``capture()`` reads the run, assembles the Trajectory. ``close_root`` makes
sure the root and every recorded child end however finishing went.
Redaction is the same as for every span: ``spans.span_text`` for free text,
redact.py for metadata and exceptions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, SpanContext, Status, StatusCode, TraceFlags

from . import attributes as A
from ._content import dumps, to_text
from ._safety import warn_once
from .citations import known_names, resolve_citations
from .config import get_tracer
from .extract import extract_answer
from .genai import provider_name
from .options import TraceOptions
from .records import RootRecord, is_control_flow
from .redact import record_exception, redact, redact_ids, redact_text
from .scope import active_annotations
from .signals import finish_run
from .spans import build_runs, describe_error, end_if_open, end_span, ns_to_s, open_root_span, span_text
from .structured import sources_by_name, structured_answer
from .trajectory import Trajectory, first_sources, uncited_ids, visited_ids
from .unexported import SpanlessTracer, replay_tracer


def start_root(
    options: TraceOptions, run_id: UUID | str, name: str, inputs: Any, metadata: Mapping[str, Any] | None,
    *, live: bool = False, name_from_run: bool = False,
) -> RootRecord:
    """A new agent run. Its span starts now only if ``live`` (a decorated function's
    root, which becomes the ambient span of the function's body); otherwise it is
    started, with its real start time, when the run ends, like its children."""
    root = RootRecord(str(run_id), redact_text(options.name or name or "agent"), options)
    root.name_from_run = name_from_run and not options.name  # LangChain's run name: per request, maybe
    ann = active_annotations()
    attrs: dict[str, Any] = {
        A.GEN_AI_OPERATION_NAME: "invoke_agent",
        A.OPENINFERENCE_SPAN_KIND: "AGENT",
        A.GEN_AI_AGENT_NAME: root.name,
        A.RUN_ID: root.run_id,
        A.CONTENT_MODE: root.content,
    }
    links: list[Link] = []
    if ann is not None:
        if ann.replay:
            root.tracer = replay_tracer(get_tracer(replay=True))
            root.spanless = isinstance(root.tracer, SpanlessTracer)
        attrs.update(redact(dict(ann.attributes)))  # the user's attributes: the same rules as any value
        root.metadata = redact(dict(ann.metadata))
        links = [
            Link(SpanContext(int(t, 16), int(s, 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)))
            for t, s in ann.links
        ]
    if root.metadata:
        attrs[A.METADATA] = dumps(root.metadata)
    question = _question_of(inputs)
    if question is not None and root.content == "full":
        root.question = span_text(root, question)
        attrs[A.QUESTION] = root.question
        attrs[A.INPUT_VALUE] = root.question
    root.note_conversation(metadata)
    if root.conversation_id is not None:
        attrs[A.GEN_AI_CONVERSATION_ID] = root.conversation_id
    # The ambient span (e.g. the app's request span) may parent the root; nothing else.
    ambient = trace.get_current_span()
    root.parent_ctx = trace.set_span_in_context(ambient, Context()) if ambient.get_span_context().is_valid else Context()
    root.start_attrs, root.links = attrs, links
    if live:
        open_root_span(root)
    return root


def _question_of(inputs: Any) -> str | None:
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        msgs = inputs.get("messages")
        if isinstance(msgs, (list, tuple)):
            for msg in msgs:
                if isinstance(msg, (list, tuple)) and len(msg) == 2 and msg[0] in ("user", "human"):
                    return to_text(msg[1])
                if getattr(msg, "type", None) == "human":
                    return to_text(msg.content)
                if isinstance(msg, Mapping) and msg.get("role") in ("user", "human"):
                    return to_text(msg.get("content"))
                if isinstance(msg, str):
                    return msg
        for key in ("question", "input", "query"):
            if isinstance(inputs.get(key), str):
                return inputs[key]
    return None


def finish_root(root: RootRecord, output: Any, error: BaseException | None) -> Trajectory | None:
    """End the root span; the run's Trajectory when a ``capture()`` is active, else None."""
    end_ns = time.time_ns()
    status, err_text, answer, citations = "ok", None, None, []
    attrs: dict[str, Any] = {}
    free_text: str | None = None  # an answer whose citations are read from names after the build
    raw_answer: str | None = None  # the answer as given, for the provenance signals in every content mode
    no_answer_reason: str | None = None  # why no answer was read, when the reader can say (tracer/structured.py)
    by_name: list[str] | None = None  # a structured response's sources, some perhaps names (tracer/structured.py)
    if error is not None and not is_control_flow(error):
        status = "error"
        err_text = describe_error(root, error)
        attrs[A.ERROR_TYPE] = type(error).__name__
        attrs[A.ERROR] = err_text
    elif error is not None:
        status = "no_answer"
        attrs[A.CONTROL_FLOW] = type(error).__name__
    else:
        found = _read_answer(root, output)
        if (found is None or not found.citations) and root.last_output is not None:
            # A decorated function may return plain text: its inner run's final
            # state still holds the submit_answer call (or structured response) and its citations.
            inner = _read_answer(root, root.last_output)
            if inner is not None and (found is None or inner.citations or (found.answer is None and inner.answer)):
                found = inner
        if found is None:
            status = "no_answer"
        else:
            status, citations = found.status, found.citations
            raw_answer = found.answer
            if found.source == "structured" and citations:
                by_name = list(citations)  # sources may be names: read once the run's entities are known
            if status == "no_answer":
                no_answer_reason = found.reason
            if found.source == "text" and not citations and found.answer and root.opts.citations != "markers":
                free_text = found.answer
            if found.answer is not None and root.content == "full":
                answer = span_text(root, found.answer)
                attrs[A.ANSWER] = answer
                attrs[A.OUTPUT_VALUE] = answer
    attrs[A.STATUS] = status
    citations = redact_ids(citations)
    attrs[A.CITATIONS] = dumps(citations)
    if root.provider is not None:  # required on invoke_agent by the GenAI semconv
        attrs[A.GEN_AI_PROVIDER_NAME] = provider_name(root.provider)
    if root.conversation_id is not None:
        attrs[A.GEN_AI_CONVERSATION_ID] = root.conversation_id
    if root.start_attrs is not None:  # not started yet: start it with all it knows by now
        root.start_attrs.update(attrs)
        open_root_span(root)
    else:
        root.span.set_attributes(attrs)
    span = root.span
    if err_text is not None:
        span.set_status(Status(StatusCode.ERROR, err_text))
        if root.content == "full":
            record_exception(span, error, end_ns)  # type: ignore[arg-type]
    with root.lock:
        root.finished = True
        try:
            build_runs(root, end_ns, final=True)
        finally:
            root.runs = []
    rows = sorted(root.rows, key=lambda r: r[0])
    steps = sorted(root.steps, key=lambda st: st.index)
    model_calls = sorted(root.model_calls, key=lambda m: m.index)
    if free_text is not None:  # citations by name need the run's entities: read them now
        try:
            text, citations = resolve_citations(free_text, known_names(e for ents in root.revealed for e in ents), root.opts.citations)
        except Exception as exc:  # noqa: BLE001 - a citation rule never costs the trace
            warn_once("handler:citations", "graphtrail: could not read citations from the answer (%r)", exc)
            text, citations = free_text, []
        raw_answer = text
        if citations:
            late: dict[str, Any] = {A.CITATIONS: dumps(citations)}
            if root.content == "full":
                answer = span_text(root, text)
                late[A.ANSWER] = late[A.OUTPUT_VALUE] = answer
            span.set_attributes(late)
    if by_name is not None:
        mapped = redact_ids(sources_by_name(by_name, known_names(e for ents in root.revealed for e in ents)))
        if mapped != citations:
            citations = mapped
            span.set_attributes({A.CITATIONS: dumps(citations)})
    # What needs the child spans' ids.
    visited = visited_ids(row[1] for row in rows)
    sources = first_sources(citations, rows)
    late_attrs = {
        A.VISITED: dumps(visited),
        A.VISITED_UNCITED: dumps(uncited_ids(visited, citations)),
        A.CITATION_SOURCES: dumps(
            {cid: {"entity_id": cid, "steps": steps_, "span_ids": spans} for cid, (steps_, spans) in sources.items()}
        ),
    }
    # Provenance signals on the root span, with the attributes above in the same call, and the
    # run's metrics (tracer/signals.py).
    provenance = finish_run(
        span, root.facts, agent=root.name, agent_from_run=root.name_from_run, citations=citations, rows=rows, revealed=root.revealed, answer=raw_answer,
        question=root.question, status=status, error_type=attrs.get(A.ERROR_TYPE), start_ns=root.start_ns, end_ns=end_ns,
        span_attributes=late_attrs,
    )
    root.revealed = []
    end_span(span, end_ns)
    if not root.captures:  # nobody reads a Trajectory of this run: don't build one
        return None
    traj = Trajectory(
        run_id=root.run_id,
        trace_id=root.trace_id,
        span_id=root.span_id,
        name=root.name,
        question=root.question,
        answer=answer,
        citations=citations,
        steps=steps,
        model_calls=model_calls,
        status=status,  # type: ignore[arg-type]
        error=err_text if err_text is not None else no_answer_reason,
        start_time=ns_to_s(root.start_ns),
        end_time=ns_to_s(end_ns),
        conversation_id=root.conversation_id,
        metadata=root.metadata,
        provenance=provenance,
    )
    for cap in root.captures:
        cap._add(traj)
    return traj


def _read_answer(root: RootRecord, output: Any) -> Any:
    """The answer of a final output: a structured response first (the agent's own answer object), then the messages."""
    opts = root.opts
    found = structured_answer(output, opts.answer_field, opts.citations_field, opts.citation_pattern)
    if found is not None:
        return found
    return extract_answer(output, opts.citation_pattern, opts.citation_parser)


def close_root(root: RootRecord) -> None:
    """However finishing went, the root span and its recorded children exist and end: a failure
    while finishing (reported once by the caller) costs attributes, never the trace."""
    try:
        end_ns = time.time_ns()
        if root.start_attrs is not None:
            open_root_span(root)
        if root.built < len(root.runs):  # finishing failed before all children were built
            with root.lock:
                root.finished = True
                build_runs(root, end_ns, final=True)
        root.runs = []
        end_if_open(root.span)
    except Exception:  # noqa: BLE001
        pass
