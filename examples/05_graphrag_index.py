"""Point graphtrail at the Microsoft GraphRAG index you already have, and trace an agent over it.

    python examples/05_graphrag_index.py path/to/graphrag/output "Who directed Inception?"
    python examples/05_graphrag_index.py path/to/graphrag/output --model openai:gpt-4o-mini "..."

The folder is GraphRAG's output: ``entities.parquet``, ``relationships.parquet``
and optionally ``text_units``, ``communities`` and ``community_reports``
(the older ``create_final_*.parquet`` names work too). Needs
``pip install 'graphtrail[graphrag]'`` (pandas, pyarrow). Offline by default:
the embedded offline model walks the graph with graphtrail's seven graph tools.
``graphtrail kg info FOLDER`` prints the same summary from the command line.
"""

from __future__ import annotations

import argparse
import sys

import graphtrail
from graphtrail.agents import KGError, create_graphrag_agent, load_kg


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a GraphRAG output folder")
    parser.add_argument("question", nargs="?", help="a question about the indexed documents")
    parser.add_argument("--model", default="offline", help="offline, or e.g. openai:gpt-4o-mini")
    args = parser.parse_args()

    try:
        kg = load_kg(args.folder)
    except KGError as exc:  # a clear message for a folder that is not a GraphRAG output
        print(f"error: {exc}", file=sys.stderr)
        return 2
    info = kg.describe()
    print(f"{info['name']}: {info['entities']} entities, {info['relations']} relations, "
          f"{info['text_units']} text units, {info['communities']} communities")
    print("entity types:", ", ".join(f"{t} ({n})" for t, n in info["entity_types"].items()))

    question = args.question or f"What is related to {next(kg.entities()).name}?"
    agent = graphtrail.trace_agent(create_graphrag_agent(args.model, kg), name="graphrag-index-agent")
    with graphtrail.capture() as captured:
        agent.invoke({"messages": [("user", question)]})
    traj = captured.trajectories[0]
    names = traj.entity_names
    print(f"\nQ: {question}\nA: {traj.answer}  [{traj.status}]")
    print("citations:", ", ".join(f"{names.get(c, c)} ({c})" for c in traj.citations) or "-")
    for step in traj.steps:
        print(f"  {step.index}. {step.tool} {step.args} -> {[names.get(e.id, e.id) for e in step.entities][:6]}")
    print("visited but not cited:", ", ".join(names.get(e, e) for e in traj.visited_uncited) or "-")
    return 0


if __name__ == "__main__":
    sys.exit(main())
