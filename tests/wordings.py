"""Questions in several wordings over a graph with Wikidata-style labels (the offline model's wording test set).

``generate_questions(kg)`` writes, for facts of the graph, one question per
wording: "What/Who/Where/Which is the R of E?", "The R of E is", "E's R?" and
"R of E?", and the same four for two-hop chains (E -r1-> M -r2-> A). Gold
answers are every entity the chain reaches from *any* entity the question's
name could mean (two "Michael Jordan"s, two "Paris"es), with their ids.
Every third topic is named by an alias instead of its name.

The shipped question file ``tests/data/wikidata_style.questions.jsonl`` is
this function's output; rewrite it after changing the graph with
``python -m tests.wordings``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from graphtrail.agents import KnowledgeGraph, load_kg
from graphtrail.agents.answers import normalize_answer

DATA = Path(__file__).parent / "data"
KG_FILE = DATA / "wikidata_style.tsv"
QUESTIONS_FILE = DATA / "wikidata_style.questions.jsonl"
WORDINGS = ("wh", "statement", "possessive", "bare")
#: Every n-th two-hop chain is asked (all of them would be ~4x the one-hop count).
TWO_HOP_EVERY = 3


def _wh(kg: KnowledgeGraph, answer_ids: list[str], index: int) -> str:
    kinds = {kg.entity(a).type for a in answer_ids}
    if kinds == {"human"}:
        return "Who"
    if kinds <= {"city", "state"}:
        return "Where"
    return ("What", "Which")[index % 2]


def _phrase(wording: str, wh: str, name: str, relations: list[str]) -> str:
    if wording == "possessive":
        return f"{name}'s " + "'s ".join(relations) + "?"
    chain = " of the ".join(reversed(relations))  # r2 of the r1 of E
    if wording == "wh":
        return f"{wh} is the {chain} of {name}?"
    if wording == "statement":
        return f"The {chain} of {name} is"
    return f"{chain[0].upper()}{chain[1:]} of {name}?"


def _namesakes(kg: KnowledgeGraph, label: str) -> list[str]:
    key = normalize_answer(label)
    return [r.id for r in kg.entities() if key in {normalize_answer(n) for n in (r.name, *r.aliases)}]


def _ends(kg: KnowledgeGraph, starts: list[str], relations: list[str]) -> list[str]:
    current = list(starts)
    for relation in relations:
        current = list(dict.fromkeys(r.target for eid in current for r in kg.out_relations(eid) if r.relation == relation))
    return current


def generate_questions(kg: KnowledgeGraph) -> list[dict]:
    """One-hop and sampled two-hop questions in every wording, deterministic for a given graph."""
    chains: list[tuple[str, list[str]]] = []
    for record in sorted(kg.entities(), key=lambda r: r.id):
        labels = sorted({r.relation for r in kg.out_relations(record.id)})
        chains += [(record.id, [label]) for label in labels]
    two_hop: list[tuple[str, list[str]]] = []
    for record in sorted(kg.entities(), key=lambda r: r.id):
        for r1 in sorted({r.relation for r in kg.out_relations(record.id)}):
            middles = _ends(kg, [record.id], [r1])
            for r2 in sorted({r.relation for m in middles for r in kg.out_relations(m)}):
                two_hop.append((record.id, [r1, r2]))
    chains += two_hop[::TWO_HOP_EVERY]

    questions = []
    for index, (topic, relations) in enumerate(chains):
        record = kg.entity(topic)
        name = record.aliases[0] if record.aliases and index % 3 == 2 else record.name
        answer_ids = _ends(kg, _namesakes(kg, name), relations)
        wh = _wh(kg, answer_ids, index)
        for wording in WORDINGS:
            questions.append(
                {
                    "id": f"wd-{index:03d}-{wording}",
                    "question": _phrase(wording, wh, name, relations),
                    "answers": [kg.entity(a).name for a in answer_ids],
                    "answer_ids": answer_ids,
                    "topic_ids": [topic],
                    "hops": len(relations),
                    "kind": f"{len(relations)}-hop",
                    "wording": wording,
                    "path": relations,
                }
            )
    return questions


def write_questions(path: Path = QUESTIONS_FILE) -> int:
    questions = generate_questions(load_kg(KG_FILE, communities=False))
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    return len(questions)


if __name__ == "__main__":
    print(f"wrote {write_questions()} questions to {QUESTIONS_FILE}", file=sys.stderr)


def accuracy_by_wording(kg: KnowledgeGraph, questions: list, model="offline") -> dict[tuple[str, str], tuple[int, int]]:
    """``{(kind, wording): (correct, total)}`` for the offline agent (or ``model``) on ``questions``."""
    from langchain_core.messages import HumanMessage

    from graphtrail.agents import answer_from_result, create_graphrag_agent
    from graphtrail.agents.answers import is_correct

    agent = create_graphrag_agent(model, kg)
    scores: dict[tuple[str, str], tuple[int, int]] = {}
    for q in questions:
        answer, _, _ = answer_from_result(agent.invoke({"messages": [HumanMessage(q.question)]}))
        key = (q.kind or "", str(q.metadata.get("wording", "")))
        correct, total = scores.get(key, (0, 0))
        scores[key] = (correct + bool(answer is not None and is_correct(answer, q, kg)), total + 1)
    return scores
