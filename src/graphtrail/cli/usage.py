"""Usage errors (a bad or missing option, an unknown value) as one graphtrail line.

click words them for its own style (``Invalid value for '--format' / '-f': Value
error, 'xml' is not one of ...``, ``Got unexpected extra argument(s) (true)``).
graphtrail's line says what is wrong and what is accepted instead: the choices,
the kind of value, or that a flag takes no value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["suggest_option", "usage_message"]


def _sentence_case(message: str) -> str:
    """click's ``Missing option '--out'.`` in graphtrail's style: lower-case start, no full stop."""
    message = message.strip().rstrip(".").replace(". Did you mean", "; did you mean")
    if len(message) > 1 and message[0].isupper() and not message[1].isupper():
        message = message[0].lower() + message[1:]
    return message


def suggest_option(name: str, options: Sequence[str]) -> str | None:
    """The option a mistyped ``name`` most likely meant, or ``None``.

    click compares whole option strings, so the shared ``--`` makes ``--bogus``
    look like ``--out``. Comparing the names without their dashes keeps real
    typos (``--trails`` -> ``--trials``) and drops such coincidences.
    """
    import difflib

    bare = {opt.lstrip("-"): opt for opt in options if opt.startswith("--")}
    match = difflib.get_close_matches(name.lstrip("-"), list(bare), n=1, cutoff=0.6)
    return bare[match[0]] if match else None


def usage_message(exc: BaseException, args: Sequence[str] = ()) -> str:
    """A click usage error as one graphtrail sentence that says what is accepted.

    ``args`` is the command line, to name the value a user gave (click's errors
    do not keep it) and the flag an unexpected ``true`` followed.
    """
    kind = type(exc).__name__
    ctx = getattr(exc, "ctx", None)
    params = list(ctx.command.params) if ctx is not None else []
    if kind == "NoSuchOption":
        name = str(getattr(exc, "option_name", ""))
        options = [o for p in params for o in (*p.opts, *p.secondary_opts)]
        guess = suggest_option(name, options)
        return f"no such option: {name}" + (f"; did you mean {guess}?" if guess else "")
    if kind == "BadParameter" and getattr(exc, "param", None) is not None:
        return _bad_value(exc.param, str(getattr(exc, "message", exc)), args)  # type: ignore[attr-defined]
    if kind == "UsageError" and "unexpected extra argument" in str(exc):
        return _extra_argument(str(exc), params, args)
    format_message = getattr(exc, "format_message", None)
    return _sentence_case(format_message() if callable(format_message) else str(exc))


def _option_name(param: Any) -> str:
    longs = [o for o in getattr(param, "opts", ()) if o.startswith("--")]
    return longs[0] if longs else str(param.name)


def _given(param: Any, args: Sequence[str]) -> str | None:
    """The value given to ``param`` on the command line (the last one, as click keeps it)."""
    found = None
    names = [o for o in getattr(param, "opts", ()) if o.startswith("-")]
    for i, token in enumerate(args):
        for name in names:
            if token == name and i + 1 < len(args):
                found = args[i + 1]
            elif name.startswith("--") and token.startswith(name + "="):
                found = token[len(name) + 1 :]
            elif not name.startswith("--") and token.startswith(name) and not token.startswith("--") and len(token) > len(name):
                found = token[len(name) :]
    return found


def _bad_value(param: Any, message: str, args: Sequence[str]) -> str:
    """``--format 'xml' is not accepted; choose from: summary, jaeger, otlp-json`` and the like."""
    from .look import choices_of

    name = _option_name(param)
    value = _given(param, args)
    got = f" {value!r}" if value is not None else ""
    choices = choices_of(param)
    if choices:
        return f"{name}{got} is not accepted; choose from: {', '.join(choices)}"
    low = message.lower()
    if "valid integer" in low:
        return f"{name} takes a whole number, got{got or ' something else'}"
    minimum = getattr(param, "min", None)
    if minimum is not None and ("greater than or equal" in low or "not in the range" in low):
        return f"{name} must be at least {minimum}, got{got or ' less'}"
    return f"invalid value for {name}{got}: {_sentence_case(message.split('Value error, ', 1)[-1])}"


def _extra_argument(message: str, params: Sequence[Any], args: Sequence[str]) -> str:
    """An argument no parameter takes: most often a value after a flag (``--force true``)."""
    inside = message[message.rfind("(") + 1 : message.rfind(")")] if "(" in message else ""
    word = inside.split()[0] if inside.split() else ""
    flags = {o: p for p in params if getattr(p, "is_flag", False) for o in (*p.opts, *p.secondary_opts)}
    for before, token in zip(args, args[1:]):
        if token == word and before in flags:
            pair = [o for o in (*flags[before].opts, *flags[before].secondary_opts) if o.startswith("--")]
            how = " or ".join(pair) if len(pair) > 1 else f"{before} alone to turn it on, or leave it out"
            return f"{before} is a flag and takes no value, got {word!r}; pass {how}"
    if word:
        return f"unexpected argument {word!r}; the command takes no more arguments (quote a value that holds spaces)"
    return _sentence_case(message)
