"""Fixtures for the website tests: the built site, a local HTTP server for it, and headless Chromium.

The site is the one ``make book`` built: ``BOOK_HTML`` (default ``_build/html``). It is served on
127.0.0.1 on a free port by a thread of this test process. Chromium is Debian's (``/usr/bin/chromium``,
or ``$CHROMIUM``) driven by Playwright; ``playwright install`` is never needed.

Without Chromium the browser tests are *skipped* with the reason, a banner says in capital letters
that they were NOT RUN, and with ``REQUIRE_BROWSER=1`` (CI) they fail instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from site_helpers import ROOT, serve

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
# Flags known to work on these machines: no sandbox as root, no GPU, and none of Chromium's own
# network traffic (component updates, sync, field trials), which a closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--disable-sync", "--disable-quic", "--disable-dev-shm-usage",
    # belt and braces besides the tests' request routing: no host but 127.0.0.1 even resolves
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
NOT_RUN: list[str] = []  # why the browser tests were skipped, for the banner at the end


def pytest_terminal_summary(terminalreporter):
    if NOT_RUN:
        line = "!" * 78
        terminalreporter.write_line(line, red=True, bold=True)
        terminalreporter.write_line("!!!  BROWSER TESTS WERE NOT RUN  !!!", red=True, bold=True)
        terminalreporter.write_line(f"!!!  {NOT_RUN[0]}", red=True, bold=True)
        terminalreporter.write_line("!!!  Install it (apt-get install chromium), then `make browser`;", red=True)
        terminalreporter.write_line("!!!  with REQUIRE_BROWSER=1 (as in CI) this is a failure.", red=True)
        terminalreporter.write_line(line, red=True, bold=True)
    paints = getattr(terminalreporter.config, "_slow_4g", None)
    if paints:
        fcp, lcp, load = (paints[k] / 1000 for k in ("fcp", "lcp", "load"))
        terminalreporter.write_line(f"Introduction on slow 4G (phone, empty cache): first paint {fcp:.2f} s, "
                                    f"largest paint {lcp:.2f} s ({paints['element']}), loaded {load:.2f} s")
    weights = getattr(terminalreporter.config, "_page_weights", None)
    if weights:
        terminalreporter.write_line("Page weight as loaded by Chromium with an empty cache (heaviest first, "
                                    "then without the page's own figures):")
        for name, (count, size, own) in sorted(weights.items(), key=lambda t: -t[1][1]):
            terminalreporter.write_line(f"  {size / 1024:8.1f} KB in {count:3d} requests, "
                                        f"{(size - own) / 1024:8.1f} KB besides figures  {name}")


@pytest.fixture(scope="session")
def book_html() -> Path:
    path = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html")).resolve()
    if not (path / "index.html").is_file():
        pytest.fail(f"no built site at {path}: run `make book` (or set BOOK_HTML) first", pytrace=False)
    return path


@pytest.fixture(scope="session")
def screenshots(book_html) -> Path:
    folder = book_html.parent / "screenshots"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture(scope="session")
def site(book_html):
    """Base URL (ending in /) of the built site served on 127.0.0.1 on a free port."""
    with serve(book_html) as url:
        yield url


def _not_run(request, reason: str):
    if os.environ.get("REQUIRE_BROWSER", "0") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    NOT_RUN.append(reason)
    pytest.skip(f"BROWSER TESTS WERE NOT RUN: {reason}")


@pytest.fixture(scope="session")
def browser(request):
    """Headless Debian Chromium. ``launch`` gives it a fresh, temporary user-data-dir."""
    if not CHROMIUM.exists():
        _not_run(request, f"Chromium not found at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:  # pragma: no cover - playwright is in the lock file
        _not_run(request, f"the Python package playwright is missing ({err})")
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    except Exception as err:  # a browser that is installed but broken is a failure, never a skip
        playwright.stop()
        pytest.fail(f"Chromium at {CHROMIUM} did not start: {err}", pytrace=False)
    yield browser
    browser.close()
    playwright.stop()
