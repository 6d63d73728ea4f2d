"""The ``graphtrail`` commands. Heavy imports happen inside each command, so
``graphtrail --help`` and input errors stay instant."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .errors import InputError
from .look import App

app = App(
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
kg_app = App(help="Inspect and import knowledge graphs.", no_args_is_help=True)
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
    from .plainlines import console  # tables become key: value lines in pipes and under 100 columns

    from graphtrail._secrets import RedactedStdout

    return console(file=RedactedStdout())  # what a command prints goes through the redactor too


# ----------------------------------------------------------------------- options
KgOpt = Annotated[str, typer.Option("--kg", metavar="KG", help="Bundled KG name, or a triples TSV/CSV, node-link JSON, GraphML file, or GraphRAG output folder.")]
QuestionsOpt = Annotated[str, typer.Option("--questions", "-q", metavar="FILE", help="Questions JSONL file (id, question, answers[, answer_ids]) or a bundled name.")]
AgentOpt = Annotated[Optional[str], typer.Option("--agent", metavar="MODULE:FACTORY", help="Your agent: MODULE:FACTORY or path/to/file.py:FACTORY. FACTORY(model=, kg=) returns the agent.")]
VariantOpt = Annotated[Optional[str], typer.Option("--variant", metavar="VARIANT", help="Reference agent: agentic, evidence_first, visited_only, llm_only, rag, graphrag_local.")]
ModelOpt = Annotated[
    Optional[str],
    typer.Option("--model", "-m", metavar="MODEL", help="'offline' (deterministic, no key; the default for reference agents) or an init_chat_model string like openai:gpt-4o-mini. Passed to your FACTORY as model= only when given."),
]
OtlpOpt = Annotated[Optional[str], typer.Option("--otlp", metavar="URL", help="Also export spans over OTLP/HTTP to this URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT if set).")]
OutOpt = Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Output directory.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite results already in the output directory.")]
LimitOpt = Annotated[Optional[int], typer.Option("--limit", metavar="N", help="Use only the first N questions.", min=1)]

# ----------------------------------------------------------------------- demo
@app.command()
def demo(
    out: OutOpt = Path("graphtrail-demo"),
    otlp: OtlpOpt = None,
    force: ForceOpt = False,
) -> None:
    """Run the whole pipeline offline on the bundled graph.

    Traced runs of the reference agent, the full ablation suite and the reports,
    with the offline model: no key, no network, about a minute."""
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
    """Answer questions with a traced agent.

    Prints the answers; writes traces.jsonl, trajectories.jsonl and answers.jsonl."""
    from . import pipeline
    from .inputs import guard_out_dir

    spec = _check_agent_inputs(agent, variant, model, kg=kg, questions=questions)
    guard_out_dir(out, pipeline.RUN_FILES, force=force)
    inputs = pipeline.load_inputs(kg=kg, questions=questions, limit=limit)
    built = pipeline.build_agent(spec, kg=inputs.kg)
    pipeline.run_questions(built, inputs, out=out, otlp=_otlp(otlp), console=_console())


# ----------------------------------------------------------------------- eval
EvalKgOpt = Annotated[Optional[str], typer.Option("--kg", metavar="KG", help="Bundled KG name, or a triples TSV/CSV, node-link JSON, GraphML file, or GraphRAG output folder. Optional with --agent (your agent reads its own graph; the random control then draws from what its tools revealed).")]


@app.command("eval")
def eval_(
    out: OutOpt,
    kg: EvalKgOpt = None,
    questions: Annotated[
        Optional[str], typer.Option("--questions", "-q", metavar="FILE", help="Questions JSONL file (id, question, answers[, answer_ids]) or a bundled name. Or use --from-traces.")
    ] = None,
    from_traces: Annotated[
        Optional[Path], typer.Option("--from-traces", metavar="FILE", help="Take the questions from production traces (traces.jsonl or an OTLP JSON export) instead of --questions.")
    ] = None,
    sample: Annotated[Optional[int], typer.Option("--sample", metavar="N", min=1, help="With --from-traces: evaluate N distinct questions, drawn with --seed.")] = None,
    answers: Annotated[
        Optional[str], typer.Option("--answers", metavar="FILE", help="With --from-traces: a questions JSONL whose answers grade the matching questions (accuracy is shown only then).")
    ] = None,
    agent: AgentOpt = None,
    graph: Annotated[Optional[str], typer.Option("--graph", metavar="DATA", help="With --agent: the factory route (exact): FACTORY builds the agent from DATA, once per ablation. DATA: a --kg graph, or file.py:NAME (a networkx graph, Documents, dict, pandas tables...).")] = None,
    variant: VariantOpt = None,
    model: ModelOpt = None,
    conditions: Annotated[
        Optional[list[str]],
        typer.Option("--conditions", "-c", metavar="LIST", help="Comma-separated or repeated; 'all' adds random_subsets. Default: every condition but random_subsets."),
    ] = None,
    trials: Annotated[int, typer.Option("--trials", metavar="N", min=1, help="Runs per (question, condition).")] = 1,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Seed for random controls and stochastic models.")] = 0,
    concurrency: Annotated[int, typer.Option("--concurrency", metavar="N", min=1, help="Calls at the model at once (up to twice as many replays run).")] = 4,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted evaluation in --out, reusing its finished runs.")] = False,
    reuse: Annotated[bool, typer.Option("--reuse/--no-reuse", help="Prefix reuse: replay cached model responses until a tool response diverges.")] = True,
    citations: Annotated[
        Optional[str],
        typer.Option("--citations", metavar="names|markers", help="How a free-text answer cites: 'names' (entities it names; the default) or 'markers' ([E:id] only)."),
    ] = None,
    answer_field: Annotated[Optional[str], typer.Option("--answer-field", metavar="FIELD", help="The field of your agent's structured_response (or final state) holding the answer (default: answer).")] = None,
    citations_field: Annotated[Optional[str], typer.Option("--citations-field", metavar="FIELD", help="The field holding the answer's sources (default: sources, citations or evidence).")] = None,
    otlp: OtlpOpt = None,
    limit: LimitOpt = None,
    force: ForceOpt = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 2 if a tool escaped the ablation filter in some condition (the report is still written).")] = False,
) -> None:
    """Replay the agent under graph ablations and score provenance.

    Writes results.json, report.md and report.html."""
    from . import pipeline
    from .inputs import guard_out_dir, parse_conditions
    from .names import CONDITIONS

    if (questions is None) == (from_traces is None):  # issue 22: exactly one source of questions
        raise InputError("pass --questions or --from-traces" if questions is None else "--questions and --from-traces are alternatives",
                         "--questions FILE for a question set, or --from-traces traces.jsonl for production traffic")
    if from_traces is None and (sample is not None or answers is not None):
        raise InputError("--sample and --answers apply to --from-traces", "drop them, or take the questions --from-traces")
    if kg is None and not agent:
        raise InputError("--kg is missing: the reference agents read a knowledge graph", "pass --kg countries (or your graph), or --agent FILE.py:FACTORY")
    if graph is not None and (not agent or from_traces is not None):
        raise InputError("--graph needs --agent (and --questions)", "pass --agent FILE.py:FACTORY, the function that builds your agent from --graph")
    if resume and force:
        raise InputError("--resume and --force contradict each other", "use --resume to continue, or --force to start over")
    if citations not in (None, "names", "markers"):
        raise InputError(f"--citations {citations!r} is not accepted", "choose from: names, markers")
    chosen = parse_conditions(conditions, CONDITIONS)
    spec = _check_agent_inputs(agent, variant, model, kg=kg, questions=questions)
    guard_out_dir(out, pipeline.eval_files(), force=force, resume=resume, flag_hint="--resume (to continue) or --force")
    if from_traces is not None:  # issue 22
        from .fromtraces import evaluate_from_traces

        evaluate_from_traces(
            spec, kg=kg, source=from_traces, sample=sample, answers=answers, out=out, conditions=chosen, trials=trials,
            seed=seed, concurrency=concurrency, resume=resume, force=force, reuse=reuse, citations=citations,
            answer_field=answer_field, citations_field=citations_field, otlp=_otlp(otlp), console=_console(), strict=strict, limit=limit,
        )
        return
    assert questions is not None
    inputs = pipeline.load_inputs(kg=kg, questions=questions, limit=limit)
    built = pipeline.build_factory(spec, graph_arg=graph) if graph is not None else pipeline.build_agent(spec, kg=inputs.kg)
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
        answer_field=answer_field,
        citations_field=citations_field,
        otlp=_otlp(otlp),
        console=_console(),
        strict=strict,
    )


# ----------------------------------------------------------------------- report
@app.command()
def report(
    results: Annotated[Path, typer.Argument(metavar="RESULTS.json", help="A results.json written by `graphtrail eval` or `demo`.")],
    html: Annotated[bool, typer.Option("--html", help="Also write report.html.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", metavar="DIR", help="Where to write the reports (default: next to RESULTS.json).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Write into an --out that holds another evaluation (or files graphtrail did not make).")] = False,
) -> None:
    """Render the reports again from a saved results.json.

    Writes report.md (and with --html report.html); results.json is never rewritten."""
    from . import pipeline

    pipeline.rerender(results, html=html, out=out, console=_console(), force=force)


# ----------------------------------------------------------------------- compare
@app.command()
def compare(
    base: Annotated[Path, typer.Argument(metavar="BASE", help="The evaluation to compare against: a folder written by `graphtrail eval`, or its results.json.")],
    new: Annotated[Path, typer.Argument(metavar="NEW", help="The evaluation of the changed agent: a folder or its results.json.")],
    fail_on: Annotated[
        Optional[list[str]],
        typer.Option("--fail-on", metavar="RULES", help="Gate rule(s), comma-separated or repeated, e.g. 'coverage<-0.05' or 'accuracy<-0.05:significant' (docs/compare.md). Default: the default rules (a significant drop in accuracy, support, coverage or fidelity, or rise in hidden influencers); 'none' turns the gate off; 'default' adds them to yours."),
    ] = None,
    format: Annotated[str, typer.Option("--format", "-f", metavar="table|markdown|json", help="table (terminal), markdown (a PR comment) or json.")] = "table",
    out: Annotated[Optional[Path], typer.Option("--out", "-o", metavar="DIR", help="Write compare.md, compare.json and compare.html into this folder (default: nothing is written).")] = None,
    html: Annotated[bool, typer.Option("--html/--no-html", help="With --out: write compare.html beside compare.md and compare.json.")] = True,
    alpha: Annotated[float, typer.Option("--alpha", metavar="P", min=0.0001, max=0.5, help="Significance level of the paired tests.")] = 0.05,
    force: Annotated[bool, typer.Option("--force", help="Write into an --out folder graphtrail did not make, though it holds files.")] = False,
) -> None:
    """Compare two evaluations question by question (paired tests) and gate on provenance regressions."""
    from .compare import run_compare

    code = run_compare(base, new, fail_on=fail_on, fmt=format, out=out, html=html, alpha=alpha, console=_console(), force=force)
    if code:
        raise typer.Exit(code)


# ----------------------------------------------------------------------- history
@app.command()
def history(
    folders: Annotated[list[Path], typer.Argument(metavar="DIR...", help="Evaluation folders written by `graphtrail eval` (or their results.json), in any order.")],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Where to write history.html, history.md, history.json and the trend plots.")] = Path("graphtrail-history"),
    force: ForceOpt = False,
) -> None:
    """Build one page over many evaluations: a table of runs, trend plots, links to each report and comparison.

    Runs are ordered by when their report was made; consecutive runs are compared with
    paired tests (pages cached in DIR/compare/, so a rebuild compares only new pairs)."""
    from graphtrail.evaluators.history import build_history

    paths = build_history(folders, out, force=force, progress=True)
    print(f"graphtrail: history of {len(folders)} folder(s) written: open {paths['html']} in a browser")


# ----------------------------------------------------------------------- traces
class TraceFormat(str, Enum):
    summary = "summary"
    jaeger = "jaeger"
    otlp_json = "otlp-json"


@app.command()
def traces(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="OTLP/JSON lines (traces.jsonl), one OTLP/JSON document, or trajectories.jsonl.")],
    format: Annotated[TraceFormat, typer.Option("--format", "-f", help="summary: readable trajectories; jaeger / otlp-json: convert.")] = TraceFormat.summary,
    output: Annotated[Optional[Path], typer.Option("--output", metavar="FILE", help="Write the conversion here instead of stdout.")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", metavar="N", min=1, help="Show at most N runs (every format).")] = None,
    condition: Annotated[
        Optional[list[str]],
        typer.Option("--condition", metavar="LIST", help="Only runs replayed under this ablation condition (comma-separated or repeated), e.g. uncited_removal."),
    ] = None,
    question: Annotated[
        Optional[list[str]],
        typer.Option("--question", metavar="ID", help="Only runs of this question id (or whose question text contains these words); repeatable."),
    ] = None,
) -> None:
    """Show a trace file's runs, or convert it for Jaeger and OTLP tools.

    summary shows each run as steps, entities and citations. For statistics over a
    file's runs, see `graphtrail traces stats FILE`. The file is read as a stream:
    any size, with memory for the traces in flight only."""
    from . import pipeline

    pipeline.show_traces(file, fmt=format.value, output=output, limit=limit, console=_console(),
                         conditions=condition, questions=question)


# ----------------------------------------------------------------------- annotate (issue 22)
@app.command()
def annotate(
    results: Annotated[Path, typer.Argument(metavar="RESULTS", help="results.json (or its folder) written by `graphtrail eval --from-traces`.")],
    phoenix: Annotated[Optional[str], typer.Option("--phoenix", metavar="URL", help="Phoenix's URL, e.g. http://localhost:6006: annotate each production run's root span.")] = None,
    otlp: Annotated[Optional[str], typer.Option("--otlp", metavar="URL", help="For Jaeger (no annotation API): send one verdict span per question, service graphtrail-eval, linked to the production runs.")] = None,
) -> None:
    """Write each question's verdict (conditions that changed the answer, uncited entities that decided it) onto its production traces."""
    from .annotate import annotate as run_annotate

    run_annotate(results, phoenix=phoenix, otlp=otlp, console=_console())


# ----------------------------------------------------------------------- traces stats (issue 22)
# `graphtrail traces stats FILE`: main.py joins "traces stats" into this one command name, since `traces FILE`
# takes a positional file (so `traces` cannot also be a group); help lists and names it "traces stats".
@app.command("traces stats")
def traces_stats(
    source: Annotated[Optional[Path], typer.Argument(metavar="FILE", help="A traces file graphtrail wrote (traces.jsonl), an OTLP JSON export, or trajectories.jsonl. Omit with --jaeger.")] = None,
    jaeger: Annotated[Optional[str], typer.Option("--jaeger", metavar="URL", help="Read from a live Jaeger's query API instead, e.g. http://localhost:16686.")] = None,
    service: Annotated[Optional[str], typer.Option("--service", metavar="NAME", help="With --jaeger: the service whose runs to read (default $OTEL_SERVICE_NAME, else graphtrail).")] = None,
    since: Annotated[Optional[str], typer.Option("--since", metavar="DURATION", help="With --jaeger: how far back, e.g. 90m, 24h (default), 7d.")] = None,
    by: Annotated[str, typer.Option("--by", metavar="hour|day|auto", help="Trend per 'hour', 'day', or 'auto' (hours for up to two days of traffic).")] = "auto",
    top: Annotated[int, typer.Option("--top", metavar="N", min=1, help="How many of the most often uncited entities to list.")] = 10,
    html: Annotated[Optional[Path], typer.Option("--html", metavar="FILE", help="Also write an HTML page with the plots here.")] = None,
    json_out: Annotated[Optional[Path], typer.Option("--json", metavar="FILE", help="Also write the statistics as JSON here.")] = None,
    include_replays: Annotated[bool, typer.Option("--include-replays", help="Count evaluation replays too (left out by default).")] = False,
) -> None:
    """Provenance statistics over production runs: distributions, runs with unsupported citations, uncited entities, trend."""
    from .statscmd import traces_stats as run_stats

    run_stats(source=source, jaeger=jaeger, service=service, since=since, by=by, top=top, html=html, json_out=json_out,
              include_replays=include_replays, console=_console())


# ----------------------------------------------------------------------- kg
@kg_app.command("info")
def kg_info(
    kg: Annotated[str, typer.Argument(metavar="KG", help="Bundled name, triples TSV/CSV, node-link JSON, GraphML, or GraphRAG output folder.")],
    samples: Annotated[int, typer.Option("--samples", metavar="N", min=0, help="Sample entities to show.")] = 5,
    communities: Annotated[bool, typer.Option("--communities", help="Count communities, computing them (Leiden, cached beside the file) if the graph has none.")] = False,
) -> None:
    """Show what a knowledge graph holds: does graphtrail read my file?"""
    from .inputs import load_kg_arg
    from .render import kg_info_tables

    graph = load_kg_arg(kg)
    picked = [e for _, e in zip(range(samples), graph.entities())]
    _console().print(kg_info_tables(graph.describe(communities=communities), picked))


@kg_app.command("list")
def kg_list() -> None:
    """List the bundled knowledge graphs and question sets."""
    from graphtrail.kg.loaders import list_bundled

    console = _console()
    for dataset in list_bundled():
        console.print(f"[bold]{dataset.name}[/]: {dataset.description}")


@kg_app.command("import")
def kg_import(
    kg: Annotated[str, typer.Argument(metavar="KG", help="What to import: bundled name, triples TSV/CSV, node-link JSON, GraphML, GraphRAG folder, or a graph database.")],
    to: Annotated[str, typer.Option("--to", metavar="TARGET", help="New LadybugDB file (graph.lbug or lbug:PATH) or Neo4j URI (bolt://user:pass@host:7687[?database=...]).")],
) -> None:
    """Import a knowledge graph into LadybugDB or Neo4j.

    Never overwrites: an existing file or a Neo4j database with entities is refused."""
    from .inputs import check_kg_arg, load_kg_arg
    from .names import looks_like_graph_database

    if not looks_like_graph_database(to):
        raise InputError(f"--to {to!r} is not a graph database", "pass a new file ending in .lbug, lbug:PATH, or a bolt:// / neo4j:// URI")
    check_kg_arg(kg)
    from graphtrail.kg.backends import import_graph

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


def _check_agent_inputs(agent: str | None, variant: str | None, model: str | None, *, kg: str | None, questions: str | None) -> Any:
    """Every check of run's and eval's shared arguments that needs no heavy import, then the model's."""
    from .inputs import check_agent_spec, check_kg_arg, check_model, check_questions_arg, known_variants
    from .pipeline import AgentSpec

    if agent and variant:
        raise InputError("--agent and --variant are alternatives", "pass your own agent with --agent MODULE:FACTORY, or a reference --variant")
    if variant and variant not in known_variants():
        raise InputError(f"unknown variant {variant!r}", "choose from: " + ", ".join(known_variants()))
    if agent:
        check_agent_spec(agent)
    if kg is not None:  # eval --agent reads its own graph
        check_kg_arg(kg)
    if questions is not None:  # eval --from-traces takes its questions from a traces file
        check_questions_arg(questions)
    # Last: a provider other than 'offline' is checked against LangChain's list, which imports LangChain.
    return AgentSpec(agent=agent, variant=variant or ("agentic" if not agent else None), model=check_model(model) if model else None)


