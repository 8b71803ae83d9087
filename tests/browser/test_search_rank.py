"""The site's search finds chapter 17 first for "rope scaling" and "RoPE scaling".

Sphinx's search page ranks pages in the browser, from ``searchindex.js``. ``sphinx_rank`` below
follows ``_performSearch`` of the built site's own ``_static/searchtools.js`` (page and section
titles, index entries, full-text and title terms, with its ``Scorer`` weights) for a query without
objects (the book documents no Python objects), and then the site's own re-scoring of whole pages in
``_ext/static/book_search.js`` (a page whose title names a query word, directly or through a glossary
acronym, and the page a query word is "about", from ``_static/search_focus.js``). A test checks that
the built files still hold the rules the port copies, and a browser test that the real search page
puts the same page first. The tests that need the built site are marked ``browser`` (``make browser``);
the port's own tests, on hand-made indexes, run with the unit tests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import snowballstemmer

CHAPTER = "notebooks/17_rope_scaling"
WEIGHTS = {"title": 15, "partialTitle": 7, "term": 5, "partialTerm": 2}


def load_index(html: Path) -> dict:
    text = (html / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def _stopwords(html: Path) -> set[str]:
    text = (html / "_static" / "language_data.js").read_text(encoding="utf-8")
    return set(re.findall(r'"(\w+)"', re.search(r"stopwords\s*=\s*\[(.*?)\]", text, re.S).group(1)))


def _focus(html: Path) -> tuple[dict, dict]:
    text = (html / "_static" / "search_focus.js").read_text(encoding="utf-8")
    focus, aliases = (json.loads(m) for m in re.findall(r"= (\{.*\});", text))
    return focus, aliases


def _split(text: str) -> list[str]:
    return [w for w in re.split(r"[^\w]+", text) if w]


def sphinx_rank(index: dict, query: str, stopwords: set[str] = frozenset(), focus: tuple[dict, dict] = ({}, {}),
                ) -> list[tuple[int, str, str]]:
    """(score, document, title) of every result, best first, as the site's search page orders them."""
    stem = snowballstemmer.stemmer("porter").stemWord
    words = {stem(w.lower()) for w in _split(query.strip()) if w.lower() not in stopwords}
    docs, titles, q = index["docnames"], index["titles"], query.lower().strip()
    results = []  # (score, document, title, anchor)
    for title, found in index["alltitles"].items():
        if q in title.lower().strip() and len(q) >= len(title) / 2:
            for file, anchor in found:
                boost = 1 if titles[file] == title else 0
                results.append((round(WEIGHTS["title"] * len(q) / len(title)) + boost, docs[file], title, anchor))
    for entry, found in index["indexentries"].items():
        if q in entry and len(q) >= len(entry) / 2:
            results += [(round(100 * len(q) / len(entry)), docs[f], titles[f], a) for f, a, main in found if main]
    scores: dict[int, dict[str, int]] = {}
    for word in words:
        records = [(index["terms"].get(word), "term"), (index["titleterms"].get(word), "title")]
        if len(word) > 2:
            if word not in index["terms"]:
                records += [(files, "partialTerm") for term, files in index["terms"].items() if word in term]
            if word not in index["titleterms"]:
                records += [(files, "partialTitle") for term, files in index["titleterms"].items() if word in term]
        for files, kind in records:
            for file in [files] if isinstance(files, int) else files or []:
                scores.setdefault(file, {})[word] = WEIGHTS[kind]  # a later record overrides, as in the JS
    for file, found in scores.items():
        if len(found) == len(words):
            results.append((max(found.values()), docs[file], titles[file], None))
    page_focus, aliases = focus
    rescored = []
    for score, doc, title, anchor in results:
        if not anchor:  # book_search.js: whole pages only
            in_title = {stem(w) for w in _split(re.sub(r"<[^>]*>", " ", titles[docs.index(doc)]).lower())}
            if any(w in in_title or (w in aliases and all(a in in_title for a in aliases[w])) for w in words):
                score += 2 * WEIGHTS["title"]
            if any(page_focus.get(w) == doc for w in words):
                score += WEIGHTS["title"] + WEIGHTS["term"]
        rescored.append((score, doc, title))
    rescored.sort(key=lambda r: r[2].lower())  # equal scores: alphabetical, as displayed
    rescored.sort(key=lambda r: r[0], reverse=True)
    return rescored


@pytest.mark.browser
def test_the_port_uses_the_weights_of_the_sites_searchtools(book_html):
    js = (book_html / "_static" / "searchtools.js").read_text(encoding="utf-8")
    for name, weight in WEIGHTS.items():
        assert re.search(rf"\b{name}: {weight},", js), f"searchtools.js no longer gives {name} weight {weight}"
    assert "Math.round(Scorer.title * queryLower.length / title.length)" in js
    assert "Math.round(100 * queryLower.length / entry.length)" in js
    book = (book_html / "_static" / "book_search.js").read_text(encoding="utf-8")
    assert "if (anchor) return score;" in book
    assert "score += 2 * Scorer.title;" in book and "score += Scorer.title + Scorer.term;" in book


def test_the_port_puts_first_what_the_old_site_put_first():
    """Before chapter 17 was retitled, the browser showed chapter 12 first and chapter 17 fourth."""
    index = {
        "docnames": ["notebooks/12_rope", "notebooks/17_rope_scaling", "book/errata"],
        "titles": ["What is a rotary position embedding?", "<code>rope_scaling</code>, a field guide", "Errata"],
        "alltitles": {}, "indexentries": {},
        "terms": {"rope": [0, 1, 2], "scale": [0, 1, 2]},
        "titleterms": {"rope": [1, 2], "scale": 2},
    }
    focus = ({"rope": "notebooks/12_rope"}, {"rope": ["rotari", "posit", "embed"]})
    assert [r[1] for r in sphinx_rank(index, "rope scaling", focus=focus)] == [
        "notebooks/12_rope", "notebooks/17_rope_scaling", "book/errata"]


@pytest.mark.browser
@pytest.mark.parametrize("query", ["rope scaling", "RoPE scaling"])
def test_chapter_17_is_the_first_result(book_html, query):
    ranked = sphinx_rank(load_index(book_html), query, _stopwords(book_html), _focus(book_html))
    assert ranked, f"no result for {query!r}"
    first = ranked[0]
    assert first[1] == CHAPTER, f"{query!r}: first result {first}, chapter 17 at rank " + str(
        next((i + 1 for i, r in enumerate(ranked) if r[1] == CHAPTER), None)
    )
    runner_up = next(r for r in ranked if r[1] != CHAPTER)
    assert first[0] > runner_up[0], f"{query!r}: a tie with {runner_up}, decided only by alphabetical order"


def test_the_port_ranks_a_known_index():
    """A hand-made index: a page whose title holds the query beats pages that only contain its words."""
    index = {
        "docnames": ["a", "b", "c"],
        "titles": ["Alpha", "RoPE scaling", "Gamma"],
        "alltitles": {"Alpha": [[0, None]], "RoPE scaling": [[1, None]], "Gamma": [[2, None]]},
        "indexentries": {},
        "terms": {"rope": [0, 1, 2], "scale": [0, 2]},
        "titleterms": {"rope": 1, "scale": 1},
    }
    ranked = sphinx_rank(index, "rope scaling")
    assert [r[1] for r in ranked][:1] == ["b"] and ranked[0][0] == 16 + 2 * 15  # its title names both words
    assert {r[1] for r in ranked} == {"a", "b", "c"}


@pytest.mark.browser
@pytest.mark.parametrize("query", ["rope scaling", "RoPE scaling"])
def test_the_browser_search_agrees(browser, site, book_html, query):
    """The site's own search page, in Chromium: its first result is the port's first result."""
    from urllib.parse import urldefrag

    from test_pages import run_search

    results, _snippets, problems = run_search(browser, site, query.replace(" ", "+"))
    assert not problems, problems
    pages = [urldefrag(r)[0].removeprefix(site).removesuffix(".html") for r in results]
    assert pages[:1] == [CHAPTER], f"searching {query!r} in the browser: first results {pages[:4]}"
    port = sphinx_rank(load_index(book_html), query, _stopwords(book_html), _focus(book_html))
    assert port[0][1] == pages[0]
