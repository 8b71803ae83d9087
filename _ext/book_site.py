"""Sphinx extension for the book's website: self-contained, light, and honest about its versions.

* ``{lockfile-versions}`` — a directive that renders a table of pinned versions read from the lock
  files at build time (``requirements.txt``, ``requirements-lab.txt`` for JupyterLab, and the
  ``package-lock.json`` files of the build's and the tests' npm packages), so that the "Run it
  yourself" page can never quote a version that a lock file does not pin. A package named in the
  directive but missing from the lock files fails the build.
* Math is typeset at build time by KaTeX (``book_math``); after the build, what no page needs is
  not shipped (``book_slim``), the markup reads correctly to assistive technology (``book_a11y``)
  and the theme's source maps are removed.
* ``book_site.css`` and ``book_site.js`` (every page): a layout that fits a phone (formulas, code and
  tables scroll inside their own box, with a shadow at the edge that hides more), working sidebar
  buttons, figures that fit the column and enlarge on click, figures on their white card in dark
  mode (undimmed), printed lines that wrap.
* A glossary link covers the whole word: ``{term}`wavelength`s`` links "wavelengths", not "wavelength"
  followed by a bare "s" (:func:`term_links_cover_the_word`).
* ``pe_explorer.js`` on the pages that hold an explorer (``<div class="pe-explorer">``): the
  chapters' Jupyter explorers, computed in the browser.
* The search page gets ``book_search.js`` (snippets come from the text, their formulas typeset with
  KaTeX; a page that uses a word far more than any other ranks as if the word were in its title,
  from ``search_focus.js``) and a ``searchtools.js`` that does not drop numbers.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections import Counter
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

HERE = Path(__file__).resolve().parent

_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def canonical(name: str) -> str:
    """PEP 503 normalised package name: ``Sphinx_Book.Theme`` -> ``sphinx-book-theme``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path) -> dict[str, tuple[str, str]]:
    """``{canonical name: (name as written, version)}`` for every ``name==version`` line of a lock file,
    or for every package of an npm ``package-lock.json``."""
    pins = {}
    if path.name == "package-lock.json":
        for key, package in json.loads(path.read_text(encoding="utf-8")).get("packages", {}).items():
            name = key.rpartition("node_modules/")[2]
            if key and "version" in package:
                pins[canonical(name)] = (name, package["version"])
        return pins
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _REQUIREMENT.match(line.strip())
        if match:
            pins[canonical(match.group(1))] = (match.group(1), match.group(2))
    return pins


class LockfileVersions(SphinxDirective):
    """A table ``package | pinned version | what it does`` from the lock files.

    Content: one line per package, ``name: what it does``. Options: ``:lock:`` the lock files,
    separated by spaces, relative to the project root (default ``requirements.txt``).
    """

    has_content = True
    option_spec = {"lock": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        root = Path(self.env.srcdir)
        pins: dict[str, tuple[str, str, str]] = {}
        for name in (self.options.get("lock") or "requirements.txt").split():
            path = root / name
            self.env.note_dependency(str(path))
            for key, (written, version) in read_pins(path).items():
                pins.setdefault(key, (written, version, name))
        rows = []
        for line in self.content:
            if not line.strip():
                continue
            package, _, role = line.partition(":")
            key = canonical(package.strip())
            if key not in pins:
                locks = self.options.get("lock") or "requirements.txt"
                raise self.error(f"lockfile-versions: {package.strip()!r} is not pinned in {locks}")
            written, version, source = pins[key]
            rows.append((written, version, role.strip(), source))
        python = ".".join(str(v) for v in sys.version_info[:3])
        rows.append(("Python", python, "the interpreter that built this site", "the build"))
        return [self._table(["package", "version", "what it does here", "pinned in"], rows)]

    @staticmethod
    def _table(header: list[str], rows: list[tuple[str, ...]]) -> nodes.table:
        table = nodes.table(classes=["lockfile-versions"])
        group = nodes.tgroup(cols=len(header))
        table += group
        for _ in header:
            group += nodes.colspec(colwidth=1)

        def row(cells, literal_first):
            tr = nodes.row()
            for i, text in enumerate(cells):
                entry = nodes.entry()
                para = nodes.paragraph()
                para += nodes.literal(text=text) if (literal_first and i in (0, 1)) else nodes.Text(text)
                entry += para
                tr += entry
            return tr

        head = nodes.thead()
        head += row(header, literal_first=False)
        body = nodes.tbody()
        for cells in rows:
            body += row(cells, literal_first=True)
        group += head
        group += body
        return table


# Sphinx's search drops every query word made of digits only, so "10000" (the title of chapter 9)
# finds nothing, although the index holds it. The search page gets a copy without that rule.
NUMBER_RULE = re.compile(r"\s*\|\|\s*queryTerm\.match\(/\^\\d\+\$/\)")


def allow_numbers(searchtools: str) -> str:
    """Sphinx's ``searchtools.js`` without the rule that skips all-digit query words."""
    out, count = NUMBER_RULE.subn("", searchtools)
    if count != 1:
        raise ExtensionError(f"book_site: the number rule of searchtools.js was found {count} times, not once")
    return out


# A page "about" a word: it uses the word at least FOCUS_MIN_COUNT times and FOCUS_RATIO times as
# often as any other page. Sphinx ranks a page by where a word occurs (title or text), not how often,
# so the chapter about RoPE, whose title says "rotary position embedding", came after pages that
# name RoPE once in a heading. The search page ranks such a page higher (book_search.js).
FOCUS_MIN_COUNT = 5
FOCUS_RATIO = 1.5
_WORD = re.compile(r"\w+")


def word_counts(doctree, stem) -> Counter:
    """How often each (stemmed, lower-case) word occurs in a page's text, code blocks excluded."""
    counts: Counter = Counter()
    for text in doctree.findall(nodes.Text):
        if any(isinstance(a, (nodes.literal_block, nodes.comment, nodes.raw)) for a in _ancestors(text)):
            continue
        counts.update(stem(word) for word in _WORD.findall(str(text)))
    return counts


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


def search_focus(counts: dict[str, Counter]) -> dict[str, str]:
    """``{word: docname}`` for every word that one page uses far more than any other."""
    by_word: dict[str, list[tuple[int, str]]] = {}
    for docname, words in counts.items():
        for word, count in words.items():
            by_word.setdefault(word, []).append((count, docname))
    focus = {}
    for word, uses in by_word.items():
        uses.sort(reverse=True)
        top, runner_up = uses[0][0], (uses[1][0] if len(uses) > 1 else 0)
        if top >= FOCUS_MIN_COUNT and top >= FOCUS_RATIO * runner_up:
            focus[word] = uses[0][1]
    return dict(sorted(focus.items()))


# A glossary definition that opens with an acronym names the term: "rotary position embedding /
# RoPE: instead of adding ..." makes "RoPE" an alias of the term's words.
ACRONYM = re.compile(r"^([A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*):")


def glossary_aliases(doctree, stem) -> dict[str, list[str]]:
    """``{stemmed acronym: [stemmed words of the term]}`` for every glossary entry whose definition
    starts with an acronym and a colon."""
    aliases = {}
    for glossary in doctree.findall(addnodes.glossary):
        for item in glossary.findall(nodes.definition_list_item):
            terms = [t.astext() for t in item.findall(nodes.term)]
            definition = item.next_node(nodes.definition)
            match = ACRONYM.match(definition.astext().strip()) if definition is not None and terms else None
            if match:
                aliases[stem(match.group(1))] = [stem(w) for w in _WORD.findall(terms[0])]
    return aliases


def write_search_focus(app) -> None:
    """``_static/search_focus.js`` for book_search.js's ranking: the page each word is about, and the
    glossary's acronyms with the words they stand for."""
    indexer = getattr(app.builder, "indexer", None)
    if indexer is None:
        return
    stem = functools.cache(lambda word: indexer.lang.stem(word).lower())
    counts, aliases = {}, {}
    for docname in sorted(app.env.found_docs):
        doctree = app.env.get_doctree(docname)
        counts[docname] = word_counts(doctree, stem)
        aliases.update(glossary_aliases(doctree, stem))
    compact = {"separators": (",", ":"), "sort_keys": True}
    target = Path(app.outdir) / "_static" / "search_focus.js"
    target.write_text(f"window.bookSearchFocus = {json.dumps(search_focus(counts), **compact)};\n"
                      f"window.bookSearchAliases = {json.dumps(aliases, **compact)};\n", encoding="utf-8")


def finish_static(app, exception) -> None:
    """Remove the theme's source maps (never requested) and let the search find numbers."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for source_map in static.glob("*/*.map"):
        source_map.unlink()
    searchtools = static / "searchtools.js"
    searchtools.write_text(allow_numbers(searchtools.read_text(encoding="utf-8")), encoding="utf-8")
    write_search_focus(app)


def page_assets(app, pagename, templatename, context, doctree) -> None:
    """Per page: the explorer script where an explorer is; KaTeX and the search scripts on the search
    page."""
    if app.builder.format != "html":
        return
    if 'class="pe-explorer"' in context.get("body", ""):
        app.builder.add_js_file("pe_explorer.js", defer="defer")
    if pagename == "search":
        app.builder.add_js_file("katex/katex.min.js", defer="defer")
        app.builder.add_js_file("search_focus.js", defer="defer")
        app.builder.add_js_file("book_search.js", defer="defer")


WORD_END = re.compile(r"^[^\W\d_]+")  # letters glued to a role's end: a plural's "s", "es"


def term_links_cover_the_word(app, doctree, docname) -> None:
    """A ``{term}`` link followed at once by letters (``{term}`wavelength`s``) takes them into its text.

    The role's text is the glossary's term, so a plural was written with its ending outside the role,
    and the link stopped before it (issue 30, item 8). Runs on the resolved doctree, where each term
    is a ``reference`` around an ``inline`` of class ``std-term``.
    """
    for inline in list(doctree.findall(nodes.inline)):
        if "std-term" not in inline.get("classes", []) or not isinstance(inline.parent, nodes.reference):
            continue
        link = inline.parent
        parent = link.parent
        index = parent.index(link)
        following = parent[index + 1] if index + 1 < len(parent) else None
        match = WORD_END.match(str(following)) if isinstance(following, nodes.Text) else None
        if not match:
            continue
        inline += nodes.Text(match.group(0))
        rest = str(following)[match.end():]
        if rest:
            parent[index + 1] = nodes.Text(rest)
        else:
            del parent[index + 1]


def setup(app):
    app.setup_extension("book_math")
    app.setup_extension("book_slim")
    app.setup_extension("book_a11y")
    app.setup_extension("book_figures")
    app.setup_extension("book_cite")
    app.add_directive("lockfile-versions", LockfileVersions)
    app.config.html_static_path.append(str(HERE / "static"))
    app.add_css_file("book_site.css")
    app.add_js_file("book_site.js", defer="defer")
    app.connect("build-finished", finish_static, priority=900)
    app.connect("html-page-context", page_assets)
    app.connect("doctree-resolved", term_links_cover_the_word)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
