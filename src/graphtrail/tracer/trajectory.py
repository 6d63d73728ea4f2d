"""The data a traced agent run leaves behind.

A :class:`Trajectory` is the in-memory and on-disk twin of one agent trace: the
question, the answer, the citations, and every tool call with the
knowledge-graph entities and edges it returned. It is plain pydantic data so it
round-trips through JSON (``model_dump_json`` / ``model_validate_json``) and can
be rebuilt from exported spans.

``visited`` and ``visited_uncited`` are *derived* from the steps and citations,
never stored independently, so they cannot drift out of sync when a trajectory
is edited, filtered or rebuilt.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from .provenance import ProvenanceSignals

__all__ = ["Entity", "Edge", "Step", "ModelCall", "CitationSource", "Trajectory"]


# The derivation rules, as plain functions: Trajectory's computed fields and the
# tracer's root-span attributes (built without a Trajectory when nobody captures
# one) both use them, so the two cannot disagree.


def visited_ids(step_ids: Iterable[Iterable[str]]) -> list[str]:
    """Entity ids over steps (in step order), first-seen order, unique."""
    seen: dict[str, None] = {}
    for ids in step_ids:
        for eid in ids:
            seen.setdefault(eid, None)
    return list(seen)


def uncited_ids(visited: list[str], citations: list[str]) -> list[str]:
    cited = set(citations)
    return [e for e in visited if e not in cited]


def first_sources(
    citations: list[str], steps: Iterable[tuple[int, list[str], str | None]]
) -> dict[str, tuple[list[int], list[str]]]:
    """For each citation, ``([step index], [span id])`` of the first step (in step order) returning it; empty lists if none."""
    steps = list(steps)
    out: dict[str, tuple[list[int], list[str]]] = {}
    for cid in citations:
        src: tuple[list[int], list[str]] = ([], [])
        for index, ids, span_id in steps:
            if cid in ids:
                src[0].append(index)
                if span_id:
                    src[1].append(span_id)
                break
        out[cid] = src
    return out



class _Model(BaseModel):
    # ``extra="ignore"`` lets a dumped trajectory (which includes the computed
    # fields) validate back into an equal object.
    model_config = ConfigDict(extra="ignore", frozen=False)


class Entity(_Model):
    """A knowledge-graph entity as a tool revealed it."""

    id: str
    name: str | None = None
    type: str | None = None


class Edge(_Model):
    """A typed edge ``source -[relation]-> target`` a tool traversed."""

    source: str
    relation: str
    target: str

    def as_triple(self) -> list[str]:
        return [self.source, self.relation, self.target]


class Step(_Model):
    """One tool call of the run, in the order the tools finished."""

    index: int = Field(description="1-based order within the run (graphtrail.step)")
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    tool_call_id: str | None = None
    span_id: str | None = Field(default=None, description="16 hex digits")
    entities: list[Entity] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)
    output: str | None = Field(default=None, description="tool output text; None in ids-only/none content modes")
    error: str | None = None
    start_time: float | None = Field(default=None, description="epoch seconds")
    end_time: float | None = None
    langgraph_node: str | None = None
    langgraph_step: int | None = None

    @property
    def entity_ids(self) -> list[str]:
        return [e.id for e in self.entities]

    def __repr__(self) -> str:
        from .._display import one_line, plural, short

        args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return one_line(
            "Step", self.index, short(f"{self.tool}({args})", 60), plural(len(self.entities), "entity", "entities"),
            plural(len(self.edges), "edge") if self.edges else None, f"error={short(self.error, 40)!r}" if self.error else None,
        )

    __str__ = __repr__


class ModelCall(_Model):
    """One chat-model call of the run."""

    index: int = Field(description="1-based order within the run")
    model: str | None = None
    span_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tool_calls: list[str] = Field(default_factory=list, description="names of the tools the model asked for")
    start_time: float | None = None
    end_time: float | None = None
    langgraph_node: str | None = None
    langgraph_step: int | None = None


class CitationSource(_Model):
    """Where a cited entity was first revealed: the earliest step(s) returning it."""

    entity_id: str
    steps: list[int] = Field(default_factory=list)
    span_ids: list[str] = Field(default_factory=list)


class Trajectory(_Model):
    """Everything graphtrail knows about one agent run."""

    run_id: str
    trace_id: str | None = Field(default=None, description="32 hex digits")
    span_id: str | None = Field(default=None, description="root span id, 16 hex digits")
    name: str = "agent"
    question: str | None = None
    answer: str | None = None
    citations: list[str] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    model_calls: list[ModelCall] = Field(default_factory=list)
    status: Literal["ok", "error", "no_answer"] = "ok"
    error: str | None = None
    start_time: float | None = None
    end_time: float | None = None
    conversation_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict, description="free-form tags, e.g. the ablation condition")
    provenance: ProvenanceSignals | None = Field(
        default=None,
        description="per-run provenance signals computed when the run ended (docs/production.md); stored, not derived, "
        "because whether the answer's entity was revealed needs the answer and entity names, which some content modes "
        "do not record",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def visited(self) -> list[str]:
        """Entity ids returned by any tool, in first-seen order, unique."""
        return visited_ids(step.entity_ids for step in self.steps)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def visited_uncited(self) -> list[str]:
        """Visited entities the answer does not cite, in visit order."""
        return uncited_ids(self.visited, self.citations)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def citation_sources(self) -> dict[str, CitationSource]:
        """For each citation, the first step(s) and span(s) that revealed it.

        A citation never revealed by a tool maps to an empty source: that is an
        unsupported citation, which the evaluators report.
        """
        found = first_sources(self.citations, ((s.index, s.entity_ids, s.span_id) for s in self.steps))
        return {cid: CitationSource(entity_id=cid, steps=steps, span_ids=spans) for cid, (steps, spans) in found.items()}

    @property
    def edges(self) -> list[Edge]:
        """All traversed edges, in order, unique."""
        seen: dict[tuple[str, str, str], Edge] = {}
        for step in self.steps:
            for edge in step.edges:
                seen.setdefault((edge.source, edge.relation, edge.target), edge)
        return list(seen.values())

    @property
    def entity_names(self) -> dict[str, str]:
        """Best known name for each visited entity id."""
        names: dict[str, str] = {}
        for step in self.steps:
            for entity in step.entities:
                if entity.name and entity.id not in names:
                    names[entity.id] = entity.name
        return names

    def to_json(self, **kwargs: Any) -> str:
        return self.model_dump_json(**kwargs)

    # One line in a REPL (a full dump is ``to_json()``), a small table in a notebook or rich.
    def __repr__(self) -> str:
        from .._display import one_line, plural, short

        return one_line(
            "Trajectory", repr(self.name), repr(short(self.question or "", 48)), f"answer={short(self.answer, 32)!r}"
            if self.answer is not None else "no answer", plural(len(self.steps), "step"),
            f"{len(self.citations)} cited", f"{len(self.visited_uncited)} visited-uncited", self.status,
        )

    __str__ = __repr__

    def _summary_rows(self) -> list[tuple[str, Any]]:
        from .._display import short

        names = self.entity_names
        label = lambda e: f"{names[e]} ({e})" if e in names else e  # noqa: E731
        uncited = self.visited_uncited
        return [
            ("question", self.question or "–"),
            ("answer", f"{self.answer if self.answer is not None else '(no answer)'} [{self.status}]"
                       + (f" {short(self.error, 80)}" if self.error else "")),
            ("steps", " → ".join(s.tool for s in self.steps) or "–"),
            ("citations", ", ".join(label(c) for c in self.citations) or "–"),
            ("visited, not cited", ", ".join(label(e) for e in uncited[:12]) + (f" +{len(uncited) - 12} more" if len(uncited) > 12 else "") or "–"),
            ("trace id", self.trace_id or "–"),
        ]

    def _repr_html_(self) -> str:
        from .._display import html_summary

        return html_summary(repr(self), self._summary_rows())

    def __rich__(self) -> Any:
        from .._display import rich_summary

        return rich_summary(repr(self), self._summary_rows())

    @classmethod
    def from_json(cls, text: str | bytes) -> "Trajectory":
        return cls.model_validate_json(text)
