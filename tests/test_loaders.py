"""Each KG loader on small files written here, including its error messages."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import networkx as nx
import pytest

from graphtrail.agents import KGError, KnowledgeGraph, MissingDependencyError, list_bundled, load_kg, save_kg
from graphtrail.kg.loaders import detect_format


def edges_of(kg: KnowledgeGraph) -> set[tuple[str, str, str]]:
    return {(r.source, r.relation, r.target) for r in kg.relations()}


# --------------------------------------------------------------------------- triples


def test_tsv_without_header_uses_text_as_ids_and_names(tmp_path: Path) -> None:
    path = tmp_path / "kb.tsv"
    path.write_text("Kenya\tcapital\tNairobi\nKenya\tborders\tUganda\n\n# a comment\nUganda\tcapital\tKampala\n")
    kg = load_kg(path)
    assert edges_of(kg) == {("Kenya", "capital", "Nairobi"), ("Kenya", "borders", "Uganda"), ("Uganda", "capital", "Kampala")}
    assert kg.entity("Nairobi").name == "Nairobi"
    assert kg.name == "kb"
    assert kg.communities, "Louvain communities are computed when the source has none"


def test_csv_with_header_and_description_column(tmp_path: Path) -> None:
    path = tmp_path / "facts.csv"
    path.write_text('subject,predicate,object,description\nKenya,capital,Nairobi,"Nairobi, the capital"\n')
    kg = load_kg(path)
    (rel,) = list(kg.relations())
    assert (rel.source, rel.relation, rel.target, rel.description) == ("Kenya", "capital", "Nairobi", "Nairobi, the capital")
    assert "subject" not in kg, "the header row is not a triple"


def test_metaqa_pipe_separated_kb(tmp_path: Path) -> None:
    path = tmp_path / "kb.txt"
    path.write_text("Kismet|directed_by|William Dieterle\nKismet|release_year|1944\n")
    kg = load_kg(path)
    assert ("Kismet", "directed_by", "William Dieterle") in edges_of(kg)
    assert detect_format(path) == "triples"


def test_sibling_entity_table_maps_ids_and_names(tmp_path: Path) -> None:
    (tmp_path / "kb.tsv").write_text("E1\tcapital\tNairobi\n")
    (tmp_path / "kb.entities.tsv").write_text(
        "id\tname\ttype\tdescription\taliases\nE1\tKenya\tcountry\tA country.\tKE;Republic of Kenya\nE2\tNairobi\tcity\t\t\n"
    )
    kg = load_kg(tmp_path / "kb.tsv")
    assert edges_of(kg) == {("E1", "capital", "E2")}, "a tail given by its unique name resolves to the table's id"
    kenya = kg.entity("E1")
    assert (kenya.name, kenya.type, kenya.description, kenya.aliases) == ("Kenya", "country", "A country.", ("KE", "Republic of Kenya"))


def test_entity_table_by_argument(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("a,r,b\n")
    table = tmp_path / "people.csv"
    table.write_text("id,name\na,Ada\nb,Bob\n")
    kg = load_kg(tmp_path / "t.csv", entities=table)
    assert kg.entity("a").name == "Ada" and kg.entity("b").name == "Bob"


def test_triples_wrong_column_count_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "triples.tsv"
    path.write_text("a\tr\tb\n\nc\tr\n")
    with pytest.raises(KGError, match=r"triples\.tsv line 3: expected 3 columns \(head, relation, tail\).*got 2"):
        load_kg(path)


def test_triples_empty_cell(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("head,relation,tail\nx,,y\n")
    with pytest.raises(KGError, match=r"t\.csv line 2: column 2 \(relation\) is empty"):
        load_kg(path)


def test_entity_table_errors(tmp_path: Path) -> None:
    (tmp_path / "kb.tsv").write_text("a\tr\tb\n")
    (tmp_path / "kb.entities.tsv").write_text("name\ttype\nA\tx\n")
    with pytest.raises(KGError, match=r"kb\.entities\.tsv line 1: expected a header row with an 'id' column"):
        load_kg(tmp_path / "kb.tsv")
    (tmp_path / "kb.entities.tsv").write_text("id\tname\na\tA\na\tA2\n")
    with pytest.raises(KGError, match=r"line 3: duplicate entity id 'a' \(first on line 2\)"):
        load_kg(tmp_path / "kb.tsv")


def test_empty_triples_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.tsv"
    path.write_text("# nothing here\n")
    with pytest.raises(KGError, match="no triples"):
        load_kg(path)


# --------------------------------------------------------------------------- node-link JSON


def test_node_link_from_networkx_with_links_key(tmp_path: Path) -> None:
    g = nx.MultiDiGraph()
    g.add_node("k", name="Kenya", type="country", aliases=["KE"])
    g.add_node("n", name="Nairobi", type="city")
    g.add_edge("k", "n", key="capital", relation="capital")
    path = tmp_path / "g.json"
    path.write_text(json.dumps(nx.node_link_data(g, edges="links")))
    kg = load_kg(path)
    assert edges_of(kg) == {("k", "capital", "n")}
    assert kg.entity("k").aliases == ("KE",)


def test_node_link_round_trip_keeps_text_units_and_communities(tmp_path: Path) -> None:
    kg = KnowledgeGraph(name="mini")
    kg.add_entity("a", "Alpha", "thing", "first", ["A"])
    kg.add_relation("a", "next", "b", "a then b")
    kg.add_text_unit("t1", "Alpha comes before b.", ["a", "b"])
    kg.add_community("c1", "Letters", ["a", "b"], "summary", 0)
    for name in ("out.json", "out.json.gz"):
        path = save_kg(kg, tmp_path / name)
        back = load_kg(path)
        assert edges_of(back) == {("a", "next", "b")}
        assert back.text_unit("t1").entity_ids == ("a", "b")
        assert back.community("c1").entity_ids == ("a", "b")
        assert back.entity("a") == kg.entity("a")
    assert gzip.decompress((tmp_path / "out.json.gz").read_bytes()).startswith(b"{")


def test_node_link_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "nodes": [\n    {"id": "a",}\n  ]\n}\n')
    with pytest.raises(KGError, match=r"bad\.json line 3 column \d+: invalid JSON"):
        load_kg(path)


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"edges": []}, r"expected a JSON object with a 'nodes' list"),
        ({"nodes": [{"name": "x"}], "edges": []}, r"nodes\[0\]: expected an object with an 'id'"),
        ({"nodes": [{"id": "a"}], "edges": [{"source": "a"}]}, r"edges\[0\]: expected an object with 'source' and 'target'"),
        ({"nodes": [{"id": "a"}], "links": [{"source": "a"}]}, r"links\[0\]: expected"),
        ({"nodes": [], "edges": [], "text_units": [{"id": "t"}]}, r"text_units\[0\]: expected an object with 'id' and 'text'"),
    ],
)
def test_node_link_structure_errors(tmp_path: Path, doc: dict, message: str) -> None:
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(KGError, match=message):
        load_kg(path)


# --------------------------------------------------------------------------- GraphML


def test_graphml_round_trip(tmp_path: Path) -> None:
    kg = KnowledgeGraph()
    kg.add_entity("a", "Alpha", "thing", "d", ["A", "Al"])
    kg.add_relation("a", "next", "b")
    kg.add_relation("a", "prev", "b")
    back = load_kg(save_kg(kg, tmp_path / "g.graphml"))
    assert edges_of(back) == {("a", "next", "b"), ("a", "prev", "b")}
    assert back.entity("a").aliases == ("A", "Al")


def test_graphml_with_label_attributes(tmp_path: Path) -> None:
    g = nx.DiGraph()
    g.add_node("1", label="Kenya")
    g.add_node("2", label="Nairobi")
    g.add_edge("1", "2", label="capital")
    path = tmp_path / "plain.xml"
    nx.write_graphml(g, path)
    kg = load_kg(path)
    assert kg.entity("1").name == "Kenya"
    assert edges_of(kg) == {("1", "capital", "2")}


def test_graphml_malformed_xml_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.graphml"
    path.write_text('<?xml version="1.0"?>\n<graphml>\n  <graph>\n    <node id="a">\n</graphml>\n')
    with pytest.raises(KGError, match=r"broken\.graphml line \d+ column \d+: invalid GraphML"):
        load_kg(path)


# --------------------------------------------------------------------------- GraphRAG output


def write_graphrag(folder: Path, prefix: str = "", *, old: bool = False) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    folder.mkdir(parents=True, exist_ok=True)
    title = "name" if old else "title"
    pd.DataFrame(
        [
            {"id": "e1", "human_readable_id": 0, title: "KENYA", "type": "GEO", "description": "A country.", "text_unit_ids": ["u1"]},
            {"id": "e2", "human_readable_id": 1, title: "NAIROBI", "type": "GEO", "description": "A city.", "text_unit_ids": ["u1"]},
            {"id": "e3", "human_readable_id": 2, title: "UGANDA", "type": "GEO", "description": "", "text_unit_ids": ["u2"]},
        ]
    ).to_parquet(folder / f"{prefix}entities.parquet")
    pd.DataFrame(
        [
            {"id": "r1", "source": "NAIROBI", "target": "KENYA", "description": "Nairobi is the capital of Kenya", "weight": 2.0, "text_unit_ids": ["u1"]},
            {"id": "r2", "source": "KENYA", "target": "UGANDA", "description": "Kenya borders Uganda", "weight": 1.0, "text_unit_ids": ["u2"]},
        ]
    ).to_parquet(folder / f"{prefix}relationships.parquet")
    units = [{"id": "u1", "text": "Nairobi is Kenya's capital."}, {"id": "u2", "text": "Kenya borders Uganda."}]
    if not old:
        units[0]["entity_ids"] = ["e1", "e2"]
        units[1]["entity_ids"] = ["e1", "e3"]
    pd.DataFrame(units).to_parquet(folder / f"{prefix}text_units.parquet")
    community = {"id": "c-uuid", "community": 0, "level": 0, "title": "Community 0", "relationship_ids": ["r1", "r2"]}
    if not old:
        community["entity_ids"] = ["e1", "e2", "e3"]
    pd.DataFrame([community]).to_parquet(folder / f"{prefix}communities.parquet")
    pd.DataFrame([{"community": 0, "title": "East Africa", "summary": "Kenya and neighbours."}]).to_parquet(
        folder / f"{prefix}community_reports.parquet"
    )


def test_graphrag_output_folder(tmp_path: Path) -> None:
    write_graphrag(tmp_path / "output")
    kg = load_kg(tmp_path / "output")
    assert kg.entity("e1").name == "KENYA" and kg.entity("e1").type == "GEO"
    assert edges_of(kg) == {("e2", "related to", "e1"), ("e1", "related to", "e3")}
    assert {r.description for r in kg.relations()} == {"Nairobi is the capital of Kenya", "Kenya borders Uganda"}
    assert kg.text_unit("u2").entity_ids == ("e1", "e3")
    com = kg.community("0")
    assert (com.title, com.summary, set(com.entity_ids)) == ("East Africa", "Kenya and neighbours.", {"e1", "e2", "e3"})


def test_graphrag_older_create_final_names(tmp_path: Path) -> None:
    write_graphrag(tmp_path / "run" / "output", prefix="create_final_", old=True)
    kg = load_kg(tmp_path / "run")  # the project folder: output/ is looked into
    assert kg.entity("e2").name == "NAIROBI"
    assert set(kg.text_unit("u1").entity_ids) == {"e1", "e2"}, "linked through entities.text_unit_ids"
    assert set(kg.community("0").entity_ids) == {"e1", "e2", "e3"}, "members from the community's relationships"


def test_graphrag_relationship_to_unknown_title(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    write_graphrag(tmp_path)
    pd.DataFrame([{"id": "r9", "source": "KENYA", "target": "ATLANTIS"}]).to_parquet(tmp_path / "relationships.parquet")
    with pytest.raises(KGError, match=r"relationships\.parquet row 1, column 'target': 'ATLANTIS' is not an entity title"):
        load_kg(tmp_path)


def test_graphrag_missing_columns_and_tables(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    with pytest.raises(KGError, match="not a GraphRAG output folder: no entities or relationships"):
        load_kg(tmp_path)
    write_graphrag(tmp_path)
    pd.DataFrame([{"id": "e1", "label": "x"}]).to_parquet(tmp_path / "entities.parquet")
    with pytest.raises(KGError, match=r"entities\.parquet: expected a column 'title' or 'name'"):
        load_kg(tmp_path)
    (tmp_path / "entities.parquet").write_text("not parquet")
    with pytest.raises(KGError, match=r"entities\.parquet: not a readable parquet file"):
        load_kg(tmp_path)


def test_graphrag_without_pyarrow_says_which_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_graphrag(tmp_path)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes ``import pyarrow`` raise ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install 'graphtrail\[graphrag\]'"):
        load_kg(tmp_path)


# --------------------------------------------------------------------------- entry point


def test_bundled_names_resolve_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "countries").write_text("x\ty\n")  # a same-named file does not shadow the bundled set
    kg = load_kg("countries")
    assert kg.name == "countries" and len(kg) > 500
    assert {b.name for b in list_bundled()} >= {"countries", "countries-demo"}
    assert len(load_kg("countries-demo")) == len(kg)


def test_missing_path_lists_bundled_names(tmp_path: Path) -> None:
    with pytest.raises(KGError, match=r"knowledge graph not found: .*nope.tsv \(and not a bundled dataset: countries"):
        load_kg(tmp_path / "nope.tsv")


def test_format_sniffed_without_extension(tmp_path: Path) -> None:
    kg = KnowledgeGraph()
    kg.add_relation("a", "r", "b")
    save_kg(kg, tmp_path / "g.json")
    (tmp_path / "g.json").rename(tmp_path / "graphdata")
    assert detect_format(tmp_path / "graphdata") == "node-link"
    assert edges_of(load_kg(tmp_path / "graphdata")) == {("a", "r", "b")}
