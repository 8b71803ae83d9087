"""The website on a phone (390 CSS pixels wide), a tablet and a desktop, as a reader uses it.

* The sidebar buttons work: tapping the visible menu button opens the chapter list on a phone and a
  tablet, the "contents" button opens the page's table of contents below 992 px, and on a desktop the
  menu button collapses and restores the sidebar.
* Nothing is wider than a phone: on every page the document is at most 390 px wide, and every
  element that sticks out of its box is inside a box that scrolls; each such box that has more to
  show carries the visible cue (class ``book-scroll``: a fade at the edge with more). A screenshot
  of every page's first screen at 390 px goes to ``_build/screenshots/phone__*.png``.
* Figures fit the column (on a phone and a desktop) and enlarge: a click, or Enter on the focused
  figure, opens the full-resolution image in an overlay; Escape closes it and the focus returns.
"""

from __future__ import annotations

import pytest
from site_helpers import PHONE, finish_page, new_context, open_page, serve, start_page, toc_docnames

pytestmark = pytest.mark.browser

PAGES = toc_docnames()
TABLET = {"width": 800, "height": 1000}
DESKTOP = {"width": 1366, "height": 900}

# Every visible element of the page that sticks out of the nearest box that clips or scrolls it, or
# out of the window if none does. Sticking out of a box that scrolls (overflow auto/scroll) is fine;
# out of one that clips (hidden/clip) or out of the window is not. Content hidden on purpose is
# skipped: the MathML for screen readers (KaTeX's, MathJax's), and the inside of SVG drawings (KaTeX's stretchy
# brackets are long paths clipped by their own <svg>). Also: boxes that scroll and have more to show
# but no cue.
OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  const onPurpose = (e) => e.closest('.katex-mathml, mjx-assistive-mml, .visually-hidden, .sr-only') !== null
    || e.ownerSVGElement != null;
  // the nearest ancestor that clips or scrolls sideways, and how (memoized: one style lookup per element)
  const boxes = new Map();
  const nearestBox = (e) => {
    const parent = e.parentElement;
    if (!parent || parent === document.documentElement) return [null, null];
    if (!boxes.has(parent)) {
      const mode = getComputedStyle(parent).overflowX;
      boxes.set(parent, mode !== 'visible' ? [parent, mode] : nearestBox(parent));
    }
    return boxes.get(parent);
  };
  const name = (e) => `${e.tagName.toLowerCase()}.${String(e.className).split(' ').slice(0, 2).join('.')}`;
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const [box, mode] = nearestBox(e);
    if (mode === 'auto' || mode === 'scroll') continue;
    const limit = box ? box.getBoundingClientRect() : {left: 0, right: width};
    if (r.right <= limit.right + 1 && r.left >= limit.left - 1) continue;
    if (onPurpose(e) || !e.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
    out.push(`${name(e)} spans ${Math.round(r.left)}..${Math.round(r.right)} px, cut by `
      + `${box ? name(box) + ' (overflow ' + mode + ')' : 'the window'}: ${(e.textContent || '').trim().slice(0, 60)}`);
  }
  const scrollers = '.bd-article .katex-display, .bd-article .pst-scrollable-table-container';
  for (const box of document.querySelectorAll(scrollers)) {
    if (box.scrollWidth > box.clientWidth + 1 && !box.classList.contains('book-scroll')) {
      out.push(`${name(box)} scrolls without a visible cue: ${box.textContent.trim().slice(0, 60)}`);
    }
  }
  return {scrollWidth: document.scrollingElement.scrollWidth, problems: out};
}"""


def _open(browser, site, path, viewport, **options):
    context = new_context(browser, viewport=viewport, **options)
    visit = open_page(browser, site, path, context=context)
    visit.owns_context = True
    return visit


def _sidebar_state(page) -> dict:
    return page.evaluate("""() => {
      const nav = document.querySelector('#pst-primary-sidebar-modal nav.bd-docs-nav')
        || document.querySelector('#pst-primary-sidebar nav.bd-docs-nav');
      const links = nav ? Array.from(nav.querySelectorAll('a.reference')).filter(a => a.checkVisibility()) : [];
      const sidebar = document.getElementById('pst-primary-sidebar');
      return {
        primaryDialog: document.getElementById('pst-primary-sidebar-modal').open,
        secondaryDialog: document.getElementById('pst-secondary-sidebar-modal').open,
        visibleChapterLinks: links.filter(a => { const r = a.getBoundingClientRect();
          return r.width > 0 && r.right > 0 && r.left < window.innerWidth; }).length,
        pageTocVisible: !!document.querySelector('#pst-secondary-sidebar-modal nav a'),
        sidebarVisible: sidebar.checkVisibility({visibilityProperty: true})
          && sidebar.getBoundingClientRect().right > 0,
        articleLeft: document.querySelector('.bd-article').getBoundingClientRect().left,
      };
    }""")


@pytest.mark.parametrize("viewport", [PHONE, TABLET], ids=["phone", "tablet"])
def test_tapping_the_menu_opens_the_chapter_list(browser, site, viewport):
    visit = _open(browser, site, "notebooks/03_the_formula.html", viewport, has_touch=True, is_mobile=True)
    page = visit.page
    try:
        assert not (problems := visit.problems(site)), problems
        before = _sidebar_state(page)
        assert not before["primaryDialog"] and before["visibleChapterLinks"] == 0, before
        page.locator(".primary-toggle:visible").first.tap()
        page.wait_for_timeout(300)
        opened = _sidebar_state(page)
        assert opened["primaryDialog"], "tapping the menu button did not open the sidebar"
        assert opened["visibleChapterLinks"] >= 13, f"the chapter list is not shown: {opened}"
        page.keyboard.press("Escape")
        page.wait_for_timeout(300)
        assert not _sidebar_state(page)["primaryDialog"], "Escape did not close the sidebar"

        page.locator(".secondary-toggle:visible").first.tap()  # below 992 px the page's contents are a button too
        page.wait_for_timeout(300)
        contents = _sidebar_state(page)
        assert contents["secondaryDialog"] and contents["pageTocVisible"], f"the contents did not open: {contents}"
    finally:
        visit.close()


@pytest.mark.parametrize("docname", ["notebooks/17_rope_scaling", "notebooks/21_layers_without_positions"])
def test_the_phone_menu_opens_at_the_current_chapter(browser, site, docname):
    """The chapter list a phone opens shows the page's own entry on screen (issue 30, item 7: it opened at
    the top, with a late chapter below the fold)."""
    visit = _open(browser, site, f"{docname}.html", PHONE, has_touch=True, is_mobile=True)
    page = visit.page
    try:
        page.locator(".primary-toggle:visible").first.tap()
        page.wait_for_timeout(300)
        here = page.evaluate("""() => {
          const a = document.querySelector('#pst-primary-sidebar-modal .bd-sidenav a.current[href="#"]');
          if (!a) return null;
          const r = a.getBoundingClientRect();
          return {text: a.textContent.trim(), top: r.top, bottom: r.bottom, height: innerHeight};
        }""")
        assert here is not None, "the open chapter list has no entry for the current page"
        assert 0 <= here["top"] and here["bottom"] <= here["height"], f"the current chapter is off-screen: {here}"
    finally:
        visit.close()


def test_the_menu_button_collapses_the_sidebar_on_a_desktop(browser, site):
    visit = _open(browser, site, "notebooks/03_the_formula.html", DESKTOP)
    page = visit.page
    try:
        before = _sidebar_state(page)
        assert before["sidebarVisible"] and before["visibleChapterLinks"] >= 13, before
        page.locator(".primary-toggle:visible").first.click()
        page.wait_for_timeout(700)  # the theme animates the sidebar for 0.25 s
        collapsed = _sidebar_state(page)
        assert not collapsed["primaryDialog"], "a desktop should collapse the sidebar, not open a dialog"
        assert not collapsed["sidebarVisible"] and collapsed["articleLeft"] < before["articleLeft"] - 100, collapsed
        page.locator(".primary-toggle:visible").first.click()
        page.wait_for_timeout(700)
        assert _sidebar_state(page)["sidebarVisible"], "a second click did not bring the sidebar back"
    finally:
        visit.close()


@pytest.fixture(scope="module")
def phone(browser):
    context = new_context(browser, viewport=PHONE, has_touch=True, is_mobile=True)
    yield context
    context.close()


_STARTED: dict = {}  # the next page, already loading in a second tab while this one is checked


@pytest.mark.parametrize("docname", PAGES)
def test_nothing_is_wider_than_a_phone(browser, phone, site, screenshots, docname):
    visit = _STARTED.pop(docname, None) or start_page(browser, site, f"{docname}.html", context=phone)
    index = PAGES.index(docname)
    if index + 1 < len(PAGES):
        _STARTED[PAGES[index + 1]] = start_page(browser, site, f"{PAGES[index + 1]}.html", context=phone)
    try:
        finish_page(visit)
        page = visit.page
        # the first screen only: a full-page screenshot of a long page costs seconds
        page.screenshot(path=str(screenshots / f"phone__{docname.replace('/', '__')}.png"))
        found = page.evaluate(OVERFLOW_JS)
        problems = visit.problems(site)
    finally:
        visit.close()
    if found["scrollWidth"] > PHONE["width"]:
        problems.append(f"the page is {found['scrollWidth']} px wide on a {PHONE['width']} px screen")
    assert not (problems := problems + found["problems"]), f"{docname}: " + "\n  ".join([""] + problems)


WIDE_PAGE = """<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<title>wide</title><style>body { margin: 8px; } .cut { overflow: hidden; }</style></head><body>
<article class="bd-article">
<p><code>tests/a_very_long_path_without_any_space_in_it/test_that_does_not_wrap_at_all.py</code></p>
<div class="cut"><span style="white-space: nowrap">a line that runs far beyond the edge of a phone screen
and is cut</span></div>
<div class="math"><span class="katex-display" style="display: block; overflow-x: auto">
<span style="display: inline-block; width: 900px">a formula in a box that scrolls, without a cue</span></span></div>
</article></body></html>"""


def test_the_overflow_check_catches_wide_content(browser, tmp_path):
    (tmp_path / "wide.html").write_text(WIDE_PAGE, encoding="utf-8")
    with serve(tmp_path) as site:
        visit = _open(browser, site, "wide.html", PHONE)
        try:
            found = visit.page.evaluate(OVERFLOW_JS)
        finally:
            visit.close()
    assert found["scrollWidth"] > PHONE["width"], found
    assert any("cut by div.cut" in p for p in found["problems"]), found
    assert any("the window" in p and "tests/a_very_long_path" in p for p in found["problems"]), found
    assert any("without a visible cue" in p for p in found["problems"]), found


def _page_with_figures(book_html) -> str:
    for docname in PAGES:
        if docname.startswith("notebooks/") and 'class="cell_output' in (book_html / f"{docname}.html").read_text():
            if "<img" in (book_html / f"{docname}.html").read_text():
                return docname
    pytest.skip("no chapter has a figure")


FIGURE_SIZES_JS = """() => Array.from(document.querySelectorAll('.bd-article .cell_output img')).map(img => {
  const column = img.closest('.cell_output').getBoundingClientRect().width;
  return {src: img.src.split('/').pop(), width: img.getBoundingClientRect().width, column,
          natural: img.naturalWidth, height: img.getBoundingClientRect().height,
          ratio: img.naturalWidth / img.naturalHeight,
          designed: parseFloat(img.style.width) || Number(img.getAttribute('width')) || img.naturalWidth};
})"""


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_figures_fit_the_column_and_enlarge(browser, site, book_html, screenshots, viewport):
    docname = _page_with_figures(book_html)
    visit = _open(browser, site, f"{docname}.html", viewport)
    page = visit.page
    try:
        finish_page(visit)
        sizes = page.evaluate(FIGURE_SIZES_JS)
        assert sizes, f"no figure found on {docname}"
        too_wide = [s for s in sizes if s["width"] > s["column"] + 0.5]
        assert not too_wide, f"figures wider than the column: {too_wide}"
        # a figure is never shown larger than designed (blurry) on a desktop
        blown_up = [s for s in sizes if s["width"] > s["designed"] + 0.5]
        assert not blown_up, f"figures shown larger than designed: {blown_up}"
        # narrowed figures keep their proportions (docutils writes the designed height inline)
        squashed = [s for s in sizes if abs(s["width"] / s["height"] - s["ratio"]) > 0.02 * s["ratio"]]
        assert not squashed, f"figures distorted: {squashed}"

        figure = page.locator(".bd-article .cell_output a.book-zoom__link").first
        shown = figure.locator("img").bounding_box()["width"]
        figure.click()
        page.wait_for_timeout(200)
        overlay = page.evaluate("""() => { const d = document.querySelector('dialog.book-zoom');
            const img = d && d.querySelector('img');
            return d && {open: d.open, width: img.getBoundingClientRect().width, loaded: img.naturalWidth > 0,
                         alt: img.alt, focus: document.activeElement.className}; }""")
        assert overlay and overlay["open"] and overlay["loaded"], f"clicking a figure opened no overlay: {overlay}"
        assert overlay["width"] > shown + 1 or viewport is DESKTOP and overlay["width"] >= shown, overlay
        page.screenshot(path=str(screenshots / f"zoom__{viewport['width']}.png"))
        page.keyboard.press("Escape")
        page.wait_for_timeout(200)
        after = page.evaluate("""() => ({open: document.querySelector('dialog.book-zoom').open,
            focus: document.activeElement.classList.contains('book-zoom__link')})""")
        assert after == {"open": False, "focus": True}, f"Escape: {after}"
        page.keyboard.press("Enter")  # the focused figure opens with the keyboard too
        page.wait_for_timeout(200)
        assert page.evaluate("() => document.querySelector('dialog.book-zoom').open"), "Enter did not enlarge"
        problems = visit.problems(site)
    finally:
        visit.close()
    assert not problems, problems
