"""Helpers shared by the website tests (kept out of conftest.py so test modules can import them)."""

from __future__ import annotations

import http.server
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import urljoin

import yaml

ROOT = Path(__file__).resolve().parents[2]
# Screenshots for a person to look at: each page's first screen; BOOK_SCREENSHOTS=full takes whole pages
# (a full-page screenshot of a long chapter costs 1-3 s, and no check reads it).
FULL_SCREENSHOTS = os.environ.get("BOOK_SCREENSHOTS", "") == "full"
VIEWPORT = {"width": 1280, "height": 900}  # a desktop
PHONE = {"width": 390, "height": 844}  # a phone held upright (CSS pixels)


def toc_docnames(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """Every page of the table of contents, in reading order (root first), e.g. ``book/intro``."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                names.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    walk(toc.get("parts"))
    walk(toc.get("chapters"))
    return [n.removesuffix(".ipynb").removesuffix(".md") for n in names]


PAGE_CHECK = "test_pages.py::test_page_works_in_the_browser["
# the per-page tests that are split in halves, one per test process
PAGE_CHECKS = (PAGE_CHECK, "test_what_a_reader_sees.py::test_page_looks_right[")


def test_group(nodeid: str) -> str:
    """The group of tests that one test process runs in order (pytest-xdist): the test's file, except
    that the per-page checks of test_pages.py and test_what_a_reader_sees.py (the longest files) come
    in two halves of the table of contents each."""
    path, _, rest = nodeid.partition("::")
    for check in PAGE_CHECKS:
        if check in nodeid:
            pages = toc_docnames()
            docname = nodeid.split(check, 1)[1].removesuffix("]")
            return f"{path} pages {1 + 2 * pages.index(docname) // len(pages)} of 2"
    return path


test_group.__test__ = False  # a helper, not a test


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files, quietly; every answer is fresh (no 304), so each load really fetches."""

    def do_GET(self):
        del self.headers["If-Modified-Since"]
        super().do_GET()

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextmanager
def serve(directory: Path):
    """Serve ``directory`` on 127.0.0.1 on a free port from a thread; yields the base URL (ending in /)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


# ---- pages in the browser ------------------------------------------------------------------------
@dataclass
class Visit:
    """A page loaded in a fresh browser context, with everything that happened while loading it."""

    page: object
    context: object
    responses: list = field(default_factory=list)  # (url, status, content-length)
    failed: list = field(default_factory=list)  # (url, error)
    external: list = field(default_factory=list)  # urls that tried to leave the site
    console: list = field(default_factory=list)  # console errors and uncaught exceptions
    owns_context: bool = True

    def problems(self, site: str) -> list[str]:
        out = [f"HTTP {status} for {url}" for url, status, _ in self.responses if status != 200]
        out += [f"request failed: {url} ({error})" for url, error in self.failed if url not in self.external]
        out += [f"request leaving the site: {url}" for url in self.external]
        out += [f"console error: {text}" for text in self.console]
        return out

    def close(self):
        self.page.close()
        if self.owns_context:
            self.context.close()


def new_context(browser, *, dark: bool = False, viewport: dict | None = None, **options):
    """A browser context (a reader's session): desktop viewport unless told, light or dark mode."""
    context = browser.new_context(
        viewport=viewport or VIEWPORT, color_scheme="dark" if dark else "light", service_workers="block", **options,
    )
    if dark:  # pydata-sphinx-theme keeps the reader's choice in localStorage
        context.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
    return context


def open_page(browser, site: str, path: str, *, dark: bool = False, context=None) -> Visit:
    """Load ``path`` in a new tab (of ``context``, or of a fresh context) and record what happened.

    Requests are intercepted per tab, which also keeps the browser cache out of the way: every
    resource is fetched from the server, so every one has a real HTTP status.
    """
    visit = start_page(browser, site, path, dark=dark, context=context)
    finish_page(visit)
    return visit


def start_page(browser, site: str, path: str, *, dark: bool = False, context=None) -> Visit:
    """Open the tab and start loading ``path``; returns once the navigation has committed."""
    owns_context = context is None
    context = new_context(browser, dark=dark) if owns_context else context
    page = context.new_page()
    visit = Visit(page, context, owns_context=owns_context)

    def route(route):
        if route.request.url.startswith(site):
            route.continue_()
        else:
            visit.external.append(route.request.url)
            route.abort("blockedbyclient")

    page.route("**/*", route)
    page.on("response", lambda r: visit.responses.append((r.url, r.status, int(r.headers.get("content-length", 0)))))
    page.on("requestfailed", lambda r: visit.failed.append((r.url, r.failure)))
    page.on("console", lambda m: m.type == "error" and visit.console.append(f"{m.text} [{m.location.get('url')}]"))
    page.on("pageerror", lambda e: visit.console.append(f"uncaught: {e}"))
    response = page.goto(urljoin(site, path), wait_until="commit")
    if response is None or response.status != 200:
        visit.console.append(f"page itself answered {response and response.status}")
    return visit


def finish_page(visit: Visit) -> None:
    """Wait until the tab has loaded and settled."""
    visit.page.wait_for_load_state("load")
    settle(visit.page)


def settle(page) -> None:
    """Wait until web fonts are in and every image finished loading (the math is typeset at build time)."""
    page.evaluate("() => document.fonts.ready.then(() => true)")
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete)", timeout=15000)


# ---- accessibility: axe-core, the npm package pinned in tests/browser/package-lock.json ---------------
AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
AXE_RUN_JS = """() => axe.run(document, {resultTypes: ['violations']}).then(result => result.violations
  .filter(v => ['critical', 'serious'].includes(v.impact))
  .map(v => ({id: v.id, impact: v.impact, help: v.help,
              nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' :: ' + n.failureSummary.split('\\n')[1])})))"""


def axe_violations(page, axe_source: str) -> list[str]:
    """The critical and serious violations axe-core finds on a loaded page, one line each."""
    page.add_script_tag(content=axe_source)
    found = page.evaluate(AXE_RUN_JS)
    return [f"{v['impact']} {v['id']} ({v['help']}): {'; '.join(v['nodes'])}" for v in found]
