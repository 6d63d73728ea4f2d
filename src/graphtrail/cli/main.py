"""Entry point: run the Typer app and map every failure to an exit code.

- bad input (graphtrail's typed errors, missing files, usage errors): one line
  on stderr, exit 2;
- Ctrl-C: exit 130 (an evaluation can be continued with ``--resume``);
- anything else is a bug: exit 1 with one line, or the full traceback with
  ``--debug`` (anywhere on the command line) or ``GRAPHTRAIL_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from .errors import EXIT_BUG, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, InputError, is_input_error
from .usage import suggest_option, usage_message

__all__ = ["main", "suggest_option", "usage_message"]


def _say(message: str) -> None:
    # Plain print, not rich: rich would wrap a long message over several lines. An error
    # message may quote an input (a URL, a question, a token pasted as an option's value):
    # the same rules as every file, from the stdlib-only core (a usage error is answered
    # before the tracer loads, and importing it for one would cost seconds).
    from graphtrail._secrets import scan_text

    print(scan_text(" ".join(message.split())), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``graphtrail`` with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    import typer
    import typer.main

    from .app import app

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("GRAPHTRAIL_DEBUG", "") not in ("", "0")
    args = [a for a in args if a != "--debug"]
    args = _route_subcommands(args)  # issue 22
    command = typer.main.get_command(app)
    try:
        rv = command.main(args=args, prog_name="graphtrail", standalone_mode=False)
    except typer.Exit as exc:
        if exc.exit_code == EXIT_INTERRUPTED:
            _say(_INTERRUPTED)
        return exc.exit_code
    except typer.Abort:
        _say("graphtrail: interrupted")
        return EXIT_INTERRUPTED
    except typer.TyperException as exc:  # click-style errors (typer vendors click)
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else "graphtrail"
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            print(ctx.get_help())
            return EXIT_INPUT
        # One prefix for every error line; the command is named in the pointer to its help.
        if ctx is not None:  # a usage error: bad/missing option, unknown command
            _say(f"graphtrail: error: {usage_message(exc, args)} (see '{where} --help')")
        else:
            _say(f"graphtrail: error: {usage_message(exc, args)}")
        return getattr(exc, "exit_code", EXIT_INPUT) or EXIT_INPUT
    except KeyboardInterrupt:  # outside the command (typer turns one inside it into exit code 130, below)
        _say(_INTERRUPTED)
        return EXIT_INTERRUPTED
    except MemoryError:  # an input too large for this machine: the input's fault, not a bug
        if debug:
            raise
        _say("graphtrail: error: out of memory while reading the input; pass a smaller file, or --limit N where the command takes it")
        return EXIT_INPUT
    except Exception as exc:  # noqa: BLE001 - the top of the CLI decides what users see
        if debug:
            raise
        if is_input_error(exc):
            _say(f"graphtrail: error: {_describe(exc)}")
            return EXIT_INPUT
        _say(
            f"graphtrail: internal error: {type(exc).__name__}: {exc} "
            "(rerun with --debug for the traceback, and please report it)"
        )
        return EXIT_BUG
    if isinstance(rv, int):
        # Typer catches a Ctrl-C inside a command and, outside standalone mode, returns
        # 130 instead of raising: no graphtrail command returns 130 for any other reason.
        if rv == EXIT_INTERRUPTED:
            _say(_INTERRUPTED)
        return rv
    return EXIT_OK


def _route_subcommands(args: list[str]) -> list[str]:
    """``traces stats ...`` runs the command named ``traces stats``: ``traces`` itself takes a file
    argument, so it cannot also be a group (a file named "stats" would be ambiguous either way)."""
    if len(args) >= 2 and args[0] == "traces" and args[1] == "stats":
        return ["traces stats", *args[2:]]
    return args


_INTERRUPTED = "graphtrail: interrupted (an evaluation keeps its finished runs: rerun with --resume to continue)"
def _describe(exc: BaseException) -> str:
    if isinstance(exc, InputError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"file not found: {exc.filename or exc}; check the path"
    if isinstance(exc, IsADirectoryError):
        return f"expected a file but got a directory: {exc.filename or exc}"
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}; choose a location you can read/write"
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"a file is not UTF-8 text ({exc.reason}); check the input file format"
    return str(exc)
