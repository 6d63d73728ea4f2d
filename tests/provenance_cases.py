"""Hand-built trajectories and run records with known provenance, for the scoring tests.

The running example (also the worked example in docs/metrics.md):

    Q: "Which currency is used in the country whose capital is Nairobi?"  gold: Kenyan shilling
    step 1 search("Nairobi")  -> NAI Nairobi, NAK Nakuru
    step 2 neighbors(NAI)     -> NAI, KEN Kenya;            edge KEN -capital-> NAI
    step 3 neighbors(KEN)     -> KEN, CUR Kenyan shilling, SWA Swahili;
                                 edges KEN -currency-> CUR, KEN -language-> SWA
    answer "Kenyan shilling", citations [KEN, CUR]
"""

from __future__ import annotations

from graphtrail.evaluators.records import RunKey, RunRecord
from graphtrail.tracer.trajectory import Edge, Entity, Step, Trajectory

QUESTION = {
    "id": "q1",
    "question": "Which currency is used in the country whose capital is Nairobi?",
    "answers": ["Kenyan shilling"],
    "answer_ids": ["CUR"],
    "topic_ids": ["NAI"],
}

NAMES = {"NAI": "Nairobi", "NAK": "Nakuru", "KEN": "Kenya", "CUR": "Kenyan shilling", "SWA": "Swahili"}


def ent(eid: str) -> Entity:
    return Entity(id=eid, name=NAMES.get(eid, eid), type="entity")


def kenya_trajectory(answer: str | None = "Kenyan shilling", citations: list[str] | None = None, run_id: str = "r0") -> Trajectory:
    steps = [
        Step(index=1, tool="search", args={"query": "Nairobi"}, entities=[ent("NAI"), ent("NAK")],
             output="Nairobi (city); Nakuru (city). Nakuru trades in the Kenyan shilling."),
        Step(index=2, tool="neighbors", args={"entity_id": "NAI"}, entities=[ent("NAI"), ent("KEN")],
             edges=[Edge(source="KEN", relation="capital", target="NAI")], output="Kenya -capital-> Nairobi"),
        Step(index=3, tool="neighbors", args={"entity_id": "KEN"}, entities=[ent("KEN"), ent("CUR"), ent("SWA")],
             edges=[Edge(source="KEN", relation="currency", target="CUR"), Edge(source="KEN", relation="language", target="SWA")],
             output="Kenya -currency-> Kenyan shilling; Kenya -language-> Swahili"),
    ]
    return Trajectory(run_id=run_id, question=QUESTION["question"], answer=answer,
                      citations=["KEN", "CUR"] if citations is None else citations, steps=steps)


def record(
    condition: str,
    answer: str | None,
    *,
    question_id: str = "q1",
    trial: int = 0,
    variant: str = "",
    hidden: list[str] | None = None,
    trajectory: Trajectory | None = None,
    correct: bool | None = None,
    changed: bool | None = None,
    citations: list[str] | None = None,
    model_calls: int = 0,
) -> RunRecord:
    return RunRecord(
        key=RunKey(agent="a", model="m", question_id=question_id, condition=condition, variant=variant, trial=trial),
        question=QUESTION["question"],
        answer=answer,
        citations=citations or [],
        hidden=hidden or [],
        correct=correct,
        changed=changed,
        trajectory=trajectory,
        model_calls=model_calls,
    )
