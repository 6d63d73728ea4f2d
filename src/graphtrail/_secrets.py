"""The redaction rules themselves: which keys name a secret, and which text spells one.

Every byte graphtrail prints, logs, writes, exports or labels goes through these
rules (docs/spans.md, "Secrets"). They live here, in a leaf module with no
dependency beyond the standard library, so that every exit can use them at no
import cost: the CLI's usage errors (answered before the tracer loads), the
logging filter on graphtrail's logger (:mod:`graphtrail._secret_log`), the tracer's spans and metrics (via
:mod:`graphtrail.tracer.redact`, which adds the user's own rule) and what
``compare`` and ``traces`` re-emit from files graphtrail did not write.

Two rules:

- **keys**: a mapping value whose key looks like a secret (:func:`is_secret_key`:
  ``password``, ``api_key``, ``Authorization``, ``session_id``, ...) is replaced;
- **text**: inside any string, ``key=value`` / ``key: value`` / ``"key": "value"``
  pairs with such a key, ``Bearer``/``Basic`` credentials, and every credential
  recognised by its shape (:mod:`graphtrail._secret_shapes`) are replaced.

Cost: the text rule runs on every traced step, so the common case is a cached key
lookup and substring checks that find nothing; Python code only runs for
candidate matches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ._secret_shapes import SHAPES, token_spans

__all__ = [
    "REDACTED", "SECRET_KEY_WORDS", "SHAPES", "is_secret_key", "scan_text", "redact_value",
    "RedactedStdout",
]

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
        # a namespaced attribute (gen_ai.usage.input_tokens, llm.token_count.prompt) is a count when one of
        # its dotted parts is
        counts = _NOT_SECRET.search(norm) or ("." in key and any(
            _NOT_SECRET.search(_NORMALIZE.sub("", part)) for part in key.lower().split(".")))
        known = norm in SECRET_KEY_EXACT or (bool(_SECRET_WORD.search(norm)) and not counts)
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
_KEY_PREFIX_WORDS = ("api ", "access ", "private ", "secret ", "signing ", "encryption ", "master ", "ssh ", "session ")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_SEP = re.compile(r"[\"']?[ \t]*(?:=>|:=|[:=])[ \t]*")
_SCHEME_VALUE = re.compile(r"(?i:bearer|basic|token|digest|negotiate|apikey)[ \t]+(?=\S)")
_UNQUOTED = re.compile(r"[^\s\"',;&<>{}\[\]()]+")
_LINE_REST = re.compile(r"[^\r\n]*")
_CREDENTIAL_AFTER_SCHEME = re.compile(r"[ \t]+(?=[A-Za-z._~+/=\-]*\d)[A-Za-z0-9._~+/=\-]{8,}")
_PYDANTIC_INPUT = re.compile(r"[^\n]*?input_value=")
# Header-like keys whose value runs to the end of the line ("Cookie: a=1; b=2").
_KEY_ONLY_WITH_TOKEN = frozenset({"key", "ibmkey", "iamkey", "cloudkey", "ibmcloudkey", "ibmiamkey", "cloudiamkey",
                                   "ibmcloudiamkey", "clkey", "cloukey", "cloudantkey"})
_KEY_TOKEN = re.compile(r"[\"']?([A-Za-z0-9_\-]{24,})(?![A-Za-z0-9_\-])")
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
        # "key" alone is too common to be a secret (a map's key, a sort key), but a long
        # token after it is one (detect-secrets' IBM Cloud and Cloudant plugins flag it).
        if _NORMALIZE.sub("", key) not in _KEY_ONLY_WITH_TOKEN:
            return None
        sep = _SEP.match(text, e)
        tok = _KEY_TOKEN.match(text, sep.end()) if sep is not None else None
        return (tok.start(1), tok.end(1), REDACTED) if tok is not None else None
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


def _find_values(text: str, low: str, words: tuple[str, ...], found: list[tuple[int, int, str]]) -> None:
    """Every value after an occurrence of one of ``words`` (substring search: C speed on long text)."""
    for word in words:
        at = low.find(word)
        while at >= 0:
            hit = _key_value(text, low, at, word)
            if hit is not None:
                found.append(hit)
            at = low.find(word, at + len(word))


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
            _find_values(text, low, _TEXT_WORDS, found)
    else:
        _find_values(text, low, _SCHEME_WORDS, found)
    if len(text) >= 16:  # the shortest token format
        token_spans(text, found)
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



def scan_text(text: str) -> str:
    """``text`` with every secret it spells replaced by ``<redacted>`` (the built-in rules only)."""
    return _scan(text) if type(text) is str else _scan(str(text))


# ------------------------------------------------------------------ structures

_PLAIN = frozenset({int, float, bool, type(None)})


def redact_value(value: Any, _depth: int = 0) -> Any:
    """A JSON-like value with the built-in rules applied: values under secret keys replaced,
    every string scanned. Also reads the attribute lists of OTLP/JSON and Jaeger documents,
    where a secret's name is the ``"key"`` entry of a ``{"key": ..., "value": ...}`` pair.

    For what graphtrail re-emits from files it did not write (``compare``'s inputs, trace
    files for ``traces`` and ``traces stats``): the tracer's own values go through
    :func:`graphtrail.tracer.redact.redact`, which adds the user's rule.
    """
    t = type(value)
    if t is str:
        return _scan(value)
    if t in _PLAIN:
        return value
    if _depth > 64:
        return REDACTED
    if t is dict or isinstance(value, Mapping):
        name = value.get("key")
        if type(name) is str and "value" in value and is_secret_key(name):
            return {k: (_redacted_any_value(v) if k == "value" else redact_value(v, _depth + 1)) for k, v in value.items()}
        return {
            k: (REDACTED if v is not None and is_secret_key(k) else redact_value(v, _depth + 1)) for k, v in value.items()
        }
    if t is list or t is tuple or isinstance(value, (list, tuple, set, frozenset)):
        return [redact_value(v, _depth + 1) for v in value]
    if isinstance(value, str):
        return _scan(str(value))
    return value


def _redacted_any_value(value: Any) -> Any:
    """A secret attribute's value: an OTLP AnyValue keeps its shape (``{"stringValue": "<redacted>"}``)."""
    if isinstance(value, dict) and len(value) == 1:
        return {"stringValue": REDACTED}
    return REDACTED


# ------------------------------------------------------------------ streams


class RedactedStdout:
    """``sys.stdout`` (whichever it is at the time of each write) with every write redacted.

    The CLI's console writes through it: the data a command prints is redacted where it is
    read already, and this is the backstop for any text that was not (a table cell, a label).
    """

    def write(self, text: str) -> int:
        import sys

        return sys.stdout.write(_scan(text) if len(text) >= 4 else text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...: the real stream's
        import sys

        return getattr(sys.stdout, name)
