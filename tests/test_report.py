"""build_report / Report.write / load_report on hand-built run records with known outcomes."""

from __future__ import annotations

import base64
import json
import re

import pytest

from graphtrail.agents import Question
from graphtrail.evaluators.report import PAPER_TABLE2, ReportError, build_report, load_report
from graphtrail.evaluators.report.plotsize import svg_width_px
from tests.provenance_cases import QUESTION, kenya_trajectory, record

N = 12  # questions; all share the Kenya trajectory shape


def questions() -> list[Question]:
    return [Question(**{**QUESTION, "id": f"q{i:02d}"}) for i in range(N)]


def records() -> list:
    """Baseline correct on all 12 (3 trials, one noisy trial on q00); cited removal breaks 10 of 12;
    random removal breaks 1; leave-one-out marks NAI (uncited) and KEN, CUR (cited) influential."""
    recs = []
    for i in range(N):
        q = f"q{i:02d}"
        traj = kenya_trajectory(run_id=f"{q}-base")
        for t in range(3):
            answer = "Kenyan pound" if (i == 0 and t == 2) else "Kenyan shilling"
            recs.append(record("baseline", answer, question_id=q, trial=t, trajectory=traj if t == 0 else None,
                               citations=["KEN", "CUR"], model_calls=3))
        recs.append(record("cited_removal", "Swahili" if i < 10 else "Kenyan shilling", question_id=q, hidden=["KEN", "CUR"]))
        recs.append(record("random_removal", "Euro" if i == 5 else "Kenyan shilling", question_id=q, hidden=["NAK"]))
        recs.append(record("uncited_removal", "Euro" if i < 3 else "Kenyan shilling", question_id=q, hidden=["NAI", "NAK", "SWA"]))
        recs.append(record("text_only_isolation", "Kenyan shilling", question_id=q))
        for e, breaks in {"NAI": True, "NAK": False, "KEN": True, "CUR": True, "SWA": False}.items():
            recs.append(record("leave_one_out", "Euro" if breaks else "Kenyan shilling", question_id=q, variant=e, hidden=[e]))
    return recs


@pytest.fixture(scope="module")
def report():
    return build_report(records(), questions(), meta={"agent": "hand-built"}, n_boot=500, seed=7)


def test_condition_table_numbers(report):
    base = report.condition("baseline")
    assert base.accuracy == pytest.approx((11 + 2 / 3) / 12) and base.trials == 3 and base.n_runs == 36
    assert base.ci_low <= base.accuracy <= base.ci_high
    assert base.model_calls == 108
    cited = report.condition("cited_removal")
    assert cited.accuracy == pytest.approx(2 / 12)
    assert cited.delta == pytest.approx(2 / 12 - base.accuracy)
    assert cited.delta_ci_high < 0
    assert (cited.mcnemar_b, cited.mcnemar_c, cited.mcnemar_n) == (10, 0, 12)
    assert cited.mcnemar_p == pytest.approx(2 * 0.5**10)
    assert cited.changed_rate == pytest.approx(10 / 12)
    rnd = report.condition("random_removal")
    assert rnd.accuracy == pytest.approx(11 / 12) and rnd.mcnemar_p == 1.0
    assert rnd.mdd is not None and rnd.mdd > 0.25  # 12 questions cannot detect small shifts
    assert base.pass_k["3"] == pytest.approx(11 / 12) and base.pass_k["1"] == pytest.approx(base.accuracy)
    assert base.changed_rate == pytest.approx((1 / 2) / 12)
    assert base.paper_accuracy is None  # hand-built Kenya questions: the paper's 2WikiMultiHopQA values mean nothing here
    loo = report.condition("leave_one_out")
    assert loo.per_entity and loo.mcnemar_p is None and loo.accuracy == pytest.approx(2 / 5)
    assert [c.condition for c in report.conditions] == [
        "baseline", "cited_removal", "random_removal", "text_only_isolation", "uncited_removal", "leave_one_out"]


def test_stats_noise_and_power_statement(report):
    st = report.stats
    assert st.baseline_trials == 3 and st.n_questions == N
    assert st.noise_floor_answer == pytest.approx((2 / 3) / 12)  # q00: 2 of 3 trial pairs differ
    assert "n = 12" in st.power_statement and "at least" in st.power_statement
    assert any("Cited removal" in n and "detected" in n for n in st.notes)
    assert any("Random removal" in n and "not distinguishable" in n for n in st.notes)


def test_scores_entities_and_questions(report):
    s = report.scores
    assert s.source_support == 1.0 and s.support_how == {"cited": N}
    assert s.fidelity == pytest.approx(2 / 3) and s.order_tau == pytest.approx(1.0)
    assert s.coverage == pytest.approx(2 / 3) and s.coverage_n == N
    assert s.hidden_influence == N and s.influential_entities == 3 * N
    assert s.faithfulness["excess_uncited_removal"] == pytest.approx(
        (3 / 12 - report.stats.noise_floor_answer) / (1 - report.stats.noise_floor_answer))
    assert s.faithfulness["excess_text_only"] == 0.0 and s.faithfulness["structural_gap"] > 0
    labels = {(e.question_id, e.entity_id): e.label for e in report.entities}
    assert labels[("q01", "NAI")] == "uncited_influential" and labels[("q01", "KEN")] == "cited_influential"
    q0 = report.questions[0]
    assert q0.question_id == "q00" and q0.hidden_influence == ["NAI"] and q0.path == ["NAI", "KEN", "CUR"]
    assert q0.answers["cited_removal"] == "Swahili" and q0.noise == pytest.approx(2 / 3)
    # q00's own noise floor (2/3) exceeds nothing: one LOO run changing is 1.0 - 2/3 > 0, still influential
    assert report.traversal is not None and {n.id for n in report.traversal.nodes} == {"NAI", "NAK", "KEN", "CUR", "SWA"}


def test_write_and_reload(report, tmp_path):
    paths = report.write(tmp_path / "out")
    assert {"results", "markdown", "html", "accuracy", "influence", "traversal"} <= set(paths)
    for key in ("accuracy", "influence", "traversal"):
        assert paths[key].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(paths["results"].read_text())
    assert data["schema_version"] == "graphtrail.results/1" and data["meta"]["agent"] == "hand-built"
    md = paths["markdown"].read_text()
    assert "| Baseline |" in md and "![Accuracy per condition](accuracy.png)" in md and "different data" not in md
    html = paths["html"].read_text()
    assert '<table id="conditions">' in html and '<figure id="traversal">' in html
    # accuracy and influence as SVG images, each with its phone drawing; the traversal inline (hover titles)
    assert html.count('<img class="plot svg"') == 2 and html.count('<img class="plot narrow"') == 2
    assert html.count('<svg class="traversal') == 2 and "http://" not in html and "https://" not in html
    assert "<script" not in html
    svgs = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert len(svgs) == 4  # vector plots: sharp at any size
    for b64 in svgs:
        svg = base64.b64decode(b64)
        assert b"<svg" in svg[:1000] and b'<use xlink:href="#DejaVuSans' in svg  # text drawn as vector glyphs
        # the page knows each plot's natural width (a phone drawing is capped at it)
        assert f"--w:{svg_width_px(svg):.0f}px" in html or f"max-width:{svg_width_px(svg):.0f}px" in html
    again = load_report(paths["results"])
    assert again.to_dict() == report.to_dict()
    paths2 = again.write(tmp_path / "again")
    assert paths2["markdown"].read_text() == md


def test_html_escapes_user_text(tmp_path):
    qs = [Question(**{**QUESTION, "question": "<script>alert(1)</script> & co?"})]
    rep = build_report([record("baseline", "<b>Kenyan shilling</b>", question_id="q1", trajectory=kenya_trajectory())], qs,
                       paper_reference=False)
    html = rep.write(tmp_path)["html"].read_text()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "Paper" not in html.split('<table id="conditions">')[1].split("</table>")[0]


def test_load_report_errors_are_typed(tmp_path):
    with pytest.raises(ReportError, match="results file not found"):
        load_report(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ReportError, match="not a readable"):
        load_report(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema_version": "something/9"}))
    with pytest.raises(ReportError, match="not a graphtrail results.json"):
        load_report(other)
    with pytest.raises(ReportError, match="no run records"):
        build_report([], questions())


def test_report_without_trajectories_or_repeats_still_renders(tmp_path):
    recs = [record("baseline", "Kenyan shilling", question_id="q1"), record("cited_removal", "Euro", question_id="q1")]
    rep = build_report(recs, [Question(**QUESTION)])
    assert rep.stats.noise_floor_answer is None and any("noise floor is unknown" in n for n in rep.stats.notes)
    assert rep.traversal is None and rep.entities == []
    paths = rep.write(tmp_path)
    assert "traversal" not in paths and "influence" not in paths and "accuracy" in paths


def test_paper_reference_only_beside_its_own_dataset():
    """The paper's Table 2 (2WikiMultiHopQA) shows only for questions from that dataset, or when asked for."""
    plain = build_report(records(), questions(), n_boot=50)
    assert plain.paper_reference is False and all(r.paper_accuracy is None for r in plain.conditions)
    wiki = [Question(**{**q.model_dump(), "metadata": {"dataset": "2wikimultihopqa"}}) for q in questions()]
    on_wiki = build_report(records(), wiki, n_boot=50)
    assert on_wiki.condition("baseline").paper_accuracy == PAPER_TABLE2["baseline"]
    mixed = wiki[:-1] + questions()[-1:]  # one question from elsewhere: not the paper's dataset
    assert build_report(records(), mixed, n_boot=50).condition("baseline").paper_accuracy is None
    asked = build_report(records(), questions(), n_boot=50, paper_reference=True)
    assert asked.condition("baseline").paper_accuracy == PAPER_TABLE2["baseline"]
