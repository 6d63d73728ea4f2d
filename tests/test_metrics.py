"""Provenance scores and judges on hand-built trajectories with known answers (docs/metrics.md examples)."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.messages import AIMessage

from graphtrail.agents import KnowledgeGraph, Question
from graphtrail.evaluators.scoring.judges import (
    LLMJudge,
    apply_judges,
    as_judge,
    exact_match,
    output_changed,
    JudgeContext,
    parse_verdict,
    token_f1_score,
    verdict_value,
)
from graphtrail.evaluators.scoring.metrics import (
    accuracy,
    answer_entities,
    coverage,
    entity_influence,
    fit_surrogate,
    output_changed_rate,
    source_support,
    structural_faithfulness,
    trajectory_fidelity,
)
from graphtrail.evaluators.records import RunRecord
from tests.fakes import ScriptedChatModel
from tests.provenance_cases import QUESTION, kenya_trajectory, record

Q = Question(**QUESTION)


# ------------------------------------------------------------------ judges
def test_exact_match_f1_and_changed_use_normalized_answers():
    assert exact_match("the Kenyan Shilling.", Q) is True
    assert exact_match("CUR", Q) is True  # the gold entity id counts
    assert exact_match("Swahili", Q) is False
    assert exact_match(None, Q) is False
    assert exact_match("x", {"id": "q", "question": "?", "answers": []}) is None
    assert token_f1_score("Kenyan pound", Q) == pytest.approx(0.5)
    ctx = JudgeContext(baseline_answer="Kenyan shilling")
    assert output_changed("kenyan shilling!", Q, ctx) is False
    assert output_changed("Swahili", Q, ctx) is True
    assert output_changed(None, Q, ctx) is True


def test_apply_judges_fills_missing_fields_and_custom_verdicts():
    recs = [
        record("baseline", "Kenyan shilling"),
        record("cited_removal", "Swahili"),
        record("uncited_removal", "kenyan shilling", correct=False),  # given values are kept
    ]

    def longer_than_five(answer, question, context):
        return len(answer or "") > 5

    def broken(answer, question, context):
        raise RuntimeError("judge bug")

    out = apply_judges(recs, [Q], judges=[longer_than_five, as_judge(broken, "broken")])
    assert [r.correct for r in out] == [True, False, False]
    assert [r.changed for r in out] == [False, True, False]
    assert out[1].f1 == 0.0
    assert out[0].judge["longer_than_five"]["value"] == 1.0
    assert out[1].judge["broken"]["value"] is None and "judge bug" in out[1].judge["broken"]["error"]
    assert recs[0].correct is None  # inputs are not mutated
    swapped = apply_judges(recs, [Q], judges=[as_judge(lambda a, q, c: a == "Swahili", "is_swahili")],
                           correctness="is_swahili")
    assert [r.correct for r in swapped] == [False, True, False]
    with pytest.raises(ValueError, match="names no judge"):
        apply_judges(recs, [Q], correctness="nope")


def test_parse_verdict_is_robust():
    assert parse_verdict('```json\n{"correct": true, "score": 0.9, "reason": "same"}\n```')["correct"] is True
    assert parse_verdict('Sure. {"verdict": "incorrect"} done')["correct"] is False
    assert parse_verdict('{"score": 0.2}') == {"correct": False, "score": 0.2, "reason": ""}
    assert parse_verdict("The answer is correct.")["correct"] is True
    assert parse_verdict("No, that is wrong.")["correct"] is False
    assert parse_verdict("hmm")["correct"] is None
    assert verdict_value({"correct": True}) == 1.0 and verdict_value(0.25) == 0.25 and verdict_value(None) is None


def test_llm_judge_with_a_chat_model_and_as_correctness():
    model = ScriptedChatModel(
        policy=lambda msgs: AIMessage(
            content='{"correct": %s, "score": 1, "reason": "ok"}' % ("true" if "Kenyan" in msgs[-1].content.split("Candidate answer:")[1] else "false")
        )
    )
    judge = LLMJudge(model)
    assert judge("KES (Kenyan shilling)", Q)["correct"] is True
    assert judge("Swahili", Q)["correct"] is False
    assert "Reference answers" in judge.messages("x", Q)[-1].content
    out = apply_judges([record("baseline", "KES (Kenyan shilling)")], [Q], judges=[judge], correctness="llm_judge")
    assert out[0].correct is True  # exact match says no, the LLM judge decides
    assert len(model.calls) == 3


def test_llm_judge_failure_is_a_verdict_not_a_crash():
    def boom(msgs):
        raise ConnectionError("offline")

    verdict = LLMJudge(ScriptedChatModel(policy=boom))("Kenyan shilling", Q)
    assert verdict["correct"] is None and "offline" in verdict["error"]


# ------------------------------------------------------------------ accuracy / changed
def test_accuracy_weighs_questions_equally_and_changed_rate_skips_baseline_trial_0():
    recs = [
        record("baseline", "a", trial=0, correct=True, changed=False),
        record("baseline", "a", trial=1, correct=True, changed=False),
        record("baseline", "b", trial=2, correct=False, changed=True),
        record("baseline", "c", question_id="q2", correct=False, changed=False),
    ]
    assert accuracy(recs, "baseline") == pytest.approx((2 / 3 + 0) / 2)
    assert output_changed_rate(recs, "baseline") == pytest.approx(0.5)  # q1: trials 1, 2; q2 has no repeat
    assert accuracy(recs, "cited_removal") is None


# ------------------------------------------------------------------ source support
def test_source_support_cited_edge_text_and_unsupported():
    t = kenya_trajectory()
    assert answer_entities("kenyan shilling", t) == ["CUR"]
    s = source_support(t, Q)
    assert (s.supported, s.how, s.answer_entities, s.grounded_citations) == (True, "cited", ["CUR"], 1.0)
    assert source_support(kenya_trajectory(citations=["KEN"]), Q).how == "edge"
    assert source_support(kenya_trajectory(citations=["NAK"]), Q).how == "text"  # step 1 output states it
    unsupported = source_support(kenya_trajectory(citations=["SWA", "ZZZ"]), Q)
    assert (unsupported.supported, unsupported.how, unsupported.grounded_citations) == (False, None, 0.5)
    assert source_support(kenya_trajectory(answer=None), Q).supported is None


def test_source_support_text_from_the_knowledge_graph():
    kg = KnowledgeGraph()
    for eid, name in [("NAK", "Nakuru"), ("SWA", "Swahili"), ("CUR", "Kenyan shilling")]:
        kg.add_entity(eid, name)
    kg.add_text_unit("T1", "Swahili speakers in Kenya pay in the Kenyan shilling.", ["SWA"])
    assert source_support(kenya_trajectory(citations=["SWA"]), Q, kg).how == "text"
    assert source_support(kenya_trajectory(citations=["NAK"]), Q, kg).supported is False  # kg text beats tool output


# ------------------------------------------------------------------ fidelity
def test_trajectory_fidelity_path_recall_precision_and_order():
    f = trajectory_fidelity(kenya_trajectory(), Q)
    assert f.path == ["NAI", "KEN", "CUR"]
    assert (f.recall, f.precision, f.order_tau, f.topic_source) == (pytest.approx(2 / 3), 1.0, pytest.approx(1.0), "question")
    reversed_order = trajectory_fidelity(kenya_trajectory(citations=["CUR", "KEN", "NAI"]), Q)
    assert reversed_order.recall == 1.0 and reversed_order.order_tau == pytest.approx(-1.0)
    extra = trajectory_fidelity(kenya_trajectory(citations=["KEN", "CUR", "SWA", "NAK"]), Q)
    assert extra.precision == 0.5
    wrong = trajectory_fidelity(kenya_trajectory(answer="Euro"), Q)
    assert wrong.recall is None and "names no visited entity" in wrong.reason
    no_topic = trajectory_fidelity(kenya_trajectory(), {k: v for k, v in QUESTION.items() if k != "topic_ids"})
    assert no_topic.topic_source == "first_step" and no_topic.path == ["NAI", "KEN", "CUR"]


# ------------------------------------------------------------------ influence and coverage
LOO_CHANGED = {"NAI": True, "NAK": False, "KEN": True, "CUR": True, "SWA": False}


def loo_runs(trials: int = 1, changed: dict[str, list[bool]] | None = None) -> list[RunRecord]:
    pattern = changed or {e: [c] * trials for e, c in LOO_CHANGED.items()}
    return [record("leave_one_out", "x", variant=e, trial=t, hidden=[e], changed=c)
            for e, flags in pattern.items() for t, c in enumerate(flags)]


def test_entity_influence_labels_and_coverage():
    ents = entity_influence(kenya_trajectory(), loo_runs(), question_id="q1")
    labels = {e.entity_id: e.label for e in ents}
    assert labels == {
        "NAI": "uncited_influential",  # the hidden influence
        "NAK": "uncited_not_influential",
        "KEN": "cited_influential",
        "CUR": "cited_influential",
        "SWA": "uncited_not_influential",
    }
    assert [e.visit_rank for e in ents] == [1, 2, 3, 4, 5]
    assert coverage(ents) == pytest.approx(2 / 3)
    unknown = entity_influence(kenya_trajectory(), [])
    assert {e.label for e in unknown} == {"cited_unknown", "uncited_unknown"} and coverage(unknown) is None


def test_influence_is_measured_against_the_noise_floor():
    runs = loo_runs(changed={"NAI": [True, False], "KEN": [True, True]})
    quiet = {e.entity_id: e for e in entity_influence(kenya_trajectory(), runs, noise=0.25)}
    assert quiet["NAI"].influence == pytest.approx(0.25) and quiet["NAI"].influential is True
    noisy = {e.entity_id: e for e in entity_influence(kenya_trajectory(), runs, noise=0.5)}
    assert noisy["NAI"].influential is False and noisy["KEN"].influential is True
    assert noisy["NAK"].influential is None  # never ablated


def _subset_runs(rule, n: int = 48, seed: int = 3) -> list[RunRecord]:
    rng = np.random.default_rng(seed)
    ents = ["NAI", "NAK", "KEN", "CUR", "SWA"]
    out = []
    for i in range(n):
        hidden = [e for e in ents if rng.random() < 0.5]
        out.append(record("random_subsets", "x", variant=str(i), hidden=hidden, changed=rule(set(hidden))))
    return out


def test_surrogate_recovers_the_influential_entity_and_reports_lds():
    fit = fit_surrogate(_subset_runs(lambda h: "KEN" in h), ["NAI", "NAK", "KEN", "CUR", "SWA"])
    assert fit is not None and fit.n == 48
    assert max(fit.weights, key=fit.weights.get) == "KEN" and fit.weights["KEN"] > 0.8
    assert all(abs(w) < 0.1 for e, w in fit.weights.items() if e != "KEN")
    assert fit.lds is not None and fit.lds > 0.8
    # redundancy that leave-one-out misses: the answer changes only when both NAI and NAK are gone
    both = fit_surrogate(_subset_runs(lambda h: {"NAI", "NAK"} <= h, n=64), ["NAI", "NAK", "KEN", "CUR", "SWA"])
    ents = {e.entity_id: e for e in entity_influence(kenya_trajectory(), [], both, surrogate_threshold=0.1)}
    assert ents["NAI"].influential and ents["NAK"].influential and not ents["SWA"].influential


def test_surrogate_edge_cases():
    assert fit_surrogate(_subset_runs(lambda h: True, n=4), ["KEN"]) is None  # too few runs
    flat = fit_surrogate(_subset_runs(lambda h: False), ["NAI", "KEN"])
    assert flat.constant and flat.lds is None and set(flat.weights.values()) == {0.0}
    ents = entity_influence(kenya_trajectory(), [], flat)
    assert all(e.influential is False for e in ents if e.entity_id in {"NAI", "KEN"})
    noise_only = fit_surrogate(_subset_runs(lambda h: bool(np.random.default_rng(len(h) * 7 + 1).random() < 0.5)), ["NAI", "KEN"])
    untrusted = entity_influence(kenya_trajectory(), [], noise_only, min_lds=0.99)
    assert all(e.influential is None for e in untrusted)  # weights reported, but not trusted for labels


# ------------------------------------------------------------------ structural faithfulness
def test_structural_faithfulness_excess_over_noise():
    f = structural_faithfulness(0.4, 0.2, 0.3, noise=0.2)
    assert f.excess_uncited_removal == pytest.approx(0.25)
    assert f.score == pytest.approx(0.75)
    assert f.mask_score == pytest.approx(1 - 0.125)
    assert f.excess_text_only == 0.0
    assert f.structural_gap == pytest.approx(0.25)
    assert structural_faithfulness(None).score is None
    assert structural_faithfulness(0.1, noise=0.3).score == 1.0
