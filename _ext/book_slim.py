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
# a CSS rule of the stylesheet; icon rules look like .fa-bars:before,.fa-navicon:before{content:"\f0c9"}
CSS_RULE = re.compile(r"([^{}@]+)\{([^{}]*)\}")
ICON_SELECTOR = re.compile(r"^\.fa-([a-z0-9-]+):(?:before|after)$")
ICON_CONTENT = re.compile(r'content:"\\([0-9a-f]+)"')
# a glyph named in CSS outside icon rules (e.g. --pst-icon-external-link:"\uf35d"): a character of
# Unicode's private use area, written as itself or as a CSS escape
PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]|\\(e[0-9a-f]{3}|f[0-9a-f]{3})(?![0-9a-f])", re.I)
FONT_FACE = re.compile(r"@font-face\{[^}]*fontawesome/webfonts/(fa-[a-z]+-\d+)\.woff2[^}]*\}")


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


def slim_page(html: str, page: Path, *, is_search: bool) -> str:
    """One page without the Font Awesome script, the search scripts (except on the search page),
    the preloads that compete with the stylesheets for the first paint, and the assets of
    sphinx-design and of myst-nb's notebook cells when the page has no such element."""
    html = remove_once(FONTAWESOME_SCRIPT, html, "fontawesome.js tag", page, 1)
    html = remove_once(SCRIPT_PRELOADS, html, "script preloads", page, 2)
    if not is_search:
        html = remove_once(SEARCH_SCRIPTS, html, "search script tags", page, 3)
    if "sd-" not in DESIGN_ASSETS.sub("", html):
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


def icon_rules(css: str) -> dict[str, str]:
    """``{icon name: hex codepoint}`` for every icon rule of the stylesheet."""
    icons = {}
    for selectors, body in CSS_RULE.findall(css):
        content = ICON_CONTENT.search(body)
        parts = [ICON_SELECTOR.match(s.strip()) for s in selectors.split(",")]
        if content and parts and all(parts):
            for match in parts:
                icons[match.group(1)] = content.group(1)
    return icons


def css_glyphs(css: str) -> set[int]:
    """Codepoints of the private use area named anywhere in ``css`` (icon fonts live there)."""
    return {int(m.group(1), 16) if m.group(1) else ord(m.group(0)) for m in PRIVATE_USE.finditer(css)}


def purge_icon_rules(css: str, keep: set[str]) -> str:
    """The stylesheet without the rules of icons not in ``keep``."""

    def rule(match: re.Match) -> str:
        selectors = [s.strip() for s in match.group(1).split(",")]
        parts = [ICON_SELECTOR.match(s) for s in selectors]
        if parts and all(parts) and ICON_CONTENT.search(match.group(2)):
            kept = [s for s, m in zip(selectors, parts, strict=True) if m.group(1) in keep]
            return f"{','.join(kept)}{{{match.group(2)}}}" if kept else ""
        return match.group(0)

    return CSS_RULE.sub(rule, css)


def subset_fonts(static: Path, css: str, codepoints: set[int]) -> str:
    """Cut each Font Awesome font to ``codepoints``, write it as WOFF and point the stylesheet at it.

    Reads the TrueType files the theme ships (fontTools writes WOFF with zlib; WOFF2 would need the
    brotli module). Fonts that keep no glyph are dropped with their @font-face rule.
    """
    from fontTools import subset
    from fontTools.ttLib import TTFont

    def face(match: re.Match) -> str:
        name = match.group(1)
        ttf = static / FA_WEBFONTS / f"{name}.ttf"
        if not ttf.is_file():
            raise SlimError(f"book_slim: {ttf} is missing (did the theme change?)")
        font = TTFont(ttf)
        present = codepoints & set(font.getBestCmap())
        if not present:
            return ""
        options = subset.Options()
        options.flavor = "woff"
        options.layout_features = []
        options.name_IDs = []
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(present))
        subsetter.subset(font)
        font.flavor = "woff"
        font.save(static / FA_WEBFONTS / f"{name}.subset.woff")
        src = re.search(r"src:[^;}]*", match.group(0)).group(0)
        return match.group(0).replace(src, f'src:url(../{FA_WEBFONTS.as_posix()}/{name}.subset.woff) format("woff")')

    out = FONT_FACE.sub(face, css)
    for font in (static / FA_WEBFONTS).iterdir():
        if not font.name.endswith(".subset.woff"):
            font.unlink()
    return out


# a CSS class in a selector; a word of a page or a script; a prefix a script completes at run time
SELECTOR_CLASS = re.compile(r"\.(-?[A-Za-z_][\w-]*)")
WORD = re.compile(r"[A-Za-z_][\w-]*")
DYNAMIC_PREFIX = re.compile(r"([A-Za-z][\w-]*-)(?:\$\{|[\"'`]\s*\+)")


def _blocks(css: str):
    """Split a stylesheet into top-level pieces: ``(prelude, body)`` for blocks, ``(statement, None)``
    for ``@charset``/``@import`` statements. Bodies keep their nested blocks as text."""
    i, n = 0, len(css)
    while i < n:
        brace = css.find("{", i)
        semi = css.find(";", i)
        if brace == -1:
            if css[i:].strip():
                yield css[i:], None
            return
        if semi != -1 and semi < brace and css[i:semi].lstrip().startswith("@"):
            yield css[i:semi + 1], None
            i = semi + 1
            continue
        depth, j = 1, brace + 1
        while depth and j < n:
            depth += {"{": 1, "}": -1}.get(css[j], 0)
            j += 1
        yield css[i:brace], css[brace + 1:j - 1]
        i = j


def purge_unused_rules(css: str, used: set[str], prefixes: tuple[str, ...]) -> str:
    """The stylesheet without the selectors that name a class not in ``used`` (nor starting with one
    of ``prefixes``); rules left without a selector go, @media and @supports blocks are purged inside,
    other at-rules (@font-face, @keyframes, ...) are kept as they are."""

    def known(name: str) -> bool:
        return name in used or name.startswith(prefixes)

    out = []
    for prelude, body in _blocks(css):
        head = prelude.strip()
        if body is None:
            out.append(head)
        elif head.startswith(("@media", "@supports", "@layer", "@container")):
            inner = purge_unused_rules(body, used, prefixes)
            if inner:
                out.append(f"{head}{{{inner}}}")
        elif head.startswith("@"):
            out.append(f"{head}{{{body}}}")
        else:
            selectors = [sel for sel in head.split(",") if all(known(c) for c in SELECTOR_CLASS.findall(sel))]
            if selectors:
                out.append(f"{','.join(selectors)}{{{body}}}")
    return "".join(out)


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
