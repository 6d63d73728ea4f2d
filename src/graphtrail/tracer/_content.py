"""Content modes, truncation, redaction and compact JSON for span attributes.

Everything here runs on every step of every traced run, so it avoids copies:
a value is only serialized when the content mode needs it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from . import redact as _redact
from .redact import REDACTED, is_secret_key

ContentMode = Literal["full", "ids-only", "none"]
CONTENT_MODES: tuple[str, ...] = ("full", "ids-only", "none")
DEFAULT_MAX_VALUE_LENGTH = 4096
TRUNCATION_MARKER = "…[truncated {n} chars]"
_ID_LIKE = re.compile(r"^[\w:.\-/#@]{1,128}$")


def check_content_mode(mode: str) -> ContentMode:
    if mode not in CONTENT_MODES:
        raise ValueError(f"content must be one of {CONTENT_MODES}, got {mode!r}")
    return mode  # type: ignore[return-value]


_encode_str = json.encoder.encode_basestring  # what the encoder uses when ensure_ascii=False
# One encoder for every call: json.dumps() with options builds a new encoder each time.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
# ... and JSONEncoder.encode() still builds a C encoder per call: build it once. It
# keeps no state between calls (no cycle markers: a cyclic value hits the recursion
# limit instead, and the pure encoder below then reports the cycle), so threads may share it.
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = (
    _c_make_encoder(None, str, _encode_str, None, ":", ",", False, False, True) if _c_make_encoder is not None else None
)


def dumps(obj: Any) -> str:
    """Compact JSON that never raises on odd objects (they become ``str``)."""
    if type(obj) is list and (not obj or type(obj[0]) is str):
        # Lists of ids are most of what a run dumps: the encoder's own output, 4x faster.
        try:
            return "[" + ",".join(map(_encode_str, obj)) + "]"
        except TypeError:  # not all strings
            pass
    if _C_ENCODE is not None and type(obj) in (dict, list):
        try:
            return "".join(_C_ENCODE(obj, 0))
        except Exception:  # noqa: BLE001 - the pure encoder below gives the same result or the same error
            pass
    return _ENCODE(obj)


def _json_opt(value: str | None) -> str:
    return "null" if value is None else _encode_str(value)


def dumps_entities(entities: Any) -> str:
    """``[{"id", "name", "type"}, ...]`` of Entity-like objects, as :func:`dumps` would write it, 3x faster."""
    return "[" + ",".join(
        '{"id":' + _encode_str(e.id) + ',"name":' + _json_opt(e.name) + ',"type":' + _json_opt(e.type) + "}"
        for e in entities
    ) + "]"


def dumps_edges(edges: Any) -> str:
    """``[[source, relation, target], ...]`` of Edge-like objects, as :func:`dumps` would write it."""
    return "[" + ",".join(
        "[" + _encode_str(e.source) + "," + _encode_str(e.relation) + "," + _encode_str(e.target) + "]" for e in edges
    ) + "]"


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters and say how much was dropped."""
    if limit <= 0 or len(text) <= limit:
        return text
    return text[:limit] + TRUNCATION_MARKER.format(n=len(text) - limit)


def to_text(content: Any) -> str:
    """Message or tool content as text (LangChain content may be a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                parts.append(dumps(part))
        return "".join(parts)
    return dumps(content)


def _clean_str(value: str, key: str | None, mode: ContentMode, limit: int) -> Any:
    if mode == "full":
        return clean_text(value, limit, key)
    if not _ID_LIKE.match(value):
        return REDACTED
    text = _redact.redact_text_builtin(value)  # an identifier-like token may still be a credential (sk-..., AKIA...)
    rule = _redact.get_rule()
    return text if rule is None else _redact._apply_rule(rule, key, text)


def _clean_value(value: Any, key: str | None, mode: ContentMode, limit: int, depth: int) -> Any:
    if isinstance(value, str):
        return _clean_str(value, key, mode, limit)
    if value is None or isinstance(value, (bool, int, float)):
        rule = _redact.get_rule()
        return value if rule is None or value is None else _redact._apply_rule(rule, key, value)
    if depth > 6:
        return REDACTED if mode != "full" else _clean_str(str(value), key, mode, limit)
    if isinstance(value, dict):
        return {
            str(k): (REDACTED if v is not None and is_secret_key(k) else _clean_value(v, str(k), mode, limit, depth + 1))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_clean_value(v, key, mode, limit, depth + 1) for v in value]
    return _clean_str(str(value), key, mode, limit)


def clean_args(args: Any, mode: ContentMode, limit: int) -> dict[str, Any]:
    """Tool-call arguments as recorded: JSON-safe, secrets redacted (redact.py), text per mode.

    - ``full``: every value, long strings truncated;
    - ``ids-only``: structure, numbers and identifier-like strings (no spaces,
      at most 128 chars, e.g. ``"E12"``); free text becomes ``"<redacted>"``;
    - ``none``: nothing (``{}``).

    In every mode, values under secret-looking keys become ``"<redacted>"`` and
    strings lose the credentials they spell out (``Bearer …``, ``sk-…``).
    """
    if mode == "none" or args is None:
        return {}
    if not isinstance(args, dict):
        args = {"input": args}
    cleaned = _clean_value(args, None, mode, limit, 0)
    return cleaned if isinstance(cleaned, dict) else {}


def clean_text(text: str, limit: int, key: str | None = None) -> str:
    """Text as recorded in ``full`` mode: credentials redacted (redact.py), then cut to ``limit``.

    Only the first ``limit`` characters (and a margin, so that a value cut by the
    limit is still recognized whole) are scanned: the rest is dropped anyway.
    """
    scanned = text if len(text) <= limit + 512 else text[: limit + 512]
    cleaned = _redact.redact_text_builtin(scanned)
    rule = _redact.get_rule()
    if rule is not None:
        cleaned = _redact._apply_rule(rule, key, cleaned)
        if not isinstance(cleaned, str):
            cleaned = dumps(cleaned)
    if scanned is text:
        return truncate(cleaned, limit)
    return cleaned[:limit] + TRUNCATION_MARKER.format(n=len(text) - limit)
