"""The website as a reader meets it: every page of the table of contents in headless Chromium.

For each page: HTTP 200 for the page and everything it loads, no failed request, no request that
leaves 127.0.0.1, no console error, every equation typeset by MathJax with no raw TeX left, every
image loaded, every internal link (and its #anchor) resolving, copy buttons on code, a download
button on chapters, previous/next links in table-of-contents order — and a full-page screenshot in
``_build/screenshots/``. Then: the search finds "rotation" in a chapter (snippets typeset), one page
with a figure is checked in dark mode, and the checks themselves are shown to catch a broken page.
"""

from __future__ import annotations

import io
import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin

import pytest
from site_helpers import serve, toc_docnames

pytestmark = pytest.mark.browser

PAGES = toc_docnames()
VIEWPORT = {"width": 1280, "height": 900}
# TeX that MathJax should have replaced: delimiters, or a macro left in the visible text.
RAW_TEX = re.compile(
    r"\\\(|\\\)|\\\[|\\\]|\$\$|\\(?:frac|sqrt|sum|prod|omega|theta|phi|lambda|pi|sin|cos|log|exp|mathrm|"
    r"text|operatorname|begin|end|left|right|displaystyle|cdot|le|ge|dots|quad)(?![A-Za-z])"
)
# Controls that need a kernel: the site must show their static stand-in instead (remove-cell).
DEAD_WIDGETS = 'main .jupyter-widgets, script[type="application/vnd.jupyter.widget-view+json"]'
# Kernel-free controls (a slider over precomputed frames) must do something: move each slider to its
# end and expect the images or text of its output to change.
IDLE_SLIDERS_JS = """() => Array.from(document.querySelectorAll('main input[type=range]')).filter(slider => {
  const root = slider.closest('.cell_output') || slider.parentElement.parentElement;
  const state = () => Array.from(root.querySelectorAll('img')).map(i => i.src).join('|') + root.textContent
    + Array.from(root.querySelectorAll('canvas')).map(c => c.toDataURL()).join('|');
  const before = state();
  slider.value = slider.value === slider.max ? slider.min : slider.max;
  slider.dispatchEvent(new Event('input', {bubbles: true}));
  slider.dispatchEvent(new Event('change', {bubbles: true}));
  return state() === before;
}).map(slider => slider.id || slider.outerHTML.slice(0, 100))"""
PROSE_TEXT_JS = """() => {
  const main = document.querySelector('main') || document.body;
  const copy = main.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, textarea, mjx-container, .highlight').forEach(e => e.remove());
  return copy.textContent;
}"""
MATH_JS = """() => {
  const math = Array.from(document.querySelectorAll('.math'));
  return {
    math: math.length,
    untypeset: math.filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 80)),
    containers: document.querySelectorAll('mjx-container').length,
    errors: Array.from(document.querySelectorAll('mjx-merror')).map(e => e.textContent.slice(0, 80)),
  };
}"""


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


def new_context(browser, *, dark: bool = False):
    context = browser.new_context(
        viewport=VIEWPORT, color_scheme="dark" if dark else "light", service_workers="block",
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
    """Wait until MathJax has typeset, web fonts are in and every image finished loading."""
    if page.evaluate("() => document.querySelector('.math') !== null"):
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=15000)
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
    page.evaluate("() => document.fonts.ready.then(() => true)")
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete)", timeout=15000)


class _Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)


_FETCHED: dict[str, tuple[int, set[str]]] = {}


def fetch(url: str) -> tuple[int, set[str]]:
    """HTTP status of a same-site URL and, for HTML, the ids it defines (cached for the session)."""
    if url not in _FETCHED:
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                body, status, kind = answer.read(), answer.status, answer.headers.get_content_type()
        except urllib.error.HTTPError as err:
            body, status, kind = b"", err.code, ""
        ids = set()
        if kind == "text/html":
            parser = _Anchors()
            parser.feed(body.decode("utf-8", errors="replace"))
            ids = parser.ids
        _FETCHED[url] = (status, ids)
    return _FETCHED[url]


def broken_links(hrefs: list[str], site: str) -> list[str]:
    out = []
    for href in sorted(set(hrefs)):
        if not href.startswith(site):
            continue  # external links are for the reader to follow; nothing is fetched from them
        target, fragment = urldefrag(href)
        status, ids = fetch(target.split("?")[0])
        if status != 200:
            out.append(f"link to {href} answers HTTP {status}")
        elif fragment and fragment not in ids:
            out.append(f"link to {href}: no element with id {fragment!r} on that page")
    return out


@pytest.fixture(scope="module")
def reader(browser):
    """One browser context (a reader's session in light mode); each page opens in a new tab."""
    context = new_context(browser)
    yield context
    context.close()


_STARTED: dict[str, Visit] = {}  # the next page of the table of contents, already loading


@pytest.mark.parametrize("docname", PAGES)
def test_page_works_in_the_browser(browser, reader, site, screenshots, request, docname):
    # While this page is checked, the next one loads in a second tab: two cores, two pages.
    visit = _STARTED.pop(docname, None) or start_page(browser, site, f"{docname}.html", context=reader)
    index = PAGES.index(docname)
    if index + 1 < len(PAGES):
        _STARTED[PAGES[index + 1]] = start_page(browser, site, f"{PAGES[index + 1]}.html", context=reader)
    page = visit.page
    try:
        finish_page(visit)
        page.screenshot(path=str(screenshots / f"{docname.replace('/', '__')}.png"), full_page=True)
        problems = visit.problems(site)

        math = page.evaluate(MATH_JS)
        problems += [f"math not typeset: {text!r}" for text in math["untypeset"]]
        problems += [f"MathJax error: {text!r}" for text in math["errors"]]
        if math["math"] and not math["containers"]:
            problems.append("the page has math but no mjx-container")
        prose = page.evaluate(PROSE_TEXT_JS)
        problems += [f"raw TeX in the text: ...{prose[max(m.start() - 40, 0):m.end() + 40]!r}..."
                     for m in RAW_TEX.finditer(prose)]

        broken = page.evaluate("() => Array.from(document.images).filter(i => !(i.naturalWidth > 0))"
                               ".map(i => i.src)")
        problems += [f"image not loaded: {src}" for src in broken]

        hrefs = page.evaluate("() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
        problems += broken_links(hrefs, site)

        dead = page.evaluate(f"() => document.querySelectorAll('{DEAD_WIDGETS}').length")
        if dead:
            problems.append(f"{dead} widget element(s) that need a kernel are shown (tag the cell remove-cell)")
        problems += [f"slider {idle} changes nothing" for idle in page.evaluate(IDLE_SLIDERS_JS)]

        if page.evaluate("() => document.querySelector('main div.highlight pre') !== null"):
            if not page.evaluate("() => document.querySelector('main button.copybtn') !== null"):
                problems.append("code blocks without a copy button")
        if docname.startswith("notebooks/"):
            source = page.evaluate("() => Array.from(document.querySelectorAll('a.btn-download-source-button'))"
                                   ".map(a => a.getAttribute('href'))")
            if not any(href.endswith(".ipynb") for href in source):
                problems.append(f"no .ipynb download button (found {source})")

        prev_next = page.evaluate("""() => ({
            prev: document.querySelector('a.left-prev')?.href ?? null,
            next: document.querySelector('a.right-next')?.href ?? null})""")
        want_prev = urljoin(site, f"{PAGES[index - 1]}.html") if index > 0 else None
        want_next = urljoin(site, f"{PAGES[index + 1]}.html") if index + 1 < len(PAGES) else None
        if index > 0 and prev_next["prev"] != want_prev:
            problems.append(f"previous link is {prev_next['prev']}, expected {want_prev}")
        if want_next and prev_next["next"] != want_next:
            problems.append(f"next link is {prev_next['next']}, expected {want_next}")

        weights = request.config.__dict__.setdefault("_page_weights", {})
        weights[docname] = (len(visit.responses), sum(size for _, _, size in visit.responses))
    finally:
        visit.close()
    assert not problems, f"{docname}: " + "\n  ".join([""] + problems)


def test_search_finds_rotation_in_a_chapter(browser, site, screenshots):
    visit = open_page(browser, site, "search.html?q=rotation")
    page = visit.page
    try:
        page.wait_for_function(
            "() => (document.querySelector('#search-results .search-summary')?.textContent || '').trim() !== ''",
            timeout=15000,
        )
        # each result's snippet arrives by its own fetch, possibly after the summary line
        page.wait_for_function("""() => document.querySelectorAll('#search-results p.context').length
            === document.querySelectorAll('#search-results ul.search li').length""", timeout=15000)
        page.evaluate("() => window.bookSearchTypesetting.then(() => true)")  # _ext/static/book_search.js
        page.screenshot(path=str(screenshots / "search_rotation.png"), full_page=True)
        results = page.evaluate("() => Array.from(document.querySelectorAll('#search-results ul.search li a'))"
                                ".map(a => a.href)")
        snippets = page.evaluate("""() => Array.from(document.querySelectorAll('#search-results p.context'))
            .map(p => { const c = p.cloneNode(true); c.querySelectorAll('mjx-container').forEach(e => e.remove());
                        return c.textContent; })""")
        problems = visit.problems(site)
    finally:
        visit.close()
    problems += [f"raw TeX in a search snippet: {s!r}" for s in snippets if RAW_TEX.search(s)]
    assert not problems, problems
    assert len(snippets) == len(results) > 0
    chapters = [r for r in results if "/notebooks/" in r]
    assert chapters, f"searching 'rotation' returned no chapter; results: {results}"


def _first_page_with_a_figure(book_html) -> str | None:
    for docname in PAGES:
        html = (book_html / f"{docname}.html").read_text(encoding="utf-8")
        if re.search(r'class="cell_output[^"]*"[\s\S]*?<img ', html):
            return docname
    return None


def test_dark_mode_keeps_figures_legible(browser, site, screenshots, book_html):
    from PIL import Image, ImageChops, ImageStat

    docname = _first_page_with_a_figure(book_html) or PAGES[0]
    shots = {}
    for dark in (False, True):
        visit = open_page(browser, site, f"{docname}.html", dark=dark)
        page = visit.page
        try:
            theme = page.evaluate("() => document.documentElement.dataset.theme")
            assert theme == ("dark" if dark else "light"), f"data-theme is {theme!r}"
            problems = visit.problems(site)
            assert not problems, problems
            background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
            figure = page.query_selector("div.cell_output img")
            if dark:
                page.screenshot(path=str(screenshots / f"dark__{docname.replace('/', '__')}.png"), full_page=False)
                channels = [int(c) for c in re.findall(r"\d+", background)[:3]]
                assert sum(channels) / 3 < 80, f"dark mode did not darken the page (background {background})"
            if figure is not None:
                figure.scroll_into_view_if_needed()
                shots[dark] = Image.open(io.BytesIO(figure.screenshot())).convert("RGB")
        finally:
            visit.close()
    if not shots:
        pytest.skip(f"no page has a figure yet; dark mode checked on {docname} without one")
    light, dark = shots[False], shots[True]
    corners = [dark.getpixel((x, y)) for x in (1, dark.width - 2) for y in (1, dark.height - 2)]
    assert all(min(px) > 200 for px in corners), f"figure on {docname} is not on a light background in dark mode"
    difference = ImageStat.Stat(ImageChops.difference(light, dark.resize(light.size))).mean
    assert max(difference) < 4, f"dark mode alters the figure on {docname} (mean difference {difference})"


BROKEN_PAGE = r"""<!DOCTYPE html><html><head><title>broken</title></head><body><main>
<p>A formula left as source: \(\omega_k\) and a macro \frac{1}{2}.</p>
<img src="missing.png" alt="missing"><img src="https://cdn.example.org/figure.png" alt="remote">
<a href="other.html#nowhere">dangling anchor</a> <a href="gone.html">missing page</a>
<div class="cell_output"><input type="range" id="idle" min="0" max="3" value="0"><span>frame 0</span></div>
<script>console.error("boom");</script>
</main></body></html>"""


def test_the_checks_catch_a_broken_page(browser, tmp_path):
    """The checks above can fail: a page with every fault they look for is reported on each count."""
    (tmp_path / "broken.html").write_text(BROKEN_PAGE, encoding="utf-8")
    (tmp_path / "other.html").write_text("<html><body><p id='here'>other</p></body></html>", encoding="utf-8")
    with serve(tmp_path) as site:
        visit = open_page(browser, site, "broken.html")
        try:
            problems = visit.problems(site)
            prose = visit.page.evaluate(PROSE_TEXT_JS)
            broken = visit.page.evaluate("() => Array.from(document.images).filter(i => !(i.naturalWidth > 0)).length")
            hrefs = visit.page.evaluate("() => Array.from(document.querySelectorAll('a')).map(a => a.href)")
            links = broken_links(hrefs, site)
            idle = visit.page.evaluate(IDLE_SLIDERS_JS)
        finally:
            visit.close()
    assert any(p.startswith("HTTP 404") and "missing.png" in p for p in problems), problems
    assert any("leaving the site" in p and "cdn.example.org" in p for p in problems), problems
    assert any("console error" in p and "boom" in p for p in problems), problems
    assert {m.group(0) for m in RAW_TEX.finditer(prose)} >= {"\\(", "\\omega", "\\)", "\\frac"}
    assert broken == 2
    assert idle == ["idle"]
    assert any("nowhere" in p for p in links) and any("gone.html" in p and "404" in p for p in links), links
