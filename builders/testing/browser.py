"""A real headless Chromium for page tests and benchmarks: Debian's ``chromium`` driven by selenium
through Debian's ``chromium-driver`` (``apt-get install chromium chromium-driver``).

The driver is always the system one, given by path, so selenium never looks for or downloads a
driver or a browser (``SE_OFFLINE`` is set as well). Every session gets a fresh profile folder,
no network-facing background services, and downloads that land in a given folder without asking::

    with headless_chromium(downloads=tmp / "downloads") as driver:
        driver.get(Path("index.html").resolve().as_uri())
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--autoplay-policy=no-user-gesture-required",
)
LAPTOP_WINDOW = (1366, 768)


def missing_browser() -> str | None:
    """Why no browser can start here (None when both binaries are installed)."""
    absent = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.is_file()]
    if absent:
        return f"{' and '.join(absent)} missing: apt-get install chromium chromium-driver (.ci/run does)"
    return None


@contextmanager
def headless_chromium(
    downloads: str | os.PathLike[str] | None = None, window: tuple[int, int] = LAPTOP_WINDOW
) -> Iterator[object]:
    """A selenium ``webdriver.Chrome`` on the system Chromium, quit on exit."""
    problem = missing_browser()
    if problem:
        raise RuntimeError(problem)
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium-manager, were it ever reached, stays offline
    from selenium import webdriver  # lazy: selenium is a test dependency, not a runtime one
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="vqabench-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={window[0]},{window[1]}"):
            options.add_argument(flag)
        if downloads is not None:
            options.add_experimental_option(
                "prefs",
                {
                    "download.default_directory": str(Path(downloads).resolve()),
                    "download.prompt_for_download": False,
                    "download.directory_upgrade": True,
                },
            )
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        try:
            if downloads is not None:  # headless Chromium also wants it said over DevTools
                driver.execute_cdp_cmd(
                    "Browser.setDownloadBehavior",
                    {"behavior": "allow", "downloadPath": str(Path(downloads).resolve())},
                )
            yield driver
        finally:
            driver.quit()
