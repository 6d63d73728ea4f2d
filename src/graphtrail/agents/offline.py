"""``OfflineChatModel``: graphtrail's embedded default model -- a heuristic policy, not an LLM.

It lets the whole pipeline (agents, tracing, ablation replays, statistics) run
with no key and no network. It is a :class:`BaseChatModel` with
``bind_tools``; each call reads *only the conversation*, as an LLM would:

1. the question (the first user message, or its ``Question:`` line);
2. the system prompt: if it says that before citing an entity it must be read "in detail",
   the policy calls ``get_entity`` on its citations before submitting;
3. every tool result so far (graphtrail's tools print one JSON object per line:
   entities, edges, relation summaries, text units) -- and any such lines
   given as context in a user message (the non-agentic baselines).

From that it re-derives its next step, every time, so it is a pure function of
the conversation. The question grammar it understands (docs/models.md has the
table): "What/Who/Where/Which is the <R> of <E>?", the statement "The <R> of
<E> is", the possessive "<E>'s <R>?", the bare "<R> of <E>?", chains of each
("the <r2> of the <r1> of <E>", "<E>'s <r1>'s <r2>"), inverse hops "... of the
<type> whose <relation> is <E>", a few bundled templates ("What region is <E>
in?"), and yes/no comparisons "Do <A> and <B> <relation words>?". Outside it,
the answer is "unknown".
It links the named entity through ``search_entities`` (the longest name or
alias that ends the question, or precedes the possessive; namesakes are tried
in turn), picks for each hop the label the words spell (joining the pieces of
"country of citizenship", which the grammar splits at "of", when the entity
has such a label), else the most similar label that the words resemble
(rapidfuzz over the labels ``get_entity`` listed, see ``_resembles``), follows
it with ``get_neighbors``, and submits the entity it reached with the entities
on its path as citations. It reacts to rejected submissions (reads or drops the named
ids) and degrades like a model when something is missing (for example under
an ablation): one more search, then the answer ``"unknown"``; it never loops
(repeated calls and a turn budget both force a submission).

``cite`` says which entities of the path it cites: ``"path"`` (default: every
entity it walked through, the most faithful), ``"endpoints"`` (the topic and
the answer only, as many LLM agents do: bridge entities shape the answer but go
uncited, which is exactly the hidden influence graphtrail's evaluators exist to
find), or ``"answer"`` (the answer entity only).

``noise`` is temperature-like: at each choice point (which search hit, which
relation label, which neighbour) it takes a lower-ranked candidate with that
probability. The randomness is a hash of ``(seed, trial, question, choice point)``
(the trial index comes from :mod:`graphtrail.agents.sampling`, which the
evaluators set per repeated run),
not a stateful RNG, so replays are reproducible, concurrent runs are
independent, and LangChain's LLM cache may serve repeated calls. ``noise=0``
is exactly deterministic.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field
from rapidfuzz import fuzz

from .._lines import split_lines
from .loaders import DEFAULT_RELATION
from .sampling import current_trial

__all__ = ["OfflineChatModel", "UNKNOWN_ANSWER"]

UNKNOWN_ANSWER = "unknown"
_MIN_LABEL_SCORE = 60.0
_ARTICLES = {"the", "a", "an"}
_WH = re.compile(r"^\s*(?:what|which|who|where)\s+(?:is|are|was|were)\s+(?:the\s+)?", re.I)
_YESNO = re.compile(r"^\s*(?:do|does|did|are|is)\s+(.+)$", re.I)
_WHOSE = re.compile(r"^(?:the\s+)?(?P<type>[\w\s-]*?)\s*whose\s+(?P<rel>.+?)\s+(?:is|are|was|were)$", re.I)


def _fold(text: str) -> str:
    """Case- and accent-folded text: a question that writes "Zurich" or "Sao Paulo" still names "Zürich", "São Paulo"."""
    decomposed = unicodedata.normalize("NFKD", text.replace("’", "'"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'-]+", _fold(text))


def _norm(text: str) -> str:
    """Lower case, punctuation dropped, leading article dropped: how names are compared."""
    words = _words(text)
    while words and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


def _label_text(label: str) -> str:
    return label.replace("_", " ").replace("-", " ").lower()


def _label_key(text: str) -> tuple[str, ...]:
    """A relation label or phrase as comparable words: "placeOfBirth", "place_of_birth", "the place of birth" agree."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return tuple(w for w in _words(_label_text(spaced)) if w not in _ARTICLES)


_WH_WORDS = {"what", "which", "who", "whom", "whose", "where"}
#: Labels that name no relation: the loaders' default for edges without one, and its usual spellings.
_UNNAMED = {_label_key(DEFAULT_RELATION), ("related",), ("relatedto",), ("related", "with")}
#: Words that carry no meaning of their own inside a relation label.
_LABEL_GLUE = {"of", "in", "by", "at", "on", "to", "for", "with", "from", "is", "the", "a", "an"}


def _resembles(phrase: str, label: str) -> bool:
    """Whether the question's relation words plausibly name ``label``.

    The same label, a near spelling ("capitol"), or a shared content word,
    one inside the other ("country" / "country of citizenship", "birthplace" /
    "place of birth"). Anything else (a fuzzy score over shared letters) is not
    a reading of the question.
    """
    words, label_words = _label_key(phrase), _label_key(label)
    if words == label_words or fuzz.ratio(" ".join(words), " ".join(label_words)) >= 80:
        return True
    content = [w for w in words if w not in _LABEL_GLUE and w not in _WH_WORDS and len(w) >= 3]
    label_content = [w for w in label_words if w not in _LABEL_GLUE and len(w) >= 3]
    # one word inside the other ("birthplace" / "birth"), or one stem ("directed" / "director")
    return any(w in lw or lw in w or (len(w) >= 5 and len(lw) >= 5 and w[:5] == lw[:5]) for w in content for lw in label_content)


# ---------------------------------------------------------------- memory
@dataclass
class _Memory:
    """What the conversation has shown so far."""

    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (name, type)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    labels: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # id -> [(label, direction)]
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    queried: set[tuple[str, str, str]] = field(default_factory=set)  # (id, label, direction) asked of get_neighbors
    read: set[str] = field(default_factory=set)
    calls: set[str] = field(default_factory=set)  # canonical "name(args)" already made
    searched: list[str] = field(default_factory=list)
    failed_ids: set[str] = field(default_factory=set)
    units: list[tuple[str, list[str]]] = field(default_factory=list)  # (text, mentioned ids)
    unit_ids: dict[str, list[str]] = field(default_factory=dict)  # entity id -> its text unit ids (get_entity)
    rejections: list[str] = field(default_factory=list)
    submissions: int = 0

    def see_entity(self, obj: dict[str, Any]) -> None:
        eid = str(obj["id"])
        self.names.setdefault(eid, (str(obj.get("name", eid)), str(obj.get("type", ""))))
        if obj.get("alias"):
            self.aliases.setdefault(eid, []).append(str(obj["alias"]))
        for alias in obj.get("aliases") or ():
            self.aliases.setdefault(eid, []).append(str(alias))
        if isinstance(obj.get("relations"), list):
            self.labels[eid] = [(str(r["relation"]), str(r.get("direction", "out"))) for r in obj["relations"]]
        if isinstance(obj.get("text_units"), list):
            self.unit_ids[eid] = [str(u) for u in obj["text_units"]]

    def see_edge(self, obj: dict[str, Any]) -> None:
        edge = (str(obj["source"]), str(obj["relation"]), str(obj["target"]))
        if edge not in self.edges:
            self.edges.append(edge)
        if isinstance(obj.get("neighbor"), dict) and "id" in obj["neighbor"]:
            self.see_entity(obj["neighbor"])

    def read_lines(self, text: str) -> list[dict[str, Any]]:
        objs = []
        for line in split_lines(text):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            objs.append(obj)
            if {"source", "relation", "target"} <= obj.keys():
                self.see_edge(obj)
            elif "unit" in obj and "text" in obj:
                mentions = [m for m in obj.get("mentions") or () if isinstance(m, dict) and "id" in m]
                for m in mentions:
                    self.see_entity(m)
                self.units.append((str(obj["text"]), [str(m["id"]) for m in mentions]))
            elif "id" in obj and "name" in obj:
                self.see_entity(obj)
        return objs

    def neighbors(self, eid: str, label: str, direction: str) -> list[str]:
        out = []
        for s, rel, t in self.edges:
            if _label_text(rel) != _label_text(label):
                continue
            if direction in ("out", "both") and s == eid:
                out.append(t)
            if direction in ("in", "both") and t == eid:
                out.append(s)
        return list(dict.fromkeys(out))

    def name(self, eid: str) -> str:
        return self.names.get(eid, (eid, ""))[0]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _canonical(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps({k: v for k, v in args.items() if v is not None}, sort_keys=True)


def _read_conversation(messages: Sequence[BaseMessage]) -> tuple[str, str, _Memory, int]:
    memory = _Memory()
    system = "\n".join(_text(m.content) for m in messages if isinstance(m, SystemMessage))
    humans = [_text(m.content) for m in messages if isinstance(m, HumanMessage)]
    question = humans[0] if humans else ""
    for line in split_lines(question):
        if line.lower().startswith("question:"):
            question = line.split(":", 1)[1]
            break
    else:
        question = split_lines(question.strip())[0] if question.strip() else ""
    for text in humans:
        memory.read_lines(text)
    calls: dict[str, dict[str, Any]] = {}
    turns = 0
    for msg in messages:
        if isinstance(msg, AIMessage):
            turns += 1
            for call in msg.tool_calls:
                calls[call.get("id") or ""] = call
                memory.calls.add(_canonical(call["name"], call.get("args") or {}))
        elif isinstance(msg, ToolMessage):
            call = calls.get(msg.tool_call_id, {"name": msg.name or "", "args": {}})
            name, args = call["name"], call.get("args") or {}
            text = _text(msg.content)
            if name == "submit_answer":
                memory.submissions += 1
                if msg.status == "error":
                    memory.rejections.append(text)
                continue
            if msg.status == "error":
                if "entity_id" in args:
                    memory.failed_ids.add(str(args["entity_id"]))
                continue
            objs = memory.read_lines(text)
            if name == "search_entities":
                memory.searched.append(_norm(str(args.get("query", ""))))
            elif name == "get_entity":
                memory.read.update(str(o["id"]) for o in objs if "relations" in o and "id" in o)
            elif name == "read_text_unit":
                for o in objs:
                    memory.read.update(str(m["id"]) for m in o.get("mentions") or () if isinstance(m, dict))
            elif name == "get_neighbors":
                memory.queried.add(
                    (str(args.get("entity_id")), _label_text(str(args.get("relation") or "*")), str(args.get("direction") or "out"))
                )
    return question.strip(), system, memory, turns


# ---------------------------------------------------------------- question parsing
@dataclass(frozen=True)
class _Hop:
    phrase: str
    direction: str  # "out" | "in"
    type_hint: str = ""
    #: The question says "<this phrase> of <the next hop's phrase>": the two may be one label
    #: ("country of citizenship"), which only the graph's labels can tell (see ``_Policy.merged_hop``).
    of_after: bool = False


def _joins(inner: _Hop, outer: _Hop) -> bool:
    """Whether ``outer`` and ``inner`` (the hop applied just before it) may be read as one "... of ..." label."""
    plain = all(h.direction == "out" and not h.type_hint for h in (inner, outer))
    return plain and outer.of_after


@dataclass(frozen=True)
class _Plan:
    kind: str  # "chain" | "compare" | "unknown"
    text: str  # the part that contains the entity name(s)
    prefix_words: tuple[str, ...] = ()


_I = re.I
# Question frames, each giving the outermost hop and the noun phrase it applies to.
_FRAMES = [
    re.compile(r"^(?:what|which|who|where)\s+(?:is|are|was|were)\s+the\s+(?P<rel>.+?)\s+of\s+(?P<np>.+)$", _I),
    re.compile(r"^(?:what|which)\s+(?P<rel>[\w\s-]+?)\s+(?:is|are)\s+spoken\s+in\s+(?P<np>.+)$", _I),
    re.compile(r"^(?:what|which)\s+(?P<rel>[\w\s-]+?)\s+(?:is|are)\s+(?P<np>.+?)\s+(?:in|part of)$", _I),
    re.compile(r"^(?P<np>.+?)\s+(?:is|are)\s+the\s+(?P<rel>.+?\s+of)\s+(?:which|what)\s+(?P<type>[\w-]+)$", _I),
    # A statement to complete: "The country of citizenship of Primo Levi is".
    re.compile(r"^the\s+(?P<rel>.+?)\s+of\s+(?P<np>.+?)\s+(?:is|are|was|were)$", _I),
    # The broadest frame last: "Which country borders Kenya?" (it would also read "What is E's R").
    re.compile(r"^(?:what|which)\s+(?P<type>[\w-]+)\s+(?P<rel>[\w-]+)\s+(?P<np>.+)$", _I),
]
#: Trailing marks of a statement to complete ("... is", "... is:", "... is ___", "... is ...").
_BLANK = re.compile(r"\b(is|are|was|were)\s*(?:\.{1,3}|…|_+|:|-+)$", _I)
#: A possessive: "Primo Levi's", "Wales'" (the name ends before the apostrophe or after its s).
_POSSESSIVE = re.compile(r"(?:'s|’s|(?<=s)'|(?<=s)’)(?=\s|$)")
_WH_COPULA = re.compile(r"^(?:what|who|where|which)\s+(?:is|are|was|were)\s+", _I)
_OTHER_OPENING = re.compile(r"^(?:what|which|who|whom|whose|where|when|why|how|do|does|did)\b", _I)
# Noun phrases that are themselves a hop: "the country whose capital is X", "the country that borders X".
_NP_HOPS = [
    re.compile(r"^(?:the\s+|a\s+)?(?P<type>[\w-]+)\s+whose\s+(?P<rel>.+?)\s+(?:is|are|was|were)\s+(?P<np>.+)$", _I),
    re.compile(r"^(?:the\s+|a\s+)?(?P<type>[\w-]+)\s+(?:that|which|who)\s+(?P<rel>[\w-]+)\s+(?P<np>.+)$", _I),
]


def _parse_question(q: str) -> tuple[list[_Hop], str]:
    """Hops from the outside in, and the remaining text, which ends with the topic entity's name."""
    for frame in _FRAMES:
        m = frame.match(q)
        if m:
            rel, np = m.group("rel"), m.group("np")
            of_after = m.end("rel") < m.start("np") and bool(re.fullmatch(r"\s+of\s+", q[m.end("rel"):m.start("np")], _I))
            if of_after and not any(p.match(np) for p in _NP_HOPS):
                # "the country of citizenship of the person whose ...": the relation runs to the "of" before the clause.
                for cut in re.finditer(r"\s+of\s+", np, _I):
                    if any(p.match(np[cut.end():]) for p in _NP_HOPS):
                        rel, np = f"{rel} of {np[: cut.start()]}", np[cut.end():]
                        break
            hops = [_Hop(_norm(rel), "out", _norm(m.groupdict().get("type") or ""), of_after)]
            break
    else:
        wh = _WH.match(q)
        return [], q[wh.end():] if wh else q
    while True:
        m = next((m for p in _NP_HOPS if (m := p.match(np))), None)
        if m is None:
            return hops, np
        # "the country whose capital is X" / "the country that borders X": X -[rel]-> it, read backwards.
        hops.append(_Hop(_norm(m.group("rel")), "in", _norm(m.group("type"))))
        np = m.group("np")


def _hops_from_prefix(prefix: str) -> list[_Hop]:
    """``"currency of the country whose capital is"`` -> hops to apply from the topic, in order."""
    prefix = re.sub(r"\s+(?:of|is|are|was|were|in|for)$", "", prefix.strip(), flags=re.I)
    segments = [s for s in re.split(r"\s+of\s+", prefix, flags=re.I) if s.strip()]
    hops = []
    for seg in reversed(segments):
        seg = seg.strip()
        m = _WHOSE.match(seg + (" is" if not re.search(r"\s(is|are|was|were)$", seg) and "whose" in seg else ""))
        if m:
            hops.append(_Hop(_norm(m.group("rel")), "in", _norm(m.group("type"))))
        else:
            hops.append(_Hop(_norm(seg), "out", of_after=True))
    return [h for h in hops if h.phrase]


def _possessive(q: str) -> str | None:
    """The ``E's R1's R2`` part of a possessive question ("Primo Levi's place of birth?",
    "What is Primo Levi's place of birth?", "Primo Levi's place of birth is"), else ``None``."""
    wh = _WH_COPULA.match(q)
    if wh is None and _OTHER_OPENING.match(q):
        return None  # "Which country borders People's Republic of China": the apostrophe is in a name
    body = q[wh.end():] if wh else q
    body = re.sub(r"\s+(?:is|are|was|were)$", "", body, flags=_I)
    return body if _POSSESSIVE.search(body) else None


# ---------------------------------------------------------------- the model
class OfflineChatModel(BaseChatModel):
    """A deterministic (or seeded-noisy) heuristic tool-calling policy over graphtrail's graph tools.

    Not an LLM: it understands questions in a fixed grammar that name their
    topic entity and word their relations as the graph labels them (see the
    module docstring and docs/models.md), and answers "unknown" to anything
    else. Use it to run and test the pipeline offline, on any graph; use a real
    model to study real agents.
    """

    seed: int | None = None
    noise: float = Field(default=0.0, ge=0.0, le=1.0)
    model_name: str = "graphtrail-offline"
    cite: Literal["path", "endpoints", "answer"] = Field(
        default="path", description="which entities on the path it cites: all, topic+answer, or the answer only"
    )
    max_turns: int = Field(default=12, ge=2, description="after this many of its own turns it submits what it has")
    # issue 22: a model that sometimes cites what it was never shown, for the unsupported-citation signal
    unsupported: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="probability per question of also citing an entity id no tool showed it (a misremembered id)",
    )
    tool_names: tuple[str, ...] = ()

    @property
    def deterministic(self) -> bool:
        """True when the same conversation always gets the same reply (``noise == 0``).

        The evaluators read this to reuse, rather than repeat, identical trials.
        """
        return self.noise == 0

    @property
    def _llm_type(self) -> str:
        return "graphtrail-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "seed": self.seed,
            "noise": self.noise,
            "cite": self.cite,
            "max_turns": self.max_turns,
            "unsupported": self.unsupported,  # issue 22
            "tools": list(self.tool_names),
        }

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> "OfflineChatModel":  # type: ignore[override]
        names = []
        for t in tools:
            name = getattr(t, "name", None) or convert_to_openai_tool(t)["function"]["name"]
            names.append(str(name))
        return self.model_copy(update={"tool_names": tuple(names)})

    # ------------------------------------------------------------ generation
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._respond(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._respond(messages))])

    def _respond(self, messages: list[BaseMessage]) -> AIMessage:
        question, system, memory, turns = _read_conversation(messages)
        policy = _Policy(self, question, system, memory, turns)
        msg = policy.decide()
        in_words = sum(len(_text(m.content).split()) for m in messages)
        out_words = len(_text(msg.content).split()) + sum(len(json.dumps(c["args"]).split()) + 1 for c in msg.tool_calls)
        msg.usage_metadata = {"input_tokens": in_words, "output_tokens": out_words, "total_tokens": in_words + out_words}
        msg.response_metadata = {"model_name": self.model_name, "finish_reason": "tool_calls" if msg.tool_calls else "stop"}
        return msg


def _cited_part(path: list[str], style: str) -> list[str]:
    """The part of the walked path (topic first, answer last) that a ``style`` cites."""
    if style == "endpoints" and len(path) > 2:
        return [path[0], path[-1]]
    if style == "answer" and path:
        return [path[-1]]
    return path


class _NeedCall(Exception):
    """Raised inside planning when the policy needs a tool result it does not have yet."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        super().__init__(calls)
        self.calls = calls


class _GiveUp(Exception):
    """The policy cannot make progress; submit the best it has."""


class _UnnamedRelations(_GiveUp):
    """The entity's edges carry no relation words (all "related to", as in a GraphRAG index)."""


class _Policy:
    def __init__(self, model: OfflineChatModel, question: str, system: str, memory: _Memory, turns: int) -> None:
        self.model = model
        self.question = question
        self.memory = memory
        self.turns = turns
        self.tools = set(model.tool_names)
        # An evidence rule in the prompt ("before you cite an entity ... read it in detail").
        self.evidence = bool(re.search(r"\bbefore\b[^.\n]*\bcit(?:e|ing)\b[^.\n]*\bin detail\b", system, re.I))
        self.turn_index = turns  # distinguishes call ids across turns
        self.trial = current_trial() if model.noise > 0 else 0

    # ------------------------------------------------------------ randomness
    def _u(self, key: str) -> float:
        # The trial index makes repeated samples differ, as a sampled LLM's would (see sampling.py).
        digest = hashlib.sha256(f"{self.model.seed}|{self.trial}|{self.question}|{key}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def choose(self, key: str, candidates: Sequence[Any]) -> Any:
        """The best candidate, or with probability ``noise`` a lower-ranked one."""
        if len(candidates) > 1 and self.model.noise > 0 and self._u(key) < self.model.noise:
            return candidates[1 + int(self._u(key + "#") * (len(candidates) - 1))]
        return candidates[0]

    # ------------------------------------------------------------ tool calls
    def _call(self, name: str, **args: Any) -> tuple[str, dict[str, Any]]:
        args = {k: v for k, v in args.items() if v is not None}
        if name not in self.tools or _canonical(name, args) in self.memory.calls:
            raise _GiveUp(f"cannot call {name}")
        return name, args

    def _message(self, calls: list[tuple[str, dict[str, Any]]], content: str = "") -> AIMessage:
        tool_calls = [
            {"name": name, "args": args, "id": f"offline_{self.turn_index}_{i}_{name}", "type": "tool_call"}
            for i, (name, args) in enumerate(calls)
        ]
        return AIMessage(content=content, tool_calls=tool_calls)

    def submit(self, answer: str, citations: list[str]) -> AIMessage:
        citations = list(dict.fromkeys(citations))
        if "submit_answer" in self.tools:
            return self._message([("submit_answer", {"answer": answer, "citations": citations})])
        marks = " ".join(f"[E:{c}]" for c in citations)
        return AIMessage(content=f"The answer is {answer}. {marks}".strip())

    # ------------------------------------------------------------ decision
    def decide(self) -> AIMessage:
        if self.memory.submissions > len(self.memory.rejections):  # an accepted answer is in the conversation
            return AIMessage(content="I have submitted my answer.")
        out_of_turns = self.turns >= self.model.max_turns - 1
        try:
            answer, citations = self.solve()
            citations = _cited_part(citations, self.model.cite)
            citations = self._misremember(citations)  # issue 22
        except _NeedCall as need:
            if not out_of_turns:
                return self._message(need.calls)
            answer, citations = UNKNOWN_ANSWER, []
        except _GiveUp:
            answer, citations = UNKNOWN_ANSWER, []
        return self._finish(answer, citations, out_of_turns)

    def _misremember(self, citations: list[str]) -> list[str]:
        """issue 22: with probability ``unsupported`` (seeded per question), also cite an id no tool showed:
        the answer's id with its number moved on to one the conversation never named, as a model that
        misremembers an id would."""
        if not citations or self.model.unsupported <= 0 or self._u("unsupported") >= self.model.unsupported:
            return citations
        seen = set(self.memory.names) | {e for edge in self.memory.edges for e in (edge[0], edge[2])}
        head, digits = re.match(r"^(.*?)(\d*)$", citations[-1]).groups()  # type: ignore[union-attr]
        number = int(digits) if digits else 1
        while True:
            number += 1
            invented = f"{head}{str(number).zfill(len(digits))}" if digits else f"{head}-{number}"
            if invented not in seen:
                return [*citations, invented]

    def _finish(self, answer: str, citations: list[str], out_of_turns: bool) -> AIMessage:
        citations = [c for c in citations if c not in self.memory.failed_ids]
        if self.memory.rejections:
            # React to the latest rejection: read the ids it names once, else stop citing them.
            named = [c for c in citations if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", self.memory.rejections[-1])]
            to_read = [c for c in named if c not in self.memory.read and _canonical("get_entity", {"entity_id": c}) not in self.memory.calls]
            if to_read and "get_entity" in self.tools and not out_of_turns and len(self.memory.rejections) < 3:
                return self._message([("get_entity", {"entity_id": c}) for c in to_read])
            if len(self.memory.rejections) >= 2:
                citations = [c for c in citations if c not in named]
        if self.evidence and "get_entity" in self.tools and not out_of_turns:
            unread = [
                c
                for c in citations
                if c not in self.memory.read and _canonical("get_entity", {"entity_id": c}) not in self.memory.calls
            ]
            if unread:
                return self._message([("get_entity", {"entity_id": c}) for c in unread])
        return self.submit(answer, citations)

    def solve(self) -> tuple[str, list[str]]:
        q = self.question.strip().rstrip("?").strip()
        q = _BLANK.sub(r"\1", q)
        if not q:
            raise _GiveUp("no question")
        yes_no = _YESNO.match(q)
        if yes_no and " and " in yes_no.group(1).lower():
            return self.solve_compare(yes_no.group(1))
        if not any(frame.match(q) for frame in _FRAMES[:-1]):
            body = _possessive(q)
            if body is not None:
                return self.solve_possessive(body)
        outer, residual = _parse_question(q)
        return self.solve_chain(residual, outer)

    # ------------------------------------------------------------ linking
    def _matches(self, text: str, where: str) -> list[tuple[int, str]]:
        """Known entities whose name (or alias) ends (``suffix``) or starts (``prefix``) ``text`` at a word boundary."""
        target = _norm(text).split()
        found: dict[str, int] = {}
        for eid, (name, _) in self.memory.names.items():
            for label in (name, *self.memory.aliases.get(eid, ())):
                words = _norm(label).split()
                if not words or len(words) > len(target):
                    continue
                hit = target[-len(words):] == words if where == "suffix" else target[: len(words)] == words
                if hit and len(words) > found.get(eid, 0):
                    found[eid] = len(words)
        order = {eid: i for i, eid in enumerate(self.memory.names)}
        ranked = sorted(found.items(), key=lambda kv: (-kv[1], order[kv[0]]))
        return [(n, eid) for eid, n in ranked]

    def link(self, text: str, where: str, queries: list[str], key: str) -> tuple[str, int]:
        """The entity named at the end/start of ``text``: from what is known, else by searching ``queries`` in turn."""
        matches = self._matches(text, where)
        if matches and where == "suffix" and "search_entities" in self.tools:
            # A search for a long phrase lists a hit under its name only ("Paris"), so a longer alias that ends
            # the question ("Paris, Texas") shows only when searched for itself: try the shortest such tail.
            longer = [
                query.strip() for query in queries[1:]
                if len(_norm(query).split()) > matches[0][0] and _norm(query) not in self.memory.searched
            ]
            if longer:
                raise _NeedCall([self._call("search_entities", query=min(longer, key=lambda q: len(_norm(q).split())))])
        if matches:
            best_len = matches[0][0]
            top = [m for m in matches if m[0] == best_len] + [m for m in matches if m[0] != best_len]
            n, eid = self.choose("link:" + key, top)
            return eid, n
        for query in queries:
            query = query.strip()
            if query and _norm(query) not in self.memory.searched:
                raise _NeedCall([self._call("search_entities", query=query)])
        raise _GiveUp(f"no entity named in {text!r}")

    # ------------------------------------------------------------ hops
    def pick_label(self, eid: str, hop: _Hop, key: str) -> str:
        known = self.memory.labels.get(eid)
        if known is None:
            # Reuse a label learned elsewhere if the words match it exactly; otherwise read the entity.
            seen = {lab for labs in self.memory.labels.values() for lab, _ in labs} | {r for _, r, _ in self.memory.edges}
            exact = [lab for lab in seen if _norm(_label_text(lab)) == hop.phrase]
            if exact:
                return sorted(exact)[0]
            if "get_entity" in self.tools and eid not in self.memory.failed_ids:
                raise _NeedCall([self._call("get_entity", entity_id=eid)])
            known = [(r, "out") for s, r, _ in self.memory.edges if s == eid] + [(r, "in") for _, r, t in self.memory.edges if t == eid]
            if not known:
                return hop.phrase  # nothing structured to match: read the text for the question's own words
        labels = list(dict.fromkeys(lab for lab, d in known if d == hop.direction)) or list(dict.fromkeys(lab for lab, _ in known))
        if labels and all(_label_key(lab) in _UNNAMED for lab in labels):
            raise _UnnamedRelations(f"the relations of {eid} have no names")
        scored = sorted(
            ((fuzz.WRatio(hop.phrase, _label_text(lab)), lab) for lab in labels), key=lambda sl: (-sl[0], sl[1])
        )
        scored = [sl for sl in scored if sl[0] >= _MIN_LABEL_SCORE]
        if not scored:
            raise _GiveUp(f"no relation like {hop.phrase!r} on {eid}")
        # The label the question spells out ranks first, whatever the fuzzy scores of look-alikes.
        wanted = _label_key(hop.phrase)
        ranked = [lab for _, lab in scored]
        ranked = [lab for lab in ranked if _label_key(lab) == wanted] + [lab for lab in ranked if _label_key(lab) != wanted]
        if not _resembles(hop.phrase, ranked[0]):
            # A fuzzy score alone links "father" to "place of birth": that would be a guess, not a reading.
            raise _GiveUp(f"no relation like {hop.phrase!r} on {eid}")
        return self.choose("label:" + key, ranked)

    def merged_hop(self, eid: str, hops: Sequence[_Hop], i: int) -> tuple[_Hop, int]:
        """The hop to take from ``eid`` at ``hops[i]``, and how many of the question's hops it uses.

        "country of citizenship of Primo Levi" splits at every "of" into
        citizenship, country; when ``eid`` has a label that spells several such
        hops as one phrase, the longest such label is one hop. Labels are read
        from the entity (``get_entity``) or, before that, taken from labels seen
        elsewhere in the conversation only on an exact match.
        """
        j = i
        while j + 1 < len(hops) and _joins(hops[j], hops[j + 1]):
            j += 1
        if j == i:
            return hops[i], 1
        known = self.memory.labels.get(eid)
        pool = (
            [lab for lab, d in known if d == "out"]
            if known is not None
            else sorted({lab for labs in self.memory.labels.values() for lab, _ in labs} | {r for _, r, _ in self.memory.edges})
        )
        for k in range(j, i, -1):
            wanted = _label_key(" of ".join(h.phrase for h in reversed(hops[i : k + 1])))
            exact = sorted(lab for lab in pool if _label_key(lab) == wanted) or sorted(
                # a plural or a typo of a label with "of" in it ("members of sports team")
                lab for lab in pool if fuzz.ratio(" ".join(_label_key(lab)), " ".join(wanted)) >= 90
            )
            if exact:
                return _Hop(_norm(_label_text(exact[0])), "out", hops[k].type_hint), k - i + 1
        if known is None and "get_entity" in self.tools and eid not in self.memory.failed_ids:
            raise _NeedCall([self._call("get_entity", entity_id=eid)])
        return hops[i], 1

    def walk(self, topic: str, hops: Sequence[_Hop]) -> tuple[str, list[str]]:
        """Follow ``hops`` from ``topic``; the answer's name and the path (topic first)."""
        path = [topic]
        current = topic
        i = 0
        while i < len(hops):
            hop, used = self.merged_hop(current, hops, i)
            current = self.follow(current, hop, f"{i}:{current}")
            path.append(current)
            i += used
        return self.memory.name(current), path

    def walk_from(self, topics: Sequence[str], hops: Sequence[_Hop]) -> tuple[str, list[str]]:
        """Walk from the first of equally well-named ``topics`` whose relations fit the question.

        Two entities may carry the name the question uses ("Georgia", "Paris"):
        as a reader would, it tries the next one when the question's relations
        lead nowhere from the first.
        """
        for k, topic in enumerate(topics):
            try:
                return self.walk(topic, hops)
            except _GiveUp:
                if k == len(topics) - 1:
                    raise
        raise _GiveUp("no topic")

    def follow(self, eid: str, hop: _Hop, key: str) -> str:
        try:
            label = self.pick_label(eid, hop, key)
        except _UnnamedRelations:
            # The graph does not name its relations (a GraphRAG index): the words are in the entity's text units.
            targets = self._read_text(eid, hop)
            if not targets:
                raise
            if "get_neighbors" in self.tools:
                # What the text says, checked against the graph: prefer the entities an edge links to ``eid``.
                if (eid, "*", "both") not in self.memory.queried:
                    raise _NeedCall([self._call("get_neighbors", entity_id=eid, direction="both")]) from None
                linked = {t for s, _, t in self.memory.edges if s == eid} | {s for s, _, t in self.memory.edges if t == eid}
                targets = [t for t in targets if t in linked] or targets
            return self.choose("hop:" + key, targets)
        direction = hop.direction
        targets = self.memory.neighbors(eid, label, direction)
        asked = (eid, _label_text(label), direction) in self.memory.queried
        if not targets and not asked and "get_neighbors" in self.tools:
            raise _NeedCall([self._call("get_neighbors", entity_id=eid, relation=label, direction=direction)])
        if not targets and "get_neighbors" not in self.tools:
            targets = self._text_hop(eid, hop)
        if hop.type_hint:
            typed = [t for t in targets if self.memory.names.get(t, ("", ""))[1].lower() == hop.type_hint]
            targets = typed or targets
        if not targets:
            raise _GiveUp(f"nothing via {label!r} from {eid}")
        return self.choose("hop:" + key, targets)

    def _read_text(self, eid: str, hop: _Hop) -> list[str]:
        """Entities that ``eid``'s own text units name next to the hop's words (reading the units first)."""
        if "read_text_unit" not in self.tools:
            return []
        unread = [
            u for u in self.memory.unit_ids.get(eid, [])[:3] if _canonical("read_text_unit", {"unit_id": u}) not in self.memory.calls
        ]
        if unread:
            raise _NeedCall([self._call("read_text_unit", unit_id=u) for u in unread])
        return self._text_hop(eid, hop)

    def _text_hop(self, eid: str, hop: _Hop) -> list[str]:
        """Without graph edges (text-only context): entities named in a sentence with ``eid`` and the hop's words."""
        name = _norm(self.memory.name(eid))
        stems = [w[:5] for w in hop.phrase.split() if len(w) > 2 and w not in _WH_WORDS]
        out: list[str] = []
        for text, mentions in self.memory.units:
            for sentence in re.split(r"(?<=[.!?;])\s+", text):
                s = _norm(sentence)
                if name not in s or not any(st in s for st in stems):
                    continue
                kpos = min(p for st in stems if (p := s.find(st)) >= 0)
                hits = [(s.find(_norm(self.memory.name(m))), m) for m in mentions if m != eid]
                # the entity named nearest after the relation word ("its currency is X") first
                out += [m for pos, m in sorted(hits, key=lambda h: (h[0] < kpos, abs(h[0] - kpos), h[1])) if pos >= 0]
        return list(dict.fromkeys(out))

    # ------------------------------------------------------------ question kinds
    def solve_chain(self, body: str, outer: Sequence[_Hop] = ()) -> tuple[str, list[str]]:
        # Search the whole phrase, then the tails after each connector (a name may itself contain "of").
        tails = [body[m.end():] for m in re.finditer(r"\s(?:of|is|are|in|for)\s", body, flags=re.I)]
        queries = [re.sub(r"^(?:the|a|an)\s+", "", t, flags=re.I) for t in [body, *tails]]
        topic, n_words = self.link(body, "suffix", queries, "topic")
        words = _norm(body).split()
        prefix = " ".join(words[: max(0, len(words) - n_words)])
        prefix = re.sub(r"\s+(?:the|a|an)$", "", prefix)
        hops = _hops_from_prefix(prefix) + list(reversed(outer))
        if not hops:
            raise _GiveUp("no relation in the question")
        return self.walk_from(self._namesakes(topic, n_words, body, "suffix"), hops)

    def _namesakes(self, topic: str, n_words: int, text: str, where: str) -> list[str]:
        """``topic`` first, then the other known entities whose name matches ``text`` with as many words."""
        return [topic, *(eid for n, eid in self._matches(text, where) if n == n_words and eid != topic)]

    def solve_possessive(self, body: str) -> tuple[str, list[str]]:
        """``E's R1's R2``: the entity names the text before one of the possessive marks, then each R is a hop."""
        marks = list(_POSSESSIVE.finditer(body))
        for mark in reversed(marks):  # the longest name first: "People's Republic of China's capital"
            named = _norm(body[: mark.start()])
            hits = [
                eid
                for eid, (name, _) in self.memory.names.items()
                if named in {_norm(label) for label in (name, *self.memory.aliases.get(eid, ()))}
            ]
            if hits:
                break
        else:
            for mark in marks:
                query = re.sub(r"^(?:the|a|an)\s+", "", body[: mark.start()].strip(), flags=re.I)
                if query and _norm(query) not in self.memory.searched:
                    raise _NeedCall([self._call("search_entities", query=query)])
            raise _GiveUp(f"no entity named in {body!r}")
        topic = self.choose("link:topic", hits)
        hops = [_Hop(_norm(part), "out") for part in _POSSESSIVE.split(body[mark.end():]) if _norm(part)]
        if not hops:
            raise _GiveUp("no relation in the question")
        return self.walk_from([topic, *(eid for eid in hits if eid != topic)], hops)

    def solve_compare(self, body: str) -> tuple[str, list[str]]:
        first_query = re.split(r"\s+and\s+", body, maxsplit=1, flags=re.I)[0]
        a, n_a = self.link(body, "prefix", [first_query, body], "a")
        rest_words = _norm(body).split()[n_a:]
        if rest_words and rest_words[0].lower() == "and":
            rest_words = rest_words[1:]
        rest = " ".join(rest_words)
        b, n_b = self.link(rest, "prefix", [rest], "b")
        phrase = " ".join(_norm(rest).split()[n_b:])
        phrase = " ".join(w for w in phrase.split() if w not in {"share", "shares", "each", "other", "a", "an", "the"}) or phrase
        try:
            label = self.pick_label(a, _Hop(phrase, "out"), "compare")
        except _GiveUp:
            if a in self.memory.labels:  # read A in full: it has no such relation at all
                return "no", [a, b]
            raise
        asked = any((a, _label_text(label), d) in self.memory.queried for d in ("out", "both"))
        targets = self.memory.neighbors(a, label, "both")
        if b not in targets and not asked and "get_neighbors" in self.tools:
            raise _NeedCall([self._call("get_neighbors", entity_id=a, relation=label, direction="both")])
        return ("yes" if b in targets else "no"), [a, b]
