"""Where graphtrail's spans go: ``configure()`` and the tracer lookup.

Rules, in order, for the provider graphtrail creates spans with:

1. ``configure(tracer_provider=P)``: ``P``.
2. otherwise, a global TracerProvider the application set
   (``trace.set_tracer_provider``): that one. graphtrail never replaces it and
   adds a span processor to it only when asked (an explicit ``exporter``,
   ``span_exporter`` or ``span_processor`` argument).
3. otherwise graphtrail's own SDK provider, kept private to graphtrail so that
   ``configure`` can be called again (tests, notebooks) - the OTel global is
   one-shot.

Processors graphtrail adds to a provider it does not own go through one
switchable processor per provider, so re-configuring swaps the exporter instead
of stacking processors.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, SynchronousMultiSpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from .._version import __version__ as _VERSION
from ._content import DEFAULT_MAX_VALUE_LENGTH, ContentMode, check_content_mode
from ._safety import warn_once
from .redact import redact_text
from .redact import set_rule as _set_redact_rule

ExporterName = Literal["otlp", "console", "jsonl", "none", "memory"]
EXPORTERS: tuple[str, ...] = ("otlp", "console", "jsonl", "none", "memory")
DEFAULT_EXPORT_TIMEOUT_S = 5.0
# One CHAIN span per LangGraph node execution; see docs/spans.md ("LangGraph nodes").
DEFAULT_NODE_SPANS = False
# A run's spans are built when it ends, or as its calls finish once it has been
# running this long (docs/spans.md, "When spans are made").
DEFAULT_LIVE_AFTER_S = 1.0
DEFAULT_SERVICE_NAME = "graphtrail"
#: Resource attribute Phoenix files traces by ("project"); see docs/spans.md ("Services and projects").
PROJECT_NAME = "openinference.project.name"
#: Replays (evaluation runs) are exported under ``<service>`` + this, unless configured otherwise.
REPLAY_SUFFIX = "-replay"


# Seconds an endpoint that failed is left alone: exports in that time are dropped at
# once (and counted) instead of each waiting for the export timeout. This is what
# bounds a process's exit by one export timeout when the collector is down.
RETRY_DOWN_ENDPOINT_AFTER_S = 30.0
# The OTLP exporters log every retry (and then the failure) themselves; graphtrail
# reports a failed export once, so their records are dropped while graphtrail's
# guard is exporting (only then: the SDK's loggers are not silenced for anyone else).
_SDK_EXPORT_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http",
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
)
_exporting = threading.local()


class _WhileGuardedExport(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_exporting, "active", False)


_quiet_filter = _WhileGuardedExport()


def _quiet_sdk_export_logs() -> None:
    for name in _SDK_EXPORT_LOGGERS:
        log = logging.getLogger(name)
        if _quiet_filter not in log.filters:
            log.addFilter(_quiet_filter)


@dataclass(frozen=True)
class ExportStatus:
    """What one exporter graphtrail configured has done so far (see :func:`export_status`)."""

    label: str
    exported: int  # spans the exporter accepted
    dropped: int  # spans lost: failed exports, and exports skipped while the endpoint was down
    last_error: str | None


class _GuardedExporter(SpanExporter):
    """Turns exporter failures (endpoint down, bad file) into one graphtrail warning and counts.

    After a failed export the destination is treated as down for
    :data:`RETRY_DOWN_ENDPOINT_AFTER_S`: batches in that time are dropped without
    trying, so a collector that never answers costs one export timeout, not one
    per batch (and shutdown ends within one export timeout).
    """

    def __init__(self, inner: SpanExporter, label: str) -> None:
        self.inner = inner
        self.label = label
        self.exported = 0
        self.dropped = 0
        self.last_error: str | None = None
        self._down_until = 0.0
        self._closed = False

    def export(self, spans: Any) -> SpanExportResult:
        n = len(spans)
        if self._closed or time.monotonic() < self._down_until:
            self.dropped += n
            return SpanExportResult.FAILURE
        _exporting.active = True
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # noqa: BLE001
            self._failed(n, repr(exc))
            warn_once(f"export:{self.label}", "graphtrail: span export to %s failed (%r); spans dropped", self.label, exc)
            return SpanExportResult.FAILURE
        finally:
            _exporting.active = False
        if result is not SpanExportResult.SUCCESS:
            self._failed(n, getattr(self.inner, "last_error", None) or "the export failed or timed out")
            warn_once(f"export:{self.label}", "graphtrail: span export to %s failed; spans dropped", self.label)
        else:
            self.exported += n
            self._down_until = 0.0
        return result

    def _failed(self, n: int, error: str) -> None:
        self.dropped += n
        self.last_error = error
        self._down_until = time.monotonic() + RETRY_DOWN_ENDPOINT_AFTER_S

    def status(self) -> ExportStatus:
        return ExportStatus(self.label, self.exported, self.dropped, self.last_error)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        try:
            return self.inner.force_flush(timeout_millis)
        except Exception:  # noqa: BLE001
            return False

    def shutdown(self) -> None:
        self._closed = True
        _exporting.active = True  # "already shut down" and similar notes are not the user's business
        try:
            self.inner.shutdown()
        except Exception:  # noqa: BLE001
            pass
        finally:
            _exporting.active = False


class _SwitchProcessor(SpanProcessor):
    """The one processor graphtrail adds to a provider it does not own."""

    def __init__(self) -> None:
        self.delegate: SpanProcessor | None = None

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        d = self.delegate
        if d is not None:
            d.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        d = self.delegate
        if d is not None:
            d.on_end(span)

    def shutdown(self) -> None:
        d = self.delegate
        if d is not None:
            d.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        d = self.delegate
        return d.force_flush(timeout_millis) if d is not None else True


@dataclass
class _State:
    provider: Any = None  # the provider spans are created with, or None = resolve per run
    own: TracerProvider | None = None
    processor: SpanProcessor | None = None
    memory: InMemorySpanExporter | None = None
    content: ContentMode = "full"
    max_value_length: int = DEFAULT_MAX_VALUE_LENGTH
    node_spans: bool = DEFAULT_NODE_SPANS
    live_after_ns: int = int(DEFAULT_LIVE_AFTER_S * 1e9)
    configured: bool = False
    switches: dict[int, tuple[Any, _SwitchProcessor]] = field(default_factory=dict)
    tracers: dict[Any, tuple[Any, trace.Tracer]] = field(default_factory=dict)
    project: str | None = None  # explicit configure(project=...), else None (= the service name)
    replay_service: str | None = None  # explicit configure(replay_service=...), else None (= <service>-replay)
    derived: dict[Any, tuple[Any, Any]] = field(default_factory=dict)  # (base id, role) -> (base, provider)
    guards: list[_GuardedExporter] = field(default_factory=list)  # of the current configuration
    tracers: dict[int, tuple[Any, trace.Tracer]] = field(default_factory=dict)


_state = _State()
_lock = threading.RLock()


def _global_provider() -> Any | None:
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider) or type(provider).__name__ == "ProxyTracerProvider":
        return None
    return provider


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def _otlp_exporter(endpoint: str | None, protocol: str | None, headers: dict[str, str] | None) -> SpanExporter:
    protocol = protocol or _env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    kwargs: dict[str, Any] = {}
    if headers:
        kwargs["headers"] = dict(headers)
    if not _env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        kwargs["timeout"] = DEFAULT_EXPORT_TIMEOUT_S
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        if endpoint:
            kwargs["endpoint"] = endpoint
            kwargs.setdefault("insecure", urlparse(endpoint).scheme != "https")
        return GrpcExporter(**kwargs)
    if protocol not in ("http/protobuf", "http"):
        raise ValueError(f"protocol must be 'http/protobuf' or 'grpc', got {protocol!r}")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

    if endpoint:
        # Like OTEL_EXPORTER_OTLP_ENDPOINT: a base URL gets the signal path appended.
        parsed = urlparse(endpoint)
        kwargs["endpoint"] = endpoint.rstrip("/") + "/v1/traces" if parsed.path in ("", "/") else endpoint
    return HttpExporter(**kwargs)


def _otlp_url(exporter: SpanExporter, endpoint: str | None) -> str:
    """The URL the exporter sends to, as a failure message must name it (the SDK's default included)."""
    tried = getattr(exporter, "_endpoint", None)  # what the OTel exporters resolved: argument, env, or default
    return str(tried or endpoint or _env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") or "the default endpoint")


def _processor_for(
    exporter: str, endpoint: str | None, path: str | os.PathLike[str] | None, protocol: str | None, headers: dict[str, str] | None
) -> tuple[SpanProcessor | None, InMemorySpanExporter | None]:
    if exporter == "none":
        return None, None
    if exporter == "memory":
        memory = InMemorySpanExporter()
        return SimpleSpanProcessor(memory), memory
    if exporter == "console":
        return SimpleSpanProcessor(ConsoleSpanExporter()), None
    if exporter == "jsonl":
        from .jsonl import JsonlSpanExporter

        target = path or os.environ.get("GRAPHTRAIL_JSONL_PATH") or "graphtrail-traces.jsonl"
        return BatchSpanProcessor(_guard(JsonlSpanExporter(target), f"jsonl file {target}")), None
    if exporter == "otlp":
        inner = _otlp_exporter(endpoint, protocol, headers)
        label = redact_text(f"OTLP {_otlp_url(inner, endpoint)}")  # an endpoint may carry user:token@
        _quiet_sdk_export_logs()
        return BatchSpanProcessor(_guard(inner, label), export_timeout_millis=int(DEFAULT_EXPORT_TIMEOUT_S * 1000)), None
    raise ValueError(f"exporter must be one of {EXPORTERS}, got {exporter!r}")


_new_guards: list[_GuardedExporter] = []  # built by the configure() call in progress (under _lock)


def _guard(inner: SpanExporter, label: str) -> _GuardedExporter:
    guard = _GuardedExporter(inner, label)
    _new_guards.append(guard)
    return guard


def export_status() -> list[ExportStatus]:
    """Spans exported and dropped so far by each exporter of the current ``configure()``
    (``"otlp"`` and ``"jsonl"``), e.g. to tell users that their collector was down."""
    return [g.status() for g in _state.guards]


def _processors_for(
    names: list[str], endpoint: str | None, path: str | os.PathLike[str] | None, protocol: str | None, headers: dict[str, str] | None
) -> tuple[SpanProcessor | None, InMemorySpanExporter | None]:
    """One processor fanning out to every named exporter (each keeps its own guard and batching)."""
    if len(set(names)) != len(names):
        raise ValueError(f"exporter names must not repeat, got {names}")
    built = [_processor_for(name, endpoint, path, protocol, headers) for name in names]
    processors = [proc for proc, _ in built if proc is not None]
    memory = next((mem for _, mem in built if mem is not None), None)
    if len(processors) <= 1:
        return (processors[0] if processors else None), memory
    fan_out = SynchronousMultiSpanProcessor()
    for proc in processors:
        fan_out.add_span_processor(proc)
    return fan_out, memory


def _attach(provider: Any, processor: SpanProcessor | None) -> None:
    """Route ``processor`` into a provider graphtrail does not own, replacing graphtrail's previous one."""
    entry = _state.switches.get(id(provider))
    if entry is None:
        if processor is None:
            return
        switch = _SwitchProcessor()
        provider.add_span_processor(switch)
        _state.switches[id(provider)] = (provider, switch)
    else:
        switch = entry[1]
    old, switch.delegate = switch.delegate, processor
    if old is not None:
        _shutdown_later(old)


def _shutdown_later(obj: Any) -> None:
    # A batch processor with an unreachable endpoint can block for the export timeout.
    threading.Thread(target=lambda: _quiet(obj.shutdown), name="graphtrail-shutdown", daemon=True).start()


def _quiet(fn: Any) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001
        pass


def configure(
    exporter: ExporterName | Sequence[ExporterName] | None = None,
    endpoint: str | None = None,
    service_name: str | None = None,
    path: str | os.PathLike[str] | None = None,
    protocol: Literal["http/protobuf", "grpc"] | None = None,
    headers: dict[str, str] | None = None,
    content: ContentMode = "full",
    max_value_length: int = DEFAULT_MAX_VALUE_LENGTH,
    tracer_provider: Any = None,
    span_exporter: SpanExporter | None = None,
    span_processor: SpanProcessor | None = None,
    node_spans: bool = DEFAULT_NODE_SPANS,
    live_after: float = DEFAULT_LIVE_AFTER_S,
    redact: Callable[[str | None, Any], Any] | None = None,
    project: str | None = None,
    replay_service: str | None = None,
    metrics: Any = None,
    prometheus_port: int | None = None,
    meter_provider: Any = None,
    metrics_run_names: int = 0,
) -> Any:
    """Choose where graphtrail's spans go; returns the TracerProvider it will use.

    - ``exporter``: ``"otlp"`` (``endpoint``, ``protocol``, ``headers``; else the
      standard ``OTEL_EXPORTER_OTLP_*`` variables), ``"console"``, ``"jsonl"``
      (OTLP/JSON lines appended to ``path``), ``"memory"`` (see
      :func:`get_memory_exporter`) or ``"none"``. Default: ``"otlp"`` if an
      ``OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT`` is set, else ``"none"``
      (trajectories are still captured in memory). A list sends spans to several
      at once, e.g. ``["jsonl", "otlp"]``.
    - ``span_exporter`` / ``span_processor``: plug your own, OTel SDK style
      (an exporter is wrapped in a ``BatchSpanProcessor``).
    - ``service_name``: default ``OTEL_SERVICE_NAME``, else ``"graphtrail"``.
    - ``project``: the Phoenix project (resource attribute
      ``openinference.project.name``); default the service name, so Phoenix files
      the traces under the same name Jaeger's service picker shows.
    - ``replay_service``: service name of the runs an evaluation replays (runs
      inside ``run_annotations(replay=True)``); default ``<service>-replay``
      (project ``<project>-replay``), so a backend's service picker keeps them
      apart from real runs. Pass the service name itself to mix them.
    - ``content``: ``"full"``, ``"ids-only"`` or ``"none"`` (docs/spans.md).
    - ``tracer_provider``: use this provider. A global provider the app set is
      used as well, and never replaced.
    - ``node_spans``: one CHAIN span per LangGraph node execution between the
      root and the model/tool spans. ``False`` hangs model and tool spans
      directly under the root (they keep ``langgraph.node``/``langgraph.step``)
      and makes tracing cheaper; ``trace_agent(node_spans=...)`` overrides it.
    - ``live_after``: seconds. A run's spans are built in one pass when it ends
      (cheaper); once a run has been going this long, each model/tool span is
      built as soon as its call finishes, so long runs show up in your backend
      while they work. ``0`` builds every span as it finishes.
    - ``redact``: your own rule on top of the built-in secret redaction
      (docs/spans.md, "Secrets"): ``redact(key, value) -> value`` is called for
      every argument value (``key``: its name) and every recorded text (``key``:
      ``None``) and returns what to record. If it raises, ``"<redacted>"`` is
      recorded. The built-in rules cannot be switched off.

    - ``metrics``: OTel metrics of every traced run (docs/production.md):
      ``"otlp"`` (same ``endpoint``/``protocol``/``headers``; ``/v1/metrics``),
      ``"prometheus"`` (serves ``/metrics`` on 127.0.0.1:``prometheus_port``,
      default 9464, or ``OTEL_EXPORTER_PROMETHEUS_HOST/PORT``), ``"console"``,
      ``"memory"`` (:func:`graphtrail.tracer.metrics.get_metric_reader`), ``"none"``
      (the default, unless ``OTEL_METRICS_EXPORTER`` names one of these), a list,
      or an SDK ``MetricReader``. ``meter_provider``: record with your own.
      Every metric label has a bound on its values (docs/production.md, "Label
      bounds"); ``metrics_run_names``: how many distinct LangChain run names may
      become agent-name labels (default 0: a run name is never a label).

    Calling ``configure`` again replaces graphtrail's previous choice.
    """
    content = check_content_mode(content)
    for label, value in (("service_name", service_name), ("project", project), ("replay_service", replay_service)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{label} must be a non-empty string, got {value!r}")
    if max_value_length < 16:
        raise ValueError("max_value_length must be at least 16")
    if not live_after >= 0:  # also rejects NaN
        raise ValueError(f"live_after must be a number of seconds >= 0, got {live_after!r}")
    if redact is not None and not callable(redact):
        raise TypeError(f"redact must be a callable redact(key, value) -> value, got {type(redact).__name__}")
    asked = exporter is not None or span_exporter is not None or span_processor is not None
    if metrics is None:
        env_metrics = (os.environ.get("OTEL_METRICS_EXPORTER") or "").strip()
        metrics = env_metrics if env_metrics in ("otlp", "prometheus", "console") else "none"
    from .metrics import check_metrics

    check_metrics(metrics, prometheus_port, metrics_run_names)
    if exporter is None:
        exporter = "otlp" if _env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") else "none"
    with _lock:
        _new_guards.clear()
        if span_processor is not None:
            processor, memory = span_processor, None
        elif span_exporter is not None:
            processor, memory = BatchSpanProcessor(span_exporter), None
        elif isinstance(exporter, str):
            processor, memory = _processor_for(exporter, endpoint, path, protocol, headers)
        else:  # several destinations at once, e.g. ["jsonl", "otlp"]
            processor, memory = _processors_for(list(exporter), endpoint, path, protocol, headers)
        guards = list(_new_guards)
    with _lock:
        target = tracer_provider or _global_provider()
        old_own = _state.own
        if target is not None:
            if asked:
                _attach(target, processor)
            _state.provider, _state.own = target, None
        else:
            service = service_name or os.environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE_NAME
            resource = Resource.create({SERVICE_NAME: service})
            if project is not None or PROJECT_NAME not in resource.attributes:  # OTEL_RESOURCE_ATTRIBUTES may name it
                resource = resource.merge(Resource({PROJECT_NAME: project or service}))
            own = TracerProvider(resource=resource)
            if processor is not None:
                own.add_span_processor(processor)
            _state.provider, _state.own = None, own
        if old_own is not None:
            _shutdown_later(old_own)
        _state.processor, _state.memory = processor, memory
        _state.content, _state.max_value_length = content, max_value_length
        _state.node_spans = bool(node_spans)
        _state.live_after_ns = int(live_after * 1e9) if live_after != float("inf") else 2**62
        _set_redact_rule(redact)
        _state.project, _state.replay_service = project, replay_service
        _state.guards = guards
        _state.configured = True
        _state.tracers.clear()
        _state.derived.clear()
    from .metrics import configure_metrics  # issue 22

    configure_metrics(
        metrics, service_name=service_name or os.environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE_NAME,
        endpoint=endpoint, protocol=protocol, headers=headers, prometheus_port=prometheus_port, meter_provider=meter_provider,
        run_names=metrics_run_names,
    )
    return target or _state.own


def _ensure_configured() -> None:
    if not _state.configured:
        with _lock:
            if not _state.configured:
                configure()


def get_tracer(replay: bool = False) -> trace.Tracer:
    """The tracer for a run starting now (cheap: cached per provider).

    ``replay``: for a replayed run, whose spans go under the replay service
    (see :func:`configure`); the same processors and exporters see them.
    """
    _ensure_configured()
    base = _state.provider or _global_provider() or _state.own
    key = (id(base), replay)
    entry = _state.tracers.get(key)
    if entry is None or entry[0] is not base:
        provider = _run_provider(base, replay)
        entry = (base, provider.get_tracer("graphtrail", _VERSION))
        _state.tracers[key] = entry
    return entry[1]


def _run_provider(base: Any, replay: bool) -> Any:
    """The provider runs use: ``base``, or a sibling of it with graphtrail's service/project.

    The sibling shares ``base``'s span processors, sampler and limits, so its spans
    go wherever ``base``'s go; only the resource differs (the OTel SDK has one
    resource per provider, so a separate service needs a separate provider).
    An app's own provider keeps its resource unless ``project`` was given.
    """
    owned = base is _state.own
    resource = getattr(base, "resource", None)
    attrs: dict[str, Any] = {}
    if replay:
        service = str((resource.attributes if resource is not None else {}).get(SERVICE_NAME) or DEFAULT_SERVICE_NAME)
        project = _state.project or (
            str(resource.attributes.get(PROJECT_NAME)) if resource is not None and resource.attributes.get(PROJECT_NAME) else service
        )
        if _state.replay_service is not None:
            attrs = {SERVICE_NAME: _state.replay_service, PROJECT_NAME: _state.replay_service}
        else:
            attrs = {SERVICE_NAME: service + REPLAY_SUFFIX, PROJECT_NAME: project + REPLAY_SUFFIX}
    elif not owned and _state.project is not None:
        attrs = {PROJECT_NAME: _state.project}
    if not attrs:
        return base
    if resource is not None and all(resource.attributes.get(k) == v for k, v in attrs.items()):
        return base
    if not isinstance(base, TracerProvider):
        warn_once(
            "derived-provider",
            "graphtrail: the tracer provider in use is not the OTel SDK's; replays and project names use its resource as is",
        )
        return base
    key = (id(base), replay)
    entry = _state.derived.get(key)
    if entry is None or entry[0] is not base:
        try:
            derived = TracerProvider(
                resource=base.resource.merge(Resource(attrs)),
                sampler=base.sampler,
                id_generator=base.id_generator,
                span_limits=getattr(base, "_span_limits", None),
                active_span_processor=base._active_span_processor,  # shared: same exporters
                shutdown_on_exit=False,  # base shuts the shared processors down
            )
        except Exception as exc:  # noqa: BLE001 - a changed SDK must not break tracing
            warn_once("derived-provider", "graphtrail: could not set up the replay/project provider (%r); using the main one", exc)
            return base
        entry = (base, derived)
        _state.derived[key] = entry
    return entry[1]


def get_tracer_provider() -> Any:
    """The provider graphtrail creates spans with right now."""
    _ensure_configured()
    return _state.provider or _global_provider() or _state.own


def content_settings() -> tuple[ContentMode, int]:
    _ensure_configured()
    return _state.content, _state.max_value_length


def run_settings() -> tuple[ContentMode, int, bool, int]:
    """(content mode, max value length, node spans, live-after ns) for a run starting now: one lookup per run."""
    _ensure_configured()
    return _state.content, _state.max_value_length, _state.node_spans, _state.live_after_ns


def get_memory_exporter() -> InMemorySpanExporter | None:
    """The exporter of ``configure(exporter="memory")`` (``.get_finished_spans()``, ``.clear()``)."""
    return _state.memory


def flush(timeout_millis: int = 30000) -> bool:
    """Export buffered spans now (e.g. before reading a jsonl file)."""
    processor = _state.processor
    ok = True
    if processor is not None:
        ok = processor.force_flush(timeout_millis)
    if _state.own is not None:
        ok = _state.own.force_flush(timeout_millis) and ok
    from .metrics import flush_metrics

    return flush_metrics(timeout_millis) and ok
