"""graphtrail's version, in a leaf module of its own.

``graphtrail/__init__`` re-exports it as ``graphtrail.__version__``, and the tracer
stamps it on its OTel instrumentation scope; both import it from here, so the
tracer never imports the top-level package (which imports the tracer lazily).
Keep it equal to ``version`` in pyproject.toml.
"""

__version__ = "0.1.0"
