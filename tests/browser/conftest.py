"""`memdir ui` in a real browser: Debian's Chromium (/usr/bin/chromium, never a downloaded build), driven
headless by Playwright, against a real `memdir ui --no-browser` process.

Runs only when asked: `pytest tests/browser --browser` (.ci/run does when it could install Chromium) or
MEMDIR_BROWSER=1. Screenshots go to build/ui-screenshots/ in the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ui_folder

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "ui-screenshots"


def _wanted(config) -> bool:
    return config.getoption("--browser") or os.environ.get("MEMDIR_BROWSER", "") not in ("", "0")


def pytest_collection_modifyitems(config, items):
    if _wanted(config):
        return
    skip = pytest.mark.skip(reason="browser suite: pass --browser or set MEMDIR_BROWSER=1 (.ci/run does)")
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def playwright_browser(tmp_path_factory):
    """One headless Chromium for the session, with a fresh profile."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found: `apt-get install chromium` (.ci/run does as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed: pip install -e '.[browser]'")
    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM, headless=True,
            args=FLAGS, viewport={"width": 1280, "height": 900})
        yield context
        context.close()


@pytest.fixture
def page(playwright_browser):
    """A new tab with no cookies from other tests; a JavaScript dialog or page error fails the test
    unless the test handles it (`page.dialogs_ok`)."""
    playwright_browser.clear_cookies()
    tab = playwright_browser.new_page()
    tab.errors = []
    tab.on("pageerror", lambda exc: tab.errors.append(str(exc)))
    yield tab
    tab.close()


class Served:
    def __init__(self, url: str, folder: Path, proc: subprocess.Popen) -> None:
        self.url, self.folder, self.proc = url, folder, proc
        self.origin = re.match(r"http://[^/]+", url).group(0)
        self.base = url.split("?", 1)[0]  # the origin and the run's random path: every page is under it


@pytest.fixture
def served(tmp_path):
    """`memdir ui --no-browser` on the ui_folder memories, as a real process; its printed URL."""
    folder = tmp_path / "memory"
    ui_folder.build(folder)
    project = tmp_path / "project"
    project.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "memdir.entry.cli", "ui", "--dir", str(folder), "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=project, env=os.environ)
    try:
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/[\w-]+/\?token=\S+", line)
        assert found, f"memdir ui printed {line!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
        yield Served(found.group(0), folder, proc)
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="session")
def screenshots() -> Path:
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    return SCREENSHOTS
