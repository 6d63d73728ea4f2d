"""The report's opening sentence: one plain sentence that claims no more than the tests below it support."""

from __future__ import annotations

import re

from graphtrail.evaluators.report.model import Report
from graphtrail.evaluators.scoring.headline import headline
from graphtrail.evaluators.scoring.tables import ConditionRow, EntityRow, Stats


def _report(*rows: ConditionRow, entities: tuple[EntityRow, ...] = ()) -> Report:
    base = ConditionRow(condition="baseline", label="Baseline", accuracy=0.9, n_questions=12)
    return Report(conditions=[base, *rows], entities=list(entities), stats=Stats(n_questions=12, alpha=0.05))


def _row(condition: str, p: float | None, changed: float) -> ConditionRow:
    return ConditionRow(condition=condition, label=condition, accuracy=0.5, n_questions=12, mcnemar_p=p, changed_rate=changed)


def _plain(sentence: str | None) -> str:
    assert sentence is not None
    # one sentence: a capital, no brackets, one full stop at the end
    assert sentence[0].isupper() or sentence[0].isdigit()
    assert not re.search(r"[()\[\]]", sentence) and sentence.count(". ") == 0 and sentence.endswith(".")
    return sentence


def test_a_detected_uncited_removal_leads() -> None:
    text = _plain(headline(_report(_row("uncited_removal", 0.01, 0.42), _row("cited_removal", 0.001, 0.9))))
    assert text.startswith("Entities the agent visited but did not cite shaped its answers") and "42%" in text


def test_hidden_influencers_lead_when_removal_is_not_detected() -> None:
    ents = tuple(EntityRow(question_id=q, entity_id=e, cited=False, visited=True, influential=True, influence=1.0, label="x")
                 for q, e in [("q1", "E1"), ("q2", "E1"), ("q2", "E2")])
    text = _plain(headline(_report(_row("uncited_removal", 0.3, 0.1), entities=ents)))
    assert text.startswith("2 entities the agent visited but never cited")  # two entities, not three rows


def test_cited_only_and_nothing_detected() -> None:
    text = _plain(headline(_report(_row("uncited_removal", 0.5, 0.0), _row("cited_removal", 0.001, 0.75))))
    assert "rest on the entities it cited" in text and "75%" in text
    text = _plain(headline(_report(_row("uncited_removal", 0.5, 0.0), _row("cited_removal", 0.2, 0.1))))
    assert "inconclusive" in text and "12 questions" in text
    assert headline(_report()) is None  # only the baseline ran: nothing to conclude
