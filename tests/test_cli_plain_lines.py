"""Tables become ``key: value`` lines in pipes and under 100 columns, and no word is broken (issue 30, item 4)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.table import Table

from graphtrail.cli.main import main
from graphtrail.cli.plainlines import NARROW, console

BOX = re.compile(r"[│┃┏┗┡━─┌└┬┼]")


def _table() -> Table:
    table = Table(title="per condition", caption="paired over 12 questions")
    for header in ("condition", "BASE → NEW", "verdict"):
        table.add_column(header)
    table.add_row("full_isolation", "40% → 10%", "inconclusive at n = 12")
    table.add_row("[bold]uncited_removal[/]", "", "changed")
    return table


def _printed(width: int, terminal: bool) -> str:
    out = io.StringIO()
    console(file=out, width=width, force_terminal=terminal, color_system=None).print(_table())
    return out.getvalue()


@pytest.mark.parametrize(("width", "terminal"), [(80, True), (NARROW - 1, True), (200, False)])
def test_narrow_or_piped_tables_are_lines_with_whole_words(width: int, terminal: bool) -> None:
    text = _printed(width, terminal)
    assert not BOX.search(text), text
    lines = text.splitlines()
    assert lines[0] == "per condition" and lines[-1] == "paired over 12 questions"
    assert "  condition: full_isolation" in lines and "    BASE → NEW: 40% → 10%" in lines
    assert "    verdict: inconclusive at n = 12" in lines  # whole, on one line
    assert "  condition: uncited_removal" in lines  # markup dropped, empty cells left out
    assert not any(line.strip() == "BASE → NEW:" for line in lines)


def test_a_wide_terminal_still_draws_the_table() -> None:
    assert BOX.search(_printed(NARROW, True))


def test_kg_info_piped_is_key_value_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    graph = tmp_path / "g.tsv"
    graph.write_text("Kenya\tcapital\tNairobi\nUganda\tborders\tKenya\n", encoding="utf-8")
    assert main(["kg", "info", str(graph)]) == 0
    out = capsys.readouterr().out
    assert not BOX.search(out), out
    assert "  entities: 3" in out.splitlines() and "  capital: 1" in out.splitlines()
