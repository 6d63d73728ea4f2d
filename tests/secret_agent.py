"""A ``create_agent`` agent that handles credentials, for the redaction tests.

Every value in :data:`SECRETS` is planted somewhere a tool argument or a secret
can surface in a trace, and must never be exported. :data:`VISIBLE` values sit
next to them under harmless keys: in content="full" they must be exported, so a
test that finds no secret also proves it looked at real bytes.

Only the chat model is scripted; LangGraph, the tools, their validation errors
and LangChain's tool-error messages are real.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from tests.fakes import ScriptedChatModel, tool_call

SECRETS = {
    "password": "pw-Hx7q2LmZ9",
    "bearer": "tok-bEaReR5551234567",
    "client_secret": "cs-Qq88Ww77Ee",
    "dsn_password": "dsnpw-K3y4",
    "pin": "pin-31337xyz",
    "api_key_in_question": "qk-9f8e7d6c5b",
    "session_cookie": "sess-A1B2C3D4",
    "answer_token": "ans-T0k3nZZ",
    "openai_key": "sk-proj-AbCdEfGhIjKlMnOpQrSt",
    "metadata_secret": "meta-S3cr3tMM",
}
VISIBLE = {"username": "alice-visible", "endpoint": "https://api.example.test/v1/items"}
QUESTION = f"Log in and fetch the items; my api_key={SECRETS['api_key_in_question']} if needed"


@tool
def login(username: str, password: str) -> str:
    """Log a user in."""
    return f"welcome {username}"


@tool
def call_api(url: str, headers: dict[str, str]) -> str:
    """GET ``url`` with ``headers``; echoes what it sent, as a careless tool would."""
    return json.dumps({"url": url, "sent_headers": headers, "status": 200})


@tool
def show_config(settings: dict[str, Any]) -> str:
    """Echo a configuration block."""
    return f"settings loaded: {json.dumps(settings)}"


@tool
def set_pin(user: str, pin: int) -> str:
    """Set a numeric PIN (called with text, it fails validation, which echoes the input)."""
    return "ok"


@tool
def connect(dsn: str) -> str:
    """Connect to a database; fails, quoting the DSN in the error like many drivers do."""
    raise ConnectionError(f"could not connect to {dsn}: timeout")


@tool
def submit_answer(answer: str, citations: list[str]) -> str:
    """Submit the final answer with the ids of the entities that support it."""
    return "accepted"


def script() -> list[AIMessage]:
    s = SECRETS
    return [
        AIMessage(
            content=f"Logging in (password={s['password']}).",
            tool_calls=[tool_call("login", {"username": VISIBLE["username"], "password": s["password"]}, "c1")],
        ),
        AIMessage(content="", tool_calls=[tool_call(
            "call_api",
            {"url": VISIBLE["endpoint"], "headers": {"Authorization": f"Bearer {s['bearer']}", "Cookie": f"session={s['session_cookie']}"}},
            "c2",
        )]),
        AIMessage(content="", tool_calls=[tool_call(
            "show_config", {"settings": {"app": {"client_id": "app-1", "client_secret": s["client_secret"]}, "model_key": s["openai_key"]}}, "c3"
        )]),
        AIMessage(content="", tool_calls=[tool_call("set_pin", {"user": VISIBLE["username"], "pin": s["pin"]}, "c4")]),
        AIMessage(content="", tool_calls=[tool_call("connect", {"dsn": f"postgresql://admin:{s['dsn_password']}@db.internal/app"}, "c5")]),
        AIMessage(content="", tool_calls=[tool_call(
            "submit_answer", {"answer": f"3 items (token: {s['answer_token']})", "citations": ["E1"]}, "c6"
        )]),
        AIMessage(content=f"3 items (token: {s['answer_token']}) [E:E1]"),
    ]


TOOLS = [login, call_api, show_config, set_pin, connect, submit_answer]


def build_secret_agent() -> Any:
    """Every tool call of :func:`script`; tool errors become ToolMessages (``handle_tool_errors``), so the run goes on."""
    from tests.test_tracer_kit import build_toolnode_graph

    return build_toolnode_graph(ScriptedChatModel(script=script(), model_name="scripted-secret-model"), TOOLS, handle_tool_errors=True)


def build_failing_agent() -> Any:
    """``create_agent`` whose first call is ``connect``: its error ends the run (the root span records it)."""
    connect_call = script()[4]
    return create_agent(ScriptedChatModel(script=[connect_call], model_name="scripted-secret-model"), TOOLS)


def run_secret_agents(secret_agent: Any, failing_agent: Any) -> None:
    """One run of each (graphtrail-traced) agent, under run metadata that holds a secret."""
    from graphtrail.tracer import run_annotations

    with run_annotations(metadata={"deploy_token": SECRETS["metadata_secret"], "team": "kg"}):
        secret_agent.invoke({"messages": [("user", QUESTION)]})
        try:
            failing_agent.invoke({"messages": [("user", QUESTION)]})
        except ConnectionError:
            pass
        else:  # pragma: no cover - the test relies on the error path
            raise AssertionError("the connect tool was expected to fail")
