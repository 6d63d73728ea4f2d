"""``graphtrail history``: many evaluation folders as one page, from real evaluations.

One small evaluation is run through the CLI; the later "runs" are copies whose
results.json says what a later evaluation would (a later time, a question whose
coverage fell, other questions), since the history reads nothing else.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphtrail.evaluators.history import HistoryError, build_history

pytestmark = pytest.mark.timeout(300)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphtrail", *args], capture_output=True, text=True, timeout=240)


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("history") / "run-a"
    proc = _cli("eval", "--kg", "countries", "--questions", "countries-demo", "--limit", "6",
                "--model", "offline:cite=endpoints,noise=0.2,seed=1", "--conditions", "baseline,cited_removal",
                "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def _later(src: Path, dest: Path, *, minutes: float, edit: Any = None) -> Path:
    shutil.copytree(src, dest)
    path = dest / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["created"] += 60 * minutes
    if edit is not None:
        edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return dest


def _fidelity_fell(data: dict[str, Any]) -> None:
    for q in data["questions"]:
        assert q.get("fidelity") is not None  # the fixture's agent walks from the topic to the answer
        q["fidelity"] = 0.0
    data["scores"]["fidelity"] = 0.0


def _read(out: Path) -> dict[str, Any]:
    return json.loads((out / "history.json").read_text(encoding="utf-8"))


def test_runs_ordered_by_time_with_reports_and_comparisons_linked(first_run: Path, tmp_path: Path) -> None:
    b = _later(first_run, tmp_path / "run-b", minutes=10)
    c = _later(first_run, tmp_path / "run-c", minutes=20, edit=_fidelity_fell)
    out = tmp_path / "hist"
    paths = build_history([c, first_run, b], out)  # any order in

    data = _read(out)
    assert [r["label"] for r in data["runs"]] == ["run-a", "run-b", "run-c"]
    assert [r["number"] for r in data["runs"]] == [1, 2, 3]
    # the headline value is the report's own; the interval brackets it
    for run, folder in zip(data["runs"], [first_run, b, c]):
        saved = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        fid = run["scores"]["fidelity"]
        assert fid["value"] == pytest.approx(saved["scores"]["fidelity"])
        assert fid["low"] <= fid["value"] <= fid["high"]
        acc = run["scores"]["accuracy"]
        base = next(row for row in saved["conditions"] if row["condition"] == "baseline")
        assert (acc["value"], acc["low"], acc["high"]) == (base["accuracy"], base["ci_low"], base["ci_high"])
    fell = data["runs"][2]["scores"]["fidelity"]
    assert fell["value"] == fell["low"] == fell["high"] == 0.0 and fell["n"] == 6

    # every link on the page resolves: reports of each run and a comparison per consecutive pair
    html = paths["html"].read_text(encoding="utf-8")
    assert '<meta name="viewport"' in html
    import re

    hrefs = re.findall(r'href="([^"#]+)"', html)
    reports = [h for h in hrefs if h.endswith("report.html")]
    pages = [h for h in hrefs if h.startswith("compare/")]
    assert len(reports) == 3 and len(pages) == 2
    assert all((out / h).resolve().is_file() for h in reports + pages)
    assert data["runs"][0]["change"] == {"summary": "first run", "page": None}
    # the fall to 0 fidelity on all 6 questions is significant (sign-flip p = 2/64); an identical copy is no change
    assert data["runs"][1]["change"]["summary"] == "no significant change"
    assert data["runs"][2]["change"]["summary"].endswith("significant change") and "no " not in data["runs"][2]["change"]["summary"]

    md = paths["markdown"].read_text(encoding="utf-8")
    rows = [line for line in md.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [row.split(" | ")[0] for row in rows] == ["| 3", "| 2", "| 1"]  # newest first
    assert all((out / name).is_file() for name in re.findall(r"\]\((trend-[a-z_]+\.png)\)", md))


def test_rebuild_compares_only_the_new_pair(first_run: Path, tmp_path: Path) -> None:
    b = _later(first_run, tmp_path / "run-b", minutes=10, edit=_fidelity_fell)
    out = tmp_path / "hist"
    build_history([first_run, b], out)
    pages = sorted((out / "compare").glob("*.html"))
    assert len(pages) == 1
    before = pages[0].stat().st_mtime_ns
    c = _later(first_run, tmp_path / "run-c", minutes=20)
    build_history([first_run, b, c], out)
    after = sorted((out / "compare").glob("*.html"))
    assert len(after) == 2
    assert pages[0].stat().st_mtime_ns == before  # reused, not made again
    runs = _read(out)["runs"]
    assert runs[2]["change"]["page"] is not None and (out / runs[2]["change"]["page"]).is_file()
    # fidelity fell on every question, then came back: one significant change each way
    assert [r["change"]["summary"] for r in runs] == ["first run", "1 significant change", "1 significant change"]


def test_runs_that_cannot_be_compared_say_why(first_run: Path, tmp_path: Path) -> None:
    def other_questions(data: dict[str, Any]) -> None:
        data["meta"]["fingerprint"]["questions_hash"] = "0" * 64
        for q in data["questions"]:
            q["question_id"] = "other-" + q["question_id"]

    b = _later(first_run, tmp_path / "run-b", minutes=5, edit=other_questions)
    out = tmp_path / "hist"
    build_history([first_run, b], out)
    change = _read(out)["runs"][1]["change"]
    assert change["page"] is None and change["summary"].startswith("not comparable: ")


def test_unreadable_folders_are_named_and_none_readable_is_an_error(first_run: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.json").write_text("{not json", encoding="utf-8")
    out = tmp_path / "hist"
    build_history([first_run, broken, tmp_path / "missing"], out)
    skipped = _read(out)["skipped"]
    assert len(skipped) == 2 and any("broken" in s for s in skipped) and any("missing" in s for s in skipped)
    assert "Left out" in (out / "history.html").read_text(encoding="utf-8")
    with pytest.raises(HistoryError, match="no readable evaluation"):
        build_history([broken], tmp_path / "hist2")


def test_cli_bad_input_is_one_line_and_exit_2(first_run: Path, tmp_path: Path) -> None:
    proc = _cli("history", str(tmp_path / "nope"), "--out", str(tmp_path / "h"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no readable evaluation" in proc.stderr
    # an evaluation folder is not overwritten with a history
    proc = _cli("history", str(first_run), "--out", str(first_run))
    assert proc.returncode == 2 and "holds an evaluation" in proc.stderr and "Traceback" not in proc.stderr
    assert not (first_run / "history.html").exists()
    # a folder graphtrail did not make is refused without --force
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep", encoding="utf-8")
    proc = _cli("history", str(first_run), "--out", str(mine))
    assert proc.returncode == 2 and (mine / "notes.txt").read_text(encoding="utf-8") == "keep"
    assert not (mine / "history.html").exists()
    proc = _cli("history", str(first_run), "--out", str(tmp_path / "ok"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ok" / "history.html").is_file()


def test_what_results_json_says_is_escaped_and_redacted(first_run: Path, tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

    def hostile(data: dict[str, Any]) -> None:
        data["meta"]["agent"] = f"agent {token}"
        data["meta"]["model_name"] = "m|x\n# heading <script>alert(1)</script>"

    b = _later(first_run, tmp_path / "run|b", minutes=5, edit=hostile)
    out = tmp_path / "hist"
    build_history([first_run, b], out)
    for name in ("history.html", "history.md", "history.json"):
        text = (out / name).read_text(encoding="utf-8")
        assert token not in text, name
    html = (out / "history.html").read_text(encoding="utf-8")
    assert "<script>" not in html
    md = (out / "history.md").read_text(encoding="utf-8")
    rows = [line for line in md.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 2 and not any(line.startswith("# heading") for line in md.splitlines())
    # every row has the header's number of cells (an escaped | does not split one)
    import re

    header = next(line for line in md.splitlines() if line.startswith("| #"))
    n = len(re.split(r"(?<!\\)\|", header))
    assert all(len(re.split(r"(?<!\\)\|", row)) == n for row in rows)


def test_past_twenty_runs_the_older_ones_fold_away(first_run: Path, tmp_path: Path) -> None:
    runs = [first_run] + [_later(first_run, tmp_path / f"run-{i:02d}", minutes=i) for i in range(1, 23)]
    out = tmp_path / "hist"
    build_history(runs, out)
    html = (out / "history.html").read_text(encoding="utf-8")
    import re

    main, _, older = html.partition('id="runs-older"')
    assert "3 older runs" in html and older
    main_rows = re.findall(r'<td data-label="#" class="num">(\d+)</td>', main)
    older_rows = re.findall(r'<td data-label="#" class="num">(\d+)</td>', older)
    assert main_rows == [str(n) for n in range(23, 3, -1)] and older_rows == ["3", "2", "1"]
