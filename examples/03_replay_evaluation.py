"""Journey 3: replay your own agent under graph ablations and see what shaped its answers.

    python examples/03_replay_evaluation.py --out my-eval     # then open my-eval/report.html

The agent is the unchanged one from ``my_agent.py``: your networkx graph, your
JSON tools, your model. graphtrail runs each question once as the baseline,
then again with chosen entities hidden or masked *in the tool responses*
(cited ones, visited-but-uncited ones, random controls, ...) and compares the
answers, with confidence intervals. Runs offline, no key needed.

How the tool responses get filtered: graphtrail wraps your tools during the
replays. JSON outputs whose items carry an ``"id"`` are filtered generically;
for a tool whose output needs more care you register a per-tool filter, as
done below for ``related`` (a lookup *on* a hidden entity must fail as if the
entity did not exist, which the generic filter cannot know).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # so `import my_agent` works from any cwd

from graphtrail.agents import GraphFilter, KnowledgeGraph  # noqa: E402
from graphtrail.evaluators import evaluate, register_tool_filter  # noqa: E402
from my_agent import GRAPH, QUESTIONS, build_agent  # noqa: E402


def filter_related(output: str, graph_filter: GraphFilter) -> str:
    """What ``related`` would have returned if the graph were missing/masking some entities."""
    data: dict[str, Any] = json.loads(output)
    source = data.get("entity") or {}
    if source.get("id") in graph_filter.hidden:
        return json.dumps({"error": f"no entity {source['id']}", "results": []})
    data["results"] = [e for e in data.get("results", []) if e["id"] not in graph_filter.hidden]
    for entity in [source, *data["results"]]:
        if entity.get("id") in graph_filter.masked:
            entity["name"] = graph_filter.masked_name(entity["id"])
    return json.dumps(data)


def as_knowledge_graph() -> KnowledgeGraph:
    """Your networkx graph as graphtrail's KnowledgeGraph, so random controls can be drawn from it."""
    kg = KnowledgeGraph(name="countries-example")
    for node, data in GRAPH.nodes(data=True):
        kg.add_entity(node, data["name"], data["kind"])
    for source, target, relation in GRAPH.edges(data="relation"):
        kg.add_relation(source, relation, target)
    return kg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="graphtrail-example-eval", help="where results.json and the reports go")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted evaluation in --out")
    args = parser.parse_args()

    register_tool_filter("related", filter_related)
    report = evaluate(
        build_agent(),  # the same agent as example 01, unchanged
        QUESTIONS,
        kg=as_knowledge_graph(),
        out_dir=args.out,
        resume=args.resume,
        progress=False,
    )

    print(f"{'condition':<22}{'accuracy':>10}{'95% CI':>16}{'changed':>10}")
    for row in report.conditions:
        ci = f"[{row.ci_low:.0%}, {row.ci_high:.0%}]" if row.ci_low is not None else "-"
        acc = f"{row.accuracy:.0%}" if row.accuracy is not None else "-"
        changed = f"{row.changed_rate:.0%}" if row.changed_rate is not None else "-"
        print(f"{row.condition:<22}{acc:>10}{ci:>16}{changed:>10}")
    print(f"\n{report.stats.power_statement}")
    print(f"report: {Path(args.out) / 'report.html'}")


if __name__ == "__main__":
    main()
