"""Secret redaction: the one pass every recorded argument, message and text goes through.

A tracer copies what an agent handles into spans that leave the process (a
collector, a file, a console). Passwords and tokens an agent handles must not
leave with them, in any content mode. Two rules, applied everywhere graphtrail
records arguments or text (docs/spans.md, "Secrets"):

- **keys**: a mapping value whose key looks like a secret (:func:`is_secret_key`:
  ``password``, ``pwd``, ``api_key``, ``client_secret``, ``Authorization``,
  ``session_id``, ...) becomes ``"<redacted>"``, whatever its type;
- **text**: inside any string, ``key=value`` / ``key: value`` / ``"key": "value"``
  pairs with such a key, ``Bearer``/``Basic`` credentials, the password of
  ``scheme://user:password@host`` URLs, PEM private keys and well-known token
  formats (``sk-…``, ``ghp_…``, ``AKIA…``, ``xox…-``, JWTs, ...) are replaced.

Users add their own rules with ``configure(redact=fn)``: ``fn(key, value)`` sees
every leaf that survived the built-in rules (``key`` is its mapping key, or
``None`` for free text) and returns what to record. A rule that raises records
``"<redacted>"`` (fail closed).

Cost: this runs on every traced step, so the common case is a cached key lookup
and one regex scan per string that finds nothing; Python code only runs for
candidate matches.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ._safety import set_message_redactor, warn_once

__all__ = ["REDACTED", "SECRET_KEY_WORDS", "is_secret_key", "redact", "redact_text", "set_rule", "get_rule"]

REDACTED = "<redacted>"

# A key is compared in normalized form: lower case, only letters and digits
# ("X-Api-Key", "api_key" and "apiKey" are all "apikey"). It is a secret when it
# contains one of these words (the documented list; docs/spans.md) ...
SECRET_KEY_WORDS: tuple[str, ...] = (
    "password", "passwd", "passphrase", "passcode", "pwd", "secret", "token", "apikey", "accesskey",
    "privatekey", "privkey", "secretkey", "signingkey", "encryptionkey", "masterkey", "sshkey", "clientkey",
    "licensekey", "subscriptionkey", "sessionkey", "auth", "bearer", "cookie", "session", "credential", "creds",
    "signature", "jwt", "csrf", "xsrf", "connectionstring", "otp", "accountkey", "sharedaccess",
)
# ... or equals one of these (too short or too common to match inside other words).
SECRET_KEY_EXACT: frozenset[str] = frozenset({"pw", "pass", "pin", "sid", "dsn", "cvv", "cvc", "mfa", "2fa", "sig"})
# Not secrets although they contain a word above: token counts and limits, authors.
_NOT_SECRET = re.compile(
    r"^(?:max|min|num|n|input|output|prompt|completion|total|reasoning|cached|cache|context|remaining|used)"
    r"(?:new)?tokens?$|tokens?(?:count|counts|limit|usage|used|budget|ize|izer|ization)s?$|^author(?!iz)"
)
_SECRET_WORD = re.compile("|".join(w for w in SECRET_KEY_WORDS if w != "auth") + r"|auth(?!or(?!iz))")
_NORMALIZE = re.compile(r"[^a-z0-9]+")

_key_cache: dict[str, bool] = {}  # a tool's argument names repeat on every call: decide each once


def is_secret_key(key: Any) -> bool:
    """Whether a mapping key names a secret (case, ``_``, ``-`` and ``.`` do not matter)."""
    if type(key) is not str:
        if not isinstance(key, str):
            return False
        key = str(key)
    known = _key_cache.get(key)
    if known is None:
        norm = _NORMALIZE.sub("", key.lower())
        known = norm in SECRET_KEY_EXACT or (bool(_SECRET_WORD.search(norm)) and not _NOT_SECRET.search(norm))
        if len(_key_cache) < 8192:
            _key_cache[key] = known
    return known


# ------------------------------------------------------------------ text

# Finding candidates must be cheap, as most text holds none: the key words are
# looked for with ``str`` substring search in the lower-cased text (C speed; a
# regex alternation of ~30 words is 20-50x slower), and the case-sensitive
# token formats by a regex that only runs when one of their fixed prefixes occurs.
_TEXT_WORDS: tuple[str, ...] = (
    "pass", "pw", "secret", "token", "key", "auth", "bearer", "basic", "cookie", "session", "cred",
    "sig", "jwt", "csrf", "xsrf", "otp", "dsn", "cvv", "cvc", "pin",
)
_WORDS_RE = re.compile("|".join(_TEXT_WORDS))
_SCHEME_WORDS: tuple[str, ...] = ("bearer", "basic")
_TOKEN_PREFIXES: tuple[str, ...] = (
    "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "ASIA", "xox", "AIza", "glpat-", "hf_", "eyJ", "://", "-----BEGIN",
    "k_live_", "k_test_", "SG.", "npm_", "pypi-", "sq0", "hooks.slack.com", "-u", "--user",
)
# The provider formats follow the plugins of detect-secrets 1.5 (Yelp) and the rules of
# gitleaks (both list each provider's documented token shape); the test suite checks the
# output of this module with detect-secrets itself (tests/test_secret_scan.py).
_TOKEN_SCAN = re.compile(
    r"(?P<pem>-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)"
    # scheme://user:password@host -- a password may hold "/" or "@" (the last "@" ends it)
    r"|://(?P<url>[^\s/?#@:\"'<>]{0,256}:[^\s\"'<>]{1,256})@"
    # curl -u user:password, --user user:password, --proxy-user=user:password
    r"|(?:^|(?<=[\s\"'=]))(?:-u|-U|--user|--proxy-user)(?:[ \t]+|=)?[\"']?(?P<cli>[^\s:\"'@]{1,256}:[^\s\"']{1,256})"
    r"|(?P<tok>(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|A(?:KIA|SIA)[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{30,}|glpat-[A-Za-z0-9_\-]{20,}"
    r"|hf_[A-Za-z0-9]{30,}|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"
    r"|[rs]k_(?:live|test)_[0-9a-zA-Z]{16,}|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}|npm_[A-Za-z0-9]{30,}"
    r"|pypi-[A-Za-z0-9_\-]{50,}|sq0(?:csp|atp)-[0-9A-Za-z_\-]{20,}"
    r"|hooks\.slack\.com/services/[A-Za-z0-9_/]+))"
)
_KEY_PREFIX_WORDS = ("api ", "access ", "private ", "secret ", "signing ", "encryption ", "master ", "ssh ", "session ")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_SEP = re.compile(r"[\"']?[ \t]*(?:=>|:=|[:=])[ \t]*")
_SCHEME_VALUE = re.compile(r"(?i:bearer|basic|token|digest|negotiate|apikey)[ \t]+(?=\S)")
_UNQUOTED = re.compile(r"[^\s\"',;&<>{}\[\]()]+")
_LINE_REST = re.compile(r"[^\r\n]*")
_CREDENTIAL_AFTER_SCHEME = re.compile(r"[ \t]+(?=[A-Za-z._~+/=\-]*\d)[A-Za-z0-9._~+/=\-]{8,}")
_PYDANTIC_INPUT = re.compile(r"[^\n]*?input_value=")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY-----")
# Header-like keys whose value runs to the end of the line ("Cookie: a=1; b=2").
_WHOLE_LINE_KEYS = frozenset({"cookie", "setcookie", "authorization", "proxyauthorization", "xapikey", "apikey"})


_FLAG_SEP = re.compile(r"[ \t]+(?=[^\s-])")
_BASE64 = re.compile(r"[ \t]+[A-Za-z0-9+/]{6,}={0,2}(?![A-Za-z0-9+/=])")


def _basic_credential(text: str, at: int) -> re.Match[str] | None:
    """``Basic <base64 of user:password>`` (no digit needed): the value must decode to ``user:password``."""
    import base64
    import binascii

    m = _BASE64.match(text, at)
    if m is None:
        return None
    raw = m.group().strip()
    try:
        decoded = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return m if b":" in decoded else None


_MAX_KEY = 64  # a key is a short word: longer runs of key characters are not looked at whole
_MAX_BRACKETED = 65536  # a JSON object or array value is matched up to this far (then to the end)


def _closing(text: str, start: int) -> int:
    """End of the quoted string or bracketed JSON value that starts at ``start`` (or len(text))."""
    opener = text[start]
    n = len(text)
    if opener in "\"'":
        i = start + 1
        while True:
            i = text.find(opener, i)
            if i < 0:
                return n
            backslashes = 0
            while text[i - 1 - backslashes] == "\\":
                backslashes += 1
            if backslashes % 2 == 0:
                return i + 1
            i += 1
    close = "}" if opener == "{" else "]"
    depth, i, quote = 0, start, ""
    stop = min(n, start + _MAX_BRACKETED)
    while i < stop:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c == '"':
            quote = c
        elif c == opener:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _key_value(text: str, low: str, at: int, word: str) -> tuple[int, int, str] | None:
    """For key word ``word`` found at ``at``: (start, end, replacement) of the secret value after its key, or None."""
    s, e = at, at + len(word)
    n = len(text)
    low_s, high_e = max(0, at - _MAX_KEY), min(n, e + _MAX_KEY)
    while s > low_s and text[s - 1] in _KEY_CHARS:
        s -= 1
    while e < high_e and text[e] in _KEY_CHARS:
        e += 1
    key = low[s:e]
    if key == "key" and low.endswith(_KEY_PREFIX_WORDS, 0, s):  # "API key: ...", "private key = ..."
        key = "secret" + key
    if key in ("bearer", "basic"):
        # "Bearer <credential>" anywhere, e.g. inside a header someone pasted.
        cred = _CREDENTIAL_AFTER_SCHEME.match(text, e)
        if cred is None and key == "basic":
            cred = _basic_credential(text, e)
        if cred is not None:
            v = e + len(cred.group()) - len(cred.group().lstrip(" \t"))
            return v, cred.end(), REDACTED
        return None
    if not is_secret_key(key):
        return None
    sep = _SEP.match(text, e)
    if sep is None and text[s] == "-":
        # A command-line flag: "--password hunter2", "-p" is too short to tell.
        flag = _FLAG_SEP.match(text, e)
        if flag is not None:
            return _value_at(text, flag.end(), False, "")
    if sep is None:
        # A pydantic validation error names the field on one line and shows its input on the next.
        if text.startswith("\n", e):
            nxt = _PYDANTIC_INPUT.match(text, e + 1)
            if nxt is not None:
                return _value_at(text, nxt.end(), False, "")
        return None
    return _value_at(text, sep.end(), sep.group().startswith('"'), key if ":" in sep.group() else "")


def _value_at(text: str, v: int, json_key: bool, header: str) -> tuple[int, int, str] | None:
    n = len(text)
    if v >= n:
        return None
    c = text[v]
    if c in "\"'":
        if text.startswith(REDACTED, v + 1):
            return None
        return v, _closing(text, v), c + REDACTED + c
    if c in "{[":
        return v, _closing(text, v), '"' + REDACTED + '"'
    if text.startswith(REDACTED, v):
        return None
    repl = '"' + REDACTED + '"' if json_key else REDACTED
    if header and _NORMALIZE.sub("", header.lower()) in _WHOLE_LINE_KEYS:
        return v, _LINE_REST.match(text, v).end(), repl  # type: ignore[union-attr]
    scheme = _SCHEME_VALUE.match(text, v)
    val = _UNQUOTED.match(text, scheme.end() if scheme is not None else v)
    if val is None or (scheme is None and val.group() in ("null", "None", "true", "false")):
        return None
    return v, val.end(), repl


def _candidates(text: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of every secret in ``text``, in any order, maybe overlapping."""
    found: list[tuple[int, int, str]] = []
    low = text.lower()
    if len(low) != len(text):  # a few characters lower-case to two: keep offsets aligned
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    # A key's value follows a separator; without one only "Bearer <credential>" can be there.
    if "=" in text or ":" in text or "--" in text:
        if len(low) < 256:  # one regex pass is cheaper than 20 substring searches on short text
            for m in _WORDS_RE.finditer(low):
                hit = _key_value(text, low, m.start(), m.group())
                if hit is not None:
                    found.append(hit)
        else:
            for word in _TEXT_WORDS:
                at = low.find(word)
                while at >= 0:
                    hit = _key_value(text, low, at, word)
                    if hit is not None:
                        found.append(hit)
                    at = low.find(word, at + len(word))
    else:
        for word in _SCHEME_WORDS:
            at = low.find(word)
            while at >= 0:
                hit = _key_value(text, low, at, word)
                if hit is not None:
                    found.append(hit)
                at = low.find(word, at + len(word))
    if len(text) >= 16:  # the shortest token format
        for prefix in _TOKEN_PREFIXES:
            if prefix in text:
                for m in _TOKEN_SCAN.finditer(text):
                    kind = m.lastgroup
                    if kind == "pem":
                        end_m = _PEM_END.search(text, m.end())
                        found.append((m.start(), end_m.end() if end_m is not None else len(text), REDACTED))
                    elif kind == "url" or kind == "cli":
                        user_end = m.start(kind) + m.group(kind).index(":") + 1
                        found.append((user_end, m.end(kind), REDACTED))
                    else:
                        found.append((m.start(), m.end(), REDACTED))
                break
    return found


def _scan(text: str, _depth: int = 0) -> str:
    if len(text) < 4:  # "pw=x" is the shortest secret text
        return text
    if '\\"' in text and _depth < 8:
        return _scan_escaped(text, _depth)
    return _replace(text, _candidates(text))


def _scan_escaped(text: str, depth: int) -> str:
    """Text holding JSON inside JSON (``"{\\"password\\": \\"x\\"}"``): the rules read quotes, so
    the text is parsed and its values redacted as a structure, then written again. Text that
    does not parse whole (prose around it, or cut short) is read a second time with its
    escapes undone, and each secret found there is replaced wherever it occurs (fail closed)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            value = json.loads(stripped)
        except ValueError:
            pass
        else:
            cleaned = _walk_json(value, depth + 1)
            return text if cleaned == value else json.dumps(cleaned, ensure_ascii=False)
    out = _replace(text, _candidates(text))
    plain = out.replace("\\\\", "\\").replace('\\"', '"')
    if '\\"' in plain:
        plain = plain.replace('\\"', '"')
    for start, end, _ in _candidates(plain):
        secret = plain[start:end].strip("\"' \t")
        if len(secret) >= 2 and secret != REDACTED:
            out = out.replace(secret, REDACTED)
    return out


def _walk_json(value: Any, depth: int) -> Any:
    t = type(value)
    if t is str:
        return _scan(value, depth)
    if t is dict:
        return {k: (REDACTED if v is not None and is_secret_key(k) else _walk_json(v, depth)) for k, v in value.items()}
    if t is list:
        return [_walk_json(v, depth) for v in value]
    return value


def _replace(text: str, found: list[tuple[int, int, str]]) -> str:
    if not found:
        return text
    found.sort()
    out: list[str] = []
    pos = 0
    for start, end, repl in found:
        if start < pos:
            continue
        out.append(text[pos:start])
        out.append(repl)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def redact_text(text: str, limit: int = 0) -> str:
    """``text`` with the secrets it spells out replaced (see the module docstring).

    ``limit`` > 0: only the first ``limit`` characters (plus a margin, so a value
    cut at the limit is still seen whole) are scanned; the caller truncates.
    """
    if limit > 0 and len(text) > limit + 512:
        text = text[: limit + 512]
    text = _scan(text)
    rule = _rule
    if rule is not None:
        text = _apply_rule(rule, None, text)
        if not isinstance(text, str):
            text = str(text)
    return text


# ------------------------------------------------------------------ values

_PLAIN = frozenset({int, float, bool, type(None)})


def redact(value: Any, key: str | None = None, _depth: int = 0) -> Any:
    """A JSON-like value with every secret replaced: call it on anything recorded.

    Mappings: values under secret keys become ``"<redacted>"``, the rest is
    walked. Sequences are walked. Strings go through :func:`redact_text`. Other
    objects are returned as they are (the caller serializes them). Nesting deeper
    than 32 levels is replaced as a whole (a cycle or a bomb is not walked).
    The input is never modified; an unchanged value may be returned as is.
    """
    t = type(value)
    if t is str:
        return redact_text(value) if _rule is None else _apply_rule(_rule, key, redact_text_builtin(value))
    if t in _PLAIN:
        return value if _rule is None or value is None else _apply_rule(_rule, key, value)
    if _depth > 32:
        return REDACTED
    if t is dict or isinstance(value, Mapping):
        return {
            k: (REDACTED if v is not None and is_secret_key(k) else redact(v, k if isinstance(k, str) else key, _depth + 1))
            for k, v in value.items()
        }
    if t is list or t is tuple or isinstance(value, (list, tuple, set, frozenset)):
        return [redact(v, key, _depth + 1) for v in value]
    if isinstance(value, str):
        return redact(str(value), key, _depth)
    return value


def redact_keys(value: Any, _depth: int = 0) -> Any:
    """Only the key rule of :func:`redact`: for a structure that is serialized and then
    redacted as text anyway (the text pass would scan each string twice). With a user's
    rule installed it is :func:`redact`, so the rule sees each value with its key."""
    if _rule is not None:
        return redact(value)
    t = type(value)
    if t is str or t in _PLAIN:
        return value
    if _depth > 32:
        return REDACTED
    if t is dict or isinstance(value, Mapping):
        return {k: (REDACTED if v is not None and is_secret_key(k) else redact_keys(v, _depth + 1)) for k, v in value.items()}
    if t is list or t is tuple or isinstance(value, (list, tuple, set, frozenset)):
        return [redact_keys(v, _depth + 1) for v in value]
    return value


def redact_text_builtin(text: str) -> str:
    """:func:`redact_text` without the user's rule (the caller applies it with a key)."""
    return _scan(text)


def redact_ids(ids: list[Any]) -> list[Any]:
    """Entity ids and citations as recorded: an id is text a tool or a model produced, so it
    goes through the same rules (an id that spells a credential is recorded as ``<redacted>``)."""
    out = None
    for i, value in enumerate(ids):
        if type(value) is str and len(value) >= 4:
            clean = _scan(value)
            if clean is not value:
                if out is None:
                    out = list(ids)
                out[i] = clean
    return ids if out is None else out


def redact_entities(entities: list[Any]) -> list[Any]:
    """EntityRef-like named tuples with their ``id`` (and name) through :func:`redact_ids`."""
    out = None
    for i, e in enumerate(entities):
        clean = _scan(e.id) if len(e.id) >= 4 else e.id
        name = _scan(e.name) if type(e.name) is str and len(e.name) >= 4 else e.name
        if clean is not e.id or name is not e.name:
            if out is None:
                out = list(entities)
            out[i] = e._replace(id=clean, name=name)
    return entities if out is None else out


# ------------------------------------------------------------------ users' rules

_rule: Callable[[str | None, Any], Any] | None = None
_rule_lock = threading.Lock()


def set_rule(rule: Callable[[str | None, Any], Any] | None) -> None:
    """Install ``rule(key, value) -> value`` (``configure(redact=...)``); ``None`` removes it."""
    global _rule
    if rule is not None and not callable(rule):
        raise TypeError(f"redact must be a callable rule(key, value) -> value, got {type(rule).__name__}")
    with _rule_lock:
        _rule = rule


def get_rule() -> Callable[[str | None, Any], Any] | None:
    return _rule


def _apply_rule(rule: Callable[[str | None, Any], Any], key: str | None, value: Any) -> Any:
    try:
        return rule(key, value)
    except Exception as exc:  # noqa: BLE001 - a broken rule must not leak what it was meant to hide
        warn_once("redact:rule", "graphtrail: the redact rule raised %r; the value was recorded as <redacted>", exc)
        return REDACTED


# ------------------------------------------------------------------ exceptions


def record_exception(span: Any, error: BaseException, timestamp: int) -> None:
    """``span.record_exception`` with the message and stack trace redacted.

    An exception's message often quotes the arguments that made it fail (a
    pydantic validation error shows the input value), and the stack trace repeats
    the message of every exception in the chain.
    """
    import traceback

    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - a broken __str__ still gets an event
        message = type(error).__name__
    stacktrace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    span.record_exception(
        error,
        attributes={"exception.message": redact_text(message), "exception.stacktrace": redact_text(stacktrace)},
        timestamp=timestamp,
    )


set_message_redactor(redact_text_builtin)  # the built-in rules only: a user's rule may itself warn
