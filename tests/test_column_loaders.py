"""The column readers (node-link JSON, GraphRAG parquet) and the index postings give exactly what the per-row code gives.

Each reader is compared with the per-row path it replaces on small inputs full
of the unusual-but-valid shapes (integer ids, missing names, relations from
``label`` or an edge key, null descriptions, repeated triples), and a wrong
row is still reported by the row readers' message, first row first.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from graphtrail.kg import KnowledgeGraph, load_kg
from graphtrail.kg.errors import KGError
from graphtrail.kg.loaders import graphrag as graphrag_mod
from graphtrail.kg.loaders import nodelink
from graphtrail.kg.postings import ExactPostings, gram_postings


def _snapshot(kg: KnowledgeGraph) -> tuple:
    return (
        list(kg.entities()),
        list(kg.relations()),
        sorted((u.id, u.text, u.entity_ids) for u in kg.text_units.values()),
        sorted((c.id, c.title, tuple(sorted(c.entity_ids)), c.summary, c.level) for c in kg.communities.values()),
    )


# --------------------------------------------------------------------------- node-link

DOC = {
    "nodes": [
        {"id": "a", "name": "Alpha", "type": "letter", "aliases": ["A", "Alf"]},
        {"id": 7, "title": "Seven", "description": None},  # an integer id, the name from 'title'
        {"id": "b", "label": "Beta", "aliases": "B; Bee"},  # aliases as one ';'-separated string
        {"id": "c", "name": "", "entity_type": "kind", "description": "see"},  # empty name: the id stands in
        {"id": "d", "name": 12},  # a number where text belongs is its text
    ],
    "edges": [
        {"source": "a", "target": 7, "relation": "r1", "description": "first"},
        {"source": "b", "target": "a", "label": "from label"},
        {"source": "x", "target": "b", "key": "knows"},  # a new node, the relation from the key
        {"source": "a", "target": 7, "relation": "r1", "description": "second"},  # a repeat: last description
        {"source": "c", "target": "d", "relation": 5, "description": None},
        {"source": "d", "target": "y"},
    ],
    "text_units": [{"id": "t1", "text": "Alpha and Seven", "entity_ids": ["a", "7"]}],
    "communities": [{"id": "k", "entity_ids": ["a", "b"], "level": 1}],
}


def _per_row(doc: dict, filename: str = "g.json") -> KnowledgeGraph:
    """The reference: every node and edge through the row readers and add_entity / add_relation."""
    kg = KnowledgeGraph(name="g")
    for i, node in enumerate(doc["nodes"]):
        kg.add_entity(*nodelink._node_row(node, i, filename))
    for i, edge in enumerate(doc["edges"]):
        kg.add_relation(*nodelink._edge_row(edge, f"edges[{i}]", filename))
    reference = nodelink.kg_from_document({**doc, "nodes": [], "edges": []}, filename)  # text units and communities
    for unit in reference.text_units.values():
        kg.add_text_unit(unit.id, unit.text, unit.entity_ids)
    for com in reference.communities.values():
        kg.add_community(com.id, com.title, com.entity_ids, com.summary, com.level)
    return kg


def test_node_link_columns_equal_the_per_row_path(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text(json.dumps(DOC), encoding="utf-8")
    loaded = load_kg(path, cache_communities=False, communities=False)
    assert _snapshot(loaded) == _snapshot(_per_row(DOC))
    assert loaded.entity("7").name == "Seven" and loaded.entity("b").aliases == ("B", "Bee")
    edges = {(r.source, r.relation, r.target, r.description) for r in loaded.relations()}
    assert {("a", "r1", "7", "second"), ("b", "from label", "a", ""), ("x", "knows", "b", ""), ("c", "5", "d", "")} <= edges


def test_node_link_many_plain_rows_equal_the_per_row_path(tmp_path: Path) -> None:
    rng = random.Random(3)
    doc = {
        "nodes": [{"id": f"n{i}", "name": f"Node {i % 50}", "type": "t"} for i in range(300)],
        "edges": [{"source": f"n{rng.randrange(320)}", "target": f"n{rng.randrange(320)}", "relation": f"r{rng.randrange(4)}",
                   "description": rng.choice(["", "d1", "d2", None])} for _ in range(3000)],
    }
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert _snapshot(load_kg(path, cache_communities=False, communities=False)) == _snapshot(_per_row(doc))


def test_node_link_reports_the_first_bad_row(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(DOC))
    doc["nodes"][3]["name"] = {"x": 1}
    doc["nodes"][1]["aliases"] = 5  # an earlier row, another column: reported first
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(KGError, match=r"^g\.json: nodes\[1\]\.aliases: expected a list of strings, got int$"):
        load_kg(path)
    doc = json.loads(json.dumps(DOC))
    doc["edges"][4]["description"] = [1]
    doc["edges"][2]["relation"] = {"r": 1}
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(KGError, match=r"^g\.json: edges\[2\]\.relation: expected a string or a number, got an object$"):
        load_kg(path)


def test_node_link_long_integers_and_utf8_bom_read_as_json_reads_them(tmp_path: Path) -> None:
    """orjson reads integers past 64 bits as floats and refuses a BOM: those documents are read again by json."""
    path = tmp_path / "g.json"
    big = 123456789012345678901234567890
    path.write_bytes(b'{"nodes": [{"id": ' + str(big).encode() + b'}, {"id": 1.5}], "edges": []}')
    assert [e.id for e in load_kg(path, communities=False).entities()] == [str(big), "1.5"]
    path.write_bytes("\ufeff".encode() + json.dumps(DOC).encode())
    assert _snapshot(load_kg(path, communities=False)) == _snapshot(_per_row(DOC))


# --------------------------------------------------------------------------- GraphRAG parquet


@pytest.fixture(scope="module")
def graphrag_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    folder = tmp_path_factory.mktemp("graphrag")
    n = 400
    rng = random.Random(5)
    pd.DataFrame({
        "id": [f"e{i}" for i in range(n)],
        "title": [f"TITLE {i % 390}" for i in range(n)],  # some titles repeat: the first entity wins
        "type": [None if i % 7 == 0 else ("" if i % 11 == 0 else "ORG") for i in range(n)],
        "description": [None if i % 5 == 0 else f"about {i}" for i in range(n)],
        "text_unit_ids": [[f"u{i % 9}", ""] if i % 3 else None for i in range(n)],
    }).to_parquet(folder / "entities.parquet")
    ends = [(f"TITLE {rng.randrange(390)}", f"TITLE {rng.randrange(390)}" if k % 10 else f"e{rng.randrange(n)}") for k in range(2000)]
    ends += ends[:50]  # repeated relationships: kept once, with the last description
    pd.DataFrame({
        "id": [f"r{k}" for k in range(len(ends))],
        "source": [s for s, _ in ends],
        "target": [t for _, t in ends],
        "description": [None if k % 4 == 0 else f"rel {k}" for k in range(len(ends))],
    }).to_parquet(folder / "relationships.parquet")
    pd.DataFrame({"id": [f"u{j}" for j in range(9)], "text": [f"unit {j}" for j in range(9)]}).to_parquet(folder / "text_units.parquet")
    pd.DataFrame({"community": [0, 1], "level": [0, 1], "relationship_ids": [["r1", "r2"], ["r3"]]}).to_parquet(folder / "communities.parquet")
    return folder


def test_graphrag_columns_equal_the_strict_reader(graphrag_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real = graphrag_mod.read_entities_and_relationships
    monkeypatch.setattr(graphrag_mod, "read_entities_and_relationships", lambda kg, files: calls.append(r := real(kg, files)) or r)
    fast = _snapshot(load_kg(graphrag_folder, communities=False))
    assert calls and calls[0] is not None, "the column reader answered"
    monkeypatch.setattr(graphrag_mod, "read_entities_and_relationships", lambda kg, files: None)
    strict = _snapshot(load_kg(graphrag_folder, communities=False))
    assert fast == strict
    assert len(fast[1]) > 1500 and fast[2] and fast[3]


def test_graphrag_columns_decline_what_the_strict_reader_must_name(graphrag_folder: Path, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    folder = tmp_path / "bad"
    folder.mkdir()
    for name in ("entities", "text_units", "communities"):
        (folder / f"{name}.parquet").write_bytes((graphrag_folder / f"{name}.parquet").read_bytes())
    rel = pd.read_parquet(graphrag_folder / "relationships.parquet")
    rel.loc[1500, "target"] = "NOWHERE"
    rel.to_parquet(folder / "relationships.parquet")
    with pytest.raises(KGError, match=r"relationships\.parquet row 1501, column 'target': 'NOWHERE' is not an entity title"):
        load_kg(folder)
    rel.loc[1500, "target"] = None
    rel.to_parquet(folder / "relationships.parquet")
    with pytest.raises(KGError, match=r"relationships\.parquet row 1501, column 'target'"):
        load_kg(folder)


# --------------------------------------------------------------------------- search index postings


def _reference_grams(labels: list[str]) -> tuple:
    grams: dict[int, set[int]] = {}
    for j, label in enumerate(labels):
        text = " " + label + " "
        for a, b in zip(text, text[1:]):
            grams.setdefault((ord(a) << 21) | ord(b), set()).add(j)
    keys = sorted(grams)
    post = [j for k in keys for j in sorted(grams[k])]
    ptr = np.cumsum([0] + [len(grams[k]) for k in keys])
    count = np.bincount(np.asarray(post, dtype=np.int64), minlength=len(labels)).astype(np.float64)
    return count, np.asarray(keys, dtype=np.int64), ptr, np.asarray(post, dtype=np.int64)


@pytest.mark.parametrize("labels", [
    [],
    ["kenya", "kenya", "nairobi", "", "ab", "a a a a", "\u00e9cole", "\u6771\u4eac", "lone \ud800 surrogate"],
    [f"entity {i} of kind {i % 7}" for i in range(2000)],
])
def test_gram_postings_equal_the_sorting_build(labels: list[str]) -> None:
    for got, want in zip(gram_postings(labels), _reference_grams(labels)):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("labels", [["a", "b", "c"], ["kenya", "uganda", "kenya", "kenya", "x"], ["dup \ud800", "dup \ud800", "y"], []])
def test_exact_postings_equal_a_dict_of_lists(labels: list[str]) -> None:
    postings = ExactPostings(labels)
    reference: dict[str, list[int]] = {}
    for j, label in enumerate(labels):
        reference.setdefault(label, []).append(j)
    for label in {*labels, "absent"}:
        assert list(postings.get(label, ())) == reference.get(label, [])


# --------------------------------------------------------------------------- GraphML

GRAPHML_BY_HAND = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <desc>hand-written</desc>
  <key id="n" for="node" attr.name="name" attr.type="string"><default>unnamed</default></key>
  <key id="t" for="node" attr.name="type" attr.type="int"/>
  <key id="al" for="node" attr.name="aliases"/>
  <key id="r" for="edge" attr.name="label" attr.type="string"/>
  <key id="w" for="edge" attr.name="weight" attr.type="double"/>
  <key id="b" for="all" attr.name="flag" attr.type="boolean"/>
  <key id="d" for="edge" attr.name="description" attr.type="string"/>
  <graph id="G" edgedefault="directed">
    <data key="n">the graph's own name</data>
    <node id="b"><data key="n">Bee &amp; co</data><data key="t">3</data><data key="b">TRUE</data></node>
    <node id="a"><desc>first letter</desc><data key="n"><![CDATA[Al<pha>]]></data><data key="al">A; Alf</data></node>
    <edge source="a" target="z" id="knows"/>
    <edge source="a" target="b"><data key="r">likes</data><data key="w">0.5</data></edge>
    <!-- a comment between edges -->
    <edge source="b" target="a" id="e7"><data key="d">back</data></edge>
    <edge source="a" target="z" id="12"><data key="r"></data></edge>
    <node id="c"/>
    <edge source="y" target="a"><data key="r">from y</data></edge>
    <edge source="a" target="b" id="x2"><data key="r">likes</data><data key="d">again</data></edge>
    <edge source="c" target="c"/>
  </graph>
</graphml>
"""


def _graphml_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple, tuple]:
    from graphtrail.kg.loaders import graphml as graphml_mod
    from graphtrail.kg.loaders.graphml_stream import read_graphml_columns

    read_graphml_columns(path.read_bytes())  # the stream reader takes this file (raises Unusual otherwise)
    streamed = _snapshot(load_kg(path, communities=False))

    def refuse(raw: bytes) -> None:
        raise graphml_mod.Unusual("the networkx path, for reference")

    monkeypatch.setattr(graphml_mod, "read_graphml_columns", refuse)
    return streamed, _snapshot(load_kg(path, communities=False))


def test_graphml_stream_equals_networkx_on_a_hand_written_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "g.graphml"
    path.write_text(GRAPHML_BY_HAND, encoding="utf-8")
    streamed, reference = _graphml_both_ways(path, monkeypatch)
    assert streamed == reference
    entities = {e.id: e for e in streamed[0]}
    assert entities["b"].name == "Bee & co" and entities["b"].type == "3" and entities["a"].name == "Al<pha>"
    assert [e.id for e in streamed[0]] == ["b", "a", "c", "z", "y"], "declared nodes first, then edge ends"


def _random_graph(rng: random.Random, n_entities: int, n_relations: int, name: str, about: str) -> KnowledgeGraph:
    """A graph drawn from ``rng``, with aliases, empty and set descriptions, and relations to ids no entity declares."""
    kg = KnowledgeGraph(name="g")
    for i in range(n_entities):
        kg.add_entity(f"n{i}", name.format(i=i), rng.choice(["a", "b"]), rng.choice(["", about]), [f"N{i}"] if i % 4 == 0 else [])
    spread = n_entities + 20
    for _ in range(n_relations):
        kg.add_relation(f"n{rng.randrange(spread)}", f"r{rng.randrange(3)}", f"n{rng.randrange(spread)}", rng.choice(["", "d"]))
    return kg


def test_graphml_stream_equals_networkx_on_a_saved_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphtrail.kg import save_kg

    kg = _random_graph(random.Random(11), 200, 1500, "Node {i}", "about")
    path = save_kg(kg, tmp_path / "g.graphml")
    streamed, reference = _graphml_both_ways(path, monkeypatch)
    assert streamed == reference and len(streamed[1]) == kg.number_of_relations()


@pytest.mark.parametrize("change", [
    ('edgedefault="directed"', 'edgedefault="undirected"'),  # networkx reorients undirected edges
    ('<graphml xmlns', '<!DOCTYPE graphml>\n<graphml xmlns'),
    ('<node id="c"/>', '<node id="c"><port name="p"/></node>'),
    ('<node id="c"/>', '<node id="a"/>'),  # a repeated node: networkx merges its attributes
    ('id="x2"', 'id="12"'),  # the same key twice between the same nodes: networkx merges the edges
    ('<data key="t">3</data>', '<data key="t">three</data>'),  # networkx's error names the value
    ('<data key="r">likes</data><data key="w">', '<data key="q">likes</data><data key="w">'),  # an undeclared key
])
def test_graphml_stream_leaves_the_unusual_to_networkx(change: tuple[str, str]) -> None:
    from graphtrail.kg.loaders.graphml_stream import Unusual, read_graphml_columns

    with pytest.raises(Unusual):
        read_graphml_columns(GRAPHML_BY_HAND.replace(*change, 1).encode())


def test_node_link_and_graphml_load_the_same_without_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pyarrow is optional (graphtrail[graphrag]): without it the loaders add relations one by one, to the same graph."""
    import sys

    (tmp_path / "g.json").write_text(json.dumps(DOC), encoding="utf-8")
    (tmp_path / "g.graphml").write_text(GRAPHML_BY_HAND, encoding="utf-8")
    with_pyarrow = [_snapshot(load_kg(tmp_path / name, communities=False)) for name in ("g.json", "g.graphml")]
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes ``import pyarrow`` raise ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.compute", None)
    without = [_snapshot(load_kg(tmp_path / name, communities=False)) for name in ("g.json", "g.graphml")]
    assert without == with_pyarrow
    assert load_kg(tmp_path / "g.json", communities=False).search_entities("Alpha")[0][0].id == "a"


# --------------------------------------------------------------------------- GraphML, the plain pattern

PLAIN_GRAPHML = """<?xml version="1.0" encoding="utf-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <key id="d0" for="node" attr.name="name" attr.type="string"/>
  <key id="d1" for="node" attr.name="type" attr.type="int"/>
  <key id="d2" for="node" attr.name="aliases" attr.type="string"/>
  <key id="d3" for="edge" attr.name="relation" attr.type="string"/>
  <key id="d4" for="edge" attr.name="description" attr.type="string"/>
  <key id="d5" for="all" attr.name="flag" attr.type="boolean"/>
  <key id="d6" for="edge" attr.name="label" attr.type="string"/>
  <graph edgedefault="directed" id="G">
    <node id="b"><data key="d0">Bee &amp; co &#233;&#x4e2d;</data><data key="d1">3</data><data key="d5">TRUE</data></node>
    <node id="a&lt;1&gt;">
      <data key="d0">Al "pha" 'x' &gt; y</data>
      <data key="d2">A; Alf</data>
    </node>
    <node id="c"/>
    <node id="e" ><data key="d0"></data><data key="d1"/></node>
    <edge source="a&lt;1&gt;" target="z"/>
    <edge source="a&lt;1&gt;" target="b"><data key="d3">likes</data><data key="d4">first
line</data></edge>
    <edge source="b" target="a&lt;1&gt;"><data key="d4">back</data><data key="d6">labelled</data></edge>
    <edge
        source="a&lt;1&gt;"   target="b"  ><data key="d3">likes</data><data key="d4">again</data></edge>
    <edge source="y" target="a&lt;1&gt;"><data key="d3">from y</data></edge>
    <edge source="c" target="c" />
    <edge source="b" target="y"><data key="d3"></data><data key="d5">false</data></edge>
  </graph>
</graphml>
"""


def _graphml_three_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple, tuple, tuple]:
    """The graph as the plain pattern, the expat stream and networkx read it (each later reader forced by refusing the earlier)."""
    from graphtrail.kg.loaders import graphml as graphml_mod

    def refuse(raw: bytes) -> None:
        raise graphml_mod.Unusual("the next reader, for reference")

    plain = _snapshot(load_kg(path, communities=False))
    monkeypatch.setattr(graphml_mod, "read_graphml_plain", refuse)
    streamed = _snapshot(load_kg(path, communities=False))
    monkeypatch.setattr(graphml_mod, "read_graphml_columns", refuse)
    return plain, streamed, _snapshot(load_kg(path, communities=False))


def test_graphml_plain_pattern_equals_networkx_on_escapes_and_layouts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphtrail.kg.loaders.graphml_plain import read_graphml_plain

    path = tmp_path / "g.graphml"
    path.write_text(PLAIN_GRAPHML, encoding="utf-8")
    taken = read_graphml_plain(path.read_bytes())  # the pattern takes this file (raises Unusual otherwise)
    assert taken.node_ids == ["b", "a<1>", "c", "e"] and taken.nodes["type"] == [3, None, None, None]
    plain, streamed, reference = _graphml_three_ways(path, monkeypatch)
    assert plain == reference and streamed == reference
    entities = {e.id: e for e in plain[0]}
    assert entities["b"].name == "Bee & co \u00e9\u4e2d" and entities["a<1>"].name == "Al \"pha\" 'x' > y"
    assert entities["e"].name == "e" and entities["a<1>"].aliases == ("A", "Alf")
    assert [e.id for e in plain[0]] == ["b", "a<1>", "c", "e", "z", "y"], "declared nodes first, then edge ends"
    assert ("a<1>", "likes", "b") in [(r.source, r.relation, r.target) for r in plain[1]]


@pytest.mark.parametrize("change", [
    ("<node id=\"c\"/>", "<!-- a comment --><node id=\"c\"/>"),
    ("<data key=\"d0\">Bee", "<data key=\"d0\"><![CDATA[<Bee>]]>Bee"),
    ("<edge source=\"c\" target=\"c\" />", "<edge source='c' target='c' />"),  # single quotes
    ("<edge source=\"c\" target=\"c\" />", "<edge target=\"c\" source=\"c\" />"),  # attributes in another order
    ("<edge source=\"c\" target=\"c\" />", "<edge source=\"c\" target=\"c\" id=\"7\" id=\"8\"/>"),  # not XML
    ("<edge source=\"c\" target=\"c\" />", "<edge source=\"c\" target=\"c\"/><node id=\"late\"/>"),  # a node after edges
    ("<data key=\"d3\">from y</data>", "<data key=\"d4\">x</data><data key=\"d3\">from y</data>"),  # data out of order
    ("<data key=\"d3\">from y</data>", "<data key=\"d3\">from y</data><data key=\"d3\">twice</data>"),
    ("<data key=\"d3\">from y</data>", "<data key=\"d3\">from\r\ny</data>"),  # XML turns CR LF into LF
    ("<data key=\"d3\">from y</data>", "<data key=\"d3\">from &eacute;</data>"),  # not one of XML's entities
    ("<data key=\"d3\">from y</data>", "<data key=\"d3\">from &#0;</data>"),  # a character XML does not allow
    ("<data key=\"d3\">from y</data>", "<data key=\"d3\">from ]]> y</data>"),
    ("<data key=\"d3\">from y</data>", "<data key=\"d3\">from \x01 y</data>"),
    ("<data key=\"d3\">from y</data>", "<data key=\"d3\">from & y</data>"),
    ("<data key=\"d3\">from y</data>", "<data key=\"d9\">from y</data>"),  # an undeclared key
    ("<data key=\"d3\">from y</data>", "<data key=\"d0\">from y</data>"),  # a node key on an edge
    ("<node id=\"c\"/>", "<node id=\"c\"><port name=\"p\"/></node>"),
    ("<node id=\"c\"/>", "<node id=\"b\"/>"),  # a repeated node
    ("<data key=\"d1\">3</data>", "<data key=\"d1\">three</data>"),  # networkx's error names the value
    ("<graph edgedefault=\"directed\" id=\"G\">", "<graph edgedefault=\"undirected\" id=\"G\">"),
    ("<graphml xmlns", "<!DOCTYPE graphml>\n<graphml xmlns"),
    ('encoding="utf-8"', 'encoding="iso-8859-1"'),
    ("</graph>\n</graphml>", "</graph>\n</graphml>\n<!-- after -->"),
])
def test_graphml_plain_pattern_hands_the_unusual_on(change: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the pattern does not take exactly goes to the next reader, and the graph (or the error) is networkx's."""
    from graphtrail.kg.loaders.graphml_plain import Unusual, read_graphml_plain

    text = PLAIN_GRAPHML.replace(*change, 1)
    assert text != PLAIN_GRAPHML
    path = tmp_path / "g.graphml"
    path.write_bytes(text.encode("iso-8859-1" if "iso-8859-1" in text else "utf-8"))
    with pytest.raises(Unusual):
        read_graphml_plain(path.read_bytes())
    from graphtrail.kg.loaders import graphml as graphml_mod

    def refuse(raw: bytes) -> None:
        raise graphml_mod.Unusual("networkx, for reference")

    try:
        loaded = _snapshot(load_kg(path, communities=False))
    except KGError as exc:
        loaded = ("error", str(exc))
    monkeypatch.setattr(graphml_mod, "read_graphml_plain", refuse)
    monkeypatch.setattr(graphml_mod, "read_graphml_columns", refuse)
    try:
        reference = _snapshot(load_kg(path, communities=False))
    except KGError as exc:
        reference = ("error", str(exc))
    assert loaded == reference


def test_graphml_plain_pattern_equals_networkx_on_saved_graphs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """networkx's own layout (indented, edge ids as keys, repeated pairs) and the benchmark's one-line layout."""
    from graphtrail.kg import save_kg
    from graphtrail.kg.loaders.graphml_plain import read_graphml_plain

    rng = random.Random(5)
    kg = _random_graph(rng, 150, 1200, "Node {i} & <{i}>", "about é")
    path = save_kg(kg, tmp_path / "g.graphml")
    read_graphml_plain(path.read_bytes())
    plain, streamed, reference = _graphml_three_ways(path, monkeypatch)
    assert plain == reference and streamed == reference and len(plain[1]) == kg.number_of_relations()
    one_line = tmp_path / "one.graphml"
    one_line.write_text(
        '<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
        '<key id="r" for="edge" attr.name="relation"/><graph edgedefault="directed">'
        + "".join(f'<edge source="Q{rng.randrange(30)}" target="Q{rng.randrange(30)}"><data key="r">rel {rng.randrange(4)}</data></edge>' for _ in range(300))
        + "</graph></graphml>", encoding="utf-8")
    read_graphml_plain(one_line.read_bytes())
    plain, streamed, reference = _graphml_three_ways(one_line, monkeypatch)
    assert plain == reference and streamed == reference and len(plain[0]) == 30
