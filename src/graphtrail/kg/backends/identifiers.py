"""The only names that reach a Cypher statement's text: labels, relationship types, property names.

Values (ids, names, texts, relation labels, paths, id lists) always travel as
query parameters. Names cannot (Cypher has no parameter for a label), so a name
is let into a statement only after it matches :data:`IDENTIFIER`: ASCII
letters, digits and ``_``, not starting with a digit, at most
:data:`MAX_IDENTIFIER` characters. Such a name cannot close a quote, start a
comment or carry an escape (Neo4j decodes ``\\u0060`` inside backticks), and
is backtick-quoted anyway so that it never collides with a keyword.

A relation label is free text (``"capital of"``); as a Neo4j relationship type
it becomes :func:`relationship_type` of it (``CAPITAL_OF``), and the original
text is written beside it as a property, so nothing the user wrote is lost.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import KGError

__all__ = [
    "IDENTIFIER",
    "MAX_IDENTIFIER",
    "MAX_KEY_BYTES",
    "UnsafeNameError",
    "check_keys",
    "cypher_name",
    "is_identifier",
    "relationship_type",
]

#: Longest label, type or property name graphtrail puts into a statement.
MAX_IDENTIFIER = 64
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,%d}" % (MAX_IDENTIFIER - 1))
#: Longest id (UTF-8 bytes) written to a database: ids are index keys, and Neo4j's
#: range index refuses keys over ~8 KB half-way through an import.
MAX_KEY_BYTES = 4096
#: Relationship type for a relation label with no letter or digit in it.
FALLBACK_TYPE = "RELATED"


class UnsafeNameError(KGError):
    """A label, relationship type or property name is not a plain identifier; nothing was run."""


def is_identifier(name: object) -> bool:
    """Whether ``name`` may appear in a statement (see :data:`IDENTIFIER`)."""
    return isinstance(name, str) and IDENTIFIER.fullmatch(name) is not None


def cypher_name(name: object, what: str = "label or property name") -> str:
    """``name`` backtick-quoted for a statement, after checking it is a plain identifier.

    Raises :class:`UnsafeNameError` (a :class:`KGError`) for anything else,
    showing at most the first 40 characters of the offending name.
    """
    if not is_identifier(name):
        shown = repr(name[:40]) + ("..." if len(name) > 40 else "") if isinstance(name, str) else type(name).__name__
        raise UnsafeNameError(
            f"{what} {shown} is not a plain identifier: use ASCII letters, digits and _ "
            f"(not starting with a digit, at most {MAX_IDENTIFIER} characters)"
        )
    return f"`{name}`"


def relationship_type(label: str) -> str:
    """The Neo4j relationship type for a free-text relation label: ``"capital of"`` -> ``CAPITAL_OF``.

    Letters and digits kept (ASCII), every other run of characters one ``_``,
    upper-cased, cut to :data:`MAX_IDENTIFIER`. Distinct labels may share a
    type; the label itself is stored as a property and read back from there.
    """
    words = re.findall(r"[A-Za-z0-9]+", label[: MAX_IDENTIFIER * 8])
    text = "_".join(words).upper()[:MAX_IDENTIFIER] or FALLBACK_TYPE
    return f"R_{text}"[:MAX_IDENTIFIER] if text[0].isdigit() else text


def check_keys(kg: Any, where: str) -> None:
    """Refuse (:class:`KGError`) a graph with an entity, text unit or community id over :data:`MAX_KEY_BYTES`.

    Run before the first write, so an import is refused whole rather than
    failing half-way with the database's own message.
    """
    kinds = (("entity", kg.entity_ids()), ("text unit", kg.text_units), ("community", kg.communities))
    for kind, ids in kinds:
        for value in ids:
            size = len(str(value).encode("utf-8", "surrogatepass"))
            if size > MAX_KEY_BYTES:
                raise KGError(
                    f"{where}: {kind} id {str(value)[:30]!r}... is {size} bytes; "
                    f"graph databases index ids of at most {MAX_KEY_BYTES} bytes: shorten it"
                )
