"""The HTML report's look: CSS that reads on any screen, and how a plot is embedded.

Kept apart from :mod:`.render` (what the report says) so layout changes and content
changes do not collide. The page has no script: a plot enlarges on click through a
hidden checkbox and CSS. Plots are SVG, shown at their natural width where it fits and
never below :data:`~.plotsize.MIN_SCALE` of it, so their text stays readable on a phone;
a narrower screen scrolls the plot's own box sideways, never the page.
"""

from __future__ import annotations

import base64
import html

from .plotsize import MIN_SCALE, ZOOM, svg_width_px

__all__ = ["CSS", "FONT_STACK", "ENLARGE", "plot_html", "plot_pair_html"]

#: Latin system fonts first, then CJK fonts for names in Chinese, Japanese or Korean (the browser falls back glyph by glyph).
FONT_STACK = (
    'system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Helvetica Neue",Arial,'
    '"Noto Sans CJK SC","Noto Sans SC","Source Han Sans SC","PingFang SC","Hiragino Sans GB","Microsoft YaHei",'
    '"WenQuanYi Micro Hei","Noto Sans CJK JP","Hiragino Sans","Yu Gothic","Noto Sans CJK KR","Malgun Gothic",sans-serif'
)

CSS = """
body{font-family:%FONTS%;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#212529;overflow-wrap:break-word}
table.meta{font-size:.85rem;margin:.3rem 0 1rem}table.meta th{background:none;font-weight:600;color:#495057;white-space:nowrap}
table.meta td{overflow-wrap:anywhere}table.meta td[title]{text-decoration:underline dotted #adb5bd;cursor:help}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #dee2e6;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{border:1px solid #dee2e6;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f1f3f5}tr.baseline td{font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.paper{color:#868e96;font-style:italic}.note{color:#495057}.power{background:#fff4e6;border-left:4px solid #e8590c;padding:.5rem 1rem}
img.plot{max-width:100%;border:1px solid #dee2e6;margin:.5rem 0}figure{margin:1rem 0}
img.plot.svg{width:var(--w,100%);max-width:100%;min-width:calc(var(--w,0px) * %MINSCALE%);height:auto;margin:0}
.zoom{position:absolute;opacity:0;width:1px;height:1px}
.plotbox{display:block;overflow-x:auto;max-width:100%;cursor:zoom-in;margin:.5rem 0}
.zoom:checked+.plotbox{cursor:zoom-out}.zoom:checked+.plotbox img.plot.svg{width:calc(var(--w,600px) * %ZOOM%);max-width:none}
.zoom:focus-visible+.plotbox{outline:2px solid #1c7ed6}
.label-uncited_influential{background:#ffe3e3}.label-cited_influential{background:#ebfbee}
details{margin:.5rem 0}
.invalid{background:#fff5f5;border:2px solid #e03131;color:#c92a2a;padding:.5rem 1rem;font-weight:600}
.warn{background:#fff9db;border-left:4px solid #f08c00;padding:.5rem 1rem;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
#findings .lead{font-size:1.1rem;font-weight:600;margin:.5rem 0}#findings{background:#e7f5ff;border-left:4px solid #1c7ed6;padding:.3rem 1rem}#findings ul{margin:.4rem 0;padding-left:1.2rem}
#hidden-influencers ul{columns:2 24rem;margin:.3rem 0}
.entity[title],td.gold[title]{text-decoration:underline dotted #adb5bd}th[title]{cursor:help}
td.changed,li.changed{background:#fff3bf}table#questions td{max-width:14rem}table#questions td.q{min-width:12rem}
td.answers ul{list-style:none;margin:.2rem 0;padding:0}td.answers summary{cursor:pointer;white-space:nowrap}
@media (max-width:600px){body{margin:1rem auto;padding:0 .6rem}h1{font-size:1.3rem}table{font-size:.8rem}
 table#questions thead{display:none}table#questions,table#questions tbody,table#questions tr{display:block}
 table#questions tr{border:1px solid #dee2e6;border-radius:6px;margin:0 0 .8rem;padding:.3rem .5rem}
 table#questions td{display:block;text-align:right;border:none;border-bottom:1px solid #f1f3f5;padding:.2rem 0;max-width:none}
 table#questions td::before{content:attr(data-label);float:left;margin-right:.8rem;font-weight:600;color:#495057}
 table#questions td.q{display:block;text-align:left;min-width:0}table#questions td.q::before{content:none}
 table#questions td.answers{text-align:left}table#questions td.answers::before{float:none;display:block}}
.plot-narrow{display:none}img.plot.narrow{width:100%;height:auto;margin:.5rem 0}
@media (max-width:600px){.plot-wide{display:none}.plot-narrow{display:block}}
svg.traversal{display:block;width:100%;height:auto;margin:.3rem 0;border:1px solid #dee2e6;font-family:inherit}
svg.traversal.narrow{display:none}svg.traversal .node{cursor:help}svg.traversal .edge line{pointer-events:stroke}
@media (max-width:600px){svg.traversal.wide{display:none}svg.traversal.narrow{display:block}}
dl#glossary{font-size:.9rem;color:#495057}dl#glossary dt{font-weight:600;float:left;margin-right:.4rem}dl#glossary dd{margin:0 0 .2rem}
""".replace("%FONTS%", FONT_STACK).replace("%MINSCALE%", f"{MIN_SCALE:g}").replace("%ZOOM%", f"{ZOOM:g}")


def plot_html(name: str, data: bytes, alt: str) -> str:
    """A plot embedded in the page: SVG in a box that scrolls and enlarges on click, or a PNG as it is."""
    b64 = base64.b64encode(data).decode("ascii")
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return f'<img class="plot" id="plot-{name}" alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">'
    width = svg_width_px(data)
    style = f' style="--w:{width:.0f}px"' if width else ""
    # A hidden checkbox before the label: clicking the plot toggles it, and CSS enlarges the plot (no script).
    return (f'<input type="checkbox" class="zoom" id="zoom-{name}" aria-label="enlarge the plot">'
            f'<label class="plotbox" for="zoom-{name}" title="Click to enlarge; click again to shrink">'
            f'<img class="plot svg" id="plot-{name}" alt="{html.escape(alt)}"{style} src="data:image/svg+xml;base64,{b64}"></label>')


#: Said under every figure: how to see it larger.
ENLARGE = " Click or tap the plot to enlarge it."


def plot_pair_html(name: str, wide: bytes, narrow: bytes | None, alt: str) -> str:
    """A plot with its phone drawing: the page shows the wide one above 600 px, the narrow one (full size) below."""
    if narrow is None:
        return plot_html(name, wide, alt)
    width = svg_width_px(narrow)
    cap = f' style="max-width:{width:.0f}px"' if width else ""
    b64 = base64.b64encode(narrow).decode("ascii")
    return (f'<div class="plot-wide">{plot_html(name, wide, alt)}</div><div class="plot-narrow">'
            f'<img class="plot narrow" id="plot-{name}-narrow" alt="{html.escape(alt)}"{cap} '
            f'src="data:image/svg+xml;base64,{b64}"></div>')
