"""The HTML report in a real browser: headless Chromium opens report.html from a loopback server.

Checks what a reader sees: the condition table, every plot decoded (naturalWidth > 0),
the traversal drawing, the Findings block and the named hidden influencers above
the tables, and no console errors. On a phone (390 px, emulated with device metrics)
and a laptop (1366 px): no horizontal scroll on the page, the per-question table
inside its box, plots wide enough that their tick labels are readable (estimated on
screen size of the figures' text), and a click enlarges a plot. Full-page screenshots
of both go to ``out/report-screenshots/`` (or $GRAPHTRAIL_SCREENSHOTS) for a person
to look at. A broken hand-written page proves the checks can fail. Skips when chromium/chromedriver are not installed
(Debian: apt-get install -y chromium chromium-driver).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphtrail.evaluators.records import CONDITIONS
from graphtrail.evaluators.report.plotsize import MIN_SCALE, tick_px
from scripts.render_report_png import ROOT, find_chrome, headless_chrome, serve_directory, wait_for_images
from tests.servers import ci_note

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

_binary, _driver = find_chrome()
if not _binary or not _driver:
    pytest.skip(ci_note("browser", "chromium/chromedriver not installed (apt-get install -y chromium chromium-driver)"),
                allow_module_level=True)

PAGE_STATE = """
const imgs = Array.from(document.images).map(i => ({id: i.id, src: i.src.slice(0, 40), complete: i.complete, w: i.naturalWidth, h: i.naturalHeight}));
const rows = Array.from(document.querySelectorAll('table#conditions tbody tr')).map(r => ({cls: r.className, cells: Array.from(r.cells).map(c => c.textContent.trim())}));
const header = Array.from(document.querySelectorAll('table#conditions thead th')).map(c => c.textContent.trim());
const trav = Array.from(document.querySelectorAll('#traversal svg.traversal')).find(s => s.getBoundingClientRect().width > 0);
const rects = trav ? Array.from(trav.querySelectorAll('text.label')).map(t => t.getBoundingClientRect()) : [];
let overlaps = 0;
for (let i = 0; i < rects.length; i++) for (let j = i + 1; j < rects.length; j++) {
  const a = rects[i], b = rects[j];
  if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps++;
}
const findings = Array.from(document.querySelectorAll('#findings li')).map(li => li.textContent.trim());
const hidden = Array.from(document.querySelectorAll('#hidden-influencers li .entity')).map(
  s => ({text: s.textContent.trim(), id: s.title, visible: s.getBoundingClientRect().width > 0}));
const firstTable = document.querySelector('table:not(.meta)');
const top = y => y.getBoundingClientRect().top + window.scrollY;
const order = {
  findings: document.querySelector('#findings') ? top(document.querySelector('#findings')) : null,
  hidden: document.querySelector('#hidden-influencers') ? top(document.querySelector('#hidden-influencers')) : null,
  firstTable: firstTable ? top(firstTable) : null};
const doc = document.documentElement;
return {imgs, rows, header, findings, hidden, order,
        scroll: {scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth},
        traversal: trav ? {w: trav.getBoundingClientRect().width, visible: true, nodes: trav.querySelectorAll('g.node').length,
                           labels: rects.length, overlaps,
                           titles: Array.from(trav.querySelectorAll('g.node > title')).map(t => t.textContent)} : null};
"""


def open_page(driver: Any, url: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Load ``url``; return the page's table/image state and its SEVERE console messages."""
    driver.get_log("browser")  # drop anything left from a previous page
    driver.get(url)
    wait_for_images(driver)
    state = driver.execute_script(PAGE_STATE)
    severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    return state, severe


@pytest.fixture(scope="module")
def driver() -> Any:
    with headless_chrome(width=1366, height=900) as d:
        yield d


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real report: a small evaluation of the bundled agent through the CLI."""
    out = tmp_path_factory.mktemp("browser") / "eval"
    cmd = [
        sys.executable, "-m", "graphtrail", "eval",
        "--kg", "countries", "--questions", "countries-demo", "--limit", "4",
        # Every default condition: the widest per-question table a report has.
        # The demo's model: it cites only the endpoints, so some bridge entities are hidden influencers.
        "--model", "offline:cite=endpoints,noise=0.2,seed=1",
        "--out", str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert (out / "report.html").is_file()
    return out


def test_report_renders_table_plots_and_traversal(driver: Any, report_dir: Path) -> None:
    with serve_directory(report_dir) as base:
        state, severe = open_page(driver, f"{base}/report.html")
    assert severe == [], f"console errors: {severe}"

    conditions = [row["cls"] for row in state["rows"]]
    assert conditions == [c for c in CONDITIONS if c != "random_subsets"]
    assert not any("Paper" in h for h in state["header"])  # the paper's 2WikiMultiHopQA values mean nothing here
    baseline = state["rows"][0]["cells"]
    assert any(cell.endswith("%") for cell in baseline), baseline  # an accuracy figure is shown

    ids = {img["id"] for img in state["imgs"]}
    assert {"plot-accuracy", "plot-accuracy-narrow", "plot-influence", "plot-influence-narrow"} <= ids
    broken = [img for img in state["imgs"] if not img["complete"] or img["w"] == 0]
    assert broken == [], broken
    # the traversal: inline SVG, every node with a hover title saying whether it was cited and which step revealed it
    trav = state["traversal"]
    assert trav is not None and trav["w"] > 100 and trav["nodes"] >= 2 and trav["labels"] >= 2
    assert len(trav["titles"]) == trav["nodes"] and all(("cited" in t) for t in trav["titles"])
    assert any("first revealed at step" in t and " by " in t for t in trav["titles"]), trav["titles"]
    assert trav["overlaps"] == 0


def test_findings_and_hidden_influencers_open_the_page(driver: Any, report_dir: Path) -> None:
    with serve_directory(report_dir) as base:
        state, severe = open_page(driver, f"{base}/report.html")
    assert severe == [], f"console errors: {severe}"

    # Findings: two to four sentences, each with a number; above every table.
    assert 2 <= len(state["findings"]) <= 4, state["findings"]
    assert all(re.search(r"\d", sentence) for sentence in state["findings"])
    assert any("McNemar p" in s for s in state["findings"]) and any("inconclusive at n = 4" in s for s in state["findings"])
    assert state["order"]["findings"] < state["order"]["firstTable"]

    # Hidden influencers: exactly the uncited-but-influential entities of results.json, by name, id on hover.
    results = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    expected = {(e["name"], e["entity_id"]) for e in results["entities"] if e["influential"] and not e["cited"]}
    assert expected, "the demo model should leave some influential bridge entity uncited"
    shown = {(h["text"], h["id"]) for h in state["hidden"]}
    assert shown == expected
    assert all(h["visible"] and not re.fullmatch(r"E\d+", h["text"]) for h in state["hidden"])
    assert state["order"]["hidden"] < state["order"]["firstTable"]


#: Where the screenshots go, for a person to look at (out/ is git-ignored).
SCREENSHOTS = Path(os.environ.get("GRAPHTRAIL_SCREENSHOTS") or ROOT / "out" / "report-screenshots")

#: Smallest tick-label size (CSS px) that counts as readable.
READABLE_PX = 9.0

LAYOUT = """
const doc = document.documentElement;
const plots = Array.from(document.querySelectorAll('img.plot')).filter(i => i.getBoundingClientRect().width > 0).map(i => ({
  id: i.id, natural: i.naturalWidth, shown: i.getBoundingClientRect().width,
  box: i.parentElement.getBoundingClientRect().width}));
const q = document.querySelector('table#questions');
const box = q.parentElement.getBoundingClientRect().width;
return {innerWidth: window.innerWidth, scrollWidth: doc.scrollWidth, plots,
        questions: {table: q.getBoundingClientRect().width, box: box,
                    heads: Array.from(q.querySelectorAll('thead th')).map(th => th.textContent.trim()),
                    rowDisplay: getComputedStyle(q.querySelector('tbody tr')).display}};
"""


def emulate(driver: Any, width: int, height: int, mobile: bool) -> None:
    """Device metrics as a phone or laptop reports them (viewport meta honoured when ``mobile``)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile})


def full_page_screenshot(driver: Any, path: Path, max_height: int = 6000) -> None:
    height = min(int(driver.execute_script("return document.documentElement.scrollHeight")), max_height)
    width = int(driver.execute_script("return document.documentElement.clientWidth"))
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


@pytest.mark.parametrize(("name", "width", "height", "mobile"), [("phone-390", 390, 844, True), ("laptop-1366", 1366, 900, False)])
def test_layout_fits_the_screen_and_plots_stay_readable(driver: Any, report_dir: Path, name: str, width: int, height: int,
                                                        mobile: bool) -> None:
    try:
        emulate(driver, width, height, mobile)
        with serve_directory(report_dir) as base:
            state, severe = open_page(driver, f"{base}/report.html")
            layout = driver.execute_script(LAYOUT)
            full_page_screenshot(driver, SCREENSHOTS / f"report-{name}.png")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert severe == [], severe
    assert layout["innerWidth"] == width
    assert layout["scrollWidth"] <= layout["innerWidth"], layout  # no sideways scroll of the page
    if mobile:  # the phone drawings, each whole on the screen at full size: no sideways scroll inside a box either
        assert {p["id"] for p in layout["plots"]} == {"plot-accuracy-narrow", "plot-influence-narrow"}
        for plot in layout["plots"]:
            assert plot["shown"] <= width and plot["shown"] >= plot["natural"] - 1, plot
            assert tick_px(plot["shown"] / plot["natural"]) >= READABLE_PX, plot
    else:
        assert {p["id"] for p in layout["plots"]} == {"plot-accuracy", "plot-influence"}
    for plot in layout["plots"]:
        scale = plot["shown"] / plot["natural"]
        # Never shrunk below MIN_SCALE (a narrow screen scrolls the plot's box instead), so the
        # figures' tick labels (TICK_PT points at natural size) stay readable.
        assert scale >= MIN_SCALE - 0.01, plot
        assert tick_px(scale) >= READABLE_PX, (plot, tick_px(scale))
        assert plot["shown"] >= min(plot["natural"], 0.8 * width) - 1, plot  # and as large as the screen allows
    assert state["traversal"] is not None and state["traversal"]["overlaps"] == 0 and state["traversal"]["w"] <= width
    if mobile:  # the per-question table is a card per question
        assert layout["questions"]["rowDisplay"] == "block" and layout["questions"]["table"] <= width
    if not mobile:  # the per-question table fits a laptop screen: no sideways scroll to read the answers
        assert layout["questions"]["table"] <= layout["questions"]["box"] + 1, layout["questions"]
        assert "Under ablations" in layout["questions"]["heads"]
    assert (SCREENSHOTS / f"report-{name}.png").stat().st_size > 10_000


def test_a_click_enlarges_a_plot_and_opens_the_answers(driver: Any, report_dir: Path) -> None:
    emulate(driver, 1366, 900, False)  # a laptop shows the wide drawings, which enlarge on click
    try:
        with serve_directory(report_dir) as base:
            open_page(driver, f"{base}/report.html")
            before = driver.execute_script("return document.getElementById('plot-accuracy').getBoundingClientRect().width")
            driver.execute_script("document.getElementById('plot-accuracy').scrollIntoView()")
            driver.find_element("id", "plot-accuracy").click()
            after = driver.execute_script("return document.getElementById('plot-accuracy').getBoundingClientRect().width")
            scroll = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            emulate(driver, 390, 844, True)  # and a phone's card opens its answers
            open_page(driver, f"{base}/report.html")
            cell = driver.find_element("css selector", "table#questions td.answers summary")
            driver.execute_script("arguments[0].scrollIntoView()", cell)
            cell.click()
            opened = driver.execute_script(
                "return Array.from(document.querySelectorAll('table#questions td.answers details'))"
                ".filter(d => d.open).map(d => d.querySelectorAll('li').length)")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert after > 1.4 * before, (before, after)  # enlarged ...
    assert scroll[0] <= scroll[1], scroll  # ... inside its own box: the page still does not scroll sideways
    n_ablations = len([c for c in CONDITIONS if c not in ("baseline", "leave_one_out", "random_subsets")])
    assert opened == [n_ablations]  # one line per ablation, in the opened cell


def test_checks_catch_a_broken_page(driver: Any, tmp_path: Path) -> None:
    # The same checks on a page with a missing plot and a script error must fail.
    (tmp_path / "report.html").write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>broken</title></head><body>"
        "<table id='conditions'><thead><tr><th>Condition</th></tr></thead><tbody></tbody></table>"
        "<img id='plot-accuracy' src='missing.png'>"
        "<figure id='traversal'><svg class='traversal' width='300' height='100'><g class='node'><title>x</title>"
        "<text class='label' x='10' y='50'>Overlapping</text></g><g class='node'><title>y</title>"
        "<text class='label' x='20' y='52'>Overlapping</text></g></svg></figure>"
        "<table><tr><td style='min-width:3000px'>too wide</td></tr></table>"
        "<script>undefinedFunction()</script></body></html>",
        encoding="utf-8",
    )
    with serve_directory(tmp_path) as base:
        state, severe = open_page(driver, f"{base}/report.html")
    assert state["rows"] == []
    assert state["traversal"] is not None and state["traversal"]["overlaps"] == 1  # the overlap check can fail
    assert any(not i["complete"] or i["w"] == 0 for i in state["imgs"])
    assert state["findings"] == [] and state["hidden"] == []
    assert state["scroll"]["scrollWidth"] > state["scroll"]["clientWidth"]  # the scroll check can fail
    messages = " ".join(e["message"] for e in severe)
    assert "missing.png" in messages and "undefinedFunction" in messages
