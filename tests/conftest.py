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
    # The library installs one filter on its logger, the redacting one (graphtrail._secret_log), which
    # stays; the others are the CLI's. A module- or session-scoped fixture may have run the CLI
    # in-process before this test started, so clear them on the way in too.
    from graphtrail._secret_log import RedactingFilter, install_log_filter

    logger = logging.getLogger("graphtrail")
    for installed in list(logger.filters):
        if not isinstance(installed, RedactingFilter):
            logger.removeFilter(installed)
    install_log_filter()
    yield
    for installed in list(logger.filters):
        if not isinstance(installed, RedactingFilter):
            logger.removeFilter(installed)
