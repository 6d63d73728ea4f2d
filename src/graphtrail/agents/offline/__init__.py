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
(rapidfuzz over the labels ``get_entity`` listed, see ``text._resembles``), follows
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

The package, one job per module, imported in this order:

- ``text``: folding and normalising names, relation labels and their resemblance;
- ``grammar``: the question grammar (frames, hops, possessives);
- ``memory``: what the conversation has shown (re-read on every call);
- ``policy``: the next tool call or the answer, from the question and the memory;
- ``model``: ``OfflineChatModel``, the LangChain chat model around the policy.

Imports: LangChain, pydantic and rapidfuzz, and from graphtrail only
``graphtrail._lines``, ``graphtrail.kg.fields`` (``DEFAULT_RELATION``) and
``graphtrail.agents.sampling``; never the tracer or the evaluators.
"""

from __future__ import annotations

from .model import OfflineChatModel
from .policy import UNKNOWN_ANSWER

__all__ = ["OfflineChatModel", "UNKNOWN_ANSWER"]
