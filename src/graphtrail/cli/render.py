"""Rich renderings the commands print: trajectories, KG summaries, result tables.

Kept apart from the commands so that the same trajectory view serves
``graphtrail run``, ``graphtrail traces`` and the examples' output.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich import box
from rich.table import Table
from rich.text import Text

from graphtrail._secrets import redact_value, scan_text

__all__ = ["trajectory_panel", "kg_info_tables", "answers_table", "conditions_table", "short_args"]


def short_args(args: Mapping[str, Any], width: int = 60) -> str:
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return text if len(text) <= width else text[: width - 1] + "…"


def _entity_label(entity_id: str, names: Mapping[str, str]) -> str:
    name = names.get(entity_id)
    return f"{name} ({entity_id})" if name and name != entity_id else entity_id


def _redacted(traj: Any) -> Any:
    dump = getattr(traj, "model_dump", None)
    if dump is None:
        return traj
    data = dump(mode="json")
    clean = redact_value(data)
    return traj if clean == data else type(traj).model_validate(clean)


def trajectory_panel(traj: Any, max_entities: int = 6, label: str = "") -> Panel:
    """One trajectory: question, every tool step with the entities it revealed, answer and citations.

    ``label`` (e.g. ``uncited_removal · countries-0111 · trial 0``) goes in the title, so replays of
    one question under different conditions can be told apart.

    Shown redacted (graphtrail._secrets): ``traces`` reads files other producers wrote.
    """
    traj, label = _redacted(traj), scan_text(label) if label else label
    names = traj.entity_names
    cited = set(traj.citations)
    steps = Table(box=None, show_header=True, header_style="bold", pad_edge=False, expand=False)
    steps.add_column("#", justify="right")
    steps.add_column("tool")
    steps.add_column("args", overflow="fold")
    steps.add_column("entities revealed", overflow="fold")
    for step in traj.steps:
        shown = []
        for entity in step.entities[:max_entities]:
            style = "bold green" if entity.id in cited else ""
            shown.append(Text(_entity_label(entity.id, names), style=style))
        cell = Text(", ").join(shown) if shown else Text("—", style="dim")
        if len(step.entities) > max_entities:
            cell.append(f" +{len(step.entities) - max_entities} more", style="dim")
        if step.edges:
            cell.append(f"  [{len(step.edges)} edge{'' if len(step.edges) == 1 else 's'}]", style="dim")
        if step.error:
            cell = Text(f"error: {step.error}", style="red")
        steps.add_row(str(step.index), step.tool, short_args(step.args), cell)

    citations = Text()
    for i, (cid, src) in enumerate(traj.citation_sources.items()):
        if i:
            citations.append("; ")
        where = f"step {', '.join(map(str, src.steps))}" if src.steps else "never revealed by a tool"
        citations.append(_entity_label(cid, names), style="bold green" if src.steps else "bold red")
        citations.append(f" ← {where}", style="dim")
    uncited = ", ".join(_entity_label(e, names) for e in traj.visited_uncited) or "—"

    status_style = {"ok": "green", "no_answer": "yellow", "error": "red"}.get(traj.status, "")
    header = Text.assemble(("Q: ", "bold"), traj.question or "(no question recorded)")
    answer = Text.assemble(("A: ", "bold"), traj.answer if traj.answer is not None else "(no answer)", ("  [" + traj.status + "]", status_style))
    if traj.error:
        answer.append(f"  {traj.error}", style="red")
    body = Group(
        header,
        steps if traj.steps else Text("(no tool calls)", style="dim"),
        answer,
        Text.assemble(("citations: ", "bold"), citations if traj.citations else Text("—", style="dim")),
        Text.assemble(("visited, not cited: ", "bold"), uncited),
    )
    title = escape(traj.name) + ("  " + escape(f"[{label}]") if label else "") + (f"  trace {traj.trace_id}" if traj.trace_id else "")
    return Panel(body, title=title, title_align="left", expand=False)


def kg_info_tables(info: Mapping[str, Any], samples: Sequence[Any] = ()) -> Group:
    """``KnowledgeGraph.describe()`` as a counts table, type breakdowns and a few sample entities."""
    counts = Table(title=f"knowledge graph: {info.get('name', '')}", show_header=False, title_justify="left")
    counts.add_column(style="bold")
    counts.add_column(justify="right")
    for key in ("entities", "relations", "text_units", "communities"):
        if key in info:
            counts.add_row(key.replace("_", " "), str(info[key]))
    parts: list[Any] = [counts]
    for key, title in (("entity_types", "entity types"), ("relation_types", "relation types")):
        values = info.get(key) or {}
        if values:
            table = Table(title=title, title_justify="left")
            table.add_column("type")
            table.add_column("count", justify="right")
            items = list(values.items())
            for name, count in items[:15]:
                table.add_row(str(name) or "(none)", str(count))
            if len(items) > 15:
                table.add_row(f"… {len(items) - 15} more", "", style="dim")
            parts.append(table)
    if samples:
        table = Table(title="sample entities", title_justify="left")
        table.add_column("id")
        table.add_column("name")
        table.add_column("type")
        table.add_column("description", overflow="ellipsis", max_width=60, no_wrap=True)
        for e in samples:
            table.add_row(e.id, e.name, e.type, e.description)
        parts.append(table)
    return Group(*parts)


def answers_table(rows: Iterable[Mapping[str, Any]]) -> Table:
    # Fits 80 columns (CI logs, small terminals): long cells end in an ellipsis, never fold
    # letter by letter. The full text and the cited ids are in answers.jsonl.
    table = Table(title="answers", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("id", no_wrap=True, overflow="ellipsis", max_width=14)
    table.add_column("question", no_wrap=True, overflow="ellipsis", max_width=30)
    table.add_column("answer", no_wrap=True, overflow="ellipsis", max_width=14)
    table.add_column("ok", justify="center", no_wrap=True, min_width=2)
    table.add_column("steps", justify="right", no_wrap=True, min_width=5)
    table.add_column("cites", justify="right", no_wrap=True, min_width=5)
    for row in rows:
        correct = row.get("correct")
        mark = {True: Text("✓", style="green"), False: Text("✗", style="red")}.get(correct, Text("?", style="dim"))
        answer = row.get("answer")
        table.add_row(
            scan_text(str(row.get("id"))),
            scan_text(str(row.get("question", ""))),
            scan_text(str(answer)) if answer is not None else Text("(no answer)", style="yellow"),
            mark,
            str(row.get("steps", "")),
            str(len(row.get("citations") or [])),
        )
    return table


def _fmt_interval(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return f"[{value[0]:.0%}, {value[1]:.0%}]"
    if isinstance(value, float):
        return f"{value:.0%}"
    return str(value)


def conditions_table(rows: Iterable[Mapping[str, Any]], title: str = "accuracy per condition") -> Table:
    """Condition rows (name, n, accuracy, ci, changed, p-value) as one compact table."""
    table = Table(title=title, title_justify="left")
    table.add_column("condition")
    table.add_column("n", justify="right")
    table.add_column("accuracy", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("changed", justify="right")
    table.add_column("McNemar p", justify="right")
    for row in rows:
        p = row.get("p_value")
        table.add_row(
            str(row.get("condition")),
            str(row.get("n", "")),
            _fmt_interval(row.get("accuracy")),
            _fmt_interval(row.get("ci")),
            _fmt_interval(row.get("changed")),
            "—" if p is None else f"{p:.3g}",
        )
    return table


def print_files(console: Console, files: Mapping[str, Any]) -> None:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for label, path in files.items():
        table.add_row(label, str(path))
    console.print(table)
