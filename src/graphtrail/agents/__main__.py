"""``python -m graphtrail.agents``: answer one bundled question offline and show what the agent visited.

    python -m graphtrail.agents                        # the first demo question
    python -m graphtrail.agents --id countries-0002    # a bundled question by id
    python -m graphtrail.agents --question "What is the capital of Kenya?" --variant evidence_first
    python -m graphtrail.agents --system rag --model offline:seed=1,noise=0.3

The run is traced with :func:`graphtrail.trace_agent` (spans go nowhere unless
configured); the answer, citations and visited entities come from its Trajectory.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from .baselines import BASELINES
from .graphrag import VARIANTS, create_graphrag_agent
from .results import answer_from_result

SYSTEMS = (*VARIANTS, *BASELINES)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m graphtrail.agents", description=__doc__.splitlines()[0])
    which = p.add_mutually_exclusive_group()
    which.add_argument("--question", help="a question to ask (free text)")
    which.add_argument("--id", help="a bundled question id")
    p.add_argument("--kg", default="countries", help="bundled KG name or a KG file (default: countries)")
    p.add_argument("--questions", default=None, help="question set to look --id up in (default: the KG's)")
    p.add_argument("--variant", "--system", dest="system", default="agentic", choices=SYSTEMS)
    p.add_argument("--model", default="offline", help='"offline[:seed=N,noise=X]" or an init_chat_model string')
    p.add_argument("--max-steps", type=int, default=15)
    return p


def _build(system: str, model: str, kg: Any, max_steps: int) -> Any:
    if system in VARIANTS:
        return create_graphrag_agent(model, kg, system, max_steps=max_steps)
    return BASELINES[system](model, kg)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console()
    from .answers import is_correct
    from ..kg.loaders import load_kg
    from .questions import load_questions

    try:
        kg = load_kg(args.kg)
        gold = None
        if args.question:
            question = args.question
        else:
            qset = args.questions or (f"{args.kg}-demo" if not args.id else args.kg)
            try:
                questions = load_questions(qset)
            except Exception:
                questions = load_questions(args.kg)
            if args.id:
                matches = [q for q in questions if q.id == args.id]
                if not matches:
                    console.print(f"[red]no question with id {args.id!r} in {qset}[/red]")
                    return 2
                gold = matches[0]
            else:
                gold = questions[0]
            question = gold.question
        agent = _build(args.system, args.model, kg, args.max_steps)
    except Exception as exc:  # a clear message, never a traceback, for bad input
        console.print(f"[red]error:[/red] {exc}")
        return 2

    import graphtrail

    traced = graphtrail.trace_agent(agent, name=f"graphtrail-{args.system}")
    with graphtrail.capture() as cap:
        result = traced.invoke({"messages": [("user", question)]})
    trajectory = cap.trajectories[-1] if cap.trajectories else None

    answer, citations, status = answer_from_result(result)

    def name_of(eid: str) -> str:
        record = kg.entity(eid)
        return record.name if record is not None else "?"

    console.print(f"[bold]Question:[/bold] {question}")
    console.print(f"[bold]System:[/bold] {args.system}   [bold]model:[/bold] {args.model}   [bold]status:[/bold] {status}")
    verdict = ""
    if gold is not None and answer is not None:
        verdict = "  [green](correct)[/green]" if is_correct(answer, gold, kg) else f"  [red](gold: {', '.join(gold.answers)})[/red]"
    console.print(f"[bold]Answer:[/bold] {answer if answer is not None else '(no answer)'}{verdict}")
    console.print("[bold]Citations:[/bold] " + (", ".join(f"{c} ({name_of(c)})" for c in citations) or "none"))

    table = Table(title="Visited entities")
    for col in ("#", "id", "name", "first seen by", "cited"):
        table.add_column(col)
    if trajectory is not None:
        sources: dict[str, str] = {}
        for step in trajectory.steps:
            for e in step.entities:
                sources.setdefault(e.id, f"step {step.index} {step.tool}")
        seen_names = trajectory.entity_names  # a computed property: read once, not per row
        for i, eid in enumerate(trajectory.visited, 1):
            table.add_row(str(i), eid, seen_names.get(eid) or name_of(eid), sources[eid], "yes" if eid in citations else "")
        console.print(table)
        console.print(f"{len(trajectory.steps)} tool calls, {len(trajectory.model_calls)} model calls, trace {trajectory.trace_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
