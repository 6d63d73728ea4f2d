"""The question grammar the offline model reads: frames, hops and possessives (docs/models.md has the table).

A question is read from the outside in: a frame ("What is the <R> of <NP>?",
"The <R> of <NP> is", ...) gives the outermost hop, noun phrases such as "the
<type> whose <relation> is <E>" add inverse hops, and what is left ends with
the topic entity's name. The policy (policy.py) links that name and walks the
hops over the graph; nothing here looks at the graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .text import _norm

_WH = re.compile(r"^\s*(?:what|which|who|where)\s+(?:is|are|was|were)\s+(?:the\s+)?", re.I)
_YESNO = re.compile(r"^\s*(?:do|does|did|are|is)\s+(.+)$", re.I)
_WHOSE = re.compile(r"^(?:the\s+)?(?P<type>[\w\s-]*?)\s*whose\s+(?P<rel>.+?)\s+(?:is|are|was|were)$", re.I)


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
