"""Render graphtrail's HTML report to a PNG with headless Chromium (docs/img/report.png).

    python scripts/render_report_png.py                        # runs `graphtrail demo` into a temp dir
    python scripts/render_report_png.py --report out/report.html --png docs/img/report.png

Needs Debian's ``chromium`` and ``chromium-driver`` (or CHROME_BINARY /
CHROMEDRIVER pointing at a Chrome and its driver) and ``selenium``. The report
is served from a local HTTP server on 127.0.0.1, exactly as the browser test
opens it. The helpers here (``serve_directory``, ``headless_chrome``) are shared
with tests/test_report_browser.py.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: Flags that keep headless Chromium off the network and independent of any profile.
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def find_chrome() -> tuple[str | None, str | None]:
    """(browser binary, chromedriver) from CHROME_BINARY/CHROMEDRIVER or PATH; None when absent."""
    binary = os.environ.get("CHROME_BINARY") or next(
        (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None
    )
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    return binary, driver


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


@contextlib.contextmanager
def serve_directory(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="report-http", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextlib.contextmanager
def headless_chrome(width: int = 1280, height: int = 1000, extra_flags: tuple[str, ...] = ()) -> Iterator[Any]:
    """A Selenium Chrome driver for headless Chromium, with browser console logs enabled."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = find_chrome()
    if not binary or not driver_path:
        raise RuntimeError("chromium and chromedriver are needed: apt-get install -y chromium chromium-driver")
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager download a browser
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (*CHROME_FLAGS, *extra_flags):
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    with tempfile.TemporaryDirectory(prefix="graphtrail-chrome-") as profile:
        options.add_argument(f"--user-data-dir={profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
        try:
            driver.set_page_load_timeout(60)
            yield driver
        finally:
            driver.quit()


def wait_for_images(driver: Any, timeout: float = 20.0) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return Array.from(document.images).every(i => i.complete)")
    )


def run_demo(out: Path) -> Path:
    """Run ``graphtrail demo`` into ``out``; return the report.html path."""
    subprocess.run([sys.executable, "-m", "graphtrail", "demo", "--out", str(out), "--force"], check=True, stdout=subprocess.DEVNULL)
    return out / "report.html"


def screenshot(report: Path, png: Path, width: int = 1200, max_height: int = 1500) -> Path:
    """Open ``report`` over HTTP in headless Chromium and save the top of the page as ``png``."""
    with serve_directory(report.parent) as base, headless_chrome(width, 900, ("--hide-scrollbars",)) as driver:
        driver.get(f"{base}/{report.name}")
        wait_for_images(driver)
        height = int(driver.execute_script("return document.documentElement.scrollHeight"))
        driver.set_window_size(width, min(height, max_height))
        wait_for_images(driver)
        png.parent.mkdir(parents=True, exist_ok=True)
        if not driver.save_screenshot(str(png)):
            raise RuntimeError(f"could not write {png}")
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="an existing report.html (default: run the demo)")
    parser.add_argument("--png", type=Path, default=ROOT / "docs" / "img" / "report.png")
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--max-height", type=int, default=1500)
    args = parser.parse_args(argv)
    binary, driver = find_chrome()
    if not binary or not driver:
        print("render_report_png: chromium/chromedriver not found; apt-get install -y chromium chromium-driver", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="graphtrail-report-") as tmp:
        report = args.report or run_demo(Path(tmp) / "demo")
        if not report.is_file():
            print(f"render_report_png: no such report: {report}", file=sys.stderr)
            return 2
        png = screenshot(report, args.png, args.width, args.max_height)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
