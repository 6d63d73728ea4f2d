"""OpenTelemetry metrics of traced runs: ``configure(metrics=...)`` and the instruments.

Spans tell what one run did; a team running the agent for customers also needs
rates over all runs (how often does it cite what it was never shown? is that
rising since the last model change?) without reading traces. So each finished
run is also recorded through the OTel metrics SDK: the GenAI semantic
conventions' instruments where they exist (``gen_ai.client.operation.duration``,
``gen_ai.client.token.usage``, ``gen_ai.invoke_agent.duration``,
``gen_ai.invoke_agent.tool_calls``) and ``graphtrail.*`` ones for the provenance
signals (:mod:`.provenance`). Per-tool latency is left to the spans: a histogram
observation per tool call would cost more than the rest together. Attributes are low-cardinality on purpose (agent
name, model, provider, status, tool name, error type): never ids, questions or
entities, which belong on spans; and each has a bound on its distinct values,
past which values are recorded as ``other`` (:mod:`.cardinality`).
docs/production.md lists every instrument and bound.

Recording happens once per run, when it ends, from facts the handler kept
(:class:`RunFacts`), in the same pass that builds the spans; with
``metrics="none"`` (the default) it costs one attribute lookup. Replays (runs
inside ``run_annotations(replay=True)``) are not recorded: an evaluation's
ablated runs would pollute the production rates.

A metrics exporter that fails never reaches the agent: the SDK's periodic
reader exports on its own thread and logs its own failures.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._safety import warn_once
from .cardinality import MAX_RUN_NAMES, Labels

__all__ = [
    "METRICS",
    "configure_metrics",
    "get_metric_reader",
    "prometheus_address",
    "flush_metrics",
    "record_run",
    "metrics_enabled",
]

METRICS: tuple[str, ...] = ("otlp", "prometheus", "console", "memory", "none")
#: The Prometheus exporter's usual port (OTEL_EXPORTER_PROMETHEUS_PORT overrides it).
DEFAULT_PROMETHEUS_PORT = 9464
#: Loopback unless asked otherwise (OTEL_EXPORTER_PROMETHEUS_HOST): /metrics is not published by accident.
DEFAULT_PROMETHEUS_HOST = "127.0.0.1"
DEFAULT_EXPORT_INTERVAL_MS = 15_000

# Bucket boundaries the GenAI semantic conventions advise, so dashboards built for them work.
_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
_AGENT_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84, 409.6]
_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
_CALL_BUCKETS = [0, 1, 2, 4, 8, 16, 32, 64, 128]
_SHARE_BUCKETS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


# Counters are summed per attribute set in a dict as runs end and reported through the SDK's
# observable counters when a reader collects. Why: each synchronous measurement costs the SDK about
# 5-8 us (attribute cleaning and hashing), and a run ends with a dozen counter updates; a dict
# increment costs a fraction of that. The SDK still aggregates, exports and serves them.
#
# Histogram observations (18 per run of a 5-call agent) cannot be pre-summed that way: the SDK has
# no observable histogram. So a run's observations are appended to a list (a fraction of a
# microsecond each) and handed to the SDK's histograms when a reader collects (the periodic
# exporter's thread, a Prometheus scrape), just before it reads them: the SDK's per-observation
# cost leaves the agent's thread, and the exported data are the same. If nobody collects for long,
# a background thread hands them over once _DRAIN_AT are waiting, so memory stays bounded.
_DRAIN_AT = 20_000
_COUNTERS: dict[str, tuple[str, str]] = {
    "graphtrail.runs": ("{run}", "Agent runs that ended, by status."),
    "graphtrail.provenance.grounded_citations": ("{citation}", "Cited entities a tool of the same run revealed."),
    "graphtrail.provenance.unsupported_citations": ("{citation}", "Cited entities no tool of the same run revealed."),
    "graphtrail.provenance.unsupported_runs": ("{run}", "Runs that cited at least one entity no tool revealed."),
    "graphtrail.provenance.unrevealed_answers": ("{run}", "Runs whose answer names no entity a tool revealed."),
    "graphtrail.provenance.empty_tool_calls": ("{tool_call}", "Tool calls that revealed no entity."),
    "graphtrail.tool.errors": ("{tool_call}", "Tool calls that failed, by tool."),
}


class _Instruments:
    """Every instrument graphtrail records, created once per MeterProvider."""

    def __init__(self, meter: Any, run_names: int = 0) -> None:
        from opentelemetry.metrics import Observation

        self.labels = Labels(run_names)  # every label value is bounded (cardinality.py)
        # attribute dicts per (bounded) label combination: a run re-uses its agent's dict instead of building one
        self.run_attrs: dict[tuple[Any, ...], tuple[dict[str, Any], tuple[tuple[str, Any], ...], str]] = {}
        self.chat_attrs: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {}

        h = meter.create_histogram
        # GenAI semantic conventions: one observation per model call, per run
        self.op_duration = h("gen_ai.client.operation.duration", unit="s", description="GenAI operation duration.",
                             explicit_bucket_boundaries_advisory=_DURATION_BUCKETS)
        self.tokens = h("gen_ai.client.token.usage", unit="{token}", description="Number of input and output tokens used.",
                        explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS)
        self.agent_duration = h("gen_ai.invoke_agent.duration", unit="s", description="Duration of one agent run.",
                                explicit_bucket_boundaries_advisory=_AGENT_BUCKETS)
        self.tool_calls = h("gen_ai.invoke_agent.tool_calls", unit="{tool_call}",
                            description="Tool calls per agent run (hops; the answer submission not counted).",
                            explicit_bucket_boundaries_advisory=_CALL_BUCKETS)
        # graphtrail: the provenance signals
        self.uncited_share = h("graphtrail.provenance.uncited_share", unit="1",
                               description="Share of the visited entities the answer does not cite.",
                               explicit_bucket_boundaries_advisory=_SHARE_BUCKETS)
        self.totals: dict[str, dict[tuple[tuple[str, Any], ...], int]] = {name: {} for name in _COUNTERS}
        self.tool_keys: dict[tuple[Any, ...], tuple[tuple[str, Any], ...]] = {}
        self.lock = threading.Lock()
        # (histogram, value, attributes) not handed to the SDK yet; see _DRAIN_AT
        self.pending: list[tuple[Any, float, dict[str, Any]]] = []
        self.draining = False
        first = next(iter(_COUNTERS))

        def observe(name: str) -> Any:
            def callback(_options: Any) -> list[Any]:
                if name == first:  # the first of graphtrail's callbacks in a collection
                    self.drain()
                with self.lock:
                    items = list(self.totals[name].items())
                return [Observation(value, dict(key)) for key, value in items]

            return callback

        for name, (unit, description) in _COUNTERS.items():
            meter.create_observable_counter(name, callbacks=[observe(name)], unit=unit, description=description)

    def drain(self) -> None:
        """Hand the waiting histogram observations to the SDK (every reader of the provider gets them)."""
        with self.lock:
            pending, self.pending = self.pending, []
        try:
            for histogram, value, attrs in pending:
                histogram.record(value, attrs)
        except Exception as exc:  # noqa: BLE001 - never break a collection, nor the agent
            warn_once("metrics:drain", "graphtrail: could not record run metrics (%r); some observations are lost", exc)
        finally:
            self.draining = False

    def drain_later(self) -> None:
        threading.Thread(target=self.drain, name="graphtrail-metrics", daemon=True).start()

    def add(self, name: str, key: tuple[tuple[str, Any], ...], value: int) -> None:
        """Call with ``self.lock`` held."""
        bucket = self.totals[name]
        bucket[key] = bucket.get(key, 0) + value


@dataclass
class _State:
    provider: Any = None  # the MeterProvider instruments come from
    own: bool = False  # graphtrail made it (and shuts it down on reconfigure)
    instruments: _Instruments | None = None
    memory: Any = None  # InMemoryMetricReader of metrics="memory"
    server: Any = None  # the Prometheus HTTP server
    address: tuple[str, int] | None = None
    push: list[Any] = field(default_factory=list)  # readers that export on their own (flushed by flush_metrics)


_state = _State()
_lock = threading.RLock()


def metrics_enabled() -> bool:
    return _state.instruments is not None


def _otlp_reader(endpoint: str | None, protocol: str | None, headers: dict[str, str] | None) -> Any:
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    protocol = protocol or os.environ.get("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    kwargs: dict[str, Any] = {}
    if headers:
        kwargs["headers"] = dict(headers)
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetricExporter

        if endpoint:
            from urllib.parse import urlparse

            kwargs["endpoint"] = endpoint
            kwargs.setdefault("insecure", urlparse(endpoint).scheme != "https")
        exporter: Any = GrpcMetricExporter(**kwargs)
    else:
        from urllib.parse import urlparse

        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetricExporter

        if endpoint:
            path = urlparse(endpoint).path
            if path in ("", "/"):
                endpoint = endpoint.rstrip("/") + "/v1/metrics"
            elif path.endswith("/v1/traces"):  # the traces endpoint of the same collector
                endpoint = endpoint[: -len("/v1/traces")] + "/v1/metrics"
            kwargs["endpoint"] = endpoint
        exporter = HttpMetricExporter(**kwargs)
    interval = float(os.environ.get("OTEL_METRIC_EXPORT_INTERVAL") or DEFAULT_EXPORT_INTERVAL_MS)
    return PeriodicExportingMetricReader(exporter, export_interval_millis=interval)


def _prometheus_reader(host: str | None, port: int | None) -> tuple[Any, Any, tuple[str, int]]:
    try:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from prometheus_client import CollectorRegistry, start_http_server
    except ImportError as exc:
        raise ValueError(
            "metrics='prometheus' needs the OpenTelemetry Prometheus exporter: pip install 'graphtrail[prometheus]'"
        ) from exc
    host = host or os.environ.get("OTEL_EXPORTER_PROMETHEUS_HOST") or DEFAULT_PROMETHEUS_HOST
    if port is None:
        port = int(os.environ.get("OTEL_EXPORTER_PROMETHEUS_PORT") or DEFAULT_PROMETHEUS_PORT)
    # A registry of graphtrail's own: configure() can be called again without "Duplicated timeseries".
    registry = CollectorRegistry(auto_describe=True)
    reader = PrometheusMetricReader(registry=registry)
    server, _thread = start_http_server(port, addr=host, registry=registry)
    return reader, server, (host, int(server.server_port))


def check_metrics(metrics: Any, prometheus_port: int | None = None, run_names: int = 0) -> list[Any]:
    """``metrics`` as a list of names and readers; ValueError for anything else (before anything changes)."""
    from opentelemetry.sdk.metrics.export import MetricReader

    if metrics is None:
        names: list[Any] = ["none"]
    elif isinstance(metrics, (str, MetricReader)):
        names = [metrics]
    else:
        names = list(metrics)
    for name in names:
        if not isinstance(name, (str, MetricReader)) or (isinstance(name, str) and name not in METRICS):
            raise ValueError(f"metrics must be one of {METRICS} or a MetricReader, got {name!r}")
    if prometheus_port is not None and (isinstance(prometheus_port, bool) or not 0 <= int(prometheus_port) <= 65535):
        raise ValueError(f"prometheus_port must be 0..65535, got {prometheus_port!r}")
    if isinstance(run_names, bool) or not isinstance(run_names, int) or not 0 <= run_names <= MAX_RUN_NAMES:
        raise ValueError(f"metrics_run_names must be a number of run names 0..{MAX_RUN_NAMES}, got {run_names!r}")
    return names


def configure_metrics(
    metrics: str | Sequence[str] | Any | None = "none",
    *,
    service_name: str,
    endpoint: str | None = None,
    protocol: str | None = None,
    headers: dict[str, str] | None = None,
    prometheus_host: str | None = None,
    prometheus_port: int | None = None,
    meter_provider: Any = None,
    run_names: int = 0,
) -> None:
    """Set up (or switch off) the metrics of traced runs; called by :func:`graphtrail.configure`.

    ``metrics``: ``"otlp"`` (``endpoint``/``protocol``/``headers``, else the
    standard ``OTEL_EXPORTER_OTLP_(METRICS_)*`` variables), ``"prometheus"``
    (serves ``/metrics`` on ``prometheus_host:prometheus_port``, default
    127.0.0.1:9464), ``"console"``, ``"memory"`` (:func:`get_metric_reader`),
    ``"none"``, a list of these, or an SDK ``MetricReader``. ``meter_provider``:
    record with your own MeterProvider instead (its readers decide where
    metrics go; ``metrics`` is then ignored). ``run_names``: how many distinct
    LangChain run names may become ``gen_ai.agent.name`` values (default 0: none;
    docs/production.md, "Label bounds").
    """
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, InMemoryMetricReader, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource

    names = check_metrics(metrics, prometheus_port, run_names)
    with _lock:
        _shutdown_current()
        if meter_provider is not None:
            _install(meter_provider, own=False, run_names=run_names)
            return
        readers: list[Any] = []
        memory = server = address = None
        for name in names:
            if not isinstance(name, str):
                readers.append(name)
            elif name == "memory":
                memory = InMemoryMetricReader()
                readers.append(memory)
            elif name == "console":
                readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter(), export_interval_millis=DEFAULT_EXPORT_INTERVAL_MS))
            elif name == "otlp":
                readers.append(_otlp_reader(endpoint, protocol, headers))
            elif name == "prometheus":
                reader, server, address = _prometheus_reader(prometheus_host, prometheus_port)
                readers.append(reader)
        if not readers:
            return
        resource = Resource.create({SERVICE_NAME: service_name})
        provider = MeterProvider(metric_readers=readers, resource=resource, shutdown_on_exit=True)
        _install(provider, own=True, run_names=run_names)
        _state.memory, _state.server, _state.address = memory, server, address
        _state.push = [r for r in readers if isinstance(r, PeriodicExportingMetricReader)]


def _install(provider: Any, own: bool, run_names: int) -> None:
    from .._version import __version__

    _state.provider, _state.own = provider, own
    _state.instruments = _Instruments(provider.get_meter("graphtrail", __version__), run_names)


def _shutdown_current() -> None:
    provider, own, server = _state.provider, _state.own, _state.server
    _state.provider = _state.instruments = _state.memory = _state.server = _state.address = None
    _state.push = []
    _state.own = False
    if server is not None:
        try:
            server.shutdown()
            server.server_close()
        except Exception:  # noqa: BLE001
            pass
    if provider is not None and own:
        try:
            provider.shutdown(timeout_millis=5_000)
        except Exception:  # noqa: BLE001 - an exporter that is down must not stop reconfiguring
            pass


def get_metric_reader() -> Any:
    """The ``InMemoryMetricReader`` of ``configure(metrics="memory")`` (``.get_metrics_data()``), else None."""
    return _state.memory


def prometheus_address() -> tuple[str, int] | None:
    """``(host, port)`` the Prometheus ``/metrics`` endpoint listens on, when ``metrics="prometheus"``."""
    return _state.address


def flush_metrics(timeout_millis: int = 10_000) -> bool:
    """Export what the push readers (OTLP, console) hold now. Pull readers are left alone: a flush
    makes the Prometheus reader queue a second copy of every series for the next scrape."""
    ok = True
    for reader in list(_state.push):
        try:
            ok = bool(reader.force_flush(timeout_millis)) and ok
        except Exception:  # noqa: BLE001
            ok = False
    return ok


# ---------------------------------------------------------------- recording


_RUN_KEYS = ("gen_ai.agent.name", "gen_ai.provider.name", "gen_ai.request.model", "graphtrail.status", "error.type")


def record_run(facts: Any, signals: Any, *, agent: str, status: str, error_type: str | None, duration_s: float,
               agent_from_run: bool = False) -> None:
    """Record one finished run: its model calls, hops and provenance signals.

    Every label value goes through its bound first (:mod:`.cardinality`); ``agent_from_run``:
    ``agent`` is LangChain's run name, not a name given in code, and is a label only if let in.
    """
    inst = _state.instruments
    if inst is None or facts.replay:
        return
    labels = inst.labels
    model, provider = facts.observed_model()
    # Attribute dicts are cached by the raw values (one lookup per run and per call); the cache
    # holds at most _ATTR_CACHE of them, and the labels inside went through their bounds.
    raw = (agent, agent_from_run, provider, model, status, error_type)
    cached = inst.run_attrs.get(raw)
    if cached is None:
        key = (labels.agent_name(agent, agent_from_run), labels.provider(provider), labels.request_model(model),
               status, labels.error(error_type))
        base = {"gen_ai.operation.name": "invoke_agent"}
        base.update((k, v) for k, v in zip(_RUN_KEYS, key) if v is not None)
        cached = (base, tuple(base.items()), key[0])
        if len(inst.run_attrs) < _ATTR_CACHE:
            inst.run_attrs[raw] = cached
    base, items, agent_label = cached
    hops = len([1 for name, _, _ in facts.tools if name != "submit_answer"])
    share = None
    chat_attrs = inst.chat_attrs
    observations: list[tuple[Any, Any, dict[str, Any]]] = []
    for operation, req_model, resp_model, prov, in_tok, out_tok, seconds, err in facts.chats:
        trio = chat_attrs.get((operation, req_model, resp_model, prov, err))
        if trio is None:
            # gen_ai.response.model only when it says more than the request model (each attribute costs the SDK per call)
            ckey = (operation, labels.request_model(req_model),
                    labels.response_model(resp_model) if resp_model != req_model else None,
                    labels.provider(prov), labels.error(err))
            attrs = {k: v for k, v in zip(_CHAT_KEYS, ckey) if v is not None}
            trio = (attrs, {**attrs, "gen_ai.token.type": "input"}, {**attrs, "gen_ai.token.type": "output"})
            if len(chat_attrs) < _ATTR_CACHE:
                chat_attrs[(operation, req_model, resp_model, prov, err)] = trio
        observations.append((inst.op_duration, seconds, trio[0]))
        if in_tok is not None:
            observations.append((inst.tokens, in_tok, trio[1]))
        if out_tok is not None:
            observations.append((inst.tokens, out_tok, trio[2]))
    tool_keys = inst.tool_keys
    with inst.lock:
        inst.add("graphtrail.runs", items, 1)
        if signals is not None:
            # 0 too: the series exist from the first run, so a rate or a ratio never reads "no data".
            inst.add("graphtrail.provenance.unsupported_citations", items, len(signals.unsupported_citations))
            inst.add("graphtrail.provenance.unsupported_runs", items, 1 if signals.unsupported_citations else 0)
            inst.add("graphtrail.provenance.grounded_citations", items, len(signals.grounded_citations))
            inst.add("graphtrail.provenance.unrevealed_answers", items, 1 if signals.answer_revealed is False else 0)
            inst.add("graphtrail.provenance.empty_tool_calls", items, signals.empty_hops)
            hops, share = signals.hops, signals.uncited_share
        for tool, _, err in facts.tools:
            tool_key = tool_keys.get((agent_label, tool, err))
            if tool_key is None:
                err_label = labels.error(err)
                tool_key = (("gen_ai.agent.name", agent_label), ("gen_ai.tool.name", labels.tool(tool))) + (
                    (("error.type", err_label),) if err_label else ())
                if len(tool_keys) < _ATTR_CACHE:
                    tool_keys[(agent_label, tool, err)] = tool_key
            inst.add("graphtrail.tool.errors", tool_key, 1 if err else 0)
        pending = inst.pending
        pending.append((inst.agent_duration, duration_s, base))
        pending.append((inst.tool_calls, hops, base))
        if share is not None:
            pending.append((inst.uncited_share, share, base))
        pending.extend(observations)
        full = len(pending) >= _DRAIN_AT and not inst.draining
        if full:
            inst.draining = True
    if full:
        inst.drain_later()


_CHAT_KEYS = ("gen_ai.operation.name", "gen_ai.request.model", "gen_ai.response.model", "gen_ai.provider.name", "error.type")
#: Attribute dicts kept per label combination; the labels are bounded, this bounds the cache's memory besides.
_ATTR_CACHE = 4096
