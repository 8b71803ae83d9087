"""The built website's files, checked without a browser (these run even where Chromium is missing).

The versions table on "Run it yourself" agrees with the lock files; no page references anything
outside the site; every internal link of every page reachable from index.html resolves, anchors
included (a crawl over HTTP on 127.0.0.1); removed cells and kernel-bound widgets are absent; the
math is typeset at build time (KaTeX) and no page loads a math engine; pages load only what they
use (no Font Awesome script, icon fonts cut to the icons used, the search index on the search page
only); every figure has alt text that describes it and is within its size budget; every page has a
favicon and a tab title that names the book once; the size report runs. The helpers of the build
(_ext/book_math.py, book_slim.py, book_site.py) are tested on small inputs, including the failures
they must report.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
import urllib.error
import urllib.request
from collections import deque
from urllib.parse import urldefrag, urljoin, urlsplit

import nbformat
import pytest
from bs4 import BeautifulSoup
from site_helpers import ROOT, toc_docnames

pytestmark = pytest.mark.browser

PAGES = toc_docnames()


def _load(name: str, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


book_site = _load("book_site", ROOT / "_ext" / "book_site.py")
book_math = _load("book_math", ROOT / "_ext" / "book_math.py")
book_slim = _load("book_slim", ROOT / "_ext" / "book_slim.py")
site_report = _load("site_report", ROOT / "tools" / "site_report.py")


@functools.cache
def parsed(path) -> BeautifulSoup:
    """A built HTML file, parsed once per session (several tests read the same pages)."""
    return BeautifulSoup(path.read_text(encoding="utf-8", errors="replace"), "html.parser")


def soup(book_html, docname: str) -> BeautifulSoup:
    return parsed(book_html / f"{docname}.html")


def test_every_toc_page_is_built(book_html):
    missing = [d for d in PAGES if not (book_html / f"{d}.html").is_file()]
    assert not missing
    assert "book/running" in PAGES


def test_chapters_are_numbered_in_reading_order(book_html):
    entries = [(a.get("href", ""), " ".join(a.get_text().split()))
               for a in soup(book_html, PAGES[0]).select("nav.bd-docs-nav a.reference")]
    chapters = [(href, text) for href, text in entries if "notebooks/" in href]
    expected = [p for p in PAGES if p.startswith("notebooks/")]
    assert [href.split("notebooks/")[-1].removesuffix(".html") for href, _ in chapters] == \
        [p.removeprefix("notebooks/") for p in expected]
    # a title that starts with code (chapter 17's `rope_scaling`) follows the number without a space
    numbers = [re.match(r"(\d+)\.(?:\s|(?=\S))", text) for _, text in chapters]
    assert all(numbers), f"unnumbered chapters in the sidebar: {chapters}"
    assert [int(m.group(1)) for m in numbers] == list(range(1, len(expected) + 1))
    pages = {p.split("/")[-1] for p in PAGES[1:] if p.startswith("book/")}  # hrefs are relative to book/
    reference = [text for href, text in entries if href.removesuffix(".html") in pages]
    assert reference and not any(re.match(r"\d+\.\s", text) for text in reference), reference


def test_versions_table_is_the_lock_file(book_html):
    table = soup(book_html, "book/running").select_one("table.lockfile-versions")
    assert table is not None, "book/running.html has no generated versions table"
    rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in table.select("tbody tr")]
    assert len(rows) >= 10
    locks = ("requirements.txt", "requirements-lab.txt", "_ext/package-lock.json", "tests/browser/package-lock.json")
    pins = {name: book_site.read_pins(ROOT / name) for name in locks}
    checked = 0
    for package, version, _role, source in rows:
        if source == "the build":
            assert package == "Python" and re.fullmatch(r"3\.\d+\.\d+", version)
            continue
        pinned = pins[source].get(book_site.canonical(package))
        assert pinned is not None, f"{package} is in the table but not pinned in {source}"
        assert pinned[1] == version, f"{package}: page says {version}, {source} pins {pinned[1]}"
        checked += 1
    listed = {book_site.canonical(row[0]) for row in rows}
    for key in ("jupyter-book", "sphinx", "numpy", "nbval", "playwright", "jupyterlab", "katex", "axe-core"):
        assert key in listed, f"{key} missing from the versions table"
    assert checked == len(rows) - 1


def test_read_pins_and_canonical_names(tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text("# comment\nSphinx_Book.Theme==1.3.0\nnumpy==2.4.6 ; python_version >= '3.10'\n-e .\n")
    assert book_site.read_pins(lock) == {"sphinx-book-theme": ("Sphinx_Book.Theme", "1.3.0"),
                                         "numpy": ("numpy", "2.4.6")}
    npm = tmp_path / "package-lock.json"
    npm.write_text('{"packages": {"": {"name": "x", "dependencies": {"katex": "0.16.47"}},'
                   ' "node_modules/katex": {"version": "0.16.47"},'
                   ' "node_modules/katex/node_modules/commander": {"version": "8.3.0"}}}')
    assert book_site.read_pins(npm) == {"katex": ("katex", "0.16.47"), "commander": ("commander", "8.3.0")}


RESOURCE_ATTRS = [("script", "src"), ("img", "src"), ("iframe", "src"), ("source", "src"), ("video", "src"),
                  ("audio", "src"), ("embed", "src"), ("object", "data")]


def test_no_page_loads_anything_from_another_host(book_html):
    offenders = []
    for page in sorted(book_html.rglob("*.html")):
        if "_static" in page.parts:
            continue
        doc = parsed(page)
        urls = [tag.get(attr) for name, attr in RESOURCE_ATTRS for tag in doc.find_all(name) if tag.get(attr)]
        urls += [link.get("href") for link in doc.find_all("link") if link.get("href")
                 and set(link.get("rel") or []) & {"stylesheet", "preload", "icon", "modulepreload", "prefetch"}]
        offenders += [f"{page.relative_to(book_html)}: {url}" for url in urls if urlsplit(url).netloc]
    remote = re.compile(r"(?:@import\s+|url\()\s*['\"]?((?:https?:)?//[^'\")\s]+)")
    for sheet in sorted(book_html.rglob("*.css")):
        text = sheet.read_text(errors="replace")
        offenders += [f"{sheet.relative_to(book_html)}: {url}" for url in remote.findall(text)]
    assert not offenders, "\n".join(offenders)


def _scripts(doc) -> list[str]:
    return [urlsplit(s.get("src", "")).path for s in doc.find_all("script") if s.get("src")]


def _stylesheets(doc) -> list[str]:
    return [urlsplit(link.get("href", "")).path for link in doc.find_all("link", rel="stylesheet")]


def test_math_is_typeset_when_the_site_is_built(book_html):
    """Formulas arrive as KaTeX's HTML + MathML; pages with math load KaTeX's stylesheet, and no page
    loads a math engine (the search page alone loads KaTeX's script, to typeset its snippets)."""
    assert not (book_html / "_static" / "mathjax").exists(), "MathJax is still shipped"
    css = (book_html / "_static" / "katex" / "katex.min.css").read_text(encoding="utf-8")
    fonts = re.findall(r"url\(([^)]+)\)", css)
    assert fonts and all(f.endswith(".woff2") for f in fonts), "KaTeX's stylesheet should name WOFF2 fonts only"
    assert all((book_html / "_static" / "katex" / f).is_file() for f in fonts), "a KaTeX font is missing"
    with_math = 0
    for docname in PAGES:
        doc = soup(book_html, docname)
        math = doc.select(".math")
        has_katex_css = any(h.endswith("_static/katex/katex.min.css") for h in _stylesheets(doc))
        engines = [s for s in _scripts(doc) if re.search(r"mathjax|katex", s, re.I)]
        assert not engines, f"{docname} loads {engines}"
        assert has_katex_css == bool(math), f"{docname}: {len(math)} formulas, KaTeX stylesheet {has_katex_css}"
        untypeset = [m.get_text()[:60] for m in math if not m.select_one(".katex .katex-mathml math")]
        assert not untypeset, f"{docname}: formulas without KaTeX's HTML and MathML: {untypeset}"
        with_math += bool(math)
    assert with_math > 5
    search = soup(book_html, "search")
    assert any(s.endswith("_static/katex/katex.min.js") for s in _scripts(search))


def test_pages_load_only_what_they_use(book_html):
    static = book_html / "_static"
    assert not (static / "scripts" / "fontawesome.js").exists()
    problems = []
    used_icons = set()
    for docname in [*PAGES, "search", "genindex"]:
        doc = soup(book_html, docname)
        scripts = _scripts(doc)
        if any("fontawesome" in s for s in scripts):
            problems.append(f"{docname} loads Font Awesome's script")
        search_tools = [s for s in scripts if s.endswith(("searchindex.js", "searchtools.js", "language_data.js"))]
        if (docname == "search") != (len(search_tools) == 3):
            problems.append(f"{docname} loads {search_tools}")
        if any("sphinx-design" in h for h in _stylesheets(doc)) and not doc.select('[class*="sd-"]'):
            problems.append(f"{docname} loads sphinx-design's stylesheet without using it")
        used_icons |= {c for tag in doc.select('[class*="fa-"]') for c in tag["class"] if c.startswith("fa-")}
    assert not problems, problems
    # every icon used has its glyph in a font the stylesheet names, and those fonts exist
    from fontTools.ttLib import TTFont

    css = (static / "styles" / "pydata-sphinx-theme.css").read_text(encoding="utf-8")
    icons = book_slim.icon_rules(css)
    fonts = re.findall(r"url\((\.\./vendor/fontawesome/webfonts/[^)]+)\)", css)
    assert fonts and all((static / "styles" / f).is_file() for f in fonts), fonts
    glyphs = set().union(*(TTFont(static / "styles" / f).getBestCmap() for f in fonts))
    drawn = [i for i in sorted(used_icons) if i[3:] in icons]
    missing = [i for i in drawn if int(icons[i[3:]], 16) not in glyphs]
    assert len(drawn) >= 10 and not missing, f"icons without a glyph: {missing}"
    assert book_slim.css_glyphs(css) <= glyphs, "a glyph named by the stylesheet is missing from the fonts"


_NOT_A_DESCRIPTION = re.compile(r"(^|/)[^ ]*\.(png|jpe?g|svg|gif|webp)$|[0-9a-f]{16}|^\W*$", re.I)


def alt_text_problems(doc) -> list[str]:
    """Every image of the article needs alt text of at least 4 words that is not a file name or a hash."""
    problems = []
    for img in doc.select("article.bd-article img"):
        alt = (img.get("alt") or "").strip()
        if len(alt.split()) < 4 or _NOT_A_DESCRIPTION.search(alt):
            problems.append(f"{img.get('src', '')[:60]}: alt {alt[:80]!r}")
    return problems


@pytest.mark.parametrize("docname", PAGES)
def test_figures_have_alt_text_that_describes_them(book_html, docname):
    problems = alt_text_problems(soup(book_html, docname))
    assert not problems, f"{docname}: {len(problems)} image(s) without a description:" + "\n  ".join([""] + problems)


def test_alt_text_check_catches_paths_and_hashes():
    doc = BeautifulSoup('<article class="bd-article"><img src="a.png" alt="../_images/65da1ca83bc67ea5.png">'
                        '<img src="b.png"><img src="c.png" alt="heat map"><img src="d.png" alt="65da1ca83bc67ea53b">'
                        '<img src="e.png" alt="Heat map of the table: fast columns on the left."></article>',
                        "html.parser")
    assert [p.split(":")[0] for p in alt_text_problems(doc)] == ["a.png", "b.png", "c.png", "d.png"]


def test_every_page_has_a_favicon_and_names_the_book_once(book_html):
    title = "Positional Encoding, Explained and Verified"
    for docname in [*PAGES, "search"]:
        doc = soup(book_html, docname)
        icons = [link["href"] for link in doc.find_all("link", rel="icon")]
        assert icons, f"{docname} has no favicon (browsers then ask for /favicon.ico: a 404)"
        assert all((book_html / docname).parent.joinpath(urlsplit(h).path).resolve().is_file() for h in icons), icons
        tab = doc.title.get_text()
        assert tab.count(title) == 1, f"{docname}: the tab title {tab!r} should name the book once"


def test_katex_typesets_and_reports_what_it_cannot():
    katex = book_math.Katex()
    try:
        html = katex.render(r"\omega_k = \mathrm{base}^{-2k/d}", display=False)
        assert 'class="katex"' in html and "<math" in html and "annotation" in html
        assert 'class="katex-display"' in katex.render(r"\begin{pmatrix} a \\ b \end{pmatrix}", display=True)
        with pytest.raises(book_math.KatexError, match="Undefined control sequence"):
            katex.render(r"\notamacro{x}", display=False)
        with pytest.raises(TypeError):
            katex.render(None, display=False)
    finally:
        katex.close()


def test_display_math_follows_sphinx_conventions():
    from docutils import nodes

    def block(text, nowrap=False):
        node = nodes.math_block(text, text)
        node["nowrap"] = nowrap
        return node

    assert book_math.display_tex(block("a = b")) == "a = b"
    assert book_math.display_tex(block("a = b\n\nc = d")) == r"\begin{aligned}a = b\\c = d\end{aligned}"
    assert book_math.display_tex(block(r"a &= b \\ &= c")) == r"\begin{aligned}a &= b \\ &= c\end{aligned}"
    assert book_math.display_tex(block(r"\begin{align}x\end{align}", nowrap=True)) == r"\begin{align}x\end{align}"


def test_katex_stylesheet_keeps_woff2_only():
    css = ('@font-face{font-family:KaTeX_AMS;src:url(fonts/KaTeX_AMS-Regular.woff2) format("woff2"),'
           'url(fonts/KaTeX_AMS-Regular.woff) format("woff"),url(fonts/KaTeX_AMS-Regular.ttf) format("truetype")}')
    assert book_math.woff2_only(css) == ('@font-face{font-family:KaTeX_AMS;'
                                         'src:url(fonts/KaTeX_AMS-Regular.woff2) format("woff2")}')
    with pytest.raises(book_math.ExtensionError):
        book_math.woff2_only("@font-face{src:url(a.woff) format(\"woff\")}")


def test_slimming_fails_loudly_when_the_theme_changes(tmp_path):
    page = tmp_path / "page.html"
    theme_head = ('<link href="../_static/styles/pydata-sphinx-theme.css?digest=1" rel="stylesheet" />\n'
                  '  <script defer src="../_static/scripts/fontawesome.js?digest=1"></script>\n'
                  '<link rel="preload" as="script" href="../_static/scripts/bootstrap.js?digest=1" />\n'
                  '<link rel="preload" as="script" href="../_static/scripts/pydata-sphinx-theme.js?digest=1" />\n'
                  '    <script src="../_static/searchtools.js"></script>\n'
                  '    <script src="../_static/language_data.js"></script>\n'
                  '    <script src="../searchindex.js"></script>\n')
    slim = book_slim.slim_page(theme_head, page, is_search=False)
    assert "fontawesome" not in slim and "search" not in slim and "preload" not in slim
    assert "searchindex" in book_slim.slim_page(theme_head, page, is_search=True)
    with pytest.raises(book_slim.SlimError, match="fontawesome.js"):
        book_slim.slim_page(theme_head.replace("fontawesome.js", "icons.js"), page, is_search=False)
    with pytest.raises(book_slim.SlimError, match="search script"):
        book_slim.slim_page(theme_head.replace("searchindex.js", "index.js"), page, is_search=False)


def test_sphinx_design_stylesheet_stays_only_for_its_elements(tmp_path):
    page = tmp_path / "page.html"
    head = ('<script defer src="../_static/scripts/fontawesome.js?digest=1"></script>\n'
            '<link rel="preload" as="script" href="../_static/scripts/bootstrap.js?digest=1" />\n'
            '<link rel="preload" as="script" href="../_static/scripts/pydata-sphinx-theme.js?digest=1" />\n'
            '<link rel="stylesheet" type="text/css" href="../_static/sphinx-design.min.css?v=1" />\n')
    prose = head + "<p>the sd-scripts pull request</p>"  # the text "sd-" is not an element of sphinx-design
    assert "sphinx-design" not in book_slim.slim_page(prose, page, is_search=True)
    card = head + '<div class="sd-card sd-shadow-sm">a card</div>'
    assert "sphinx-design" in book_slim.slim_page(card, page, is_search=True)


def test_icon_rules_are_cut_to_the_icons_used():
    css = ('.fa-bars:before,.fa-navicon:before{content:"\\f0c9"}.fa-sun:before{content:"\\f185"}'
           '.fa-lg{font-size:1.25em}:root{--pst-icon-external-link:"\uf35d"}')
    assert book_slim.icon_rules(css) == {"bars": "f0c9", "navicon": "f0c9", "sun": "f185"}
    # written back in ASCII: a private-use character becomes a CSS escape again (its space ends the escape)
    assert book_slim.purge_icon_rules(css, {"bars"}) == (
        '.fa-bars:before{content:"\\f0c9 "}.fa-lg{font-size:1.25em}:root{--pst-icon-external-link:"\\f35d "}')
    assert book_slim.css_glyphs(css) == {0xF0C9, 0xF185, 0xF35D}
    assert book_slim.used_icons(['<i class="fa-solid fa-bars fa-lg"></i>']) == {"solid", "bars", "lg"}


def test_stylesheet_purge_keeps_what_is_used():
    css = ('@charset "UTF-8";.btn,.card-body{color:red}.used .unused{x:1}@media (min-width:9px){.col-6{a:b}.used{c:d}}'
           '@font-face{font-family:F}.bs-tooltip-top .tooltip-arrow{e:f}a[href]{g:h}')
    out = book_slim.purge_unused_rules(css, {"btn", "used", "tooltip-arrow"}, ("bs-",))
    assert out == ('@charset "UTF-8";.btn{color:red}@media (min-width:9px){.used{c:d}}@font-face{font-family:F}'
                   '.bs-tooltip-top .tooltip-arrow{e:f}a[href]{g:h}')
    assert book_slim.purge_unused_rules("/* x */.a:not(.gone),:is(.b, .gone) .c{i:j}", {"a", "b", "c"}, ()) == (
        ".a:not(.gone){i:j}")  # :not() of a class no page has still matches; :is(.b, .gone) needs .gone
    assert book_slim.DYNAMIC_PREFIX.findall('x=`bs-${name}-auto`; y="col-"+n; z="plain-text"') == ["bs-", "col-"]


# Font Awesome's licence comment as the theme's stylesheet has it: commas, a "*/" at the end, and the
# icon rules right after it. A hand-written splitter that cut at commas dropped the piece with "*/"
# and left the comment open: every icon rule after it became part of the comment (issue 19).
LICENCE_THEN_ICONS = (
    '.unused-a{x:1}/*!\n * Font Awesome Free 6.5.2 by @fontawesome - https://fontawesome.com\n'
    ' * Copyright 2024 Fonticons, Inc.\n */.fa{font-family:var(--fa-style-family,"Font Awesome 6 Free")}'
    '.fa-unused-b:before,.fa-bars:before{content:"\\f0c9"}.fa-sun:before{content:"\\f185"}'
)


def test_stylesheet_purge_never_leaves_a_comment_open():
    import tinycss2

    out = book_slim.purge_unused_rules(LICENCE_THEN_ICONS, {"fa", "fa-bars", "fa-sun"}, ())
    rules = tinycss2.parse_stylesheet(out, skip_comments=True, skip_whitespace=True)
    preludes = [tinycss2.serialize(r.prelude) for r in rules if r.type == "qualified-rule"]
    assert preludes == [".fa", ".fa-bars:before", ".fa-sun:before"], out
    assert book_slim.icon_rules(out) == {"bars": "f0c9", "sun": "f185"}, out
    assert "Font Awesome Free 6.5.2" in out, "the licence comment (/*! ... */) is kept"


def test_icon_rules_inside_a_comment_are_no_icon_rules():
    assert book_slim.icon_rules('/* .fa-bars:before{content:"\\f0c9"} */.fa-sun:before{content:"\\f185"}') == {
        "sun": "f185"}
    with pytest.raises(book_slim.SlimError, match="does not parse"):
        book_slim.purge_unused_rules(".a{x:1}}", {"a"}, ())


def test_glossary_acronyms_become_search_aliases():
    from docutils import nodes
    from sphinx import addnodes

    def entry(term, definition):
        return nodes.definition_list_item("", nodes.term(term, term),
                                          nodes.definition("", nodes.paragraph(definition, definition)))

    glossary = addnodes.glossary()
    glossary += nodes.definition_list("", entry("rotary position embedding", "RoPE: rotate each pair."),
                                      entry("ALiBi", "Attention with Linear Biases: no vectors."),
                                      entry("shift matrix", "The rotation M: it moves a position."))
    doc = nodes.document(None, None)
    doc += glossary
    assert book_site.glossary_aliases(doc, str.lower) == {"rope": ["rotary", "position", "embedding"]}


def test_search_patch_lets_numbers_through():
    rule = "      if (\n        stopwords.indexOf(queryTermLower) !== -1 ||\n        queryTerm.match(/^\\d+$/)\n      )"
    assert "match" not in book_site.allow_numbers(rule)
    with pytest.raises(book_site.ExtensionError):
        book_site.allow_numbers("no such rule")


def _cells(path):
    nb = nbformat.read(path, as_version=4)
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("docname", [d for d in PAGES if d.startswith("notebooks/")])
def test_removed_cells_and_widgets_are_not_on_the_site(book_html, docname):
    html = (book_html / f"{docname}.html").read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-view+json" not in html, "a widget view is rendered (needs a kernel)"
    assert "widget-state+json" not in html
    text = soup(book_html, docname).get_text()
    for cell in _cells(ROOT / f"{docname}.ipynb"):
        if "remove-cell" in cell.metadata.get("tags", []) or "remove-input" in cell.metadata.get("tags", []):
            lines = [ln.strip() for ln in cell.source.splitlines() if len(ln.strip()) > 20]
            assert not any(ln in text for ln in lines), f"removed cell is visible: {lines[:1]}"


def test_every_internal_link_resolves(book_html, site):
    """Crawl from index.html over HTTP: every same-site <a href> answers 200 and its #anchor exists."""
    status: dict[str, int] = {}
    ids: dict[str, set[str]] = {}
    links: list[tuple[str, str]] = []  # (from page, href)
    queue, seen = deque([urljoin(site, "index.html")]), set()
    while queue:
        url = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                status[url], kind = answer.status, answer.headers.get_content_type()
        except urllib.error.HTTPError as err:
            status[url], kind = err.code, ""
        if kind != "text/html":
            continue
        doc = parsed(book_html / urlsplit(url).path.lstrip("/"))  # the file the server just sent
        ids[url] = {t["id"] for t in doc.find_all(id=True)}
        ids[url] |= {t["name"] for t in doc.find_all("a", attrs={"name": True})}
        hrefs = [a["href"] for a in doc.find_all("a", href=True)]
        refresh = doc.find("meta", attrs={"http-equiv": re.compile("refresh", re.I)})
        if refresh:  # index.html redirects to the first page
            hrefs.append(refresh["content"].split("url=", 1)[-1].strip())
        for href in hrefs:
            target = urljoin(url, href)
            if not target.startswith(site):
                continue
            links.append((url, target))
            queue.append(urldefrag(target)[0].split("?")[0])
    broken = []
    for page, target in links:
        base, fragment = urldefrag(target)
        base = base.split("?")[0]
        if status.get(base) != 200:
            broken.append(f"{page} -> {target}: HTTP {status.get(base)}")
        elif fragment and base in ids and fragment not in ids[base]:
            broken.append(f"{page} -> {target}: no id {fragment!r}")
    assert not broken, "\n".join(sorted(set(broken)))
    crawled = {urlsplit(u).path.lstrip("/") for u in status}
    assert {f"{d}.html" for d in PAGES} <= crawled, "some table-of-contents pages are not linked from the site"
    assert any(p.endswith(".ipynb") for p in crawled), "no notebook download link was found"


def test_figures_are_within_budget_and_report_runs(book_html, capsys):
    report = site_report.collect(book_html)
    assert report.total > 0 and report.pages
    over = report.over_budget()
    assert not over, [f"{f.path}: {f.size / 1024:.0f} KB" for f in over]
    assert site_report.main([str(book_html), "--top", "5"]) == 0
    printed = capsys.readouterr().out
    assert "total on disk" in printed and "heaviest pages" in printed
    with capsys.disabled():
        print("\n" + printed)


def test_citations_open_their_own_list_or_the_bibliography(book_html):
    """A citation links to the list at the end of its own page or to the bibliography page; "Vaswani et
    al., 2017" on the home page used to open the end of chapter 16 (issue 19, item 6)."""
    bibliography = soup(book_html, "book/bibliography")
    entries = {div["id"] for div in bibliography.select("div.citation[id]")}
    assert len(entries) >= 20 and all(e.startswith("cite-all-") for e in entries), sorted(entries)[:5]
    problems, count = [], 0
    for docname in PAGES:
        doc = soup(book_html, docname)
        for a in doc.select("main a.reference.internal[href*='#cite-']"):
            count += 1
            page, _, anchor = a["href"].partition("#")
            own = page in ("", docname.rsplit("/", 1)[-1] + ".html")
            if own and doc.find(id=anchor) is None:
                problems.append(f"{docname}: {a.get_text()!r} -> #{anchor}, not on the page")
            elif not own and (not page.endswith("bibliography.html") or anchor not in entries):
                problems.append(f"{docname}: {a.get_text()!r} -> {a['href']} (another page's list)")
    assert count >= 50, f"only {count} citations found"
    assert not problems, "\n".join(problems[:20])


def test_display_formulas_stack_where_they_can_break():
    from docutils import nodes

    narrow = book_math.narrow_tex
    assert narrow(r"a = \sin(x), \qquad b = \cos(x).") == r"\begin{gathered}a = \sin(x),\\{}b = \cos(x).\end{gathered}"
    # a chain: every member on a line of its own, the left-hand side too (chapter 1's was wider than a phone)
    assert narrow(r"z = x + y = e^{i\phi}") == r"\begin{gathered}z\\{}= x + y\\{}= e^{i\phi}\end{gathered}"
    # braces, \left...\right and environments hide their = and \quad: only the one top-level relation breaks
    assert narrow(r"f\left(a = b \quad c\right) = \frac{x = 1}{2}") == (
        r"\begin{gathered}f\left(a = b \quad c\right)\\{}= \frac{x = 1}{2}\end{gathered}")
    assert narrow(r"\begin{pmatrix} a = 1 \\ b = 2 \end{pmatrix} = M") == (
        r"\begin{gathered}\begin{pmatrix} a = 1 \\ b = 2 \end{pmatrix}\\{}= M\end{gathered}")
    assert narrow(r"\begin{aligned}a &= b\\ &= c\end{aligned}") is None
    assert narrow(r"x^{a + b}") is None and narrow(r"- x") is None  # no place to break
    # a sum breaks before its top-level terms (issue 30, item 5: chapter 12's sympy result), not inside
    # \left( \right) nor inside the bars of |x - y|; a formula without one breaks before its relation
    assert narrow(r"s = q_0 \left(a - b\right) + q_1 \left(- c\right) - |x - y|") == (
        r"\begin{gathered}s = q_0 \left(a - b\right)\\{}+ q_1 \left(- c\right)\\{}- |x - y|\end{gathered}")
    assert narrow(r"|a + b| \le \max_k |g_{k+1} - g_k|.") == (
        r"\begin{gathered}|a + b|\\{}\le \max_k |g_{k+1} - g_k|.\end{gathered}")
    # a matrix's rows are no lines of the formula: chapter 12's rotation matrix still breaks at its \qquad
    matrix = r"R = \begin{pmatrix} c & -s \\ s & c \end{pmatrix}, \qquad \omega_k = 10^{-2k}"
    assert book_math.display_tex(nodes.math_block(matrix, matrix)) == matrix
    assert narrow(matrix) == (
        r"\begin{gathered}R = \begin{pmatrix} c & -s \\ s & c \end{pmatrix},\\{}\omega_k = 10^{-2k}\end{gathered}")


def test_punctuation_after_a_formula_stays_with_it():
    from docutils import nodes

    para = nodes.paragraph("", "", nodes.Text("index "), nodes.math("", "i"), nodes.Text(", and ."),
                           nodes.math("", "x" * 40), nodes.Text(". End"))
    book_math.keep_punctuation_attached(None, para, "page")
    box = para[1]
    assert isinstance(box, nodes.inline) and box["classes"] == ["book-nowrap"], para.pformat()
    assert box.astext() == "i," and str(para[2]) == " and ."  # the later "." of the text is untouched
    assert str(para[4]) == book_math.WORD_JOINER + ". End"  # a long formula may wrap: a word joiner


@pytest.mark.parametrize("docname", ["book/intro", "book/ten_minutes"])
def test_a_pasted_figure_is_the_chapters_image_with_its_alt_text_size_and_caption(book_html, docname):
    # issue 19 item 12: chapter 3 glues its opening picture; the page pastes it ({glue} with :doc:)
    nb = nbformat.read(ROOT / "notebooks" / "03_the_formula.ipynb", as_version=4)
    (meta,) = [o["metadata"]["image/png"] for c in nb.cells if c.get("id") == "picture-code"
               for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    chapter_img = soup(book_html, "notebooks/03_the_formula").find("img", alt=meta["alt"])
    figure = soup(book_html, docname).find("figure", id="figure-encoding-bars")
    assert chapter_img is not None and figure is not None, "the picture is missing from chapter 3 or the page"
    img = figure.find("img")
    assert img["alt"] == meta["alt"]  # not the file name that myst-nb gives a pasted image
    assert img["src"].split("/")[-1] == chapter_img["src"].split("/")[-1]  # the same file, not a copy
    assert f"width: {meta['width']}px" in img.get("style", "")
    caption = figure.find("figcaption")
    assert caption is not None and meta["alt"] in caption.get_text(" ", strip=True)
    assert caption.find("a", href=re.compile(r"03_the_formula\.html$"))


def test_a_glossary_link_covers_the_whole_word(book_html):
    """``{term}`wavelength`s`` links "wavelengths", not "wavelength" and a bare "s" after the link (issue 30,
    item 8; book_site.term_links_cover_the_word). Seen failing on the site built without it."""
    glued, terms, plurals = [], 0, []
    for docname in PAGES:
        for span in soup(book_html, docname).select("main a span.std-term"):
            terms += 1
            after = span.parent.next_sibling
            if isinstance(after, str) and re.match(r"[^\W\d_]", after):
                glued.append(f"{docname}: {span.get_text()!r} then {after[:12]!r}")
            if span.get_text() == "wavelengths":
                plurals.append(docname)
    assert terms >= 50, f"only {terms} glossary links found"
    assert not glued, "\n".join(glued)
    assert "notebooks/04_visualizing" in plurals, plurals


def test_a_citation_reads_as_the_label_of_the_entry_it_opens(book_html):
    """The text cited "[Su et al., 2021]" and the list was keyed "[SLP+21]" (issue 30, item 4; seen failing on
    the site built with pybtex's alpha labels). Every citation's text is the label of the entry it links to,
    on its own page or the bibliography page; two works of one author-year label are told apart ("a", "b")."""
    pages = {d: soup(book_html, d) for d in PAGES}
    files = {f"{d.rsplit('/', 1)[-1]}.html": d for d in PAGES}

    def label(docname: str, anchor: str) -> str | None:
        entry = pages[docname].find(id=anchor)
        span = entry.find("span", class_="label") if entry else None
        return span.get_text().strip("[]") if span else None

    wrong, count, labels = [], 0, set()
    for docname, doc in pages.items():
        for a in doc.select("main a.reference.internal[href*='#cite-']"):
            page, _, anchor = a["href"].partition("#")
            target = docname if page == "" else files.get(page.rsplit("/", 1)[-1])
            entry_label = label(target, anchor) if target else None
            count += 1
            labels.add(a.get_text())
            if a.get_text() != entry_label:
                wrong.append(f"{docname}: {a.get_text()!r} opens the entry labelled {entry_label!r}")
    assert count >= 50 and "Su et al., 2021" in labels, (count, sorted(labels)[:5])
    assert not wrong, "\n".join(wrong[:10])
    assert {"Chi et al., 2023a", "Chi et al., 2023b"} <= labels
