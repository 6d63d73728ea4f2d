#!/usr/bin/env python
"""Build graphtrail's bundled "countries" knowledge graph and its questions.

Source: the country records that the PyPI package ``countryinfo`` (MIT licence)
ships; language and currency *names* come from the CLDR data in ``babel``
(BSD-3-Clause; CLDR under the Unicode licence). Install both with
``pip install 'graphtrail[build-data]'`` and run::

    python scripts/build_bundled_kg.py            # writes src/graphtrail/data/
    python scripts/build_bundled_kg.py --check    # rebuild in memory, fail if files differ

The output is deterministic: the same inputs give byte-identical files.
Entity ids are opaque (``E0001``...) and assigned by a seeded shuffle, so an
ablation that masks names leaks nothing through ids or their order.

See docs/datasets.md for the schema, the question templates and statistics.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import random
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20240611
OUT_DIR = Path(__file__).resolve().parents[1] / "src" / "graphtrail" / "data"

# Records the source ships twice or that no longer exist as countries.
EXCLUDED_ALPHA3 = {"SCG": "Serbia and Montenegro: dissolved in 2006; both successors are present"}
# ISO 4217 fund/accounting codes listed next to a country's real currency.
FUND_CODES = {"BOV", "CHE", "CHW", "CLF", "COU", "MXV", "USN", "USS", "UYI", "UYW", "XSU", "XUA"}
# ISO 639 codes CLDR's English locale has no name for; anything else unknown is dropped.
LANGUAGE_FALLBACK = {"cnr": "Montenegrin"}
HISTORIC_SUFFIX = re.compile(r"\s*\(\d{4}\s*[–—-]\s*\d{4}\)$")

#: relation label -> description template ({s} source name, {t} target name).
RELATIONS = {
    "capital": "{t} is the capital of {s}",
    "capital of": "{s} is the capital of {t}",
    "region": "{s} is in the region {t}",
    "subregion": "{s} is in the subregion {t}",
    "language": "{t} is a language spoken in {s}",
    "language of": "{s} is a language spoken in {t}",
    "currency": "{t} is the currency of {s}",
    "currency of": "{s} is the currency of {t}",
    "borders": "{s} shares a land border with {t}",
}


# --------------------------------------------------------------------------- source


@dataclass
class Country:
    name: str
    alpha2: str
    alpha3: str
    capital: str
    region: str
    subregion: str
    languages: list[str]
    currencies: list[str]
    borders: list[str]
    aliases: list[str] = field(default_factory=list)
    population: int = 0


def _completeness(record: dict) -> tuple[int, int]:
    return (len(record), 1 if record.get("ISO", {}).get("numeric") else 0)


def read_countries() -> list[Country]:
    """The countryinfo records, deduplicated by ISO alpha-3 and cleaned."""
    from countryinfo import CountryInfo

    by_alpha3: dict[str, list[dict]] = collections.defaultdict(list)
    for _, record in sorted(CountryInfo.all().items()):
        iso = record.get("ISO") or {}
        alpha3 = iso.get("alpha3")
        # Records without a ``borders`` key are partial duplicates/territory stubs.
        if not alpha3 or "borders" not in record or not record.get("capital") or not record.get("region"):
            continue
        if alpha3 in EXCLUDED_ALPHA3:
            continue
        by_alpha3[alpha3].append(record)

    countries: list[Country] = []
    for alpha3, records in sorted(by_alpha3.items()):
        records.sort(key=_completeness, reverse=True)
        best = records[0]
        capital = best["capital"]
        if isinstance(capital, list):
            capital = capital[0]
        aliases: list[str] = []
        for rec in records:
            aliases += [rec["name"], *rec.get("altSpellings", [])]
        aliases += [best["ISO"].get("alpha2", ""), alpha3]
        if best.get("nativeName"):
            aliases.append(best["nativeName"])
        countries.append(
            Country(
                name=best["name"],
                alpha2=best["ISO"].get("alpha2", ""),
                alpha3=alpha3,
                capital=str(capital).strip(),
                region=best["region"],
                subregion=best.get("subregion") or "",
                languages=list(best.get("languages") or []),
                currencies=[c for c in best.get("currencies") or [] if c not in FUND_CODES],
                borders=list(best.get("borders") or []),
                aliases=aliases,
                population=int(best.get("population") or 0),
            )
        )
    return countries


def language_name(code: str) -> str | None:
    from babel import Locale

    return Locale("en").languages.get(code) or LANGUAGE_FALLBACK.get(code)


def currency_name(code: str) -> str:
    from babel.numbers import get_currency_name

    return HISTORIC_SUFFIX.sub("", get_currency_name(code, locale="en"))


# --------------------------------------------------------------------------- graph


@dataclass
class Entity:
    key: tuple[str, str]  # (type, natural key) - never shipped
    name: str
    type: str
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    id: str = ""


class Builder:
    def __init__(self) -> None:
        self.entities: dict[tuple[str, str], Entity] = {}
        self.edges: list[tuple[tuple[str, str], str, tuple[str, str]]] = []
        self.warnings: list[str] = []
        self._edge_set: set[tuple[tuple[str, str], str, tuple[str, str]]] = set()

    def entity(self, type_: str, key: str, name: str, description: str = "", aliases: Iterable[str] = ()) -> tuple[str, str]:
        k = (type_, key)
        if k not in self.entities:
            self.entities[k] = Entity(k, name, type_, description)
        ent = self.entities[k]
        for alias in aliases:
            alias = str(alias).strip()
            if alias and alias != ent.name and alias not in ent.aliases:
                ent.aliases.append(alias)
        return k

    def edge(self, s: tuple[str, str], rel: str, t: tuple[str, str]) -> None:
        assert rel in RELATIONS, rel
        if (s, rel, t) not in self._edge_set:
            self._edge_set.add((s, rel, t))
            self.edges.append((s, rel, t))


def build_graph(countries: list[Country]) -> Builder:
    b = Builder()
    known = {c.alpha3 for c in countries}
    alpha2_to_3 = {c.alpha2: c.alpha3 for c in countries if c.alpha2}

    for c in countries:
        sub = c.subregion or c.region
        country = b.entity("country", c.alpha3, c.name, f"A country in {sub} ({c.region}).", c.aliases)
        city = b.entity("city", f"{c.capital}|{c.alpha3}", c.capital, f"The capital city of {c.name}.")
        region = b.entity("region", c.region, c.region, "A world region.")
        b.edge(country, "capital", city)
        b.edge(city, "capital of", country)
        b.edge(country, "region", region)
        if c.subregion:
            subregion = b.entity("subregion", c.subregion, c.subregion, f"A subregion of {c.region}.")
            b.edge(country, "subregion", subregion)
            b.edge(subregion, "region", region)
        for code in c.languages:
            name = language_name(code)
            if name is None:
                b.warnings.append(f"{c.name}: unknown language code {code!r} dropped")
                continue
            lang = b.entity("language", code, name, f"A language (ISO 639 code {code}).", [code])
            b.edge(country, "language", lang)
            b.edge(lang, "language of", country)
        for code in c.currencies:
            cur = b.entity("currency", code, currency_name(code), f"A currency (ISO 4217 code {code}).", [code])
            b.edge(country, "currency", cur)
            b.edge(cur, "currency of", country)

    # Borders: the union of both sides' lists (the source is not always symmetric).
    pairs: set[tuple[str, str]] = set()
    for c in countries:
        for code in c.borders:
            code = alpha2_to_3.get(code, code)
            if code not in known:
                b.warnings.append(f"{c.name}: border code {code!r} is not a country in the source; dropped")
                continue
            if code != c.alpha3:
                pairs.add(tuple(sorted((c.alpha3, code))))  # type: ignore[arg-type]
    for a, z in sorted(pairs):
        b.edge(("country", a), "borders", ("country", z))
        b.edge(("country", z), "borders", ("country", a))

    # Opaque ids: a seeded shuffle of a canonical order.
    order = sorted(b.entities)
    random.Random(SEED).shuffle(order)
    for i, k in enumerate(order, start=1):
        b.entities[k].id = f"E{i:04d}"
    return b


def _join(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def text_units(b: Builder) -> list[dict]:
    """One short passage per entity stating its facts, linked to every entity it names."""
    out_edges: dict[tuple[str, str], dict[str, list[tuple[str, str]]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for s, rel, t in b.edges:
        out_edges[s][rel].append(t)
    E = b.entities

    def names(keys: list[tuple[str, str]]) -> list[str]:
        return sorted(E[k].name for k in keys)

    units: list[tuple[str, str, list[tuple[str, str]]]] = []  # (owner id, text, mentioned keys)
    for k in sorted(E, key=lambda k: E[k].id):
        ent, out = E[k], out_edges[k]
        mentioned = [k]
        if ent.type == "country":
            parts = []
            sub, reg = out.get("subregion", []), out["region"]
            where = f"{E[sub[0]].name}, part of the {E[reg[0]].name} region" if sub else f"the {E[reg[0]].name} region"
            parts.append(f"{ent.name} is a country in {where}.")
            parts.append(f"Its capital is {E[out['capital'][0]].name}.")
            if out.get("language"):
                parts.append(f"Languages spoken there include {_join(names(out['language']))}.")
            if out.get("currency"):
                curs = [f"the {E[c].name} ({E[c].key[1]})" for c in sorted(out["currency"], key=lambda c: E[c].name)]
                parts.append(f"Its currency is {_join(curs)}." if len(curs) == 1 else f"Its currencies are {_join(curs)}.")
            if out.get("borders"):
                parts.append(f"It borders {_join(names(out['borders']))}.")
            else:
                parts.append("It has no land borders.")
            text = " ".join(parts)
            for rel in ("capital", "region", "subregion", "language", "currency", "borders"):
                mentioned += out.get(rel, [])
        elif ent.type == "city":
            (country,) = out["capital of"]
            text = f"{ent.name} is the capital city of {E[country].name}."
            mentioned.append(country)
        elif ent.type in ("language", "currency"):
            rel = f"{ent.type} of"
            where = names(out[rel])
            if ent.type == "language":
                text = f"{ent.name} ({ent.key[1]}) is a language spoken in {_join(where)}."
            else:
                text = f"The {ent.name} ({ent.key[1]}) is the currency of {_join(where)}."
            mentioned += out[rel]
        elif ent.type == "subregion":
            members = [s for s, rel, t in b.edges if rel == "subregion" and t == k]
            (region,) = out["region"]
            text = f"{ent.name} is a subregion of {E[region].name}. Its countries are {_join(names(members))}."
            mentioned += [region, *members]
        else:  # region
            subs = sorted({s for s, rel, t in b.edges if rel == "region" and t == k and s[0] == "subregion"})
            members = [s for s, rel, t in b.edges if rel == "region" and t == k and s[0] == "country"]
            text = f"{ent.name} is a world region with {len(members)} countries"
            text += f", divided into the subregions {_join(names(subs))}." if subs else "."
            mentioned += subs
        units.append((ent.id, text, mentioned))

    result = []
    for i, (_, text, mentioned) in enumerate(units, start=1):
        ids = list(dict.fromkeys(E[m].id for m in mentioned))
        result.append({"id": f"T{i:04d}", "text": text, "entity_ids": ids})
    return result


# --------------------------------------------------------------------------- questions


class Paths:
    """Follow relation labels hop by hop over the built graph."""

    def __init__(self, b: Builder) -> None:
        self.b = b
        self.out: dict[tuple[str, str], dict[str, list[tuple[str, str]]]] = collections.defaultdict(lambda: collections.defaultdict(list))
        for s, rel, t in b.edges:
            self.out[s][rel].append(t)
        # Names (and aliases) that identify more than one entity: not usable as topics.
        seen: dict[str, set] = collections.defaultdict(set)
        for k, e in b.entities.items():
            for label in (e.name, *e.aliases):
                seen[label.casefold()].add(k)
        self.ambiguous = {label for label, ks in seen.items() if len(ks) > 1}

    def follow(self, start: tuple[str, str], rel: str) -> list[tuple[str, str]]:
        return sorted(self.out[start].get(rel, []))

    def one(self, start: tuple[str, str], rel: str) -> tuple[str, str] | None:
        hits = self.follow(start, rel)
        return hits[0] if len(hits) == 1 else None

    def is_clear_topic(self, k: tuple[str, str]) -> bool:
        return self.b.entities[k].name.casefold() not in self.ambiguous


# (relation label, template) for the last hop; {x} is the phrase naming the subject.
FINAL_HOPS = {
    "capital": "What is the capital of {x}?",
    "currency": "What is the currency of {x}?",
    "region": "What region is {x} in?",
    "subregion": "What subregion is {x} in?",
    "language": "What language is spoken in {x}?",
    "borders": "Which country borders {x}?",
}
MAX_ANSWERS = 4  # keep multi-answer questions small and well defined
COMMUNITY_RESOLUTION = 3.0  # 30 communities of 3-52 entities (Leiden)
_THE = re.compile(r"\b(Republic|United|Kingdom|States|Islands|Emirates|Federation|Territory|Territories)\b|^(Netherlands|Philippines|Maldives|Comoros|Seychelles|Gambia|Vatican)")


def country_phrase(name: str) -> str:
    """The name as it reads inside a sentence ("the United Kingdom", "Kenya")."""
    if name.lower().startswith("the ") or not _THE.search(name):
        return name
    return "the " + name


def build_questions(b: Builder, rng: random.Random) -> list[dict]:
    P = Paths(b)
    E = b.entities
    countries = sorted((k for k in E if k[0] == "country"), key=lambda k: E[k].id)
    questions: list[dict] = []

    def named(k: tuple[str, str]) -> str:
        return country_phrase(E[k].name) if k[0] == "country" else E[k].name

    def add(kind: str, text: str, topics: list, path: list[str], answers: list, per_template: collections.Counter, tkey: str) -> None:
        answers = sorted(set(answers))
        if not answers or len(answers) > MAX_ANSWERS:
            return
        if any(a in topics for a in answers):
            return
        per_template[tkey] += 1
        names: list[str] = []
        for a in answers:
            names += [E[a].name, *E[a].aliases]
        questions.append(
            {
                "question": text,
                "answers": list(dict.fromkeys(names)),
                "answer_ids": [E[a].id for a in answers],
                "topic_ids": [E[t].id for t in topics],
                "hops": len(path),
                "kind": kind,
                "path": path,
            }
        )

    # Subjects reachable through a "the country ..." phrase, each with the hops used to reach it.
    def country_phrases() -> list[tuple[str, tuple[str, str], list[str], tuple[str, str]]]:
        """(phrase, topic, path-so-far, country) for countries named indirectly."""
        phrases = []
        for c in countries:
            city = P.one(c, "capital")
            if city and P.is_clear_topic(city) and P.one(city, "capital of") == c:
                phrases.append((f"the country whose capital is {E[city].name}", city, ["capital of"], c))
            for cur in P.follow(c, "currency"):
                if P.follow(cur, "currency of") == [c] and P.is_clear_topic(cur):
                    phrases.append((f"the country whose currency is the {E[cur].name}", cur, ["currency of"], c))
            single = P.one(c, "borders")
            if single and P.is_clear_topic(c):
                phrases.append((f"the country that borders {named(c)}", c, ["borders"], single))
        return phrases

    counts: collections.Counter = collections.Counter()

    # 1-hop: a named country.
    for rel, template in FINAL_HOPS.items():
        pool = [c for c in countries if P.is_clear_topic(c) and P.follow(c, rel)]
        for c in rng.sample(pool, min(len(pool), 22)):
            add("1-hop", template.format(x=named(c)), [c], [rel], P.follow(c, rel), counts, f"1:{rel}")
    # 1-hop inverse lookups with a unique answer.
    cities = [k for k in E if k[0] == "city" and P.is_clear_topic(k)]
    for city in rng.sample(sorted(cities, key=lambda k: E[k].id), 20):
        add("1-hop", f"{E[city].name} is the capital of which country?", [city], ["capital of"], P.follow(city, "capital of"), counts, "1:capital of")
    currencies = sorted((k for k in E if k[0] == "currency" and P.is_clear_topic(k) and len(P.follow(k, "currency of")) == 1), key=lambda k: E[k].id)
    for cur in rng.sample(currencies, 15):
        add("1-hop", f"The {E[cur].name} is the currency of which country?", [cur], ["currency of"], P.follow(cur, "currency of"), counts, "1:currency of")

    # 2-hop and 3-hop: "the country whose capital is X" / "... whose currency is X" / "that borders X".
    phrases = country_phrases()
    two_hop: list = []
    for phrase, topic, path, country in phrases:
        for rel, template in FINAL_HOPS.items():
            if path == ["borders"] and rel == "borders":
                continue  # "the country that borders the country that borders X" loops back
            two_hop.append((template.format(x=phrase), topic, [*path, rel], P.follow(country, rel), f"2:{path[0]}>{rel}"))
    rng.shuffle(two_hop)
    for text, topic, path, answers, tkey in two_hop:
        if counts[tkey] < 9:
            add("2-hop", text, [topic], path, answers, counts, tkey)

    # 3-hop: the single neighbour of a country named through its capital or unique currency.
    three_hop: list = []
    for phrase, topic, path, country in phrases:
        if path == ["borders"]:
            continue
        neighbour = P.one(country, "borders")
        if neighbour is None:
            continue
        inner = f"the country that borders {phrase}"
        for rel in ("capital", "currency", "region", "language"):
            three_hop.append((FINAL_HOPS[rel].format(x=inner), topic, [*path, "borders", rel], P.follow(neighbour, rel), f"3:{path[0]}>{rel}"))
    rng.shuffle(three_hop)
    for text, topic, path, answers, tkey in three_hop:
        if counts[tkey] < 14:
            add("3-hop", text, [topic], path, answers, counts, tkey)

    # Comparison: "Do X and Y share a border?" - neighbours vs. non-neighbours of the same subregion.
    # Names with " and " in them would make "Do X and Y ..." ambiguous to read.
    clear = [c for c in countries if P.is_clear_topic(c) and " and " not in E[c].name]
    positives = sorted({tuple(sorted((a, z), key=lambda k: E[k].id)) for a in clear for z in P.follow(a, "borders") if z in clear})
    negatives = []
    for a in clear:
        sub = P.one(a, "subregion")
        for z in clear:
            if E[a].id < E[z].id and P.one(z, "subregion") == sub and z not in P.follow(a, "borders"):
                negatives.append((a, z))
    for (a, z), answer in [(p, "yes") for p in rng.sample(positives, 35)] + [(n, "no") for n in rng.sample(negatives, 35)]:
        a, z = (a, z) if rng.random() < 0.5 else (z, a)
        questions.append(
            {
                "question": f"Do {named(a)} and {named(z)} share a border?",
                "answers": [answer],
                "answer_ids": [],
                "topic_ids": [E[a].id, E[z].id],
                "hops": 1,
                "kind": "comparison",
                "path": ["borders"],
            }
        )

    kind_order = {"1-hop": 0, "2-hop": 1, "3-hop": 2, "comparison": 3}
    questions.sort(key=lambda q: kind_order[q["kind"]])  # stable: keeps the seeded order within a kind
    for i, q in enumerate(questions, start=1):
        q["id"] = f"countries-{i:04d}"
    return [{"id": q["id"], **{k: v for k, v in q.items() if k != "id"}} for q in questions]


def demo_subset(questions: list[dict], b: Builder, countries: list[Country]) -> list[dict]:
    """A fixed dozen across kinds, about well-known (populous) countries."""
    by_id = {e.id: e for e in b.entities.values()}
    population = {c.alpha3: c.population for c in countries}

    def fame(q: dict) -> int:
        best = 0
        for tid in q["topic_ids"] + q["answer_ids"]:
            e = by_id[tid]
            if e.type == "country":
                best = max(best, population.get(e.key[1], 0))
            elif e.type == "city":
                best = max(best, population.get(e.key[1].split("|")[1], 0))
        return best

    wanted = {"1-hop": 3, "2-hop": 3, "3-hop": 3, "comparison": 3}
    picked: list[dict] = []
    for kind, n in wanted.items():
        pool = sorted((q for q in questions if q["kind"] == kind), key=lambda q: (-fame(q), q["id"]))
        seen_paths: set = set()
        seen_answers: set = set()
        for q in pool:
            key = tuple(q["path"]) if kind != "comparison" else ()
            if kind != "comparison" and key in seen_paths:
                continue
            if kind == "comparison" and q["answers"][0] in seen_answers and len(seen_answers) < 2:
                continue
            seen_paths.add(key)
            seen_answers.add(q["answers"][0])
            picked.append(q)
            if sum(1 for p in picked if p["kind"] == kind) == n:
                break
    return picked


# --------------------------------------------------------------------------- output


def kg_document(b: Builder, units: list[dict], communities: list[dict]) -> dict:
    E = b.entities
    nodes = [
        {"id": e.id, "name": e.name, "type": e.type, "description": e.description, "aliases": e.aliases}
        for e in sorted(E.values(), key=lambda e: e.id)
    ]
    edges = [
        {
            "source": E[s].id,
            "target": E[t].id,
            "relation": rel,
            "description": RELATIONS[rel].format(s=E[s].name, t=E[t].name),
        }
        for s, rel, t in sorted(b.edges, key=lambda e: (E[e[0]].id, e[1], E[e[2]].id))
    ]
    return {
        "directed": True,
        "multigraph": True,
        "graph": {
            "name": "countries",
            "source": "countryinfo (PyPI, MIT licence) country records; language and currency names from CLDR via babel",
            "built_by": "scripts/build_bundled_kg.py",
        },
        "nodes": nodes,
        "edges": edges,
        "text_units": units,
        "communities": communities,
    }


def compute_communities(doc: dict) -> list[dict]:
    """Seeded Leiden communities, computed with graphtrail's own KnowledgeGraph."""
    sys.path.insert(0, str(OUT_DIR.parents[1]))
    from graphtrail.kg.graph import KnowledgeGraph

    kg = KnowledgeGraph(name="countries")
    for n in doc["nodes"]:
        kg.add_entity(n["id"], n["name"], n["type"], n["description"], n["aliases"])
    for e in doc["edges"]:
        kg.add_relation(e["source"], e["relation"], e["target"], e["description"])
    kg.compute_communities(seed=SEED, resolution=COMMUNITY_RESOLUTION)
    return [
        {"id": c.id, "title": c.title, "entity_ids": list(c.entity_ids), "summary": c.summary, "level": c.level}
        for c in kg.communities.values()
    ]


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows).encode("utf-8")


def build() -> tuple[dict[str, bytes], list[str], dict]:
    countries = read_countries()
    b = build_graph(countries)
    units = text_units(b)
    doc = kg_document(b, units, [])
    doc["communities"] = compute_communities(doc)
    questions = build_questions(b, random.Random(SEED))
    demo = demo_subset(questions, b, countries)
    kg_bytes = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    files = {
        # mtime=0 and no filename keep the gzip bytes reproducible.
        "countries.kg.json.gz": gzip.compress(kg_bytes, compresslevel=9, mtime=0),
        "countries.questions.jsonl": jsonl(questions),
        "countries-demo.questions.jsonl": jsonl(demo),
    }
    stats = {
        "countries": len(countries),
        "entities": len(doc["nodes"]),
        "entity_types": dict(collections.Counter(n["type"] for n in doc["nodes"]).most_common()),
        "edges": len(doc["edges"]),
        "relations": dict(collections.Counter(e["relation"] for e in doc["edges"]).most_common()),
        "text_units": len(units),
        "communities": len(doc["communities"]),
        "questions": len(questions),
        "question_kinds": dict(collections.Counter(q["kind"] for q in questions)),
        "question_paths": dict(collections.Counter(" > ".join(q["path"]) for q in questions).most_common()),
        "demo_questions": len(demo),
        "bytes": {name: len(data) for name, data in files.items()},
    }
    return files, b.warnings, stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--check", action="store_true", help="fail if the files on disk differ from a rebuild")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    try:
        files, warnings, stats = build()
    except ImportError as exc:
        print(f"error: {exc}. Install the build inputs with: pip install 'graphtrail[build-data]'", file=sys.stderr)
        return 2
    if args.check:
        stale = [n for n, data in files.items() if not (args.out / n).exists() or (args.out / n).read_bytes() != data]
        if stale:
            print("out of date: " + ", ".join(stale), file=sys.stderr)
            return 1
        print("bundled data is up to date")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (args.out / name).write_bytes(data)
    if not args.quiet:
        for w in warnings:
            print("note:", w)
        print(json.dumps(stats, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
