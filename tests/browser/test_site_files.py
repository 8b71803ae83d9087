"""The built website's files, checked without a browser (these run even where Chromium is missing).

The versions table on "Run it yourself" agrees with the lock file; no page references anything
outside the site; every internal link of every page reachable from index.html resolves, anchors
included (a crawl over HTTP on 127.0.0.1); removed cells and kernel-bound widgets are absent; the
offline MathJax is what the pages load; every figure is within its size budget; the size report runs.
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
    entries = [(a.get("href", ""), a.get_text(strip=True))
               for a in soup(book_html, PAGES[0]).select("nav.bd-docs-nav a.reference")]
    chapters = [(href, text) for href, text in entries if "notebooks/" in href]
    expected = [p for p in PAGES if p.startswith("notebooks/")]
    assert [href.split("notebooks/")[-1].removesuffix(".html") for href, _ in chapters] == \
        [p.removeprefix("notebooks/") for p in expected]
    numbers = [re.match(r"(\d+)\.\s", text) for _, text in chapters]
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
    pins = {name: book_site.read_pins(ROOT / name) for name in ("requirements.txt", "requirements-lab.txt")}
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
    for key in ("jupyter-book", "sphinx", "numpy", "nbval", "playwright", "jupyterlab"):
        assert key in listed, f"{key} missing from the versions table"
    assert checked == len(rows) - 1


def test_read_pins_and_canonical_names(tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text("# comment\nSphinx_Book.Theme==1.3.0\nnumpy==2.4.6 ; python_version >= '3.10'\n-e .\n")
    assert book_site.read_pins(lock) == {"sphinx-book-theme": ("Sphinx_Book.Theme", "1.3.0"),
                                         "numpy": ("numpy", "2.4.6")}


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


def test_math_pages_load_the_offline_mathjax(book_html):
    assert (book_html / "_static" / "mathjax" / "tex-chtml.js").is_file()
    for unused in book_site.MATHJAX_UNUSED:
        assert not (book_html / "_static" / "mathjax" / unused).exists(), f"{unused} should have been trimmed"
    with_math = 0
    for docname in PAGES:
        doc = soup(book_html, docname)
        if doc.select(".math"):
            with_math += 1
            sources = [s.get("src", "") for s in doc.find_all("script")]
            assert any(s.endswith("_static/mathjax/tex-chtml.js") for s in sources), docname
    assert with_math > 0


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
