"""The factory route's excuse, indexed once, reads exactly what reading the whole ablated data would.

``AgentFactory._in_data`` answers "which withheld entities does the ablated data
itself still show?" from an index of the data's strings built once per evaluation
(exact/excuse.py). The oracle here reads every string of the ablated data, every
time, with the model-input check's own reader (``leaks.shown_in``), for many
conditions and every data type the factory route takes.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from graphtrail.evaluators.replay.exact.ablate import ablated
from graphtrail.evaluators.replay.exact.excuse import data_strings
from graphtrail.evaluators.replay.exact.factory import AgentFactory
from graphtrail.evaluators.replay.filtered.leaks import EntityNames, shown_in
from graphtrail.kg.views import GraphFilter


#: Descriptions that name other entities and quote each other: what the excuse is for.
PEOPLE = {
    "p1": ("Lise Meitner", "Austrian physicist who explained nuclear fission with Otto Hahn in Berlin"),
    "p2": ("Otto Hahn", "German chemist who discovered fission; colleague of Lise Meitner"),
    "p3": ("Marie Curie", "Polish physicist who discovered polonium and radium in Paris"),
    "p4": ("Pierre Curie", "French physicist; married Marie Curie, who discovered polonium and radium in Paris"),
    "i1": ("Kaiser Wilhelm Institute", "research institute in Berlin where Otto Hahn worked"),
    "i2": ("Sorbonne", "university in Paris"),
}
LINKS = [("p1", "colleague", "p2", "Meitner and Hahn worked together"), ("p1", "works_at", "i1", ""),
         ("p2", "works_at", "i1", "Otto Hahn directed chemistry at the Kaiser Wilhelm Institute"),
         ("p3", "colleague", "p4", ""), ("p4", "works_at", "i2", "Pierre Curie taught at the Sorbonne")]


def _kg() -> Any:
    from graphtrail.kg import KnowledgeGraph

    kg = KnowledgeGraph(name="scientists")
    for eid, (name, text) in PEOPLE.items():
        kg.add_entity(eid, name, "person" if eid.startswith("p") else "organization", text)
    for u, relation, v, text in LINKS:
        kg.add_relation(u, relation, v, text)
    kg.add_text_unit("t1", "Lise Meitner and Otto Hahn split the atom; Marie Curie had shown the way.", ["p1", "p2"])
    kg.add_text_unit("t2", "The Sorbonne hired Pierre Curie.", ["i2"])
    return kg


def _networkx() -> Any:
    import networkx as nx

    g = nx.DiGraph()
    for eid, (name, text) in PEOPLE.items():
        g.add_node(eid, name=name, description=text, note=f"see also {PEOPLE['p2'][0]}" if eid == "p4" else "")
    for u, relation, v, text in LINKS:
        g.add_edge(u, v, relation=relation, description=text)
    return g


def _records() -> dict[str, Any]:
    return {eid: {"name": name, "description": text, "colleagues": [v for u, r, v, _ in LINKS if u == eid and r == "colleague"],
                  "remark": "a friend of Lise Meitner" if eid == "i2" else ""} for eid, (name, text) in PEOPLE.items()}


def _documents() -> list[Any]:
    from langchain_core.documents import Document

    return [Document(page_content=f"{name}: {text}", metadata={"id": eid, "name": name}) for eid, (name, text) in PEOPLE.items()]


def _tables() -> Any:
    import pandas as pd

    from graphtrail.evaluators import EntityTables

    entities = pd.DataFrame([{"id": e, "name": n, "description": t, "type": "x"} for e, (n, t) in PEOPLE.items()])
    relations = pd.DataFrame([{"source": u, "relation": r, "target": v} for u, r, v, _ in LINKS])
    return EntityTables(entities, relations)


DATA = {"knowledge_graph": _kg, "networkx": _networkx, "records": _records, "documents": _documents, "tables": _tables}


def _everything(factory: AgentFactory, graph_filter: GraphFilter) -> list[str]:
    """Every string the condition leaves, read the slow way (a masked entity's placeholder shows nothing of it)."""
    view = factory.kg.filtered(graph_filter)
    texts: list[str] = []
    for record in view.entities():
        texts += [record.description, *record.aliases]
        if record.id not in graph_filter.masked:
            texts.append(record.name)
    texts += [u.text for u in (view.text_unit(uid) for uid in view.text_units) if u is not None]
    texts += [r.description for r in view.relations() if r.description]
    return texts + data_strings(ablated(factory.data, graph_filter, factory.keys))


def _excused(factory: AgentFactory, graph_filter: GraphFilter, names: EntityNames) -> frozenset[str]:
    return factory._in_data(graph_filter, names, graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked)


def _conditions(ids: list[str], n: int, seed: int) -> list[GraphFilter]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        picked = rng.sample(ids, rng.randint(1, 4))
        roles = [rng.choice(("hidden", "masked", "text_blocked")) for _ in picked]
        out.append(GraphFilter(**{role: frozenset(e for e, r in zip(picked, roles) if r == role)
                                  for role in ("hidden", "masked", "text_blocked")}))
    return out


@pytest.mark.parametrize("kind", sorted(DATA))
def test_the_indexed_excuse_equals_reading_every_string(kind: str) -> None:
    data = DATA[kind]()
    factory = AgentFactory(lambda d: (lambda x: x), data)
    ids = sorted(factory.kg.entity_ids())
    names = EntityNames(factory.kg)
    seen_any = False
    for graph_filter in _conditions(ids, 40, seed=len(kind)):
        expected = shown_in(_everything(factory, graph_filter), graph_filter, names)
        withheld = sorted(graph_filter.hidden | graph_filter.masked | graph_filter.text_blocked)
        first = factory._in_data(graph_filter, names, withheld[:1])  # asked about one entity, then about all
        got = factory._in_data(graph_filter, names, withheld)
        assert first == expected & set(withheld[:1])
        assert set(got) == expected, (graph_filter, got, expected)
        seen_any |= bool(expected)
    assert seen_any  # some condition leaves text naming a withheld entity: the comparison says something


def test_a_passage_naming_a_hidden_colleague_is_excused_and_its_own_text_is_not() -> None:
    factory = AgentFactory(lambda d: (lambda x: x), _kg())
    names = EntityNames(factory.kg)
    # Otto Hahn hidden: Lise Meitner's description (kept) still names him
    assert _excused(factory, GraphFilter(hidden=frozenset({"p2"})), names) == {"p2"}
    # ... and not once her description and the text unit naming him go too
    assert _excused(factory, GraphFilter(hidden=frozenset({"p2"}), text_blocked=frozenset({"p1", "i1"})), names) == set()
    # a masked entity's placeholder shows nothing of it; the passage t1 (attributed to p1, p2) goes with the mask
    assert _excused(factory, GraphFilter(masked=frozenset({"p1"})), names) == {"p1"}  # Otto Hahn's text names her
    # both masked: the institute's description and a relation's text still name him, nothing names her
    assert _excused(factory, GraphFilter(masked=frozenset({"p1", "p2"})), names) == {"p2"}
