"""The triples/CSV reader parses records, not lines: real line numbers, quoted newlines, unterminated quotes,
extra columns; and its pyarrow fast path builds the same graph as the exact reader."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from graphtrail.agents import KGError, load_kg
from graphtrail.kg.errors import KGWarning
from graphtrail.kg.loaders.triples import load_triples


def _graph(kg) -> tuple:
    return (list(kg.entities()), sorted(kg.relations(), key=lambda r: (r.source, r.relation, r.target)))


def test_form_feed_in_a_description_is_data_and_errors_name_the_real_line(tmp_path: Path) -> None:
    path = tmp_path / "ff.tsv"
    path.write_text("a\tr\tb\tpage one\fpage two\nc\tr\n", encoding="utf-8")
    with pytest.raises(KGError, match=r"ff\.tsv line 2: expected 3 columns"):
        load_triples(path)
    path.write_text("a\tr\tb\tpage one\fpage two\u2028same line\n", encoding="utf-8")
    (rel,) = load_triples(path).relations()
    assert rel.description == "page one\fpage two\u2028same line"


def test_quoted_newline_in_csv_loads_and_later_lines_keep_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text('a,r,b,"first line\nsecond line"\n# a comment\nc,r,d,plain\ne,,f\n', encoding="utf-8")
    with pytest.raises(KGError, match=r"q\.csv line 5: column 2 \(relation\) is empty"):
        load_triples(path)
    path.write_text('a,r,b,"first line\nsecond line"\n# a comment\nc,r,d,plain\n', encoding="utf-8")
    kg = load_triples(path)
    assert {r.description for r in kg.relations()} == {"first line\nsecond line", "plain"}


def test_a_hash_inside_a_quoted_cell_is_not_a_comment(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_text('a,r,b,"note:\n# not a comment"\n', encoding="utf-8")
    (rel,) = load_triples(path).relations()
    assert rel.description == "note:\n# not a comment"


def test_unterminated_quote_is_rejected_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text('x,r,y\n\na,r,"unterminated\nb,r,c\n', encoding="utf-8")
    with pytest.raises(KGError, match=r"bad\.csv line 3: a quoted cell opened on this line is never closed"):
        load_triples(path)


def test_cli_rejects_an_unterminated_quote_with_exit_2_and_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text('a,r,"unterminated', encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "graphtrail", "kg", "info", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    assert len(lines) == 1 and "bad.csv line 1" in lines[0] and "Traceback" not in proc.stderr


def test_extra_columns_with_a_header_are_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("head,relation,tail,weight,description,source\na,r,b,0.5,about a,wiki\n", encoding="utf-8")
    with pytest.warns(KGWarning, match=r"x\.csv line 1: columns 'weight', 'source' not loaded"):
        kg = load_triples(path)
    (rel,) = kg.relations()
    assert rel.description == "about a"
    table = tmp_path / "x.entities.csv"
    table.write_text("id,name,population\na,Alpha,3\n", encoding="utf-8")
    with pytest.warns(KGWarning, match=r"x\.entities\.csv line 1: column 'population' not loaded"):
        assert load_triples(path).entity("a").name == "Alpha"


def test_without_extra_columns_nothing_is_warned(tmp_path: Path) -> None:
    path = tmp_path / "ok.csv"
    path.write_text("head,relation,tail,description\na,r,b,d\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_triples(path)


CASES = {
    "plain.tsv": "".join(f"n{i}\trel{i % 3}\tn{(i * 7) % 50}\n" for i in range(200)),
    "described.tsv": "".join(f"n{i}\trel\tn{i + 1}\tabout {i}\n" for i in range(100)),
    "duplicates.tsv": "a\tr\tb\tfirst\nb\tr\tc\t\na\tr\tb\tlast\nc\tr\ta\tx\n",
    "header.csv": "\ufeffsubject,predicate,object,description\r\n a ,r, b ,\"with, comma\"\r\nb,r,c,\r\n",
    "spaces.tsv": "a\u00a0\tr\t\u2003b\n\u3000c\tr\ta\n",
    "pipes.txt": "a|r|b\nb|r|c\n\n\nc|r|a\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_fast_path_builds_the_same_graph(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(CASES[name], encoding="utf-8")
    assert _graph(load_triples(path, fast=True)) == _graph(load_triples(path, fast=False))
    assert list(load_triples(path, fast=True).entity_ids()) == list(load_triples(path, fast=False).entity_ids())


def test_the_fast_path_resolves_names_through_the_entity_table(tmp_path: Path) -> None:
    path = tmp_path / "kb.tsv"
    path.write_text("Kenya\tcapital\tNairobi\nE1\tcurrency\tShilling\nkenya\tborders\tUganda\n", encoding="utf-8")
    (tmp_path / "kb.entities.tsv").write_text("id\tname\ttype\nE1\tKenya\tcountry\nE2\tNairobi\tcity\n", encoding="utf-8")
    fast, exact = load_triples(path, fast=True), load_triples(path, fast=False)
    assert _graph(fast) == _graph(exact)
    assert {(r.source, r.target) for r in fast.relations()} == {("E1", "E2"), ("E1", "Shilling"), ("E1", "Uganda")}


@pytest.mark.parametrize(
    "text, message",
    [
        ("a\tr\tb\nc\tr\n", r"line 2: expected 3 columns"),
        ("a\tr\tb\n# note\nc\t\td\n", r"line 3: column 2 \(relation\) is empty"),
        ("a,r,b\nc,r,\"open\n", r"line 2: a quoted cell opened on this line is never closed"),
    ],
)
def test_the_fast_path_leaves_errors_to_the_exact_reader(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / ("bad.csv" if "," in text else "bad.tsv")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(KGError, match=message):
        load_triples(path, fast=True)


def test_load_kg_uses_the_fast_path_for_large_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import graphtrail.kg.loaders.triples as triples

    path = tmp_path / "big.tsv"
    path.write_text("".join(f"n{i}\tr\tn{i + 1}\n" for i in range(50)), encoding="utf-8")
    calls = []
    real = triples._load_triples_fast
    monkeypatch.setattr(triples, "_load_triples_fast", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(triples, "FAST_PATH_BYTES", 10)
    kg = load_kg(path)
    assert calls and len(kg) == 51
