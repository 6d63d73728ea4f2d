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


# ---------------------------------------------------------------- every published shape (issue 29)


def _b64url(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _pem(kind: str, body: str, dashes: str = "-----") -> str:
    sep = " " if dashes == "----" else ""
    return f"{dashes}{sep}BEGIN {kind}{sep}{dashes}\n{body}\n{dashes}{sep}END {kind}{sep}{dashes}"


_JWT_HEADER = _b64url(b'{"alg":"HS256","typ":"JWT"}')
#: name -> (text as a user, a tool or a provider would write it, the part that must never be written).
#: The shapes of detect-secrets 1.5's plugins and gitleaks' rules; each raw text is flagged by
#: detect-secrets where it has a plugin for it (tests/test_redaction.py checks that, so the scan can fail).
SHAPES: dict[str, tuple[str, str]] = {
    "pgp": (_pem("PGP PRIVATE KEY BLOCK", "lQOYBGPgpBodyZz0123456789abc"), "lQOYBGPgpBodyZz0123456789abc"),
    "openssh": (_pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEOpenSshBody42"), "b3BlbnNzaC1rZXktdjEOpenSshBody42"),
    "rsa": (_pem("RSA PRIVATE KEY", "MIIEpAIBAAKCAQEARsaBody4242"), "MIIEpAIBAAKCAQEARsaBody4242"),
    "pkcs8": (_pem("PRIVATE KEY", "MIIEvQIBADANBgkqPkcs8Body77"), "MIIEvQIBADANBgkqPkcs8Body77"),
    "ec": (_pem("EC PRIVATE KEY", "MHcCAQEEIEcBody0123456789"), "MHcCAQEEIEcBody0123456789"),
    "ssh2": (_pem("SSH2 ENCRYPTED PRIVATE KEY", "P2/56wAAAi4Ssh2Body5555", "----"), "P2/56wAAAi4Ssh2Body5555"),
    "putty": ("PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: k\nPublic-Lines: 1\nAAAAB3NzaPuttyPub\n"
              "Private-Lines: 1\nAAABAPuttyPrivBody4242\nPrivate-MAC: 8f3e2a", "AAABAPuttyPrivBody4242"),
    "github-pat": ("token github_pat_11ABCDEFG0aBcDeFgHiJkLmN_oPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuV",
                   "github_pat_11ABCDEFG0aBcDeFgHiJkLmN_oPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuV"),
    "ghp": ("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    "openai-proj": ("sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f", "sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f"),
    "openai": ("sk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789", "sk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789"),
    "aws-akia": ("AKIAQWERTYUIOPASDF12", "AKIAQWERTYUIOPASDF12"),
    "aws-abia": ("ABIAQWERTYUIOPASDF34", "ABIAQWERTYUIOPASDF34"),
    "aws-asia": ("ASIAQWERTYUIOPASDF56", "ASIAQWERTYUIOPASDF56"),
    "aws-acca": ("ACCAQWERTYUIOPASDF78", "ACCAQWERTYUIOPASDF78"),
    "twilio-sk": ("SK0123456789abcdef0123456789abcdef", "SK0123456789abcdef0123456789abcdef"),
    "twilio-ac": ("AC1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d", "AC1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d"),
    "telegram": ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw3 ok", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw3"),
    "discord": ("MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
    "mailchimp": ("mc 0123456789abcdef0123456789abcdef-us12", "0123456789abcdef0123456789abcdef-us12"),
    "slack": ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    "stripe": ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    "sendgrid": ("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",
                 "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"),
    "gitlab": ("glpat-xyzABC0123456789abcd", "glpat-xyzABC0123456789abcd"),
    "npm": ("//registry.npmjs.org/:_authToken=npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
            "npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    "pypi": ("pypi-AgEIcHlwaS5vcmc" + "aB3" * 24, "pypi-AgEIcHlwaS5vcmc" + "aB3" * 24),
    "square": ("sq0csp-" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9nP2r", "sq0csp-aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9nP2r"),
    "basic-url": ("https://admin:Bas1cPassw0rdZ@db.example.test/x", "Bas1cPassw0rdZ"),
    "azure": ("AccountKey=" + "QXp1cmVLZXk" * 8, "QXp1cmVLZXk" * 8),
    "ibm-key": ("key = 'aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9nP2rS'", "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9nP2rS"),
    "ibm-cos": ("secret_access_key = '" + "0a1b2c3d4e5f" * 4 + "'", "0a1b2c3d4e5f" * 4),
    "artifactory": ("x AKCp5budTFpbypBqQbGJPz3pGCi28pPivfWczqjfYb9dr y", "AKCp5budTFpbypBqQbGJPz3pGCi28pPivfWczqjfYb9dr"),
    "softlayer": ("https://api.softlayer.com/soap/v3/" + "a1b2c3d4" * 8, "a1b2c3d4" * 8),
    "google": ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    "huggingface": ("hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567", "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    "jwt-opaque-payload": (f"{_JWT_HEADER}.{_b64url(b'opaque-claims-0123456789')}.c2lnbmF0dXJlMDEyMzQ1Njc4OQ",
                           _b64url(b"opaque-claims-0123456789")),
    "jwt-spaced-header": (_b64url(b'{\n "alg": "none"\n}') + "." + _b64url(b'{ "sub": "u1" }') + ".", _b64url(b'{ "sub": "u1" }')),
    "password": ("password=Hunter2Pw99x", "Hunter2Pw99x"),
    "bearer": ("Authorization: Bearer abcDEF1234567890xyzQ", "abcDEF1234567890xyzQ"),
}
