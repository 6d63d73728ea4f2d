"""The report's header facts as a small table: when, which agent and model, and how it was run.

``meta`` holds whatever the evaluation recorded (the model's full description and its
short name among them); the reader needs each fact once, by a plain name. The model is
named once, as the runs observed it, with the name the evaluation was given on hover in report.html.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Report

__all__ = ["meta_rows", "meta_html"]

#: meta keys shown, in order, with the name the table gives them ("model" is handled apart).
_SHOWN = (("recorded_model", "model the traces recorded"), ("agent", "agent"), ("trials", "trials per condition"), ("seed", "seed"), ("reuse", "model calls reused"),
          ("correctness", "correct means"))
#: meta keys never shown as rows: a spelling of the model, or data that has its own section.
_HIDDEN = {"model", "model_name", "fingerprint", "cost", "skipped_questions", "not_applicable"}


def meta_rows(report: "Report") -> list[tuple[str, str, str | None]]:
    """(name, value, hover text or None) per fact, in reading order."""
    meta = report.meta or {}
    rows: list[tuple[str, str, str | None]] = [
        ("date", datetime.fromtimestamp(report.created, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), None)]
    short, full = meta.get("model_name"), meta.get("model")
    if short or full:  # the model the runs observed; the name the evaluation was given, on hover
        rows.append(("model", str(full or short), str(short) if short and full and full != short else None))
    for key, name in _SHOWN:
        value = meta.get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            rows.append((name, str(value), None))
        elif isinstance(value, bool):
            rows.append((name, "yes" if value else "no", None))
    known = {k for k, _ in _SHOWN} | _HIDDEN
    rows += [(k, str(v), None) for k, v in meta.items() if k not in known and isinstance(v, (str, int, float, bool))]
    rows.append(("schema", report.schema_version, None))
    return rows


def meta_html(report: "Report") -> str:
    """The facts as a two-column table (``id="meta"``), the name the evaluation gave the model on hover."""
    e = html.escape
    rows = "".join(f"<tr><th>{e(k)}</th><td{f' title={chr(34)}{e(t)}{chr(34)}' if t else ''}>{e(v)}</td></tr>"
                   for k, v, t in meta_rows(report))
    return f'<table id="meta" class="meta"><tbody>{rows}</tbody></table>'
