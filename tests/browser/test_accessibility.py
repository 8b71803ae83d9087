"""Accessibility: axe-core finds no critical or serious violation on any page.

axe-core is the npm package pinned in tests/browser/package.json and package-lock.json (``make
browser`` installs it with ``npm ci``); the tests inject its file into each page, nothing is loaded
from another server. Every page of the table of contents is checked in light mode, the search page
with results, and the pages with an explorer in dark mode too (colour contrast of the controls).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from site_helpers import finish_page, new_context, open_page, serve, start_page, toc_docnames

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("critical", "serious")
PAGES = toc_docnames()

AXE_RUN_JS = """() => axe.run(document, {resultTypes: ['violations']}).then(result => result.violations
  .filter(v => ['critical', 'serious'].includes(v.impact))
  .map(v => ({id: v.id, impact: v.impact, help: v.help,
              nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' :: ' + n.failureSummary.split('\\n')[1])})))"""


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(f"axe-core is not installed at {AXE}: run `npm ci --prefix tests/browser` "
                    "(make browser does this)", pytrace=False)
    return AXE.read_text(encoding="utf-8")


def violations(visit, axe_source: str) -> list[str]:
    finish_page(visit)
    visit.page.add_script_tag(content=axe_source)
    found = visit.page.evaluate(AXE_RUN_JS)
    return [f"{v['impact']} {v['id']} ({v['help']}): {'; '.join(v['nodes'])}" for v in found]


@pytest.fixture(scope="module")
def reader(browser):
    context = new_context(browser)
    yield context
    context.close()


PATHS = [f"{d}.html" for d in PAGES] + ["search.html?q=rotation"]
_STARTED: dict = {}  # the next page, already loading in a second tab while axe checks this one


@pytest.mark.parametrize("path", PATHS)
def test_no_serious_accessibility_violation(browser, reader, site, axe_source, path):
    visit = _STARTED.pop(path, None) or start_page(browser, site, path, context=reader)
    index = PATHS.index(path)
    if index + 1 < len(PATHS):
        _STARTED[PATHS[index + 1]] = start_page(browser, site, PATHS[index + 1], context=reader)
    try:
        if path.startswith("search.html"):
            visit.page.wait_for_function("() => document.querySelectorAll('#search-results p.context').length > 0",
                                         timeout=15000)
        found = violations(visit, axe_source)
    finally:
        visit.close()
    assert not found, f"{path}:" + "\n  ".join([""] + found)


@pytest.mark.parametrize("docname", ["notebooks/04_visualizing", "notebooks/09_why_10000"])
def test_no_serious_accessibility_violation_in_dark_mode(browser, site, axe_source, docname):
    visit = open_page(browser, site, f"{docname}.html", dark=True)
    try:
        found = violations(visit, axe_source)
    finally:
        visit.close()
    assert not found, f"{docname} (dark):" + "\n  ".join([""] + found)


BAD_PAGE = """<!DOCTYPE html><html lang="en"><head><title>bad</title></head><body><main>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<button title="Search"><span>Find things</span></button>
<ul><p>not a list item</p></ul>
<div role="list"><span>an item without role listitem</span></div>
</main></body></html>"""


def test_the_accessibility_check_catches_violations(browser, tmp_path, axe_source):
    (tmp_path / "bad.html").write_text(BAD_PAGE, encoding="utf-8")
    with serve(tmp_path) as site:
        visit = open_page(browser, site, "bad.html")
        try:
            found = violations(visit, axe_source)
        finally:
            visit.close()
    ids = {line.split()[1] for line in found}
    assert {"image-alt", "list", "aria-required-children"} <= ids, found
