"""The website as a reader meets it: every page of the table of contents in headless Chromium.

For each page, in one visit (desktop width, light mode): HTTP 200 for the page and everything it
loads, no failed request, no request that leaves 127.0.0.1, no console error, no critical or serious
accessibility violation (axe-core), every formula typeset (by KaTeX, at build time) with no raw TeX
left, every image loaded, every internal link (and its #anchor) resolving, copy buttons on code, a
download button on chapters, previous/next links in table-of-contents order, every slider redrawing
something, the first-visit weight within budget — and a screenshot in ``_build/screenshots/`` (the
first screen; the whole page with ``BOOK_SCREENSHOTS=full``). The pages are checked in two halves,
one per test process under pytest-xdist (``make browser``). Then: the search finds "rotation"
in a chapter, "10000", "RoPE" and "ALiBi" on their pages, with snippets quoted from the text (formulas
typeset); one page with a figure is checked in dark mode; and the checks themselves are shown to
catch a broken page.
"""

from __future__ import annotations

import io
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin

import pytest
from site_helpers import (
    FULL_SCREENSHOTS,
    PAGE_CHECK,
    Visit,
    axe_violations,
    finish_page,
    new_context,
    open_page,
    serve,
    start_page,
    test_group,
    toc_docnames,
)

pytestmark = pytest.mark.browser

PAGES = toc_docnames()
# TeX that KaTeX should have replaced: delimiters, or a macro left in the visible text.
RAW_TEX = re.compile(
    r"\\\(|\\\)|\\\[|\\\]|\$\$|\\(?:frac|sqrt|sum|prod|omega|theta|phi|lambda|pi|sin|cos|log|exp|mathrm|"
    r"text|operatorname|begin|end|left|right|displaystyle|cdot|le|ge|dots|quad)(?![A-Za-z])"
)
# What a reader downloads on a first visit of a page (empty cache), besides the page's own figures:
# the HTML, the theme, scripts, fonts and styles. Measured from the HTTP answers, uncompressed.
FIRST_VISIT_BUDGET = 1_200_000  # bytes
# a PNG embedded in the page as base64 (a data: URL, or the frames of a player): a figure of the page
EMBEDDED_PNG = re.compile(r"iVBORw0KGgo[A-Za-z0-9+/=]+")


def own_figures_bytes(responses, html: str) -> int:
    """Bytes of a page's own figures: the files of _images/ it loaded and the PNGs inside its HTML."""
    files = sum(size for url, _, size in responses if "/_images/" in url)
    return files + sum(len(m.group(0)) for m in EMBEDDED_PNG.finditer(html))


# Controls that need a kernel: the site must show their static stand-in instead (remove-cell).
DEAD_WIDGETS = 'main .jupyter-widgets, script[type="application/vnd.jupyter.widget-view+json"]'
# Kernel-free controls (a slider over precomputed frames) must do something: move each slider to its
# end and expect the images or text of its output to change.
IDLE_SLIDERS_JS = """() => Array.from(document.querySelectorAll('main input[type=range]')).filter(slider => {
  const root = slider.closest('.cell_output, .pe-explorer') || slider.parentElement.parentElement;
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
  copy.querySelectorAll('pre, code, script, style, textarea, .katex, .highlight').forEach(e => e.remove());
  return copy.textContent;
}"""
# Every formula (class "math") holds KaTeX's output; a formula KaTeX refused shows its source instead
# (class "math-error", also a build warning) and KaTeX marks its own errors "katex-error".
MATH_JS = """() => {
  const math = Array.from(document.querySelectorAll('main .math'));
  return {
    math: math.length,
    untypeset: math.filter(e => !e.querySelector('.katex .katex-html')).map(e => e.textContent.slice(0, 80)),
    errors: Array.from(document.querySelectorAll('.math-error, .katex-error')).map(e => e.textContent.slice(0, 80)),
  };
}"""


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


def _group(docname: str) -> str:
    """Which half of the pages (one per test process under pytest-xdist, see conftest.py)."""
    return test_group(f"tests/browser/{PAGE_CHECK}{docname}]")


@pytest.mark.parametrize("docname", PAGES)
def test_page_works_in_the_browser(browser, reader, site, screenshots, book_html, axe_source, record_property,
                                   docname):
    # While this page is checked, the next one (of the same half) loads in a second tab.
    visit = _STARTED.pop(docname, None) or start_page(browser, site, f"{docname}.html", context=reader)
    index = PAGES.index(docname)
    if index + 1 < len(PAGES) and _group(PAGES[index + 1]) == _group(docname):
        _STARTED[PAGES[index + 1]] = start_page(browser, site, f"{PAGES[index + 1]}.html", context=reader)
    page = visit.page
    try:
        finish_page(visit)
        page.screenshot(path=str(screenshots / f"{docname.replace('/', '__')}.png"), full_page=FULL_SCREENSHOTS)
        problems = visit.problems(site)
        # before the sliders below are moved: the page as it arrived
        problems += [f"accessibility: {v}" for v in axe_violations(page, axe_source)]

        math = page.evaluate(MATH_JS)
        problems += [f"math not typeset: {text!r}" for text in math["untypeset"]]
        problems += [f"KaTeX error: {text!r}" for text in math["errors"]]
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

        total = sum(size for _, _, size in visit.responses)
        own = own_figures_bytes(visit.responses, (book_html / f"{docname}.html").read_text(encoding="utf-8"))
        record_property("page_weight", (docname, len(visit.responses), total, own))  # printed at the end
        if total - own > FIRST_VISIT_BUDGET:
            heaviest = sorted(visit.responses, key=lambda r: -r[2])[:4]
            problems.append(f"a first visit loads {(total - own) / 1e6:.2f} MB besides the page's own figures "
                            f"(budget {FIRST_VISIT_BUDGET / 1e6:.1f} MB); heaviest: "
                            + ", ".join(f"{url.rsplit('/', 1)[-1]} {size / 1e3:.0f} KB" for url, _, size in heaviest))
    finally:
        visit.close()
    assert not problems, f"{docname}: " + "\n  ".join([""] + problems)


def run_search(browser, site: str, query: str, screenshots=None):
    """Search the site for ``query`` on search.html; returns (result URLs, snippets, problems).

    A snippet is the text of its result paragraph with the typeset formulas (KaTeX) replaced by
    U+0000, so that the text around them can be compared with the page.
    """
    visit = open_page(browser, site, f"search.html?q={query}")
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
        if screenshots is not None:
            page.screenshot(path=str(screenshots / f"search_{query}.png"), full_page=True)
        results = page.evaluate("() => Array.from(document.querySelectorAll('#search-results ul.search li a'))"
                                ".map(a => a.href)")
        snippets = page.evaluate("""() => Array.from(document.querySelectorAll('#search-results p.context'))
            .map(p => { const c = p.cloneNode(true);
                        c.querySelectorAll('.katex').forEach(e => e.replaceWith('\\u0000'));
                        return c.textContent; })""")
        untypeset = page.evaluate("() => document.querySelectorAll('#search-results p.context .math-error').length")
        problems = visit.problems(site)
    finally:
        visit.close()
    problems += [f"raw TeX in a search snippet: {s!r}" for s in snippets if RAW_TEX.search(s)]
    if untypeset:
        problems.append(f"{untypeset} formula(s) in snippets not typeset")
    return results, snippets, problems


def test_search_finds_rotation_in_a_chapter(browser, site, screenshots):
    results, snippets, problems = run_search(browser, site, "rotation", screenshots)
    assert not problems, problems
    assert len(snippets) == len(results) > 0
    chapters = [r for r in results if "/notebooks/" in r]
    assert chapters, f"searching 'rotation' returned no chapter; results: {results}"


def article_text(book_html, docname: str) -> str:
    """The text of a page's article as the search reads it: formulas out, whitespace collapsed."""
    from bs4 import BeautifulSoup

    doc = BeautifulSoup((book_html / f"{docname}.html").read_text(encoding="utf-8"), "html.parser")
    article = doc.select_one("article.bd-article")
    for junk in article.select(".headerlink, script, style, .eqno, .katex"):
        junk.decompose()
    return re.sub(r"\s+", " ", article.get_text())


def snippet_problems(snippet: str, text: str, query: str) -> list[str]:
    """A snippet must show the query and consist of pieces of the page's text (between formulas)."""
    problems = [] if query.lower() in snippet.lower() else [f"the snippet does not show {query!r}: {snippet!r}"]
    for piece in snippet.split("\u0000"):
        piece = re.sub(r"\s+", " ", piece).strip().removeprefix("...").removesuffix("...").strip()
        if len(piece) >= 12 and piece not in text:
            problems.append(f"the snippet quotes something that is not the page's text: {piece[:100]!r}")
    return problems


@pytest.mark.parametrize(("query", "docname"), [
    ("10000", "notebooks/09_why_10000"),  # all digits: Sphinx's search drops such words unless patched
    ("RoPE", "notebooks/12_rope"),
    ("ALiBi", "notebooks/13_after_sinusoids"),
])
def test_search_finds_the_books_numbers_and_names(browser, site, screenshots, book_html, query, docname):
    results, snippets, problems = run_search(browser, site, query, screenshots)
    assert not problems, problems
    pages = [urldefrag(r)[0].removeprefix(site).removesuffix(".html") for r in results]
    assert docname in pages[:3], f"searching {query!r}: {docname} is not among the first results {pages[:5]}"
    snippet = snippets[pages.index(docname)]
    assert not (bad := snippet_problems(snippet, article_text(book_html, docname), query)), bad


def test_snippet_check_catches_a_snippet_from_the_sidebar():
    text = "The base 10000 sets the longest wavelength of the encoding, 2 pi times 10000."
    assert snippet_problems("...sets the longest wavelength of the encoding, \u0000 times 10000.", text, "10000") == []
    sidebar = "Skip to main content Contents 9.1. What the base sets 10000"
    assert snippet_problems(sidebar, text, "10000"), "a snippet quoting the navigation passed"
    assert snippet_problems("The base sets the longest wavelength", text, "10000"), "a snippet without the word passed"


def _first_page_with_a_figure(book_html) -> str | None:
    for docname in PAGES:
        html = (book_html / f"{docname}.html").read_text(encoding="utf-8")
        if re.search(r'class="cell_output[^"]*"[\s\S]*?<img ', html):
            return docname
    return None


def figure_in_dark_mode_problems(light, dark, padding: int, radius: int = 0) -> list[str]:
    """Dark mode shows a figure on its white card, with its colours as computed: not inverted, not dimmed.

    ``light`` and ``dark``: screenshots (RGB images) of the same figure in both modes; the dark one
    has ``padding`` pixels of card on every side. The dark figure must be the light one, pixel by pixel
    (a least-squares factor k of 0.97 to 1.03, the colours kept): a dimmed figure (k = 0.82 until issue 30)
    sat in a grey slab, turned the white zero of a diverging colour map grey and hid grey notes. Its
    corners must be light (a card, not the dark page), looked at ``radius`` pixels in from the rounded
    corners.
    """
    import numpy as np

    card = np.asarray(dark, dtype=float)
    inset = radius + 1
    corners = [card[y, x] for x in (inset, card.shape[1] - 1 - inset) for y in (inset, card.shape[0] - 1 - inset)]
    problems = [] if all(px.min() > 150 for px in corners) else [f"not on a light card: corners {corners}"]
    inner = dark.crop((padding, padding, dark.width - padding, dark.height - padding)).resize(light.size)
    d = np.asarray(inner, dtype=float).ravel()
    lt = np.asarray(light, dtype=float).ravel()
    k = float(d @ lt / (lt @ lt))  # least-squares factor: dark ~ k * light
    residual = float(np.abs(d - k * lt).mean())
    if not 0.97 <= k <= 1.03:
        problems.append(f"brightness factor {k:.3f}: {'dimmed' if k < 0.97 else 'brightened'} (want 0.97-1.03)")
    if residual > 8:
        problems.append(f"colours changed (mean deviation {residual:.1f} of 255)")
    return problems


def test_dark_mode_shows_figures_on_their_white_card_undimmed(browser, site, screenshots, book_html):
    from PIL import Image

    docname = _first_page_with_a_figure(book_html) or PAGES[0]
    shots = {}
    padding = radius = 0
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
                if dark:
                    padding, radius = (round(v) for v in page.evaluate(
                        "(img) => [parseFloat(getComputedStyle(img).paddingTop),"
                        " parseFloat(getComputedStyle(img).borderTopLeftRadius)]", figure))
        finally:
            visit.close()
    if not shots:
        pytest.skip(f"no page has a figure yet; dark mode checked on {docname} without one")
    bad = figure_in_dark_mode_problems(shots[False], shots[True], padding, radius)
    assert not bad, f"{docname}: {bad}"


def test_dark_mode_check_catches_dimmed_and_inverted_figures():
    import numpy as np
    from PIL import Image, ImageOps

    rng = np.random.default_rng(0)
    light = Image.fromarray(rng.integers(0, 256, (60, 80, 3), dtype=np.uint8))
    card = Image.new("RGB", (88, 68), "white")
    kept = card.copy()
    kept.paste(light, (4, 4))
    assert figure_in_dark_mode_problems(light, kept, 4) == []
    dimmed = card.copy()
    dimmed.paste(Image.fromarray((np.asarray(light) * 0.82).astype(np.uint8)), (4, 4))  # the filter of before
    assert any("dimmed" in p for p in figure_in_dark_mode_problems(light, dimmed, 4))
    inverted = card.copy()
    inverted.paste(ImageOps.invert(light), (4, 4))
    assert any("colours changed" in p or "factor" in p for p in figure_in_dark_mode_problems(light, inverted, 4))
    assert any("card" in p for p in figure_in_dark_mode_problems(light, kept.crop((4, 4, 84, 64)), 0))


BROKEN_PAGE = r"""<!DOCTYPE html><html><head><title>broken</title></head><body><main>
<p>A formula left as source: \(\omega_k\) and a macro \frac{1}{2}.</p>
<img src="missing.png" alt="missing"><img src="https://cdn.example.org/figure.png" alt="remote">
<a href="other.html#nowhere">dangling anchor</a> <a href="gone.html">missing page</a>
<div class="cell_output"><input type="range" id="idle" min="0" max="3" value="0"><span>frame 0</span></div>
<div class="pe-explorer"><label><input type="range" id="idle-explorer" min="0" max="3" value="0"></label>
<canvas></canvas></div>
<p>Typeset: <span class="math"><span class="katex"><span class="katex-html">x</span></span></span>, refused:
<span class="math"><span class="math-error">\bad</span></span>, left alone: <span class="math">y</span>.</p>
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
            math = visit.page.evaluate(MATH_JS)
        finally:
            visit.close()
    assert any(p.startswith("HTTP 404") and "missing.png" in p for p in problems), problems
    assert any("leaving the site" in p and "cdn.example.org" in p for p in problems), problems
    assert any("console error" in p and "boom" in p for p in problems), problems
    assert {m.group(0) for m in RAW_TEX.finditer(prose)} >= {"\\(", "\\omega", "\\)", "\\frac"}
    assert broken == 2
    assert idle == ["idle", "idle-explorer"]
    assert math["math"] == 3 and math["untypeset"] == ["\\bad", "y"] and math["errors"] == ["\\bad"], math
    assert any("nowhere" in p for p in links) and any("gone.html" in p and "404" in p for p in links), links
