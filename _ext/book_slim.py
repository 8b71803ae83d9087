"""A light first visit: what the themes ship but no page of this book needs is not sent.

Runs after the HTML build (``build-finished``) over the written site:

* **Font Awesome as a font, not as a script.** pydata-sphinx-theme loads ``fontawesome.js`` (1.4 MB)
  on every page to turn icons into SVG, although its stylesheet already draws the same icons from
  the Font Awesome web fonts. The script tag is removed and the script deleted. The fonts (157 KB
  for the solid style alone) are cut to the icons the pages use, read from the built HTML, and
  written as WOFF; the stylesheet keeps only the rules of those icons.
* **Search tools on the search page only.** The theme loads ``searchtools.js``, ``language_data.js``
  and the whole ``searchindex.js`` (100 KB, render-blocking) in the head of every page for a
  search-as-you-type box this site does not enable (``search_as_you_type`` is false): the three
  tags are removed from every page but ``search.html``.
* **The theme's stylesheet cut to what the site uses.** pydata-sphinx-theme.css (310 KB, render-
  blocking) holds all of Bootstrap. A rule is dropped when one of its selectors' classes appears
  neither in any page (HTML, inline scripts included) nor in any script of the site, nor starts
  with a prefix a script completes at run time (``"bs-" + name``); about two thirds of it goes.
* **Nothing competes with the first paint.** The theme preloads its two deferred scripts (95 KB)
  in the head, where they share a slow link with the stylesheets the first paint waits for: the
  preloads are removed (the scripts still load, deferred, from the end of the page). sphinx-design's
  stylesheet and script (60 KB) are kept only on pages that use one of its components (a class
  ``sd-...``), myst-nb's stylesheet (42 KB) only on pages with notebook cells.

Every edit checks that it found what it removes; a theme update that changes the markup fails the
build with a clear message instead of silently shipping the weight again.
"""

from __future__ import annotations

import re
from pathlib import Path

import tinycss2
from sphinx.errors import ExtensionError

FA_WEBFONTS = Path("vendor") / "fontawesome" / "webfonts"  # inside _static
THEME_CSS = Path("styles") / "pydata-sphinx-theme.css"  # inside _static
FONTAWESOME_SCRIPT = re.compile(
    r'[ \t]*(?:<!-- So that users can add custom icons -->\s*)?'
    r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\n?'
)
SEARCH_SCRIPTS = re.compile(
    r'[ \t]*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)"></script>\n?'
)
DESIGN_ASSETS = re.compile(
    r'[ \t]*<link rel="stylesheet" type="text/css" href="[^"]*_static/sphinx-design\.min\.css[^"]*" />\n?'
    r'|[ \t]*<script [^>]*src="[^"]*_static/design-tabs\.js[^"]*"></script>\n?'
)
NOTEBOOK_CSS = re.compile(
    r'[ \t]*<link rel="stylesheet" type="text/css" href="[^"]*_static/mystnb\.[0-9a-f]+\.css" />\n?'
)
# <link rel="preload"> of the two scripts the page loads (deferred) at the end of <body>
SCRIPT_PRELOADS = re.compile(
    r'[ \t]*<link rel="preload" as="script" href="[^"]*_static/scripts/[a-z-]+\.js[^"]*" />\n?'
)
# an icon class in the HTML: class="fa-solid fa-bars fa-lg" -> fa-bars, fa-lg
ICON_CLASS = re.compile(r'class="([^"]*\bfa-[^"]*)"')
# an icon rule's selector: .fa-bars:before (icon rules look like .fa-bars:before,.fa-navicon:before{content:"\f0c9"})
ICON_SELECTOR = re.compile(r"^\.fa-([a-z0-9-]+):(?:before|after)$")
# a glyph named in CSS outside icon rules (e.g. --pst-icon-external-link:"\uf35d"): a character of
# Unicode's private use area, written as itself or as a CSS escape
PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]|\\(e[0-9a-f]{3}|f[0-9a-f]{3})(?![0-9a-f])", re.I)
# a Font Awesome font named by an @font-face rule: ../vendor/fontawesome/webfonts/fa-solid-900.woff2
FONT_FILE = re.compile(r"fontawesome/webfonts/(fa-[a-z]+-\d+)\.(?:woff2|ttf)$")


class SlimError(ExtensionError):
    pass


def pages(outdir: Path) -> list[Path]:
    """Every HTML page of the site (not the copies of notebooks' sources or static files)."""
    return sorted(p for p in outdir.rglob("*.html") if p.relative_to(outdir).parts[0] not in {"_static", "_sources"})


def remove_once(pattern: re.Pattern, html: str, what: str, page: Path, expected: int) -> str:
    """``html`` without the matches of ``pattern``, which must occur exactly ``expected`` times."""
    out, count = pattern.subn("", html)
    if count != expected:
        raise SlimError(f"book_slim: expected {expected} {what} in {page}, found {count} (did the theme change?)")
    return out


# a class attribute naming one of sphinx-design's classes (sd-card, sd-tab-set, ...): prose such as
# "sd-scripts" (chapter 19) does not need its stylesheet
DESIGN_CLASS = re.compile(r'class="[^"]*\bsd-')


def slim_page(html: str, page: Path, *, is_search: bool) -> str:
    """One page without the Font Awesome script, the search scripts (except on the search page),
    the preloads that compete with the stylesheets for the first paint, and the assets of
    sphinx-design and of myst-nb's notebook cells when the page has no such element."""
    html = remove_once(FONTAWESOME_SCRIPT, html, "fontawesome.js tag", page, 1)
    html = remove_once(SCRIPT_PRELOADS, html, "script preloads", page, 2)
    if not is_search:
        html = remove_once(SEARCH_SCRIPTS, html, "search script tags", page, 3)
    if not DESIGN_CLASS.search(DESIGN_ASSETS.sub("", html)):  # an element of sphinx-design, not the text "sd-"
        html = DESIGN_ASSETS.sub("", html)
    if 'class="cell' not in html:
        html = NOTEBOOK_CSS.sub("", html)
    return html


def used_icons(htmls: list[str]) -> set[str]:
    """Every ``fa-...`` class name used in the pages, without the ``fa-`` prefix."""
    names = set()
    for html in htmls:
        for classes in ICON_CLASS.findall(html):
            names.update(c[3:] for c in classes.split() if c.startswith("fa-"))
    return names


def parse_css(css: str) -> list:
    """The stylesheet as tinycss2's list of rules (comments and whitespace between rules dropped, except
    ``/*! ... */`` licence comments). A parse error fails the build: what the slimming cannot read, it
    must not rewrite."""
    out = []
    for node in tinycss2.parse_stylesheet(css, skip_comments=False, skip_whitespace=True):
        if node.type == "error":
            raise SlimError(f"book_slim: the stylesheet does not parse: {node.message} (line {node.source_line})")
        if node.type != "comment" or node.value.startswith("!"):
            out.append(node)
    return out


def serialize_css(rules: list) -> str:
    """The rules as CSS text, in ASCII: tinycss2 writes strings unescaped (``content:"\\f0c9"`` becomes
    the private-use character itself); each non-ASCII character becomes a CSS escape again, so the
    stylesheet reads the same whatever encoding a browser assumes. (The space after an escape ends
    it and is not part of the text.)"""
    text = tinycss2.serialize(rules)
    return re.sub(r"[^\x00-\x7f]", lambda m: f"\\{ord(m.group(0)):x} ", text)


def _strip(tokens: list) -> list:
    """``tokens`` without comments, and without whitespace at either end."""
    tokens = [t for t in tokens if t.type != "comment"]
    while tokens and tokens[0].type == "whitespace":
        tokens.pop(0)
    while tokens and tokens[-1].type == "whitespace":
        tokens.pop()
    return tokens


def selectors(rule) -> list[list]:
    """The selectors of a style rule, each a list of tokens: its prelude split at the commas outside
    parentheses (those inside ``:is(a, b)`` are tokens of a function block, so they stay)."""
    out, current = [], []
    for token in rule.prelude:
        if token.type == "literal" and token.value == ",":
            out.append(_strip(current))
            current = []
        else:
            current.append(token)
    out.append(_strip(current))
    return out


def _icon_rule(rule) -> tuple[list[str], list[str], str] | None:
    """``(selector texts, icon names, hex codepoint)`` if ``rule`` is an icon rule
    (``.fa-bars:before,.fa-navicon:before{content:"\\f0c9"}``), else None."""
    if rule.type != "qualified-rule":
        return None
    texts = [tinycss2.serialize(sel) for sel in selectors(rule)]
    names = [ICON_SELECTOR.match(text) for text in texts]
    if not names or not all(names):
        return None
    for declaration in tinycss2.parse_declaration_list(rule.content, skip_comments=True, skip_whitespace=True):
        if declaration.type == "declaration" and declaration.lower_name == "content":
            values = _strip(declaration.value)
            if len(values) == 1 and values[0].type == "string" and len(values[0].value) == 1:
                return texts, [m.group(1) for m in names], f"{ord(values[0].value):x}"
    return None


def icon_rules(css: str) -> dict[str, str]:
    """``{icon name: hex codepoint}`` for every icon rule of the stylesheet (read by a CSS parser, so
    that a rule inside a comment is no rule)."""
    icons = {}
    for rule in parse_css(css):
        found = _icon_rule(rule)
        if found:
            icons.update(dict.fromkeys(found[1], found[2]))
    return icons


def css_glyphs(css: str) -> set[int]:
    """Codepoints of the private use area named anywhere in ``css`` (icon fonts live there)."""
    return {int(m.group(1), 16) if m.group(1) else ord(m.group(0)) for m in PRIVATE_USE.finditer(css)}


def purge_icon_rules(css: str, keep: set[str]) -> str:
    """The stylesheet without the rules of icons not in ``keep``."""
    out = []
    for rule in parse_css(css):
        found = _icon_rule(rule)
        if found:
            kept = [text for text, name in zip(found[0], found[1], strict=True) if name in keep]
            if not kept:
                continue
            rule.prelude = tinycss2.parse_component_value_list(",".join(kept))
        out.append(rule)
    return serialize_css(out)


def subset_fonts(static: Path, css: str, codepoints: set[int]) -> str:
    """Cut each Font Awesome font to ``codepoints``, write it as WOFF and point the stylesheet at it.

    Reads the TrueType files the theme ships (fontTools writes WOFF with zlib; WOFF2 would need the
    brotli module). Fonts that keep no glyph are dropped with their @font-face rule.
    """
    from fontTools import subset
    from fontTools.ttLib import TTFont

    def subset_font(name: str) -> bool:
        """Write ``name``.subset.woff with the glyphs of ``codepoints`` it has; False if it has none."""
        ttf = static / FA_WEBFONTS / f"{name}.ttf"
        if not ttf.is_file():
            raise SlimError(f"book_slim: {ttf} is missing (did the theme change?)")
        font = TTFont(ttf)
        present = codepoints & set(font.getBestCmap())
        if not present:
            return False
        options = subset.Options()
        options.flavor = "woff"
        options.layout_features = []
        options.name_IDs = []
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(present))
        subsetter.subset(font)
        font.flavor = "woff"
        font.save(static / FA_WEBFONTS / f"{name}.subset.woff")
        return True

    out = []
    for rule in parse_css(css):
        if rule.type == "at-rule" and rule.lower_at_keyword == "font-face" and rule.content is not None:
            urls = [t.value for t in rule.content if t.type == "url"]
            urls += [t.arguments[0].value for t in rule.content if t.type == "function" and t.lower_name == "url"
                     and t.arguments and t.arguments[0].type == "string"]
            names = {m.group(1) for u in urls if (m := FONT_FILE.search(u))}
            if len(names) == 1:
                (name,) = names
                if not subset_font(name):
                    continue
                declarations = [d for d in tinycss2.parse_declaration_list(
                    rule.content, skip_comments=True, skip_whitespace=True) if d.type == "declaration"]
                text = ";".join(
                    f'src:url(../{FA_WEBFONTS.as_posix()}/{name}.subset.woff) format("woff")'
                    if d.lower_name == "src" else f"{d.name}:{tinycss2.serialize(_strip(d.value))}"
                    for d in declarations)
                rule.content = tinycss2.parse_component_value_list(text)
        out.append(rule)
    for font in (static / FA_WEBFONTS).iterdir():
        if not font.name.endswith(".subset.woff"):
            font.unlink()
    return serialize_css(out)


# a word of a page or a script; a prefix a script completes at run time
WORD = re.compile(r"[A-Za-z_][\w-]*")
DYNAMIC_PREFIX = re.compile(r"([A-Za-z][\w-]*-)(?:\$\{|[\"'`]\s*\+)")


def _classes(tokens: list) -> list[str]:
    """The class names a selector requires: ``.name`` tokens, also inside ``:is()``, ``:where()``,
    ``:has()``; not inside ``:not()``, which a page matches when the class is absent."""
    out = []
    for previous, token in zip([None, *tokens[:-1]], tokens, strict=True):
        if token.type == "ident" and previous is not None and previous.type == "literal" and previous.value == ".":
            out.append(token.value)
        elif token.type == "function" and token.lower_name != "not":
            out.extend(_classes(token.arguments))
        elif token.type in ("() block", "[] block"):
            out.extend(_classes(token.content))
    return out


GROUPING_RULES = ("media", "supports", "layer", "container")


def _purge(rules: list, known) -> list:
    out = []
    for rule in rules:
        if rule.type == "qualified-rule":
            kept = [sel for sel in selectors(rule) if all(known(name) for name in _classes(sel))]
            if not kept:
                continue
            rule.prelude = tinycss2.parse_component_value_list(",".join(tinycss2.serialize(sel) for sel in kept))
        elif rule.type == "at-rule" and rule.lower_at_keyword in GROUPING_RULES and rule.content is not None:
            inner = _purge(tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True), known)
            if not inner:
                continue
            rule.content = tinycss2.parse_component_value_list(tinycss2.serialize(inner))
        out.append(rule)
    return out


def purge_unused_rules(css: str, used: set[str], prefixes: tuple[str, ...]) -> str:
    """The stylesheet without the selectors that name a class not in ``used`` (nor starting with one
    of ``prefixes``); rules left without a selector go, @media, @supports, @layer and @container
    blocks are purged inside (and go when empty), other at-rules (@font-face, @keyframes, ...) are
    kept as they are. The stylesheet is read by tinycss2, a CSS parser: comments, strings and
    escapes are never mistaken for rules (a hand-written splitter once left Font Awesome's licence
    comment open, and every icon rule after it became part of the comment: issue 19)."""

    def known(name: str) -> bool:
        return name in used or name.startswith(prefixes)

    return serialize_css(_purge(parse_css(css), known))


def slim_site(app, exception) -> None:
    """The ``build-finished`` handler: slim every page, the icon stylesheet and fonts."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    static = outdir / "_static"
    htmls = []
    for page in pages(outdir):
        html = page.read_text(encoding="utf-8")
        if THEME_CSS.as_posix() not in html:
            continue  # index.html: a redirect to the first page, without the theme
        html = slim_page(html, page, is_search=page.relative_to(outdir).as_posix() == "search.html")
        page.write_text(html, encoding="utf-8")
        htmls.append(html)
    (static / "scripts" / "fontawesome.js").unlink()
    sheet = static / THEME_CSS
    css = sheet.read_text(encoding="utf-8")
    icons = icon_rules(css)
    if len(icons) < 100:
        raise SlimError(f"book_slim: found only {len(icons)} icon rules in {sheet} (did the theme change?)")
    keep = used_icons(htmls) & set(icons)
    css = purge_icon_rules(css, keep)
    # the kept icons, and the glyphs the stylesheets draw by themselves (admonitions, external links)
    glyphs = {int(icons[name], 16) for name in keep}
    for other in static.rglob("*.css"):
        glyphs |= css_glyphs(css if other == sheet else other.read_text(encoding="utf-8", errors="replace"))
    css = subset_fonts(static, css, glyphs)
    scripts = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in static.rglob("*.js"))
    used = set(WORD.findall(scripts)) | {w for html in htmls for w in WORD.findall(html)}
    css = purge_unused_rules(css, used, tuple(sorted(set(DYNAMIC_PREFIX.findall(scripts)))))
    sheet.write_text(css, encoding="utf-8")


def setup(app):
    # after book_site's and the theme's own build-finished handlers
    app.connect("build-finished", slim_site, priority=950)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
