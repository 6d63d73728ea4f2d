"""Suite-wide isolation between tests that run the CLI in-process.

The CLI owns its process: `graphtrail run/eval/demo` install a filter on the "graphtrail"
logger so that they report the OTLP outcome themselves, once. A test that calls the CLI
(or its pipeline) in-process would leave that filter behind and silence the tracer's own
warnings for every later test; each test therefore starts with the logger as the library
leaves it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _graphtrail_logger_as_the_library_leaves_it() -> Iterator[None]:
    logger = logging.getLogger("graphtrail")
    before = list(logger.filters)
    yield
    for added in [f for f in logger.filters if f not in before]:
        logger.removeFilter(added)
