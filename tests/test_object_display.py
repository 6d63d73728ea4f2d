"""Big public objects print in one line, and summarise themselves for notebooks (HTML) and rich."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from rich.console import Console

import graphtrail
from graphtrail.agents import KnowledgeGraph, Question, load_kg, load_questions
from graphtrail.kg.views import GraphFilter
from graphtrail.evaluators.report import build_report
from tests.provenance_cases import kenya_trajectory
from tests.test_report import questions, records


def rich_text(obj: object) -> str:
    buf = io.StringIO()
    Console(file=buf, width=120, color_system=None).print(obj)
    return buf.getvalue()


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    return load_kg("countries")


@pytest.fixture(scope="module")
def report():
    return build_report(records(), questions(), meta={"agent": "hand-built"}, n_boot=200, seed=7)


def test_knowledge_graph_prints_one_line_of_counts(kg):
    text = repr(kg)
    n_edges = kg.graph.number_of_edges()
    assert text.startswith(f"KnowledgeGraph('countries', {len(kg)} entities, {n_edges} edges, {len(kg.text_units)} text units")
    assert "\n" not in text and len(text) < 120 and str(kg) == text
    assert "filtered" in repr(kg.filtered(GraphFilter(hidden=frozenset({"E0114"}), label="x")))
    tiny = KnowledgeGraph(name="tiny")
    tiny.add_relation("a", "knows", "b")
    assert repr(tiny) == "KnowledgeGraph('tiny', 2 entities, 1 edge, 0 text units)"


def test_knowledge_graph_html_and_rich_summaries_are_small_and_escaped(kg):
    page = kg._repr_html_()
    assert "<table>" in page and "entities" in page and len(page) < 3000
    odd = KnowledgeGraph(name="<b>x</b>")
    odd.add_entity("e1", name="[red]not markup[/red] <i>")
    assert "<b>x</b>" not in odd._repr_html_() and "&lt;i&gt;" in odd._repr_html_()
    assert "[red]not markup[/red]" in rich_text(odd)  # data is never read as rich markup
    assert "text units" in rich_text(kg)


def test_trajectory_step_and_question_print_one_line():
    traj = kenya_trajectory()
    text = repr(traj)
    assert "\n" not in text and len(text) < 200 and str(traj) == text
    assert "answer='Kenyan shilling'" in text and "3 steps" in text and "2 cited" in text
    assert repr(traj.steps[2]) == "Step(3, neighbors(entity_id='KEN'), 3 entities, 2 edges)"
    summary = rich_text(traj)
    assert "Kenya (KEN)" in summary and "search → neighbors → neighbors" in summary
    assert "Kenyan shilling (CUR)" in traj._repr_html_()
    q = load_questions("countries-demo")[0]
    assert repr(q).startswith(f"Question({q.id!r}, ") and f"+{len(q.answers) - 1}]" in repr(q)
    assert repr(Question(id="1", question="q?", answers=["a"])) == "Question('1', 'q?', answers=['a'])"


def test_report_prints_one_line_and_summarises_findings(report):
    text = repr(report)
    assert text.startswith("Report(12 questions, 6 conditions, baseline accuracy 97%") and "\n" not in text
    assert "12 hidden influencers" in text
    assert "Findings" not in text and "Removing the cited entities" in rich_text(report)
    assert "Cited removal" in report._repr_html_()
    rec = records()[0]
    assert "\n" not in repr(rec) and repr(rec).startswith("RunRecord('q00/baseline#0'")


def test_public_names_are_listed_for_completion():
    names = dir(graphtrail)
    assert {"trace_agent", "capture", "configure", "instrument", "Trajectory"} <= set(names)
    # Listing them does not import the tracer: ``import graphtrail`` stays cheap.
    code = "import sys, graphtrail; dir(graphtrail); print('graphtrail.tracer' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
