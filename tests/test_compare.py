"""``graphtrail compare`` and ``graphtrail.evaluators.compare``: real evaluations of the bundled agent.

Two evaluations are made once per module, with the offline model's two citation
policies: ``cite=path`` (cites every entity it walked) and ``cite=endpoints``
(cites the topic and the answer only, so the bridge entities decide answers
uncited). The comparison must name what that change moved, with p-values, and
the gate must fail on it; refusals are checked on copies of the real
results.json with the one field that makes them incomparable changed.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from graphtrail.agents import OfflineChatModel, create_graphrag_agent, load_kg, load_questions
from graphtrail.cli.main import main
from graphtrail.evaluators import CompareError, compare, evaluate
from graphtrail.evaluators.comparison import RuleError, assert_no_provenance_regression, parse_rules

pytestmark = pytest.mark.timeout(240)

CONDITIONS = ["baseline", "cited_removal", "uncited_removal", "leave_one_out"]


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    kg = load_kg("countries")
    questions = load_questions("countries-demo")
    root = tmp_path_factory.mktemp("compare")
    out: dict[str, Path] = {}
    for cite in ("path", "endpoints"):
        agent = create_graphrag_agent(OfflineChatModel(cite=cite), kg)
        evaluate(agent, questions, kg=kg, conditions=CONDITIONS, trials=1, out_dir=root / cite, progress=False,
                 model_name=f"offline:cite={cite}", n_boot=500)
        out[cite] = root / cite
    return out


def cli(*args: str | Path) -> int:
    return main([str(a) for a in args])


def edited_copy(src: Path, dest: Path, edit: Any) -> Path:
    """A copy of an evaluation folder whose results.json went through ``edit(data)``."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("*.jsonl", "*.png", "*.html"))
    data = json.loads((dest / "results.json").read_text(encoding="utf-8"))
    edit(data)
    (dest / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return dest


# ------------------------------------------------------------------ results.json records what compare needs
def test_results_json_records_the_fingerprint(evals: dict[str, Path]) -> None:
    import graphtrail

    meta = json.loads((evals["path"] / "results.json").read_text(encoding="utf-8"))["meta"]
    fp = meta["fingerprint"]
    assert fp["kg_hash"] == load_kg("countries").content_hash()
    assert len(fp["questions_hash"]) == 64 and fp["n_questions"] == 12
    assert fp["correctness"] == "cover_exact_match"
    assert fp["conditions"] == sorted(CONDITIONS)
    assert (fp["seed"], fp["trials"]) == (0, 1)
    assert fp["graphtrail_version"] == graphtrail.__version__
    assert fp["model"] == "offline:cite=path" and fp["models_observed"] == ["graphtrail-offline"]
    assert fp["agent"]


# ------------------------------------------------------------------ the change is found, with p-values
def test_compare_names_what_the_citation_change_moved(evals: dict[str, Path]) -> None:
    c = compare(evals["path"], evals["endpoints"], n_boot=500)
    assert c.n_questions == 12 and c.conditions == CONDITIONS and not c.dropped
    assert "model: offline:cite=path -> offline:cite=endpoints" in c.differs
    removal = c.change("accuracy", "uncited_removal")
    assert removal is not None and removal.significant and removal.test == "mcnemar"
    assert removal.delta < 0 and removal.p_value < 0.05 and removal.b > 0 and removal.c == 0
    assert c.change("influence", "uncited_removal").delta > 0
    for metric in ("coverage", "fidelity", "hidden_influencers"):
        assert c.change(metric).significant, metric
    assert c.change("hidden_influencers").new > c.change("hidden_influencers").base == 0
    # what did not move is not called a change
    assert c.change("accuracy", "baseline").verdict == "no change"
    assert c.change("support").delta == 0
    # per question: the bridge entities that now decide answers uncited, by name
    appeared = [i for i in c.influencers if i.appeared]
    assert appeared and all(i.name for i in appeared)
    assert {f.condition for f in c.flips} == {"uncited_removal"}
    text = "\n".join(c.findings())
    assert "accuracy under visited-but-uncited removal" in text and "McNemar p = " in text
    assert "hidden influencer(s) appeared" in text


def test_gate_breaks_on_the_change_and_keeps_what_it_kept(evals: dict[str, Path]) -> None:
    c = compare(evals["path"], evals["endpoints"], n_boot=500)
    gate = c.check(["coverage<-0.05", "uncited_removal.influence>0.10:significant", "support<-0.05"])
    assert not gate.ok and [o.rule.text for o in gate.broken] == ["coverage<-0.05", "uncited_removal.influence>0.10:significant"]
    assert "coverage 100% -> " in gate.summary
    kept = c.check("support<-0.05, new_unsupported_citations>0, cited_removal.influence<-10%")
    assert kept.ok and kept.broken == [] and "passed" in kept.summary
    # every condition at once, and NEW's own level
    assert not c.check(["*.influence>0.2"]).ok
    assert not c.check(["new.coverage<0.9"]).ok and c.check(["new.support<0.9"]).ok


def test_cli_exit_codes_follow_the_rules(evals: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli("compare", evals["path"], evals["endpoints"], "--fail-on", "coverage<-0.05", "--fail-on",
               "hidden_influencers>0,support<-0.05", "--out", tmp_path)
    captured = capsys.readouterr()
    assert code == 1
    broken = [line for line in captured.err.splitlines() if line]
    assert len(broken) == 2 and all(line.startswith("graphtrail: rule broken: ") for line in broken)
    out = " ".join(captured.out.split())  # rich wraps at 80 columns when not on a terminal
    assert "accuracy under visited-but-uncited removal: 100% → 50%" in out and "McNemar p = " in out
    assert (tmp_path / "compare.html").exists() and (tmp_path / "compare.json").exists()

    assert cli("compare", evals["path"], evals["endpoints"], "--fail-on", "support<-0.05", "--no-html") == 0
    assert capsys.readouterr().err == ""


def test_an_evaluation_compared_with_itself_shows_no_change(evals: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    c = compare(evals["endpoints"], evals["endpoints"] / "results.json", n_boot=200)
    assert all(ch.delta in (0, None) and not ch.significant for ch in c.changes)
    assert not c.flips and not c.influencers and not c.unsupported and not c.differs
    assert c.findings() == ["No change: every compared number is the same in BASE and NEW."]
    rules = "accuracy<0,support<0,coverage<0,fidelity<0,hidden_influencers>0,new_unsupported_citations>0,*.influence>0"
    assert cli("compare", evals["endpoints"], evals["endpoints"], "--fail-on", rules, "--no-html") == 0
    assert "No change" in capsys.readouterr().out


# ------------------------------------------------------------------ refusals: one line, exit 2, typed exception
def _refused(base: Path, new: Path, capsys: pytest.CaptureFixture[str], *words: str) -> None:
    with pytest.raises(CompareError) as info:
        compare(base, new)
    assert all(w in str(info.value) for w in words), str(info.value)
    assert cli("compare", base, new, "--no-html") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("graphtrail: error: ") and all(w in err[0] for w in words)
    assert "Traceback" not in err[0]


def test_refuses_a_different_graph(evals: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = edited_copy(evals["endpoints"], tmp_path / "other-kg", lambda d: d["meta"]["fingerprint"].update(kg_hash="0" * 64))
    _refused(evals["path"], other, capsys, "different knowledge graphs", "same graph")


def test_refuses_question_sets_with_no_overlap(evals: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def rename(d: dict[str, Any]) -> None:
        for q in d["questions"]:
            q["question_id"] = "other-" + q["question_id"]

    other = edited_copy(evals["endpoints"], tmp_path / "other-questions", rename)
    _refused(evals["path"], other, capsys, "share no question id", "same question set")


def test_refuses_a_different_judge(evals: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def judge(d: dict[str, Any]) -> None:
        d["correctness"] = "exact_match"
        d["meta"]["fingerprint"]["correctness"] = "exact_match"

    other = edited_copy(evals["endpoints"], tmp_path / "other-judge", judge)
    _refused(evals["path"], other, capsys, "judged by cover_exact_match", "exact_match", "same judge")


def test_refuses_an_unreadable_or_future_results_json(evals: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    future = edited_copy(evals["endpoints"], tmp_path / "future", lambda d: d.update(schema_version="graphtrail.results/2"))
    _refused(evals["path"], future, capsys, "NEW", "graphtrail.results/2", "re-run")
    _refused(evals["path"], tmp_path / "missing", capsys, "NEW not found", "graphtrail eval")
    (tmp_path / "empty").mkdir()
    _refused(tmp_path / "empty", evals["path"], capsys, "has no results.json")


def test_reads_a_results_json_from_before_the_fingerprint(evals: dict[str, Path], tmp_path: Path) -> None:
    old = edited_copy(evals["path"], tmp_path / "old", lambda d: d["meta"].pop("fingerprint"))
    c = compare(old, evals["endpoints"], n_boot=200)
    # Without a fingerprint the model named is the one results.json's meta records (the observed model).
    recorded = json.loads((old / "results.json").read_text(encoding="utf-8"))["meta"]["model"]
    assert c.base.fingerprint_recorded is False and c.base.model == recorded and "cite=path" in recorded
    assert any("BASE was written by a graphtrail that did not record" in n for n in c.notes)
    assert c.change("coverage").significant


def test_a_different_model_or_agent_is_named_not_refused(evals: dict[str, Path], tmp_path: Path) -> None:
    def other_agent(d: dict[str, Any]) -> None:
        d["meta"]["fingerprint"].update(agent="support-agent-v2", graphtrail_version="0.2.0")

    new = edited_copy(evals["endpoints"], tmp_path / "v2", other_agent)
    c = compare(evals["path"], new, n_boot=200)
    assert any(d.startswith("agent: ") and d.endswith("-> support-agent-v2") for d in c.differs)
    assert "graphtrail version: 0.1.0 -> 0.2.0" in c.differs and any("model:" in d for d in c.differs)
    assert "What changed (the change under test)" in c.to_markdown()


# ------------------------------------------------------------------ dropped questions and conditions, small n
def test_dropped_questions_and_conditions_are_counted(evals: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def fewer(d: dict[str, Any]) -> None:
        d["questions"] = d["questions"][:9]
        d["questions"][0]["question"] += " (reworded)"
        d["conditions"] = [r for r in d["conditions"] if r["condition"] != "cited_removal"]

    new = edited_copy(evals["endpoints"], tmp_path / "fewer", fewer)
    c = compare(evals["path"], new, n_boot=200)
    assert c.n_questions == 8 and "cited_removal" not in c.conditions
    reasons = {(d.kind, d.reason) for d in c.dropped}
    assert ("question", "only in BASE") in reasons and ("question", "the question text differs under this id") in reasons
    assert ("condition", "only in BASE") in reasons and c.counts["dropped_questions"] == 4
    assert cli("compare", evals["path"], new, "--fail-on", "none") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "4 question(s) dropped (3 only in BASE" in out and "1 the question text differs" in out
    assert "cited_removal: only in BASE" in out
    # a rule on a condition that is not in both is bad input, not a silent pass
    assert cli("compare", evals["path"], new, "--no-html", "--fail-on", "cited_removal.influence<0") == 2
    assert "not in both evaluations" in capsys.readouterr().err


def test_small_n_is_inconclusive_and_significant_rules_wait_for_evidence(evals: dict[str, Path], tmp_path: Path) -> None:
    # keep the first three questions with a hidden influencer in NEW: all moved one way, yet n = 3 proves nothing
    data = json.loads((evals["endpoints"] / "results.json").read_text(encoding="utf-8"))
    keep = [q["question_id"] for q in data["questions"] if q["hidden_influence"]][:3]
    new = edited_copy(evals["endpoints"], tmp_path / "three",
                      lambda d: d.update(questions=[q for q in d["questions"] if q["question_id"] in keep]))
    c = compare(evals["path"], new, n_boot=200)
    cov = c.change("coverage")
    assert cov.n == 3 and cov.delta < 0 and not cov.significant and cov.verdict == "inconclusive at n = 3"
    assert cov.p_value == pytest.approx(0.25)
    assert c.check(["coverage<-0.05:significant"]).ok
    assert not c.check(["coverage<-0.05"]).ok
    assert "inconclusive at n = 3" in "\n".join(c.findings())


# ------------------------------------------------------------------ outputs
def test_markdown_is_github_flavoured_with_findings_first(evals: dict[str, Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def hostile(d: dict[str, Any]) -> None:  # data must show as text, never as HTML or a broken table
        for q in d["questions"]:
            for cond in q["answers"]:
                q["answers"][cond] = "<script>alert(1)</script> a|b" if q["answers"][cond] == "unknown" else q["answers"][cond]

    new = edited_copy(evals["endpoints"], tmp_path / "hostile", hostile)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert cli("compare", evals["path"], new, "--format", "markdown", "--fail-on", "coverage<-0.05", "--no-html") == 1
    text = capsys.readouterr().out
    assert summary.read_text(encoding="utf-8") == text + "\n"
    md = MarkdownIt("gfm-like", {"linkify": False})
    tokens = md.parse(text)
    kinds = [t.type for t in tokens]
    assert kinds.count("table_open") == 3  # per condition, scores, per question
    assert text.index("**Findings**") < text.index("**Broken rules**") < text.index("<details>")
    assert text.startswith("### graphtrail compare: ❌ 1 rule(s) broken")
    html = md.render(text)
    assert "<script>" not in html and "&lt;script&gt;" in html
    # every table row has as many cells as its header: a '|' in the data did not split a cell
    widths, cells = [], 0
    for t in tokens:
        if t.type == "tr_open":
            cells = 0
        elif t.type in ("td_open", "th_open"):
            cells += 1
        elif t.type == "tr_close":
            widths.append(cells)
    assert set(widths) == {5, 6, 7}
    assert "a|b" in html
    assert len(text.splitlines()) < 80  # short: a PR comment, not the report


def test_json_and_html_outputs(evals: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("compare", evals["path"], evals["endpoints"], "--format", "json", "--fail-on", "hidden_influencers>0",
               "--out", tmp_path) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == "graphtrail.compare/1" and data["gate"]["ok"] is False
    assert data["counts"]["new_hidden_influencers"] > 0
    assert {c["metric"] for c in data["changes"]} >= {"accuracy", "influence", "support", "coverage", "fidelity", "hidden_influencers"}
    page = (tmp_path / "compare.html").read_text(encoding="utf-8")
    assert '<img class="plot" id="plot-changes"' in page and 'id="findings"' in page and 'id="gate"' in page
    assert json.loads((tmp_path / "compare.json").read_text(encoding="utf-8"))["gate"]["ok"] is False
    # the phone's drawing of the plot: narrow enough to show at full size on a 390 px screen
    from graphtrail.evaluators.report.plotsize import svg_width_px

    narrow = re.search(r'id="plot-changes-narrow"[^>]*src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert narrow is not None
    assert 300 <= (svg_width_px(base64.b64decode(narrow.group(1))) or 0) <= 370


def test_compare_writes_nothing_without_out(evals: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    new = edited_copy(evals["endpoints"], tmp_path / "new", lambda d: None)
    monkeypatch.chdir(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert cli("compare", evals["path"], new / "results.json", "--fail-on", "none") == 0
    assert cli("compare", evals["path"], new, "--format", "markdown") == 1
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert cli("compare", evals["path"], new, "--fail-on", "none", "--out", tmp_path / "cmp", "--no-html") == 0
    assert sorted(p.name for p in (tmp_path / "cmp").iterdir()) == [".graphtrail", "compare.json", "compare.md"]


# ------------------------------------------------------------------ the gate fails by default
def test_the_gate_fails_by_default_with_the_library_s_rules(evals: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from graphtrail.evaluators.comparison import DEFAULT_RULES, default_rules

    assert cli("compare", evals["path"], evals["endpoints"]) == 1  # no --fail-on: the default rules
    broken = [line.split(": ")[2] for line in capsys.readouterr().err.splitlines()]
    assert broken == ["coverage<0:significant", "fidelity<0:significant", "hidden_influencers>0:significant"]
    with pytest.raises(AssertionError) as info:  # the library's default: the very same rules, the same verdicts
        assert_no_provenance_regression(evals["endpoints"], evals["path"])
    assert [line.split(": ")[0].strip(" -") for line in str(info.value).splitlines()[1:]] == broken
    assert [r.text for r in default_rules()] == list(DEFAULT_RULES)
    assert cli("compare", evals["path"], evals["endpoints"], "--fail-on", "none") == 0
    assert cli("compare", evals["path"], evals["endpoints"], "--fail-on", "default,support<-0.5") == 1
    assert "support<-0.5: kept" not in capsys.readouterr().err  # kept rules are not reported as broken
    assert cli("compare", evals["path"], evals["endpoints"], "--fail-on", "none,coverage<0") == 2
    assert "--fail-on none turns the gate off" in capsys.readouterr().err


def test_default_rules_skip_what_neither_evaluation_measured(evals: dict[str, Path], tmp_path: Path) -> None:
    no_loo = edited_copy(evals["endpoints"], tmp_path / "no-loo",
                         lambda d: d.update(conditions=[r for r in d["conditions"] if r["condition"] != "leave_one_out"]))
    c = compare(evals["endpoints"], no_loo, n_boot=200)
    gate = c.check(__import__("graphtrail.evaluators.comparison", fromlist=["x"]).default_rules())
    assert gate.ok and any(o.message.startswith("coverage<0:significant: not checked (not measured") for o in gate.outcomes)
    assert not c.check(["coverage<0:significant"]).ok  # a rule the user wrote still breaks on a missing number


def test_each_finding_and_row_says_better_or_worse(evals: dict[str, Path]) -> None:
    from graphtrail.evaluators.comparison import better_when, judgement
    from graphtrail.evaluators.comparison.tables import SCORE_HEADER, condition_rows, score_rows

    assert better_when("influence", "cited_removal") == 1 and better_when("influence", "uncited_removal") == -1
    assert better_when("accuracy", "uncited_removal") == 1 and better_when("accuracy", "cited_removal") == -1
    assert better_when("hidden_influencers") == -1 and better_when("influence", "random_removal") is None
    c = compare(evals["path"], evals["endpoints"], n_boot=200)
    assert judgement(c.change("influence", "uncited_removal")) == "worse"  # "influence 0% → 50%": worse here
    assert judgement(c.change("coverage")) == "worse" and judgement(c.change("support")) == "–"
    significant = [f for f in c.findings() if "p = " in f and "inconclusive" not in f]
    assert significant and all(", worse (" in f or ", better (" in f or "neither better nor worse" in f for f in significant)
    assert "hidden influencer(s) appeared (worse)" in "\n".join(c.findings())
    col = SCORE_HEADER.index("Better?")
    assert {r[0]: r[col] for r in score_rows(c)}["coverage"] == "worse"
    assert {(r[0], r[1]): r[col + 1] for r in condition_rows(c)}[("uncited_removal", "influence")] == "worse"


def test_a_finding_s_count_equals_the_names_it_lists(evals: dict[str, Path]) -> None:
    import re

    from graphtrail.evaluators import load_report
    from graphtrail.evaluators.scoring.findings import findings
    from tests.test_listing import _accounted

    c = compare(evals["path"], evals["endpoints"], n_boot=200)
    found = next(f for f in c.findings() if "hidden influencer(s) appeared" in f)
    count, names = re.match(r"(\d+) hidden .*? cited: (.*)\.$", found).groups()
    assert int(count) == len([i for i in c.influencers if i.appeared]) == _accounted(names)
    report = load_report(evals["endpoints"] / "results.json")
    sentence = next(f for f in findings(report) if "hidden influencers: " in f)
    count, names = re.search(r"(\d+) of them were never cited \(hidden influencers: (.*?)\)(?:, so|\.$)", sentence).groups()
    assert int(count) == _accounted(names) > 0


# ------------------------------------------------------------------ Markdown that data cannot restructure
HOSTILE = [
    "Alpha\n~~~", "Beta\n# X", "Gamma\n> quoted", "Delta\r| a | b |\r|---|---|", "@octocat", "@acme/security-team",
    "<script>alert(1)</script>", "[click](javascript:alert(1))", "&lt;b&gt; &#64;", "```\ncode", "Eta\u2028Theta\u2029",
    "    indented\n    code", "1. one", "- item", "*emph* _u_ ~~s~~", "| pipe |", "ends with \\", "<!-- c -->", "---", "===",
    "x" * 200_000, "Iota\n\n<details>", "![img](http://x/y.png)", "Kappa  \nhard",
]


def _named(src: Path, dest: Path, names: list[str], answers: list[str]) -> Path:
    """A copy whose entity names and ablation answers are ``names`` / ``answers`` (cycled)."""
    def edit(d: dict[str, Any]) -> None:
        for i, e in enumerate(d["entities"]):
            e["name"] = names[i % len(names)]
        for i, q in enumerate(d["questions"]):
            q["question"] = names[(i + 3) % len(names)]
            for cond in q["answers"]:
                if cond != "baseline":
                    q["answers"][cond] = answers[i % len(answers)]
    return edited_copy(src, dest, edit)


def _blocks(text: str) -> list[str]:
    """The block structure CommonMark (GFM tables) reads: token types, inline content left out."""
    return [t.type for t in MarkdownIt("gfm-like", {"linkify": False}).parse(text) if t.type != "inline"]


def _mentions(text: str) -> list[str]:
    import re

    return re.findall(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9_.-]+)?", text)


def test_hostile_names_do_not_restructure_the_comment_or_the_report(evals: dict[str, Path], tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    plain = [f"Name {i}" for i in range(len(HOSTILE))]
    sides = {label: [_named(evals[side], tmp_path / f"{label}-{side}", names, answers) for side in ("path", "endpoints")]
             for label, names, answers in (("benign", plain, ["plain answer"]), ("hostile", HOSTILE, HOSTILE))}
    texts = {}
    for label, (base, new) in sides.items():
        assert cli("compare", base, new, "--format", "markdown", "--out", tmp_path / f"cmp-{label}") == 1
        texts[label] = capsys.readouterr().out
        assert (tmp_path / f"cmp-{label}" / "compare.md").read_text(encoding="utf-8").count("\n") > 20
        assert cli("report", new / "results.json", "--out", tmp_path / f"rep-{label}") == 0
        capsys.readouterr()
    text = texts["hostile"]
    assert "@octocat" in "".join(HOSTILE) and not _mentions(text)  # no live mention left
    assert "@\u2060octocat" in text and "@\u2060acme/security-team" in text  # still readable
    assert len(text.encode("utf-8")) < 65_536
    assert _blocks(text) == _blocks(texts["benign"])  # the same headings, lists, tables, rows, details
    tokens = MarkdownIt("gfm-like", {"linkify": False}).parse(text)
    assert not [t for t in tokens if t.type in ("fence", "code_block", "blockquote_open")]
    assert [t.type for t in tokens].count("heading_open") == 1
    html = MarkdownIt("gfm-like", {"linkify": False}).render(text)
    assert "<script>" not in html and 'href="javascript' not in html and "<img" not in html
    report = {label: (tmp_path / f"rep-{label}" / "report.md").read_text(encoding="utf-8") for label in texts}
    assert _blocks(report["hostile"]) == _blocks(report["benign"]) and not _mentions(report["hostile"])
    assert "<script>" not in MarkdownIt("gfm-like", {"linkify": False}).render(report["hostile"])


def test_a_huge_comment_is_cut_to_fit_with_a_pointer(evals: dict[str, Path], tmp_path: Path) -> None:
    from graphtrail._markdown import fit

    def many(d: dict[str, Any]) -> None:  # every question gets 400 hidden influencers of long names
        for q in d["questions"]:
            q["hidden_influence"] = [f"E{i}" for i in range(400)]
        d["entities"] += [{**d["entities"][0], "entity_id": f"E{i}", "name": "n" * 150 + str(i)} for i in range(400)]

    new = edited_copy(evals["endpoints"], tmp_path / "many", many)
    c = compare(evals["path"], new, n_boot=100)
    text = c.to_markdown(c.check([]), full="compare.html")
    assert len(text.encode("utf-8")) < 65_536
    from graphtrail.evaluators.comparison.tables import question_rows

    assert len(c.influencers) >= 4000 and f"and {len(question_rows(c)) - 50} more: every event is in compare.html" in text
    assert MarkdownIt("gfm-like", {"linkify": False}).render(text).count("<details>") == text.count("<details>")
    cut = fit("\n".join(["<details><summary>s</summary>", "", *["| a |"] * 50_000]), 10_000, rest="compare.html")
    assert len(cut.encode("utf-8")) <= 10_000 and "and " in cut and "compare.html" in cut and cut.count("</details>") == 1


# ------------------------------------------------------------------ rules: bad input, pytest helper
@pytest.mark.parametrize("rule, words", [
    ("support<<0.05", "cannot read the rule"),
    ("suport<-0.05", "unknown metric 'suport'"),
    ("influence<0", "name one, e.g. cited_removal.influence"),
    ("baseline.coverage<0", "not measured per condition"),
    ("new_unsupported_citations>0:significant", "count of events"),
    ("support<-0.05:maybe", "the only one is ':significant'"),
])
def test_bad_rules_are_one_line_and_exit_2(rule: str, words: str, evals: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RuleError) as info:
        parse_rules([rule])
    assert words in str(info.value)
    assert cli("compare", evals["path"], evals["endpoints"], "--no-html", "--fail-on", rule) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]


def test_pytest_helper_fails_on_a_regression_and_passes_on_none(evals: dict[str, Path]) -> None:
    assert assert_no_provenance_regression(evals["path"], evals["path"]).n_questions == 12
    with pytest.raises(AssertionError, match=r"provenance regression against the stored baseline \(\d rule\(s\) broken\)"):
        assert_no_provenance_regression(evals["endpoints"], evals["path"])


# ------------------------------------------------------------------ the bad-input corpus, as for `graphtrail report`
from tests.test_bad_inputs import REPORT_CASES, Case, _run  # noqa: E402


@pytest.mark.parametrize("case", REPORT_CASES, ids=lambda c: c.id)
def test_compare_reads_the_bad_results_corpus(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case,
                                              evals: dict[str, Path]) -> None:
    _run(capsys, tmp_path, case, lambda p: ["compare", str(evals["path"]), str(p), "--no-html"])
