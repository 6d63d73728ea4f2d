"""The ``graphtrail`` commands. Heavy imports happen inside each command, so
``graphtrail --help`` and input errors stay instant."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .errors import InputError

app = typer.Typer(
    name="graphtrail",
    help=(
        "Trace, replay and score what shaped an agentic GraphRAG answer.\n\n"
        "Start with `graphtrail demo`. Add --debug to any command to see tracebacks."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
kg_app = typer.Typer(help="Inspect and import knowledge graphs.", no_args_is_help=True)
app.add_typer(kg_app, name="kg")


def _print_version(value: bool) -> None:
    if value:
        from graphtrail import __version__

        print(f"graphtrail {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks (also GRAPHTRAIL_DEBUG=1).")] = False,
    version: Annotated[
        bool, typer.Option("--version", "-V", help="Print graphtrail's version and exit.", is_eager=True, callback=_print_version)
    ] = False,
) -> None:
    """graphtrail: see which knowledge-graph entities shaped an agent's answer."""


def _console() -> Any:
    from rich.console import Console

    return Console()


# ----------------------------------------------------------------------- options
KgOpt = Annotated[str, typer.Option("--kg", help="Bundled KG name, or a triples TSV/CSV, node-link JSON, GraphML file, or GraphRAG output folder.")]
QuestionsOpt = Annotated[str, typer.Option("--questions", "-q", help="Questions JSONL file (id, question, answers[, answer_ids]) or a bundled name.")]
AgentOpt = Annotated[Optional[str], typer.Option("--agent", help="Your agent: MODULE:FACTORY or path/to/file.py:FACTORY. FACTORY(model=, kg=) returns the agent.")]
VariantOpt = Annotated[Optional[str], typer.Option("--variant", help="Reference agent: agentic, evidence_first, visited_only, llm_only, rag, graphrag_local.")]
ModelOpt = Annotated[
    Optional[str],
    typer.Option("--model", "-m", help="'offline' (deterministic, no key; the default for reference agents) or an init_chat_model string like openai:gpt-4o-mini. Passed to your FACTORY as model= only when given."),
]
OtlpOpt = Annotated[Optional[str], typer.Option("--otlp", help="Also export spans over OTLP/HTTP to this URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT if set).")]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Output directory.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite results already in the output directory.")]
LimitOpt = Annotated[Optional[int], typer.Option("--limit", help="Use only the first N questions.", min=1)]

# ----------------------------------------------------------------------- demo
@app.command()
def demo(
    out: OutOpt = Path("graphtrail-demo"),
    otlp: OtlpOpt = None,
    force: ForceOpt = False,
) -> None:
    """The whole pipeline on the bundled KG with the offline model: traced runs, full ablation suite, reports."""
    from . import pipeline
    from .inputs import guard_out_dir

    guard_out_dir(out, pipeline.RUN_FILES + pipeline.eval_files(), force=force)
    pipeline.demo(out=out, otlp=_otlp(otlp), force=force, console=_console())


# ----------------------------------------------------------------------- run
@app.command()
def run(
    kg: KgOpt,
    questions: QuestionsOpt,
    out: OutOpt,
    agent: AgentOpt = None,
    variant: VariantOpt = None,
    model: ModelOpt = None,
    otlp: OtlpOpt = None,
    limit: LimitOpt = None,
    force: ForceOpt = False,
) -> None:
    """Answer questions with a traced agent: prints answers, writes traces.jsonl and trajectories.jsonl."""
    from . import pipeline
    from .inputs import guard_out_dir

    spec = _check_agent_inputs(agent, variant, model)
    guard_out_dir(out, pipeline.RUN_FILES, force=force)
    inputs = pipeline.load_inputs(kg=kg, questions=questions, limit=limit)
    built = pipeline.build_agent(spec, kg=inputs.kg)
    pipeline.run_questions(built, inputs, out=out, otlp=_otlp(otlp), console=_console())


# ----------------------------------------------------------------------- eval
@app.command("eval")
def eval_(
    kg: KgOpt,
    questions: QuestionsOpt,
    out: OutOpt,
    agent: AgentOpt = None,
    variant: VariantOpt = None,
    model: ModelOpt = None,
    conditions: Annotated[
        Optional[list[str]],
        typer.Option("--conditions", "-c", help="Comma-separated or repeated; 'all' adds random_subsets. Default: every condition but random_subsets."),
    ] = None,
    trials: Annotated[int, typer.Option("--trials", min=1, help="Runs per (question, condition).")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed for random controls and stochastic models.")] = 0,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Replays run at once.")] = 4,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted evaluation in --out, reusing its finished runs.")] = False,
    reuse: Annotated[bool, typer.Option("--reuse/--no-reuse", help="Prefix reuse: replay cached model responses until a tool response diverges.")] = True,
    citations: Annotated[
        Optional[str],
        typer.Option("--citations", help="How a free-text answer cites: 'names' (entities it names; the default) or 'markers' ([E:id] only)."),
    ] = None,
    otlp: OtlpOpt = None,
    limit: LimitOpt = None,
    force: ForceOpt = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 2 if a tool escaped the ablation filter in some condition (the report is still written).")] = False,
) -> None:
    """Replay the agent under graph ablations and score provenance: results.json, report.md, report.html."""
    from graphtrail.evaluators import CONDITIONS

    from . import pipeline
    from .inputs import guard_out_dir, parse_conditions

    spec = _check_agent_inputs(agent, variant, model)
    chosen = parse_conditions(conditions, CONDITIONS)
    if citations not in (None, "names", "markers"):
        raise InputError(f"--citations {citations!r} is not a citation mode", "use --citations names or --citations markers")
    if resume and force:
        raise InputError("--resume and --force contradict each other", "use --resume to continue, or --force to start over")
    guard_out_dir(out, pipeline.eval_files(), force=force, resume=resume, flag_hint="--resume (to continue) or --force")
    inputs = pipeline.load_inputs(kg=kg, questions=questions, limit=limit)
    built = pipeline.build_agent(spec, kg=inputs.kg)
    pipeline.evaluate(
        built,
        inputs,
        out=out,
        conditions=chosen,
        trials=trials,
        seed=seed,
        concurrency=concurrency,
        resume=resume,
        force=force,
        reuse=reuse,
        citations=citations,
        otlp=_otlp(otlp),
        console=_console(),
        strict=strict,
    )


# ----------------------------------------------------------------------- report
@app.command()
def report(
    results: Annotated[Path, typer.Argument(help="A results.json written by `graphtrail eval` or `demo`.")],
    html: Annotated[bool, typer.Option("--html", help="Also write report.html.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Where to write the reports (default: next to RESULTS.json).")] = None,
) -> None:
    """Render report.md (and report.html) again from a saved results.json."""
    from . import pipeline

    pipeline.rerender(results, html=html, out=out, console=_console())


# ----------------------------------------------------------------------- traces
class TraceFormat(str, Enum):
    summary = "summary"
    jaeger = "jaeger"
    otlp_json = "otlp-json"


@app.command()
def traces(
    file: Annotated[Path, typer.Argument(help="OTLP/JSON lines (traces.jsonl), one OTLP/JSON document, or trajectories.jsonl.")],
    format: Annotated[TraceFormat, typer.Option("--format", "-f", help="summary: readable trajectories; jaeger / otlp-json: convert.")] = TraceFormat.summary,
    output: Annotated[Optional[Path], typer.Option("--output", help="Write the conversion here instead of stdout.")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="Show at most N trajectories.")] = None,
    condition: Annotated[
        Optional[list[str]],
        typer.Option("--condition", help="Only runs replayed under this ablation condition (comma-separated or repeated), e.g. uncited_removal."),
    ] = None,
    question: Annotated[
        Optional[list[str]],
        typer.Option("--question", help="Only runs of this question id (or whose question text contains these words); repeatable."),
    ] = None,
) -> None:
    """Show a trace file as trajectories (steps, entities, citations), or convert it for Jaeger/OTLP tools."""
    from . import pipeline

    pipeline.show_traces(file, fmt=format.value, output=output, limit=limit, console=_console(),
                         conditions=condition, questions=question)


# ----------------------------------------------------------------------- kg
@kg_app.command("info")
def kg_info(
    kg: Annotated[str, typer.Argument(help="Bundled name, triples TSV/CSV, node-link JSON, GraphML, or GraphRAG output folder.")],
    samples: Annotated[int, typer.Option("--samples", min=0, help="Sample entities to show.")] = 5,
    communities: Annotated[bool, typer.Option("--communities", help="Count communities, computing them (Leiden, cached beside the file) if the graph has none.")] = False,
) -> None:
    """Load a knowledge graph in any supported format and print what it holds."""
    from .inputs import load_kg_arg
    from .render import kg_info_tables

    graph = load_kg_arg(kg)
    picked = [e for _, e in zip(range(samples), graph.entities())]
    _console().print(kg_info_tables(graph.describe(communities=communities), picked))


@kg_app.command("list")
def kg_list() -> None:
    """List the bundled knowledge graphs and question sets."""
    from graphtrail.agents import list_bundled

    console = _console()
    for dataset in list_bundled():
        console.print(f"[bold]{dataset.name}[/]: {dataset.description}")


@kg_app.command("import")
def kg_import(
    kg: Annotated[str, typer.Argument(help="What to import: bundled name, triples TSV/CSV, node-link JSON, GraphML, GraphRAG folder, or a graph database.")],
    to: Annotated[str, typer.Option("--to", help="New LadybugDB file (graph.lbug or lbug:PATH) or Neo4j URI (bolt://user:pass@host:7687[?database=...]).")],
) -> None:
    """Write a knowledge graph into a graph database (LadybugDB file or Neo4j); never overwrites."""
    from graphtrail.kg.backends import import_graph, is_graph_database

    from .inputs import load_kg_arg

    if not is_graph_database(to):
        raise InputError(f"--to {to!r} is not a graph database", "pass a new file ending in .lbug, lbug:PATH, or a bolt:// / neo4j:// URI")
    graph = load_kg_arg(kg)
    where = import_graph(graph, to)
    counts = graph.describe()
    _console().print(
        f"imported {counts['entities']} entities, {counts['relations']} relations, {counts['text_units']} text units "
        f"and {counts['communities']} communities into {where}",
        soft_wrap=True,
    )


# ----------------------------------------------------------------------- helpers
def _otlp(flag: str | None) -> str | None:
    return flag or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None


def _check_agent_inputs(agent: str | None, variant: str | None, model: str | None) -> Any:
    from .inputs import check_model, known_variants
    from .pipeline import AgentSpec

    if agent and variant:
        raise InputError("--agent and --variant are alternatives", "pass your own agent with --agent MODULE:FACTORY, or a reference --variant")
    if variant and variant not in known_variants():
        raise InputError(f"unknown variant {variant!r}", "choose from: " + ", ".join(known_variants()))
    return AgentSpec(agent=agent, variant=variant or ("agentic" if not agent else None), model=check_model(model) if model else None)


