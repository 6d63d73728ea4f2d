"""What a user sees of graphtrail at the prompt: ``dir(graphtrail)``, how a capture and a
traced agent print, and which URL a failed OTLP export names."""

from __future__ import annotations

import re

import pytest

import graphtrail
from graphtrail.tracer.config import export_status
from tests.test_tracer_kit import ask, build_create_agent, memory  # noqa: F401 - fixture


def test_dir_lists_the_api_not_typing_helpers() -> None:
    names = [n for n in dir(graphtrail) if not n.startswith("__")]
    assert set(graphtrail.__all__) - {"__version__"} <= set(names)
    for helper in ("Any", "TYPE_CHECKING", "annotations", "_display"):
        assert helper not in names


def test_capture_and_traced_agent_print_what_they_are(memory) -> None:  # noqa: F811 - fixture
    agent = graphtrail.trace_agent(build_create_agent(), name="kg-agent")
    assert repr(agent) == "traced(CompiledStateGraph, name='kg-agent')"
    with graphtrail.capture() as cap:
        assert repr(cap) == "Capture(0 trajectories)"
        agent.invoke(ask(1))
    text = repr(cap)
    assert text.startswith("Capture(1 trajectory, last: ") and "Answer 1" in text
    assert not re.search(r"object at 0x", repr(agent) + text)


@pytest.mark.parametrize("how", ["default", "env"])
def test_an_otlp_export_names_the_url_it_tries(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    for var in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        monkeypatch.delenv(var, raising=False)
    if how == "env":
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:9/v1/traces")
    graphtrail.configure(exporter="otlp")  # nothing is sent: no span is made
    try:
        labels = [s.label for s in export_status() if s.label.startswith("OTLP")]
    finally:
        graphtrail.configure(exporter="none")
    expected = "http://localhost:4318/v1/traces" if how == "default" else "http://127.0.0.1:9/v1/traces"
    assert labels == [f"OTLP {expected}"]


def test_every_module_exports_only_names_it_has() -> None:
    """``from graphtrail.x import *`` raises AttributeError on a name ``__all__`` lists and the module lacks."""
    import importlib
    import pkgutil
    import warnings

    missing: dict[str, list[str]] = {}
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # old paths warn that they moved; they are the new modules
        for info in pkgutil.walk_packages(graphtrail.__path__, "graphtrail."):
            if info.name.endswith("__main__"):
                continue
            try:
                module = importlib.import_module(info.name)
            except ImportError:  # an optional extra that is not installed
                continue
            names = getattr(module, "__all__", ())
            checked += bool(names)
            if lacking := [n for n in names if not hasattr(module, n)]:
                missing[info.name] = lacking
    assert checked > 50
    assert not missing, missing
