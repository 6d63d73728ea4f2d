"""``graphtrail annotate RESULTS``: each question's verdict back on the production runs it came from.

Someone reading a production trace in Phoenix should see, on that very run,
what the replay evaluation found: which ablation conditions changed the answer
and which entities the agent visited without citing decided it. The verdicts
come from ``results.json`` of ``eval --from-traces`` and the production run ids
from the ``questions-from-traces.jsonl`` beside it.

- ``--phoenix URL``: one span annotation per production root span, through
  Phoenix's span-annotation REST API (``POST /v1/span_annotations``), named
  ``graphtrail.provenance``, annotator kind ``CODE``, with a stable identifier
  so annotating again updates rather than duplicates.
- ``--otlp URL``: for backends without an annotation API (Jaeger). One span per
  question under the service ``graphtrail-eval``, named ``verdict <question id>``,
  carrying the verdict as attributes and a span link to each production run;
  Jaeger shows the links as references both ways (docs/production.md).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = ["Verdict", "verdicts_of", "annotate"]

ANNOTATION_NAME = "graphtrail.provenance"
ANNOTATION_IDENTIFIER = "graphtrail-eval"
EVAL_SERVICE = "graphtrail-eval"
#: Conditions whose change of output speaks about uncited entities.
_UNCITED_CONDITIONS = ("uncited_removal", "uncited_mask", "leave_one_out")


@dataclass(frozen=True)
class Verdict:
    """What the replays found for one question."""

    question_id: str
    question: str
    label: str  # hidden-influence | cited-evidence | unchanged
    score: float  # share of the ablation conditions run that changed the answer beyond the noise floor
    changed: dict[str, float]  # condition -> share of its replays whose answer changed (above noise only)
    unchanged: list[str]
    deciding: list[tuple[str, str | None]]  # uncited entities that decided it: (id, name)
    noise: float | None
    production: list[tuple[str, str]]  # (trace id, root span id) of the production runs

    @property
    def explanation(self) -> str:
        parts = []
        if self.changed:
            parts.append("Changed the answer: " + ", ".join(f"{c} ({r:.0%})" for c, r in self.changed.items()) + ".")
        else:
            parts.append("No ablation changed the answer.")
        if self.unchanged:
            parts.append("No change: " + ", ".join(self.unchanged) + ".")
        if self.deciding:
            parts.append("Visited but uncited entities that decided it: "
                         + ", ".join(f"{name} ({eid})" if name else eid for eid, name in self.deciding) + ".")
        if self.noise is not None:
            parts.append(f"Baseline noise {self.noise:.0%}.")
        return " ".join(parts)

    def metadata(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "deciding_uncited": [eid for eid, _ in self.deciding],
            "noise": self.noise,
        }


def _resolve(results: Path) -> tuple[Path, Path]:
    from .fromtraces import QUESTIONS_FILE

    if results.is_dir():
        results = results / "results.json"
    if not results.exists():
        raise InputError(f"results file not found: {results}", "pass the results.json (or the --out folder) of `graphtrail eval --from-traces`")
    questions = results.parent / QUESTIONS_FILE
    if not questions.exists():
        raise InputError(f"{results.parent} holds no {QUESTIONS_FILE}",
                         "annotate needs an evaluation of production questions: run `graphtrail eval --from-traces traces.jsonl --out DIR`")
    return results, questions


def verdicts_of(results: Path) -> list[Verdict]:
    """One verdict per evaluated question that came from production traces."""
    from graphtrail.evaluators import load_report
    from graphtrail.evaluators.replay.fromtraces import production_links

    results, questions_file = _resolve(results)
    from graphtrail.tracer.redact import redact

    report = load_report(results)
    report = type(report).model_validate(redact(report.to_dict()))  # a results.json may be hand-edited: it is re-sent
    production: dict[str, list[tuple[str, str]]] = {}
    for lineno, line in enumerate(questions_file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except ValueError:
            raise InputError(f"{questions_file} line {lineno} is not JSON", "rerun `graphtrail eval --from-traces` to write it again") from None
        if isinstance(q, dict) and q.get("id") is not None:
            production[str(q["id"])] = production_links(q)
    names = {e.entity_id: e.name for e in report.entities if e.name}
    ablations = [c.condition for c in report.conditions if c.condition != "baseline" and getattr(c, "valid", True)]
    out = []
    for q in report.questions:
        links = production.get(q.question_id)
        if not links:
            continue
        noise = q.noise or 0.0
        changed = {c: r for c in ablations if (r := q.changed.get(c)) is not None and r > noise}
        ran = [c for c in ablations if q.changed.get(c) is not None]
        unchanged = [c for c in ran if c not in changed]
        deciding = [(eid, names.get(eid)) for eid in q.hidden_influence]
        if deciding or any(c in changed for c in _UNCITED_CONDITIONS):
            label = "hidden-influence"
        elif changed:
            label = "cited-evidence"
        else:
            label = "unchanged"
        out.append(Verdict(q.question_id, q.question, label, len(changed) / len(ran) if ran else 0.0, changed, unchanged,
                           deciding, q.noise, links))
    return out


def _to_phoenix(verdicts: list[Verdict], url: str) -> tuple[int, int]:
    """(annotated, failed) production spans, through Phoenix's REST API (``POST /v1/span_annotations``).

    Plain httpx rather than ``phoenix.client``: on an install with the full Phoenix package, importing
    the client loads the server too, tens of seconds before the first request.
    """
    import httpx

    rows = [
        {
            "name": ANNOTATION_NAME,
            "span_id": span_id,
            "annotator_kind": "CODE",
            "identifier": ANNOTATION_IDENTIFIER,
            "result": {"label": v.label, "score": v.score, "explanation": v.explanation},
            "metadata": {**v.metadata(), "trace_id": trace_id},
        }
        for v in verdicts
        for trace_id, span_id in v.production
    ]
    key = os.environ.get("PHOENIX_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    endpoint = url.rstrip("/") + "/v1/span_annotations"
    with httpx.Client(headers=headers, timeout=30.0) as client:

        def post(batch: list[dict[str, Any]]) -> None:
            client.post(endpoint, params={"sync": "true"}, json={"data": batch}).raise_for_status()

        try:
            post(rows)
            return len(rows), 0
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code in (401, 403):
                raise InputError(f"Phoenix at {url} refused the annotations ({exc.response.status_code})",
                                 "set PHOENIX_API_KEY to a key of that Phoenix") from None
            # e.g. a span Phoenix does not hold: annotate the others one by one
        except httpx.HTTPError as exc:
            raise InputError(f"cannot reach Phoenix at {url} ({type(exc).__name__}: {exc})", "check --phoenix, e.g. http://localhost:6006") from None
        done = failed = 0
        for row in rows:
            try:
                post([row])
                done += 1
            except httpx.HTTPStatusError:
                failed += 1
        return done, failed


def _to_otlp(verdicts: list[Verdict], url: str) -> int:
    """One ``verdict <question id>`` span per question under the ``graphtrail-eval`` service, linked to its production runs."""
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Link, SpanContext, TraceFlags

    from graphtrail import __version__
    from graphtrail.tracer.config import _otlp_exporter

    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: EVAL_SERVICE, "openinference.project.name": EVAL_SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(_otlp_exporter(url, None, None)))
    tracer = provider.get_tracer("graphtrail", __version__)
    for v in verdicts:
        links = [Link(SpanContext(int(t, 16), int(s, 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)),
                      {"graphtrail.link": "production run"}) for t, s in v.production]
        span = tracer.start_span(f"verdict {v.question_id}", links=links, attributes={
            "graphtrail.question_id": v.question_id,
            "graphtrail.question": v.question,
            "graphtrail.verdict.label": v.label,
            "graphtrail.verdict.score": v.score,
            "graphtrail.verdict.explanation": v.explanation,
            "graphtrail.verdict.changed": json.dumps(v.changed),
            "graphtrail.verdict.deciding_uncited": json.dumps([eid for eid, _ in v.deciding]),
        })
        span.end()
    provider.force_flush()
    provider.shutdown()
    return len(verdicts)


def annotate(results: Path, *, phoenix: str | None, otlp: str | None, console: Any) -> None:
    if not phoenix and not otlp:
        raise InputError("nowhere to annotate", "pass --phoenix http://host:6006, or --otlp http://host:4318 for Jaeger")
    for flag, url in (("--phoenix", phoenix), ("--otlp", otlp)):
        if url and not url.startswith(("http://", "https://")):
            raise InputError(f"{flag} {url!r} is not an http(s) URL", f"pass e.g. {flag} http://localhost:{6006 if flag == '--phoenix' else 4318}")
    verdicts = verdicts_of(results)
    if not verdicts:
        raise InputError(f"{results} has no question that came from production traces",
                         "annotate the results of `graphtrail eval --from-traces`")
    runs = sum(len(v.production) for v in verdicts)
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.label] = counts.get(v.label, 0) + 1
    summary = ", ".join(f"{n} {label}" for label, n in sorted(counts.items()))
    if phoenix:
        done, failed = _to_phoenix(verdicts, phoenix)
        line = f"annotated {done} production run(s) of {len(verdicts)} question(s) in Phoenix at {phoenix} ({summary})"
        if failed:
            line += f"; {failed} run(s) are not in Phoenix (were they exported there?)"
        console.print(line, highlight=False)
    if otlp:
        n = _to_otlp(verdicts, otlp)
        console.print(f"sent {n} verdict span(s) under service {EVAL_SERVICE} to {otlp}, linked to {runs} production run(s)",
                      highlight=False)
