r"""Math typeset while the site is built: KaTeX (run by Node.js) turns every formula into HTML + MathML.

Readers download no math engine: a page with formulas loads ``_static/katex/katex.min.css`` and the
few KaTeX fonts its formulas use (about 100 KB), instead of MathJax (about 1.2 MB of script that
typesets in the browser). The MathML that KaTeX writes next to the HTML is what screen readers read.

* ``html_math_renderer = "katex"``: inline ``$..$`` becomes ``<span class="math">``, display math
  ``<div class="math">`` (with its equation number and permalink, as Sphinx's MathJax renderer writes
  them), typeset by ``_ext/katex_render.js``. The KaTeX version is pinned in ``_ext/package.json`` /
  ``_ext/package-lock.json``; ``make book`` installs it with ``npm ci``.
* A cross-reference to a heading with a formula shows the formula typeset (Sphinx would write its
  TeX source as the link text).
* A formula KaTeX cannot typeset is a build warning at its page and line (``-W`` makes it an error);
  the page shows the TeX source instead of a red formula.
* Only pages with math get KaTeX's stylesheet; its fonts are copied as WOFF2 (every browser that
  runs the site reads WOFF2), and the stylesheet is rewritten to name only those.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

HERE = Path(__file__).resolve().parent
RENDER_SCRIPT = HERE / "katex_render.js"
KATEX_DIST = HERE / "node_modules" / "katex" / "dist"
STATIC_DIR = "katex"  # inside _static
STYLESHEET = f"{STATIC_DIR}/katex.min.css"

logger = logging.getLogger(__name__)

# one url(...) format(...) entry of a @font-face src list
_FONT_SOURCE = re.compile(r"url\(([^)]+)\)\s*format\([\"']?([a-z0-9]+)[\"']?\)")


class KatexError(ValueError):
    """KaTeX refused a formula; the message is KaTeX's."""


class Katex:
    """One Node.js process running ``katex_render.js`` for the whole build; answers are cached.

    ``render(tex, display)`` returns KaTeX's HTML for ``tex`` (display or inline style) or raises
    :class:`KatexError`. ``close()`` ends the process (it also ends when the build's Python exits).
    """

    def __init__(self, node: str | None = None, script: Path = RENDER_SCRIPT):
        self.node = node or os.environ.get("NODE") or shutil.which("node") or shutil.which("nodejs")
        self.script = script
        self.process: subprocess.Popen | None = None
        self.cache: dict[tuple[str, bool], str] = {}

    def _start(self) -> subprocess.Popen:
        if self.node is None:
            raise ExtensionError("book_math: Node.js is needed to typeset the math (install nodejs, or set $NODE)")
        if not (self.script.parent / "node_modules" / "katex").is_dir():
            raise ExtensionError(
                "book_math: KaTeX is not installed: run `npm ci --prefix _ext` (make book does this)"
            )
        return subprocess.Popen(
            [self.node, str(self.script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, encoding="utf-8", bufsize=1,
        )

    def render(self, tex: str, display: bool) -> str:
        if not isinstance(tex, str):
            raise TypeError(f"tex must be a str, got {type(tex).__name__}")
        key = (tex, bool(display))
        if key not in self.cache:
            if self.process is None or self.process.poll() is not None:
                self.process = self._start()
            self.process.stdin.write(json.dumps({"tex": tex, "display": bool(display)}) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
            if not line:
                raise ExtensionError(f"book_math: {self.script.name} stopped (exit code {self.process.poll()})")
            answer = json.loads(line)
            if "error" in answer:
                raise KatexError(answer["error"])
            self.cache[key] = answer["html"]
        return self.cache[key]

    def close(self) -> None:
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait(timeout=10)
            self.process = None


def display_tex(node: nodes.math_block) -> str:
    """The TeX that KaTeX typesets for a display-math node, following Sphinx's conventions.

    ``nowrap`` (e.g. an amsmath environment) is passed as written; several equations separated by
    blank lines are stacked and aligned; an equation with ``\\`` is an aligned group.
    """
    text = node.astext()
    if node.get("nowrap"):
        return text
    parts = [part for part in text.split("\n\n") if part.strip()]
    if len(parts) > 1:
        return r"\begin{aligned}" + r"\\".join(parts) + r"\end{aligned}"
    if _top_level_breaks(text):  # a matrix's \\ is no line of the formula
        return r"\begin{aligned}" + text + r"\end{aligned}"
    return text


# Where a display formula may break on a narrow screen: between the equations that \qquad or \quad
# separates at the top level, and before every "=" after the first of a chain a = b = c. A formula with
# neither breaks before each top-level "+" or "-" of the right-hand side of its relation (a sum of
# terms: chapter 12's sympy result), or else before its one relation (a <= b).
_TOKEN = re.compile(
    r"\\begin\{[^}]*\}|\\end\{[^}]*\}|\\left\b|\\right\b|\\q?quad\b|\\[A-Za-z]+|\\.|[{}=+\-<>|]|[^\\{}=+\-<>|]+"
)
RELATIONS = ("=", "<", ">", "\\le", "\\leq", "\\ge", "\\geq", "\\approx", "\\ne", "\\neq", "\\equiv")


def _depths(tokens: list[str]) -> list[int]:
    """The nesting depth (braces, \\left..\\right, environments, and the bars of an absolute value |x|) at
    each token."""
    out, depth, bar = [], 0, False
    for token in tokens:
        if token in ("{", "\\left") or token.startswith("\\begin{"):
            depth += 1
        elif token in ("}", "\\right") or token.startswith("\\end{"):
            depth -= 1
        elif token == "|" and depth == 0:  # an opening bar counts as inside, its closing one as outside
            bar = not bar
        out.append(depth + (bar or token == "|"))
    return out


def _break_sum_or_relation(tokens: list[str]) -> list[str]:
    """The pieces of a formula without \\qquad or a chain: the right-hand side's top-level terms, each
    under the last, or the two sides of its relation; one piece when it has none."""
    depths = _depths(tokens)
    top = [i for i, d in enumerate(depths) if d == 0]
    relation = next((i for i in top if tokens[i].strip() in RELATIONS), None)
    start = 0 if relation is None else relation + 1
    cuts, seen = [], False  # a "+" or "-" is binary once a term stands before it on the right-hand side
    for i in range(start, len(tokens)):
        token = tokens[i].strip()
        if depths[i] == 0 and token in ("+", "-") and seen:
            cuts.append(i)
        if token and token not in ("+", "-"):
            seen = True
    if not cuts and relation and "".join(tokens[:relation]).strip():
        cuts = [relation]
    pieces, last = [], 0
    for cut in cuts + [len(tokens)]:
        pieces.append("".join(tokens[last:cut]).strip())
        last = cut
    return [p for p in pieces if p]


def _top_level_breaks(tex: str) -> bool:
    """Whether a formula laid out in lines (\\\\) breaks its lines at the top level, not only inside an
    environment such as a matrix."""
    tokens = _TOKEN.findall(tex)
    return any(t == "\\\\" and d == 0 for t, d in zip(tokens, _depths(tokens), strict=True))


def narrow_tex(tex: str) -> str | None:
    """The formula stacked for a narrow screen (``gathered``: one piece a line), or None when it has no
    top-level place to break. ``a = b = c`` becomes ``a`` over ``= b`` over ``= c``; ``x, \\qquad y`` becomes
    ``x,`` over ``y``; ``s = a + b`` becomes ``s = a`` over ``+ b``; ``a \\le b`` becomes ``a`` over ``\\le b``."""
    if "\\begin{aligned}" in tex:  # already laid out in lines (display_tex)
        return None
    tokens = _TOKEN.findall(tex)
    depths = _depths(tokens)
    segments, current = [], []  # the equations that \qquad or \quad separates at the top level
    for token, depth in zip(tokens, depths, strict=True):
        if depth == 0 and token in ("\\qquad", "\\quad"):
            segments.append(current)
            current = []
        else:
            current.append((token, depth))
    segments.append(current)
    lines = []
    for segment in segments:
        # a chain a = b = c puts each member on a line, its left-hand side too: "a = b" alone was wider
        # than a phone (issue 30: chapter 1's |PE(p) - PE(p+D)|^2 = d/2 + d/2 - 2 PE.PE, 517 px in 358)
        chain = sum(depth == 0 and token == "=" for token, depth in segment) > 1
        current = []
        for token, depth in segment:
            if chain and depth == 0 and token == "=" and "".join(current).strip():
                lines.append("".join(current).strip())
                current = []
            current.append(token)
        if "".join(current).strip():
            lines.append("".join(current).strip())
    if len(lines) == 1:
        lines = _break_sum_or_relation(tokens)
    # {} after each \\: a line that starts with "[" is not read as the \\[size] of the break
    return r"\begin{gathered}" + r"\\{}".join(lines) + r"\end{gathered}" if len(lines) > 1 else None


def _typeset(translator, node, tex: str, display: bool) -> str:
    """KaTeX's HTML, or (after a build warning at the node) the TeX source, escaped."""
    katex: Katex = translator.builder.app.book_katex
    try:
        html = katex.render(tex, display)
    except KatexError as err:
        logger.warning("KaTeX cannot typeset %r: %s", tex, err, location=node, type="book_math", subtype="katex")
        return f'<span class="math-error">{translator.encode(tex)}</span>'
    translator.builder.app.book_pages_with_math.add(translator.builder.current_docname)
    return html


# punctuation that must stay on the line of the formula before it
CLOSING_PUNCTUATION = tuple(".,;:!?)]}\u2019\u201d")
WORD_JOINER = "\u2060"  # no line break on either side (Unicode line breaking rule LB11)


SHORT_FORMULA = 30  # characters of TeX: a formula this short always fits a phone's line


def keep_punctuation_attached(app, doctree, docname) -> None:
    """Glue the punctuation that follows an inline formula to it ("... is $x$." never breaks before
    the full stop). After a short formula both go in one box that does not break (class
    book-nowrap): Chromium breaks after KaTeX's boxes (issue 19, item 15: a lone "," starting a line
    on a phone). After a longer formula, which may wrap inside, a word joiner goes between them.

    Runs on the resolved doctree (``doctree-resolved``), before the writer walks it: the writer
    walks a copy of each node's children, so a change made while visiting the formula came too late.
    """
    for node in list(doctree.findall(nodes.math)):
        parent = node.parent
        index = next(i for i, child in enumerate(parent.children) if child is node)  # Text == str
        following = parent[index + 1] if index + 1 < len(parent) else None
        if not (isinstance(following, nodes.Text) and str(following).startswith(CLOSING_PUNCTUATION)):
            continue
        text = str(following)
        if len(node.astext()) > SHORT_FORMULA:
            parent[index + 1] = nodes.Text(WORD_JOINER + text)
            continue
        end = len(text) - len(text.lstrip("".join(CLOSING_PUNCTUATION)))
        box = nodes.inline("", "", classes=["book-nowrap"])
        parent[index] = box
        box += node
        box += nodes.Text(text[:end])
        if text[end:]:
            parent[index + 1] = nodes.Text(text[end:])
        else:
            del parent[index + 1]


def visit_math(self, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_typeset(self, node, node.astext(), display=False))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node.get("number") and not node.get("nowrap"):
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    tex = display_tex(node)
    narrow = narrow_tex(tex)
    if narrow is None:
        self.body.append(_typeset(self, node, tex, display=True))
    else:  # book_site.css shows one of the two: the formula as written, or stacked on a phone
        self.body.append('<div class="book-formula-wide">' + _typeset(self, node, tex, display=True) + "</div>")
        self.body.append('<div class="book-formula-narrow">' + _typeset(self, node, narrow, display=True) + "</div>")
    self.body.append("</div>\n")
    raise nodes.SkipNode


def typeset_reference_titles(app, doctree, docname) -> None:
    """A cross-reference to a heading with a formula shows the formula, typeset.

    Sphinx writes the plain text of the target heading into a ``{ref}`` link, so a heading like
    "$\\sqrt{d}$ and $1/\\sqrt{d_k}$ confused" became the TeX source in the link. The link text is
    replaced by a copy of the heading's own nodes, formulas included.
    """
    labels = app.env.domaindata["std"]["labels"]
    for inline in list(doctree.findall(nodes.inline)):
        if "std-ref" not in inline["classes"] or "\\" not in inline.astext():
            continue
        reference = inline.parent
        fragment = (reference.get("refuri") or "").partition("#")[2] or reference.get("refid", "")
        targets = [(doc, label_id) for doc, label_id, title in labels.values()
                   if label_id == fragment and title == inline.astext()]
        if len(targets) != 1:
            continue
        target_doc, label_id = targets[0]
        section = next((n for n in app.env.get_doctree(target_doc).findall(nodes.Element)
                        if label_id in n.get("ids", ())), None)
        title = section.next_node(nodes.title) if section is not None else None
        if title is not None and any(isinstance(n, nodes.math) for n in title.findall()):
            del inline[:]
            inline.extend(child.deepcopy() for child in title.children)


def woff2_only(css: str) -> str:
    """KaTeX's stylesheet with every @font-face ``src`` reduced to its WOFF2 file."""

    def keep_woff2(match: re.Match) -> str:
        sources = _FONT_SOURCE.findall(match.group(1))
        woff2 = [url for url, kind in sources if kind == "woff2"]
        if len(woff2) != 1:
            raise ExtensionError(f"book_math: expected one WOFF2 font in {match.group(0)[:120]!r}")
        return f'src:url({woff2[0]}) format("woff2")'

    out, count = re.subn(r"src:((?:url\([^)]+\)\s*format\([^)]+\)\s*,?\s*)+)", keep_woff2, css)
    if count == 0:
        raise ExtensionError("book_math: no @font-face src found in KaTeX's stylesheet")
    return out


def copy_katex(app) -> None:
    """Put KaTeX's stylesheet (WOFF2 fonts only), its fonts and its script (for the search page) in
    ``_static/katex``."""
    if app.builder.format != "html":
        return
    if not KATEX_DIST.is_dir():
        raise ExtensionError("book_math: KaTeX is not installed: run `npm ci --prefix _ext` (make book does this)")
    target = Path(app.outdir) / "_static" / STATIC_DIR
    shutil.rmtree(target, ignore_errors=True)
    (target / "fonts").mkdir(parents=True)
    css = (KATEX_DIST / "katex.min.css").read_text(encoding="utf-8")
    (target / "katex.min.css").write_text(woff2_only(css), encoding="utf-8")
    for font in (KATEX_DIST / "fonts").glob("*.woff2"):
        shutil.copyfile(font, target / "fonts" / font.name)
    shutil.copyfile(KATEX_DIST / "katex.min.js", target / "katex.min.js")


def builder_inited(app) -> None:
    app.book_katex = Katex()
    app.book_pages_with_math = set()
    copy_katex(app)


def page_stylesheet(app, pagename, templatename, context, doctree) -> None:
    """KaTeX's stylesheet on the pages that have formulas (and on the search page, for snippets)."""
    if app.builder.format == "html" and (pagename in app.book_pages_with_math or pagename == "search"):
        app.builder.add_css_file(STYLESHEET)


def build_finished(app, exception) -> None:
    katex = getattr(app, "book_katex", None)
    if katex is not None:
        katex.close()


def setup(app):
    app.add_html_math_renderer("katex", (visit_math, None), (visit_displaymath, None))
    app.connect("builder-inited", builder_inited)
    app.connect("doctree-resolved", typeset_reference_titles)
    app.connect("doctree-resolved", keep_punctuation_attached)
    app.connect("html-page-context", page_stylesheet)
    app.connect("build-finished", build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": False}
