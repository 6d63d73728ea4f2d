"""The generic extractor on output shapes that real tools produce (issue 9).

Each shape is what a tool written from the LangChain / Neo4j docs returns:
``return str(rows)``, ``Neo4jGraph.query`` rows, prose with ``(id: X)``, and
edges whose far end is named only by the edge.
"""

from __future__ import annotations

import json

from graphtrail.tracer.extract import extract_entities, generic_extract

ROWS = [
    {"id": "p1", "name": "Christopher Nolan", "type": "Person"},
    {"id": "m1", "name": "Inception", "type": "Movie", "released": None},
]


def ids(found):
    return [e.id for e in found.entities]


def test_python_repr_of_rows_is_read_like_json():
    found = generic_extract(str(ROWS))  # single quotes, None: not JSON
    assert ids(found) == ["p1", "m1"]
    assert found.entities[0].name == "Christopher Nolan" and found.entities[1].type == "Movie"
    assert ids(generic_extract(str(tuple(ROWS)))) == ["p1", "m1"]
    assert ids(generic_extract(str({"result": ROWS}))) == ["p1", "m1"]


def test_python_repr_is_never_evaluated():
    # an expression that would run code under eval() is not a literal: nothing, and no side effect
    assert ids(generic_extract("[__import__('os').system('echo pwned')]")) == []
    assert ids(generic_extract("[{'id': 'p1'}, open('/etc/passwd')]")) == []
    # too long to be worth parsing
    huge = str([{"id": f"x{i}", "pad": "y" * 50} for i in range(5000)])
    assert len(huge) > 200_000 and ids(generic_extract(huge)) == []


def test_cypher_rows_with_element_ids_and_names():
    # Neo4jGraph.query returns property dicts per returned alias; elementId when asked for it
    rows = [{"p": {"name": "Christopher Nolan", "born": 1970}, "m": {"title": "Inception", "released": 2010}}]
    found = generic_extract(rows)
    assert ids(found) == ["Christopher Nolan", "Inception"]
    assert found.entities[1].name == "Inception"
    assert ids(generic_extract([{"p.name": "Tom Hanks", "m.title": "Cast Away", "year": 2000}])) == ["Tom Hanks", "Cast Away"]
    found = generic_extract(json.dumps([{"elementId": "4:ab:7", "name": "Nolan"}, {"element_id": "4:ab:8", "name": "Inception"}]))
    assert ids(found) == ["4:ab:7", "4:ab:8"] and found.entities[0].name == "Nolan"
    # an id key wins over a name: rows with ids never fall back to names
    assert ids(generic_extract([{"id": "p1", "name": "Christopher Nolan"}, {"name": "no id here"}])) == ["p1"]


def test_name_id_text():
    text = "Christopher Nolan (id: p1) is a Person. He directed Inception (id: m1) and The Lord of the Rings (ID=m3)."
    found = generic_extract(text)
    assert ids(found) == ["p1", "m1", "m3"]
    assert [e.name for e in found.entities] == ["Christopher Nolan", "Inception", "The Lord of the Rings"]
    found = generic_extract([{"type": "text", "text": "- inception (id: m1)\n- Memento (node_id: m2)"}])
    assert ids(found) == ["m1", "m2"] and found.entities[0].name == "inception"
    for junk in ("Nothing here (really).", "(id: )", "a (b) c"):
        assert ids(generic_extract(junk)) == []


def test_edge_endpoints_and_nested_results_are_revealed():
    # get_neighbors returns only edges: both ends were named by the call
    output = json.dumps({"center": "p3", "edges": [{"source": "p3", "relation": "KNOWS", "target": "p1"},
                                                   {"source": "p3", "relation": "KNOWS", "target": "p2"}]})
    found = extract_entities("get_neighbors", output, {}, None, None)
    assert ids(found) == ["p3", "p1", "p2"]
    nested = {"data": {"results": [{"rows": [{"node": {"id": "deep", "name": "Deep"}}]}]}}
    assert ids(extract_entities("q", nested, {}, None, None)) == ["deep"]
    # the artifact route too
    artifact = {"entities": [{"id": "A1", "name": "A"}], "edges": [{"source": "A1", "relation": "r", "target": "A9"}]}
    found = extract_entities("t", "", {}, artifact, None)
    assert ids(found) == ["A1", "A9"] and found.entities[1].name is None


def test_aliases_are_kept_for_citations():
    found = generic_extract([{"id": "p1", "name": "Christopher Nolan", "aliases": ["Chris Nolan", "C. Nolan"]}])
    assert found.entities[0].aliases == ("Chris Nolan", "C. Nolan")
    assert found.entities[0].to_model().model_dump() == {"id": "p1", "name": "Christopher Nolan", "type": None}


def test_the_ablation_filter_reads_the_same_shapes():
    """What the extractor calls an entity, the generic tool filter must be able to hide."""
    from graphtrail.agents import GraphFilter
    from graphtrail.evaluators.replay.filtered.filters import generic_filter

    hide = GraphFilter(hidden=frozenset({"p1", "Christopher Nolan", "4:ab:7"}))
    filtered = generic_filter(str(ROWS), hide)
    assert ids(generic_extract(filtered)) == ["m1"] and filtered.startswith("[{'id': 'm1'")
    rows = [{"p": {"name": "Christopher Nolan"}, "m": {"title": "Inception"}}, {"p": {"name": "Tom Hanks"}, "m": {"title": "Big"}}]
    assert ids(generic_extract(generic_filter(rows, hide))) == ["Tom Hanks", "Big"]
    columns = [{"p.name": "Christopher Nolan", "m.title": "Inception"}, {"p.name": "Tom Hanks", "m.title": "Big"}]
    assert ids(generic_extract(generic_filter(columns, hide))) == ["Tom Hanks", "Big"]
    element = json.dumps([{"elementId": "4:ab:7", "name": "Nolan"}, {"elementId": "4:ab:8", "name": "Inception"}])
    assert ids(generic_extract(generic_filter(element, hide))) == ["4:ab:8"]
    # nothing hidden that the output names: unchanged
    assert generic_filter(str(ROWS), GraphFilter(hidden=frozenset({"zz"}))) == str(ROWS)
