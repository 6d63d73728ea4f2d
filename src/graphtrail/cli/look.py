"""How ``graphtrail --help`` looks: plain text in the style of gh, uv and ruff.

Typer's own help puts ``<bool>`` after flags, ``<list[str]>`` after repeatable
options and ``{results}`` in the usage line, and squeezes the option help into
a narrow boxed column. graphtrail's commands use these classes instead:

- the usage line names arguments by their metavar (``RESULTS.json``), with
  ``[...]`` around the optional ones;
- the Arguments section shows the metavar alone, without a type;
- options show the metavar given in ``app.py`` (``--out DIR``, ``--limit N``),
  choices as ``<a|b|c>``, and flags nothing.

Only click's documented hooks (``collect_usage_pieces``, ``format_options``)
are overridden, so the classes work with Typer's vendored click and with click.
"""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["App", "Command", "Group", "argument_name", "choices_of", "EXIT_CODES", "exit_codes_of"]

#: What each exit code means, at the end of every help (the same for every command but where
#: :data:`_EXIT_1` or :data:`_EXIT_130` say more).
EXIT_CODES = (
    ("0", "done"),
    ("1", "an internal error: a bug (rerun with --debug and please report it)"),
    ("2", "bad arguments or input: one line on stderr says what to fix"),
    ("130", "interrupted (Ctrl-C)"),
)
_EXIT_1 = {"compare": "a --fail-on rule was broken: the gate failed (also an internal error)"}
_EXIT_2 = {"eval": "bad arguments or input, or with --strict a tool escaped an ablation (one line on stderr says which)"}
_EXIT_130 = {name: "interrupted (Ctrl-C); an evaluation keeps its finished runs: rerun with --resume"
             for name in ("eval", "demo")}


def exit_codes_of(name: str) -> list[tuple[str, str]]:
    """The exit codes a command's help lists, with what each means for that command."""
    special = {"1": _EXIT_1, "2": _EXIT_2, "130": _EXIT_130}
    return [(code, special.get(code, {}).get(name, meaning)) for code, meaning in EXIT_CODES]


def _format_exit_codes(ctx: Any, formatter: Any) -> None:
    with formatter.section("Exit codes"):
        formatter.write_dl(exit_codes_of(ctx.info_name or ""))


def argument_name(param: Any) -> str:
    """An argument's name as help shows it: its metavar, else its name in capitals."""
    return str(param.metavar or (param.name or "").upper())


def choices_of(param: Any) -> list[str] | None:
    """The values an option accepts, when it takes one of a fixed set (an Enum or ``Literal``)."""
    desc = getattr(param, "type_descriptor", None)  # Typer >= 0.20 keeps the annotation here
    if desc is not None:
        if not getattr(desc, "is_choice", False):
            return None
        return [str(getattr(c, "value", c)) for c in desc.choices or ()]
    choices = getattr(getattr(param, "type", None), "choices", None)  # click.Choice
    return [str(getattr(c, "value", c)) for c in choices] if choices else None


def _is_flag(param: Any) -> bool:
    return bool(getattr(param, "is_flag", False) or getattr(param, "count", False))


def _without_range(help_text: str) -> str:
    """Drop click's ``x>=1`` from ``[default: 1; x>=1]``: the help says what N is, and a bad N is told."""
    text = re.sub(r"(?:; )?x>=-?\d+", "", help_text)
    return re.sub(r"\s*\[\s*\]", "", text).replace("[; ", "[")


def _usage_piece(param: Any) -> str:
    name = argument_name(param)
    if getattr(param, "nargs", 1) != 1:
        name += "..."
    return name if param.required else f"[{name}]"


def _argument_record(param: Any) -> tuple[str, str]:
    help_text = getattr(param, "help", None) or ""
    if param.required:
        help_text = f"{help_text}  [required]" if help_text else "[required]"
    return argument_name(param), help_text


class Command(TyperCommand):
    """A graphtrail command: plain help with metavars, no type placeholders."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["rich_markup_mode"] = None  # plain text: wraps to any terminal width
        super().__init__(*args, **kwargs)
        for param in self.params:
            # An option that takes a value and was given no metavar shows its name
            # (``--seed SEED``), not Typer's type placeholder (``<int>``, ``<list[str]>``).
            if param.param_type_name == "option" and param.metavar is None and not _is_flag(param) and not choices_of(param):
                param.metavar = (param.name or "value").upper()

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                pieces.append(_usage_piece(param))
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            if getattr(param, "hidden", False):
                continue
            if param.param_type_name == "argument":
                arguments.append(_argument_record(param))
            elif (record := param.get_help_record(ctx)) is not None:
                options.append((record[0], _without_range(record[1])))
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        super().format_epilog(ctx, formatter)
        _format_exit_codes(ctx, formatter)


class Group(TyperGroup):
    """The ``graphtrail`` and ``graphtrail kg`` groups, in the same plain style."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["rich_markup_mode"] = None
        super().__init__(*args, **kwargs)

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        super().format_epilog(ctx, formatter)
        _format_exit_codes(ctx, formatter)


class App(typer.Typer):
    """``typer.Typer`` whose commands and sub-apps use the classes above unless told otherwise,
    so a command added later with a plain ``@app.command()`` gets the same help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("cls", Group)
        super().__init__(*args, **kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", Command)
        return super().command(*args, **kwargs)
