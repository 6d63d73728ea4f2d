"""Every HTML page graphtrail writes, in a real browser at a phone's and a laptop's width.

report.html has its own, deeper checks (tests/test_report_browser.py); here each page
-- report.html, compare.html, stats.html (traces stats) and history.html -- is opened
at 390 px (device metrics of a phone) and at 1366 px, and must: declare a viewport,
never scroll the page sideways, decode every image, and keep every image inside the
screen. compare.html's plot must be shown at no less than MIN_SCALE of its natural size
(the report's floor for readable text: a phone gets the narrow drawing). history.html must show its runs as cards and its narrow plots on the phone, and
its table and wide plots on the laptop. Skips without chromium/chromedriver.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.render_report_png import find_chrome, headless_chrome, serve_directory, wait_for_images
from graphtrail.evaluators.report.plotsize import MIN_SCALE
from tests.servers import ci_note

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]

_binary, _driver = find_chrome()
if not _binary or not _driver:
    pytest.skip(ci_note("browser", "chromium/chromedriver not installed (apt-get install -y chromium chromium-driver)"),
                allow_module_level=True)

WIDTHS = (390, 1366)

STATE = """
const doc = document.documentElement;
const vw = window.innerWidth;
const imgs = Array.from(document.images).filter(i => i.getBoundingClientRect().width > 0).map(i => {
  const r = i.getBoundingClientRect();
  return {id: i.id, cls: i.className, complete: i.complete, w: i.naturalWidth, shown: r.width, left: r.left, right: r.right};
});
const viewport = document.querySelector('meta[name=viewport]');
const visible = sel => Array.from(document.querySelectorAll(sel)).filter(e => e.getBoundingClientRect().width > 0).length;
const row = document.querySelector('table#runs tbody tr');
return {vw, scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth, imgs,
        viewport: viewport ? viewport.content : null,
        runsHeader: visible('table#runs thead th'), runsRowDisplay: row ? getComputedStyle(row).display : null,
        narrowPlots: visible('.trend img.narrow'), widePlots: visible('.trend img.wide')};
"""


def _cli(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "graphtrail", *args], capture_output=True, text=True, timeout=240)
    assert proc.returncode in (0, 1), proc.stderr  # compare's gate may exit 1; the pages are written either way


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder with every kind of page: two evaluations, their comparison, trace stats and a history."""
    root = tmp_path_factory.mktemp("pages")
    a, b = root / "eval-a", root / "eval-b"
    _cli("eval", "--kg", "countries", "--questions", "countries-demo", "--limit", "4",
         "--model", "offline:cite=endpoints,noise=0.2,seed=1", "--out", str(a))
    _cli("eval", "--kg", "countries", "--questions", "countries-demo", "--limit", "4",
         "--model", "offline:cite=endpoints,noise=0.2,seed=2", "--out", str(b))
    _cli("compare", str(a), str(b), "--out", str(root / "cmp"))
    traces = next(p for p in (a / "traces.jsonl", a / "replay-traces.jsonl") if p.is_file())
    shutil.copy(traces, root / "traces.jsonl")
    _cli("traces", "stats", str(root / "traces.jsonl"), "--html", str(root / "stats.html"), "--include-replays")
    _cli("history", str(a), str(b), "--out", str(root / "hist"))
    return root


PAGES = ["eval-a/report.html", "cmp/compare.html", "stats.html", "hist/history.html"]


@pytest.fixture(scope="module", params=WIDTHS, ids=lambda w: f"{w}px")
def browser(request: pytest.FixtureRequest) -> Any:
    width = request.param
    with headless_chrome(width=width, height=900) as driver:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": 844 if width < 500 else 900, "deviceScaleFactor": 1, "mobile": width < 500})
        yield width, driver


@pytest.mark.parametrize("page", PAGES)
def test_page_fits_the_screen(site: Path, browser: Any, page: str) -> None:
    width, driver = browser
    assert (site / page).is_file(), f"{page} was not written"
    with serve_directory(site) as base:
        driver.get(f"{base}/{page}")
        wait_for_images(driver)
        state = driver.execute_script(STATE)
    assert state["viewport"] and "width=device-width" in state["viewport"], page
    assert state["scrollWidth"] <= state["clientWidth"], f"{page} scrolls sideways at {width}px: {state['scrollWidth']}"
    broken = [i for i in state["imgs"] if not i["complete"] or i["w"] == 0]
    assert broken == [], broken
    # an image may sit in a box that scrolls on its own (the report's plots), but never starts off-screen
    assert all(i["left"] >= 0 for i in state["imgs"]), state["imgs"]
    if page.startswith("hist/"):
        if width < 500:
            assert state["runsHeader"] == 0 and state["runsRowDisplay"] == "block"  # one card per run
            assert state["narrowPlots"] >= 4 and state["widePlots"] == 0
            assert all(i["right"] <= state["vw"] for i in state["imgs"])
        else:
            assert state["runsHeader"] > 10 and state["runsRowDisplay"] == "table-row"
            assert state["widePlots"] >= 4 and state["narrowPlots"] == 0
    if page.startswith("cmp/"):
        plots = [i for i in state["imgs"] if i["id"].startswith("plot-changes")]
        assert len(plots) == 1, plots  # the wide drawing or the narrow one, never both
        plot = plots[0]
        # shrunk below MIN_SCALE its 10-point labels fall under 10 px: unreadable on a phone
        assert plot["shown"] >= MIN_SCALE * plot["w"], f"compare's plot shown at {plot['shown']:.0f} of {plot['w']} px at {width}px"
        assert plot["right"] <= state["vw"]
        assert plot["id"] == ("plot-changes-narrow" if width < 500 else "plot-changes")
