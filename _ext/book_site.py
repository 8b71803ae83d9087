"""Sphinx extension for the book's website: self-contained, light, and honest about its versions.

* ``{lockfile-versions}`` — a directive that renders a table of pinned versions read from the lock
  file at build time (``requirements.txt``, and ``requirements-lab.txt`` for JupyterLab), so that the
  "Run it yourself" page can never quote a version that the lock file does not pin. A package named in
  the directive but missing from the lock files fails the build.
* After the build, the MathJax copy made by ``sphinx-mathjax-offline`` is trimmed to what the pages
  can load (the ``tex-chtml`` component, its fonts, its autoloaded TeX extensions and what its menu
  can load), and source maps of the theme are removed: neither is ever requested by a reader.
* ``book_site.css`` keeps computed figures legible in dark mode (white background, no dimming) and
  hides the theme's duplicate top bar on wide screens.
* The search page loads the same offline MathJax and ``book_search.js``, which cuts result snippets at
  formula boundaries and typesets them: without it, snippets show raw TeX such as ``\\(\\omega_k\\)``.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

HERE = Path(__file__).resolve().parent

# Files of the MathJax 3 distribution that ``tex-chtml.js`` never loads: the other combined
# components (each a complete alternative to tex-chtml.js), the Node.js entry points, the CDN
# redirector ``latest.js``, and the MathML/AsciiMath inputs. Kept: tex-chtml.js, output/ (CHTML
# fonts; SVG output is selectable in MathJax's menu), input/tex/extensions (autoloaded macros),
# a11y/, sre/ and ui/ (loaded on demand from the menu).
MATHJAX_UNUSED = [
    "tex-svg.js", "tex-svg-full.js", "tex-mml-svg.js", "tex-mml-chtml.js", "mml-svg.js", "mml-chtml.js",
    "tex-chtml-full.js", "tex-chtml-full-speech.js", "node-main.js", "latest.js", "adaptors",
    "input/mml.js", "input/mml", "input/asciimath.js", "input/tex-full.js", "input/tex-base.js",
]

_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def canonical(name: str) -> str:
    """PEP 503 normalised package name: ``Sphinx_Book.Theme`` -> ``sphinx-book-theme``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path) -> dict[str, tuple[str, str]]:
    """``{canonical name: (name as written, version)}`` for every ``name==version`` line of a lock file."""
    pins = {}
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


def trim_static(app, exception) -> None:
    """Remove what no page can request: unused MathJax components and the theme's source maps."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    mathjax = static / "mathjax"
    if mathjax.is_dir():
        for relative in MATHJAX_UNUSED:
            target = mathjax / relative
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    for source_map in static.glob("*/*.map"):
        source_map.unlink()


def search_page_math(app, pagename, templatename, context, doctree) -> None:
    """Give the search page the MathJax of the math pages, and the script that typesets snippets."""
    if pagename != "search" or app.builder.format != "html" or not app.config.mathjax_path:
        return
    if app.config.mathjax3_config:
        app.builder.add_js_file("", body=f"window.MathJax = {json.dumps(app.config.mathjax3_config)}")
    app.builder.add_js_file(app.config.mathjax_path, defer="defer")
    app.builder.add_js_file("book_search.js", defer="defer")


def setup(app):
    app.add_directive("lockfile-versions", LockfileVersions)
    app.config.html_static_path.append(str(HERE / "static"))
    app.add_css_file("book_site.css")
    # after sphinx-mathjax-offline copied MathJax into _static (default priority 500)
    app.connect("build-finished", trim_static, priority=900)
    app.connect("html-page-context", search_page_math)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
