"""Accessibility: axe-core finds no critical or serious violation on any page.

axe-core is the npm package pinned in tests/browser/package.json and package-lock.json (``make
browser`` installs it with ``npm ci``); the tests inject its file into each page, nothing is loaded
from another server. Every page of the table of contents is checked in light mode by
``test_pages.py::test_page_works_in_the_browser`` (one visit per page runs all its checks); here: the
search page with results, the pages with an explorer in dark mode (colour contrast of the controls),
and a page with known violations, which the check must report.
"""

from __future__ import annotations

import pytest
from site_helpers import axe_violations, finish_page, open_page, serve

pytestmark = pytest.mark.browser


def violations(visit, axe_source: str) -> list[str]:
    finish_page(visit)
    return axe_violations(visit.page, axe_source)


def test_no_serious_accessibility_violation_on_the_search_page(browser, site, axe_source):
    visit = open_page(browser, site, "search.html?q=rotation")
    try:
        visit.page.wait_for_function("() => document.querySelectorAll('#search-results p.context').length > 0",
                                     timeout=15000)
        found = violations(visit, axe_source)
    finally:
        visit.close()
    assert not found, "search.html?q=rotation:" + "\n  ".join([""] + found)


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
