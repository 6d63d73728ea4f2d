"""The offline model's policy: from what the conversation shows, the next tool call or the answer.

``_Policy.decide`` re-derives the whole plan on every call: link the topic
entity (``search_entities``), pick for each hop the relation label the words
spell or resemble (``get_entity``), follow it (``get_neighbors``, or the
entity's text units when the graph names no relations), and submit the entity
reached with the path it cites. Whenever it lacks a tool result it raises
``_NeedCall`` (the calls to make this turn); when it cannot go on it raises
``_GiveUp`` and submits "unknown". Choices are deterministic unless the model
has ``noise`` (a hash of seed, trial, question and choice point, never a
stateful RNG).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage
from rapidfuzz import fuzz

from ..sampling import current_trial
from .grammar import _BLANK, _FRAMES, _POSSESSIVE, _YESNO, _Hop, _hops_from_prefix, _joins, _parse_question, _possessive
from .memory import _canonical, _Memory
from .text import _MIN_LABEL_SCORE, _UNNAMED, _WH_WORDS, _label_key, _label_score, _label_text, _norm, _resembles

if TYPE_CHECKING:  # pragma: no cover
    from .model import OfflineChatModel

UNKNOWN_ANSWER = "unknown"


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
            citations = self._misremember(citations)
        except _NeedCall as need:
            if not out_of_turns:
                return self._message(need.calls)
            answer, citations = UNKNOWN_ANSWER, []
        except _GiveUp:
            answer, citations = UNKNOWN_ANSWER, []
        return self._finish(answer, citations, out_of_turns)

    def _misremember(self, citations: list[str]) -> list[str]:
        """With probability ``unsupported`` (seeded per question), also cite an id no tool showed: the
        answer's id with its number moved on to one the conversation never named, as a model that
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
            ((_label_score(hop.phrase, lab), lab) for lab in labels), key=lambda sl: (-sl[0], sl[1])
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
