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
  ``scheme://user:password@host`` URLs, private key blocks, JWTs and the token
  formats of detect-secrets' and gitleaks' rules (``sk-…``, ``ghp_…``, ``A[KS]IA…``,
  ``xox…-``, ...; :data:`SHAPES`) are replaced.

The rules themselves are in :mod:`graphtrail._secrets` (stdlib only, shared with
every other exit: the CLI's messages, graphtrail's logger, ``compare`` and
``traces``); this module adds the user's own rule and the tracer's helpers.

Users add their own rules with ``configure(redact=fn)``: ``fn(key, value)`` sees
every leaf that survived the built-in rules (``key`` is its mapping key, or
``None`` for free text) and returns what to record. A rule that raises records
``"<redacted>"`` (fail closed).

Cost: this runs on every traced step, so the common case is a cached key lookup
and one regex scan per string that finds nothing; Python code only runs for
candidate matches.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

# The rules live in a leaf module (stdlib only), so that exits that must not load the
# tracer (the CLI's usage errors, the logging filter) apply the very same rules.
from .._secrets import REDACTED, SECRET_KEY_EXACT, SECRET_KEY_WORDS, SHAPES, is_secret_key
from .._secrets import _scan as _scan_uncached
from ._safety import set_message_redactor, warn_once

__all__ = ["REDACTED", "SECRET_KEY_WORDS", "SECRET_KEY_EXACT", "SHAPES", "is_secret_key", "redact", "redact_text", "set_rule",
           "get_rule"]


# ------------------------------------------------------------------ the scan, remembered

# Texts the built-in rules found nothing in. The same text is scanned again and again:
# within a run, a tool's output is recorded on its span, then sent back to the model
# (the chat span's input and its input messages); every model call resends the system
# prompt and the question; across runs, prompts and instructions repeat. The rules are a
# pure function of the text, so a text once found clean is clean: a set lookup (one hash
# of the text, kept by the str object) replaces the scan. Only texts the built-in rules
# found nothing in are kept (in memory, never exported), so the cache holds nothing they
# call a secret; it is bounded by characters, and emptied when full. A user's rule still
# sees every text (it may not be a pure function).
_CLEAN_MAX_TEXT = 16384  # longer texts are scanned every time (and rarely repeat whole)
_CLEAN_MAX_CHARS = 2_000_000
_clean: set[str] = set()
_clean_chars = 0


def _scan(text: str) -> str:
    """The built-in rules on ``text`` (:func:`graphtrail._secrets._scan`), skipping texts already found clean."""
    global _clean_chars
    exact = type(text) is str  # a str subclass may compare in its own way: not looked up, not kept
    if exact and text in _clean:
        return text
    out = _scan_uncached(text)
    if out is text and exact and 4 <= len(text) <= _CLEAN_MAX_TEXT:
        if _clean_chars + len(text) > _CLEAN_MAX_CHARS:
            _clean.clear()
            _clean_chars = 0
        _clean.add(text)
        _clean_chars += len(text)
    return out


def clear_scan_cache() -> None:
    """Forget every text found clean (tests and benchmarks measure the scan itself with it)."""
    global _clean_chars
    _clean.clear()
    _clean_chars = 0


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


_name_cache: dict[str, str] = {}  # model, provider and agent names repeat on every call: decide each once


def redact_name(name: str) -> str:
    """A short name (a model, a provider, an agent, a metric label value) as recorded: a
    provider may report any string as its model (``response_metadata.model_name``), and it
    reaches span names, attributes and metric labels. Cached: names repeat on every call."""
    known = _name_cache.get(name)
    if known is None:
        known = redact_text(name) if type(name) is str else redact_text(str(name))
        if len(_name_cache) < 4096:
            _name_cache[name] = known
    return known


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
