"""Fixtures for the website tests: the built site, a local HTTP server for it, and headless Chromium.

The site is the one ``make book`` built: ``BOOK_HTML`` (default ``_build/html``). It is served on
127.0.0.1 on a free port by a thread of this test process. Chromium is Debian's (``/usr/bin/chromium``,
or ``$CHROMIUM``) driven by Playwright; ``playwright install`` is never needed.

Without Chromium the browser tests are *skipped* with the reason, a banner says in capital letters
that they were NOT RUN, and with ``REQUIRE_BROWSER=1`` (CI) they fail instead.

``make browser`` runs the tests in two processes (pytest-xdist, ``-n 2 --dist loadfile``: each test
file stays in one process, in order, so a file's shared browser context and its page loaded ahead
keep working; test_pages.py's page checks come in two halves, one per process). Each process has
its own Chromium and server; what the summary at the end prints (page weights, the slow-4G paint
times, the NOT RUN banner) travels to the main process in the test reports (``record_property``,
the skip reason), so it is printed with or without ``-n``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import uuid
from pathlib import Path

import pytest
from site_helpers import AXE, ROOT, serve, test_group

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
# Flags known to work on these machines: no sandbox as root, no GPU, and none of Chromium's own
# network traffic (component updates, sync, field trials), which a closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--disable-sync", "--disable-quic", "--disable-dev-shm-usage",
    # belt and braces besides the tests' request routing: no host but 127.0.0.1 even resolves
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
NOT_RUN_PREFIX = "BROWSER TESTS WERE NOT RUN: "
NOT_RUN: list[str] = []  # why the browser tests were skipped, for the banner at the end
PAGE_WEIGHTS: dict[str, tuple[int, int, int]] = {}  # docname: (requests, bytes, bytes of its own figures)
SLOW_4G: dict[str, object] = {}  # the introduction's paint times on slow 4G
# One id per run, shared by the processes of one pytest-xdist run: the screenshots folder is emptied once.
RUN_ID = uuid.uuid4().hex


def pytest_runtest_logreport(report):
    """Collect what the summary prints from every test's report (the main process sees every report)."""
    for name, value in report.user_properties:
        if name == "page_weight":
            docname, *numbers = value
            PAGE_WEIGHTS[docname] = tuple(numbers)
        elif name == "slow_4g":
            SLOW_4G.update(value)
    if report.skipped and isinstance(report.longrepr, tuple) and NOT_RUN_PREFIX in report.longrepr[2]:
        reason = report.longrepr[2].split(NOT_RUN_PREFIX, 1)[1]
        if reason not in NOT_RUN:
            NOT_RUN.append(reason)


def pytest_terminal_summary(terminalreporter):
    if NOT_RUN:
        line = "!" * 78
        terminalreporter.write_line(line, red=True, bold=True)
        terminalreporter.write_line("!!!  BROWSER TESTS WERE NOT RUN  !!!", red=True, bold=True)
        terminalreporter.write_line(f"!!!  {NOT_RUN[0]}", red=True, bold=True)
        terminalreporter.write_line("!!!  Install it (apt-get install chromium), then `make browser`;", red=True)
        terminalreporter.write_line("!!!  with REQUIRE_BROWSER=1 (as in CI) this is a failure.", red=True)
        terminalreporter.write_line(line, red=True, bold=True)
    paints = SLOW_4G
    if paints:
        fcp, lcp, load = (paints[k] / 1000 for k in ("fcp", "lcp", "load"))
        terminalreporter.write_line(f"Introduction on slow 4G (phone, empty cache): first paint {fcp:.2f} s, "
                                    f"largest paint {lcp:.2f} s ({paints['element']}), loaded {load:.2f} s")
    weights = PAGE_WEIGHTS
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
def screenshots(book_html, request) -> Path:
    """``_build/screenshots/``, emptied once per run (by whichever test process gets here first)."""
    folder = book_html.parent / "screenshots"
    run = getattr(request.config, "workerinput", {}).get("testrunuid", RUN_ID)
    with open(book_html.parent / ".screenshots.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        marker = folder / ".run"
        if not marker.is_file() or marker.read_text() != run:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            marker.write_text(run)
    return folder


@pytest.fixture(scope="session")
def site(book_html):
    """Base URL (ending in /) of the built site served on 127.0.0.1 on a free port."""
    with serve(book_html) as url:
        yield url


def _not_run(request, reason: str):
    if os.environ.get("REQUIRE_BROWSER", "0") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(f"{NOT_RUN_PREFIX}{reason}")  # the banner finds the reason in the report


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



@pytest.fixture(scope="session")
def axe_source() -> str:
    """The text of axe-core's script, to inject into a page."""
    if not AXE.is_file():
        pytest.fail(f"axe-core is not installed at {AXE}: run `npm ci --prefix tests/browser` "
                    "(make browser does this)", pytrace=False)
    return AXE.read_text(encoding="utf-8")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own choice
def pytest_xdist_make_scheduler(config, log):
    """``-n 2 --dist loadfile``, with test_pages.py's page checks in two halves (see ``test_group``).

    (pytest-xdist's ``--dist loadgroup`` would do this with marks, but with pytest 9.2 it silently
    stops grouping: pytest-xdist issue 1386.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByFileAndHalf(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return test_group(nodeid)

        def _assign_work_unit(self, node) -> None:
            # the two halves of the pages (the longest groups) first, then the rest, most tests first
            halves = [scope for scope in self.workqueue if " pages " in scope]
            if halves:
                self.workqueue.move_to_end(halves[0], last=False)
            super()._assign_work_unit(node)

    return ByFileAndHalf(config, log)
