"""What the in-memory graph derives lazily (communities, networkx view, search index) and how filtered views read."""

from __future__ import annotations

import json
import random
from pathlib import Path

import networkx as nx
import pytest

import graphtrail.kg.communities as communities_mod
from graphtrail.agents import Community, GraphFilter, KnowledgeGraph, load_kg
from graphtrail.kg.communities import cache_path
from graphtrail.cli.main import main as cli_main


def _karate(tmp_path: Path) -> Path:
    path = tmp_path / "karate.tsv"
    path.write_text("".join(f"p{u}\tknows\tp{v}\n" for u, v in nx.karate_club_graph().edges()))
    return path


def _count_louvain(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = communities_mod.leiden_communities

    def counting(kg: KnowledgeGraph, **kw: object) -> list[Community]:
        calls.append(1)
        return real(kg, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(communities_mod, "leiden_communities", counting)
    return calls


def test_communities_are_computed_on_first_read_once_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_louvain(monkeypatch)
    path = _karate(tmp_path)
    kg = load_kg(path)
    assert not kg.communities_ready and calls == []
    assert kg.describe()["communities"] == "not computed (--communities computes them)" and calls == []
    first = dict(kg.communities)
    assert len(first) > 1 and calls == [1]
    kg.communities_of("p0")
    assert calls == [1] and cache_path(path).is_file()

    again = load_kg(path)
    assert again.communities == first and calls == [1], "read back from the cache, not recomputed"


def test_a_stale_cache_is_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_louvain(monkeypatch)
    path = _karate(tmp_path)
    old = dict(load_kg(path).communities)
    path.write_text(path.read_text() + "p0\tknows\tnewcomer\n")
    kg = load_kg(path)
    members = {e for c in kg.communities.values() for e in c.entity_ids}
    assert calls == [1, 1] and "newcomer" in members
    assert kg.communities != old
    assert load_kg(path, seed=5).communities and calls == [1, 1, 1], "another seed is another key"


def test_a_file_graphtrail_did_not_write_is_not_overwritten(tmp_path: Path) -> None:
    path = _karate(tmp_path)
    cache_path(path).write_text("my notes")
    with pytest.warns(UserWarning, match="not a graphtrail communities cache"):
        assert load_kg(path).communities
    assert cache_path(path).read_text() == "my notes"


def test_a_damaged_cache_is_recomputed(tmp_path: Path) -> None:
    path = _karate(tmp_path)
    expected = dict(load_kg(path).communities)
    doc = json.loads(cache_path(path).read_text())
    doc["communities"] = [["C0", "x"]]
    cache_path(path).write_text(json.dumps(doc))
    assert load_kg(path).communities == expected


def test_kg_info_counts_communities_only_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _karate(tmp_path)
    assert cli_main(["kg", "info", str(path), "--samples", "0"]) == 0
    assert "not computed" in capsys.readouterr().out and not cache_path(path).exists()
    assert cli_main(["kg", "info", str(path), "--samples", "0", "--communities"]) == 0
    assert "not computed" not in capsys.readouterr().out and cache_path(path).exists()


def test_networkx_view_is_built_on_demand_and_matches() -> None:
    kg = load_kg("countries")
    g = kg.graph
    assert g is kg.graph, "built once"
    assert g.number_of_nodes() == len(kg) and g.number_of_edges() == len(list(kg.relations()))
    assert {(r.source, r.relation, r.target) for r in kg.relations()} == {(s, k, t) for s, t, k in g.edges(keys=True)}
    assert g.nodes["E0758"]["name"] == "Kenya"
    view = kg.filtered(GraphFilter(hidden=frozenset({"E0758"})))
    assert "E0758" not in view.graph and view.graph.number_of_nodes() == len(kg) - 1
    kg.add_entity("new", "New")
    assert "new" in kg.graph, "rebuilt after a change"


def _old_community(kg: KnowledgeGraph, f: GraphFilter, cid: str) -> Community:
    com = kg.communities[cid]
    if not (f.hidden | f.masked | f.text_blocked) & set(com.entity_ids):
        return com
    return Community(com.id, f"Community {com.id}", tuple(e for e in com.entity_ids if e not in f.hidden), "", com.level)


def test_filtered_community_reads_match_their_definition() -> None:
    kg = load_kg("countries")
    ids = list(kg.entity_ids())
    rng = random.Random(3)
    keep = set(rng.sample(ids, 5))
    filters = [
        GraphFilter(hidden=frozenset(e for e in ids if e not in keep)),  # full isolation
        GraphFilter(hidden=frozenset(rng.sample(ids, 40)), masked=frozenset(rng.sample(ids, 10))),
        GraphFilter(text_blocked=frozenset(rng.sample(ids, 20))),
    ]
    for f in filters:
        view = kg.filtered(f)
        for cid in kg.communities:
            assert view.community(cid) == _old_community(kg, f, cid)
        for e in rng.sample(ids, 60) + sorted(keep):
            expected = [] if e in f.hidden else [
                _old_community(kg, f, c) for c in kg.communities if e in _old_community(kg, f, c).entity_ids
            ]
            assert view.communities_of(e) == expected
            assert view.degree(e) == (view.graph.degree(e) if e in view.graph else 0)
            assert {(r.source, r.target) for r in view.out_relations(e)} == (
                {(s, t) for s, t in view.graph.out_edges(e)} if e in view.graph else set()
            )
        assert len(view) == view.graph.number_of_nodes()


def test_hop_distances_match_networkx_and_stop_early() -> None:
    kg = load_kg("countries")
    undirected = kg.graph.to_undirected(as_view=True)
    sources = ["E0758", "E0197"]
    full = dict(nx.multi_source_dijkstra_path_length(undirected, sources))
    assert kg.hop_distances(sources) == full
    assert kg.hop_distances(sources, max_depth=2) == {n: d for n, d in full.items() if d <= 2}
    target = max(full, key=full.get)
    bounded = kg.hop_distances(sources, until={target})
    assert bounded[target] == full[target] and all(bounded[n] == full[n] for n in bounded)


def test_concurrent_first_reads_compute_once_and_see_all_communities(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    calls = _count_louvain(monkeypatch)
    kg = load_kg(_karate(tmp_path), cache_communities=False)
    with ThreadPoolExecutor(8) as pool:
        seen = list(pool.map(lambda _: sorted(kg.communities), range(8)))
    assert calls == [1] and all(s == seen[0] for s in seen) and len(seen[0]) > 1
