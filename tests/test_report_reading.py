"""What a reader gets from a report: findings with their numbers, named hidden influencers,
explained numbers, and reports that survive hostile data strings (mathtext, raw HTML, CJK)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import matplotlib
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from graphtrail.agents import Question
from graphtrail.evaluators.report import plots, render
from graphtrail.evaluators.scoring.findings import findings, hidden_influencers
from graphtrail.evaluators.scoring.metrics import source_support
from graphtrail.evaluators.report.plotfonts import drawable, plain
from graphtrail.evaluators.report import ReportError, TraversalNode, build_report
from graphtrail.tracer.trajectory import Entity, Step, Trajectory
from tests.provenance_cases import QUESTION, kenya_trajectory, record
from tests.test_report import questions, records


@pytest.fixture(scope="module")
def report():
    return build_report(records(), questions(), meta={"agent": "hand-built"}, n_boot=300, seed=7)


def test_findings_carry_numbers_and_caveats(report):
    found = findings(report)
    assert 2 <= len(found) <= 4
    text = " ".join(found)
    # Cited removal broke 10 of 12 (detected); random removal broke 1 (not detectable at n = 12).
    cited = next(s for s in found if s.startswith("Removing the cited entities"))
    assert re.search(r"cut accuracy by \d+ points", cited) and "McNemar p = 0.0" in cited
    assert "removing as many random entities" in cited and "inconclusive at n = 12" in cited
    # Uncited removal broke 3 of 12: a real change, but p = 0.25 is inconclusive at this n.
    uncited = next(s for s in found if s.startswith("Hiding the"))
    assert "changed 25% of answers" in uncited and "inconclusive at n = 12" in uncited
    assert "Nairobi" in text  # the hidden influencer, by name
    assert "noise floor" in text


def test_hidden_influencers_are_the_uncited_influential_entities(report):
    hidden = hidden_influencers(report)
    assert {h.entity_id for h in hidden} == {"NAI"} and {h.label for h in hidden} == {"Nairobi"}
    assert len(hidden) == report.scores.hidden_influence == 12  # NAI, once per question


def test_markdown_and_html_show_findings_influencers_and_explanations(report, tmp_path):
    paths = report.write(tmp_path)
    md, page = paths["markdown"].read_text(), paths["html"].read_text()
    assert "## Findings" in md and findings(report)[0] in md
    top = page.split('<section id="accuracy">')[0]  # before the first table
    assert 'id="findings"' in top and 'id="hidden-influencers"' in top
    assert re.search(r'<span class="entity" title="NAI">Nairobi</span>', top)
    for term in ("Kendall τ", "pass^k", "Structural gap", "negative means"):
        assert term in page and term.split()[0] in md
    # Nothing was run to fit the surrogate: the row says how to get it instead of "– over 0 questions".
    assert "over 0 questions" not in md and "random_subsets" in md
    # Per question: names with the id on hover, not bare ids.
    questions_table = page.split('<table id="questions">')[1].split("</table>")[0]
    assert '<span class="entity" title="KEN">Kenya</span>' in questions_table
    assert "| Kenya (KEN)" in md or "Kenya (KEN)," in md


def test_long_gold_lists_show_the_first_answer_and_a_count(tmp_path):
    gold = ["Kenyan shilling", *[f"alias {i}" for i in range(17)]]
    q = Question(**{**QUESTION, "answers": gold})
    rep = build_report([record("baseline", "Kenyan shilling", trajectory=kenya_trajectory())], [q], paper_reference=False)
    paths = rep.write(tmp_path)
    assert "Kenyan shilling +17" in paths["markdown"].read_text()
    page = paths["html"].read_text()
    assert ">Kenyan shilling +17</td>" in page and "alias 16" in page  # every alias on hover


def test_yes_no_answers_have_no_entity_support(tmp_path):
    traj = Trajectory(run_id="yn", question="Do Kenya and Nairobi share a border?", answer="Yes", citations=["KEN"],
                      steps=[Step(index=1, tool="search", args={}, entities=[Entity(id="KEN", name="Kenya")])])
    support = source_support(traj)
    assert support.supported is None and support.how == "yes/no"
    q = Question(id="yn", question=traj.question, answers=["yes"])
    rep = build_report([record("baseline", "Yes", question_id="yn", trajectory=traj)], [q], paper_reference=False)
    assert rep.scores.source_support_n == 0  # not counted as unsupported
    md = rep.write(tmp_path)["markdown"].read_text()
    assert "n/a (yes/no)" in md


def test_hostile_data_strings_render_as_plain_text(tmp_path):
    # Two dollars make matplotlib parse mathtext; "<script>" would be live HTML in a Markdown viewer.
    qid = "usd$_{$1"
    q = Question(**{**QUESTION, "id": qid, "answers": ["<script>alert(1)</script>", "Kenyan shilling"]})
    recs = [record("baseline", "Kenyan shilling", question_id=qid, trial=t, trajectory=kenya_trajectory() if t == 0 else None)
            for t in range(2)]
    recs += [record("leave_one_out", "Euro", question_id=qid, variant=e, hidden=[e]) for e in ("NAI", "KEN")]
    rep = build_report(recs, [q], paper_reference=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no plot may be dropped
        paths = rep.write(tmp_path)
    assert {"accuracy", "influence", "traversal", "markdown", "html"} <= set(paths)
    md = paths["markdown"].read_text()
    assert "<script>" not in md and "</script>" not in md and "&lt;script>" in md


def test_mathtext_escape_is_what_prevents_the_crash():
    # The same string unescaped does fail to draw: the escaping is doing the work.
    def draw(text: str) -> None:
        fig = Figure()
        FigureCanvasAgg(fig)
        fig.add_subplot().set_title(text)
        fig.canvas.draw()

    with pytest.raises(ValueError):
        draw("usd$_{$1")
    draw(plain("usd$_{$1"))


def test_a_failing_plot_or_page_costs_only_itself(report, tmp_path, monkeypatch):
    def boom(_report):
        raise RuntimeError("cannot draw")

    monkeypatch.setattr(plots, "influence_figure", boom)
    with pytest.warns(RuntimeWarning, match="influence plot"):
        paths = report.write(tmp_path / "a")
    assert "influence" not in paths and {"accuracy", "markdown", "html"} <= set(paths)

    monkeypatch.setattr(render, "render_html", lambda *a, **k: boom(None))
    with pytest.warns(RuntimeWarning), pytest.raises(ReportError, match="report.html"):
        report.write(tmp_path / "b")
    assert (tmp_path / "b" / "report.md").is_file() and (tmp_path / "b" / "results.json").is_file()


def test_plot_labels_fall_back_to_the_entity_id_without_glyphs():
    dejavu = str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf")
    assert drawable("Zürich", (dejavu,)) and not drawable("中国", (dejavu,))
    nodes = [TraversalNode(id="E0114", name="中国"), TraversalNode(id="E0479", name="Mongolia")]
    labels = plots.node_labels(nodes)
    assert labels["E0479"] == "Mongolia"
    assert labels["E0114"] == ("中国" if drawable("中国") else "E0114")  # a CJK font, where installed, draws it


def test_page_font_stack_has_cjk_fallbacks():
    assert "Noto Sans CJK SC" in render.CSS and "Microsoft YaHei" in render.CSS and render.CSS.count("sans-serif") >= 1
