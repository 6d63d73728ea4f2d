"""graphtrail._markdown: a value from the data cannot change the structure of the Markdown it is placed in.

Each hostile value is placed in every context graphtrail uses (a paragraph, a list
item, a quote, a table cell, a heading, a code span) and the document is parsed
with a CommonMark parser (markdown-it, GFM tables): its block structure must be
the one a plain word gives, no raw HTML may survive, and no GitHub mention.
"""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from graphtrail._markdown import MAX_VALUE, fit, md_cell, md_code, md_heading, md_table, md_text, one_line

HOSTILE = [
    "Alpha\n~~~", "Beta\n# X", "\n# X", "Gamma\n> quoted", "\n> q", "Delta\r| a | b |\r|---|---|", "row\r\nrow",
    "@octocat", "ping @acme/security-team now", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))", "![i](http://x/y.png)", "&lt;b&gt; &#64; &amp;", "```\ncode", "~~~python",
    "Eta\u2028Theta\u2029Iota\x85Kappa\x0bL\x0cM", "    indented code", "\tTabbed", "1. one", "1) one", "- item",
    "+ item", "* item", "# heading", "###### h6", "> quote", "---", "===", "***", "| pipe |", "ends with \\",
    "<!-- c -->", "<details>", "Hard  \nbreak", "*emph* _u_ ~~s~~ `code`", "[ref]: http://evil", "x" * 200_000,
    "`", "``", " ` ", "<https://example.com>", "a\\|b", "trailing ##",
]
PLAIN = "plainword"


def _doc(value: str) -> str:
    return "\n".join([
        md_text(value), "",
        f"- {md_text(value)}", f"- {md_text(value)}", "",
        f"> {md_text(value)}", "",
        md_table(["Name", "Other"], [[value, "x"], ["y", value]]), "",
        f"### {md_heading(value)}", "",
        f"Code {md_code(value)} here.", "",
    ])


def _structure(text: str) -> list[tuple[str, str, int]]:
    return [(t.type, t.tag, t.nesting) for t in MarkdownIt("gfm-like", {"linkify": False}).parse(text) if t.type != "inline"]


def _inline_kinds(text: str) -> set[str]:
    kinds = set()
    for t in MarkdownIt("gfm-like", {"linkify": False}).parse(text):
        for child in t.children or []:
            kinds.add(child.type)
    return kinds


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: repr(v[:20]))
def test_a_hostile_value_keeps_the_document_s_structure(value: str) -> None:
    doc = _doc(value)
    assert _structure(doc) == _structure(_doc(PLAIN))
    # inline: text, escapes, breaks and the one code span; never HTML, a link, an image or emphasis
    assert _inline_kinds(doc) <= {"text", "softbreak", "code_inline", "text_special"}, _inline_kinds(doc)
    html = MarkdownIt("gfm-like", {"linkify": False}).render(doc)
    assert "<script" not in html and "<img" not in html and "<a " not in html and "<del>" not in html
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert not re.search(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]", outside_code), "a live mention"
    assert len(doc) < 12 * MAX_VALUE + 500  # a 200,000-character value is cut


def test_values_read_the_same_once_rendered() -> None:
    md = MarkdownIt("gfm-like", {"linkify": False})
    for value in ["a_b c*d [x] ~y~ 1. z", "p < 0.001 & q > 2", "#1 > #2", "countries-0229"]:
        assert md.renderInline(md_text(value)).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == value
    assert md_text("@octocat") == "@\u2060octocat"  # reads the same, notifies nobody
    assert md_text("uncited_removal countries-0229") == "uncited_removal countries-0229"  # the raw file stays readable
    assert one_line("a\r\nb\u2028c") == "a b c"


def test_fit_cuts_at_a_line_closes_details_and_points_at_the_rest() -> None:
    body = "\n".join(["### t", "", "<details><summary>s</summary>", "", *[f"| row {i} |" for i in range(20_000)]])
    cut = fit(body, 5_000, rest="compare.html")
    assert len(cut.encode("utf-8")) <= 5_000
    assert cut.rstrip().endswith("Everything is in compare.html.**") or "compare.html" in cut.splitlines()[-1]
    assert re.search(r"and \d+ more line\(s\)", cut) and cut.count("</details>") == 1
    assert fit("short", 5_000) == "short"
