"""How large the text inside the book's figures is on screen, in CSS pixels (issue 19).

A figure is a picture: its labels shrink with it. pe_lib.show stores each figure's designed size in
pixels (inches x dpi), which the page writes as the image's width (``style="width: 760px"``), and the
smallest text it draws (``min_text_px``: ``s * dpi / 72`` designed pixels for a text of ``s`` points,
whatever set it: notebooks/matplotlibrc or a cell's own ``fontsize=``). That text is shown at
``min_text_px * shown width / designed width`` CSS px. The limit is the issue's: no text below 10 CSS px.
(The check used to assume the style's smallest font, 10 pt, for every figure, and so could not see a
cell's ``fontsize=7``.)

On a narrow screen the page shows a figure's phone rendering instead (``<picture>``, _ext/book_figures.py),
designed 420 px wide with the same fonts; its designed width is then the PNG's own, half its pixels
(pe_lib stores every PNG at twice the designed size), since the ``<img>``'s style keeps the desktop
width. Before the phone renderings, figures designed for a 760 px column were shown at about half size
on a 390 px phone (median 6.2 px); with them, 10.6 px at least and 11.3 px median (58 figures).
Planted in copies of the built site: without the <source> elements (phones get the desktop PNG) the
phone case fails (57 of 58 figures below 10 px) and so do both download checks; one phone PNG
replaced by its 1520 px desktop PNG fails the phone case (6.2 px) and the static check.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct

import pytest
from bs4 import BeautifulSoup
from site_helpers import PHONE, ROOT, new_context, open_page, toc_docnames

pytestmark = pytest.mark.browser

MIN_TEXT_PX = 10
PHONE_WIDTH_PX = 420  # pe_lib.book.figures.PHONE_WIDTH_PX: a wider figure has a phone rendering
PHONE_MEDIA = "(max-width: 600px)"  # _ext/book_figures.py
DESKTOP = {"width": 1366, "height": 900}
# the designed width: the style's, unless a <picture> swapped in another file (a phone rendering), whose
# PNG holds twice its designed width
FIGURES_JS = """() => Array.from(document.querySelectorAll('.bd-article img'))
  .filter(i => !i.closest('.pe-player') && i.getBoundingClientRect().width > 0)
  .map(i => ({name: (i.currentSrc || '').split('/').pop(),
              designed: (i.currentSrc && i.currentSrc !== i.src) ? i.naturalWidth / 2
                        : parseFloat(i.style.width) || Number(i.getAttribute('width')) || 0,
              shown: i.getBoundingClientRect().width}))"""
LOADED_JS = "() => Array.from(document.querySelectorAll('.bd-article img')).every(i => i.complete)"


def smallest_text_by_image(notebooks=ROOT / "notebooks") -> dict[str, float | None]:
    """{SHA-256 of a PNG (the site's file name): the smallest text that figure draws, in designed px}, read from
    the chapters' outputs, where pe_lib.show stores it (``min_text_px``) for the desktop PNG and for the
    phone rendering. A chapter's explicit ``fontsize=7`` counts as 7 pt, not as the style's 10."""
    found = {}
    for path in sorted(notebooks.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                meta = output.get("metadata", {}).get("image/png", {})
                if "min_text_px" not in meta or "image/png" not in output.get("data", {}):
                    continue
                for png, px in ((output["data"]["image/png"], meta["min_text_px"]),
                                (meta.get("phone", {}).get("png"), meta.get("phone", {}).get("min_text_px"))):
                    if png:
                        found[hashlib.sha256(base64.b64decode("".join(png))).hexdigest()] = px
    return found


@pytest.fixture(scope="module")
def figure_text_px(browser, site) -> dict[int, dict[str, list[tuple[str, float]]]]:
    """Per viewport width, per page: each figure and the CSS px of its smallest text. Each page is loaded
    once, at desktop width, measured, narrowed to a phone's width and measured again."""
    smallest, found = smallest_text_by_image(), {DESKTOP["width"]: {}, PHONE["width"]: {}}
    context = new_context(browser, viewport=DESKTOP)
    try:
        for docname in toc_docnames():
            visit = open_page(browser, site, f"{docname}.html", context=context)
            for viewport in (DESKTOP, PHONE):
                visit.page.set_viewport_size(viewport)
                visit.page.wait_for_timeout(100)  # the layout settles
                visit.page.wait_for_function(LOADED_JS)  # and the phone renderings have arrived
                found[viewport["width"]][docname] = [  # 0.0: no designed width or no recorded text size, a failure
                    (f["name"][:16], _shown_px(smallest.get(f["name"].split(".")[0], 0.0), f["shown"], f["designed"]))
                    for f in visit.page.evaluate(FIGURES_JS)]
            visit.close()
    finally:
        context.close()
    return found


def _shown_px(designed_text_px: float | None, shown: float, designed: float) -> float:
    """A text of ``designed_text_px`` in a figure designed ``designed`` px wide and shown ``shown`` px wide;
    a figure without any text (None) has nothing to be too small."""
    if designed_text_px is None:
        return float("inf")
    return designed_text_px * shown / designed if designed else 0.0


def _too_small(found: dict) -> list[str]:
    return [f"{doc}: {name} {px:.1f} px" for doc, figs in found.items() for name, px in figs if px < MIN_TEXT_PX]


@pytest.mark.parametrize("viewport", [
    pytest.param(DESKTOP, id="desktop"),
    pytest.param(PHONE, id="phone"),
])
def test_figure_text_is_at_least_10_css_px(figure_text_px, viewport, record_property):
    found = figure_text_px[viewport["width"]]
    sizes = sorted(px for figs in found.values() for _, px in figs)
    assert len(sizes) >= 40, f"only {len(sizes)} figures found"
    record_property("figure_text_px", {"viewport": viewport["width"], "min": sizes[0],
                                       "median": sizes[len(sizes) // 2], "max": sizes[-1]})
    print(f"figure text at {viewport['width']} px: {len(sizes)} figures, smallest text min {sizes[0]:.1f}, "
          f"median {sizes[len(sizes) // 2]:.1f}, max {sizes[-1]:.1f} CSS px")
    small = _too_small(found)
    assert not small, f"{len(small)} of {len(sizes)} figures have text below {MIN_TEXT_PX} CSS px: " + "; ".join(small)


def test_the_figure_text_check_can_fail():
    assert _too_small({"a": [("x.png", 9.9), ("y.png", 10.0)]}) == ["a: x.png 9.9 px"]
    assert _shown_px(13.89, 380, 760) == pytest.approx(6.945) and _shown_px(13.89, 380, 0) == 0.0
    assert _shown_px(None, 380, 760) == float("inf")
    sizes = smallest_text_by_image()  # every figure of the book has its smallest text recorded
    assert len(sizes) >= 90 and min(v for v in sizes.values() if v is not None) >= 9.0


def _png_width(path) -> int:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">I", head[16:20])[0]


def test_every_figure_wider_than_a_phone_has_a_phone_rendering(book_html):
    """In the built pages: each figure wider than 420 px sits in a <picture> whose <source>, for narrow
    screens, is a 2x PNG as wide as its width attribute says, at most 420 px; narrower ones need none."""
    problems, pictures = [], 0
    for docname in toc_docnames():
        page = BeautifulSoup((book_html / f"{docname}.html").read_text(encoding="utf-8"), "html.parser")
        for img in page.select(".bd-article figure.book-figure img"):
            width = float(re.search(r"width:\s*([\d.]+)px", img.get("style", "")).group(1))
            picture = img.find_parent("picture")
            if width <= PHONE_WIDTH_PX:
                continue
            source = picture and picture.find("source")
            if source is None:
                problems.append(f"{docname}: {img['src']} ({width:g} px) has no phone rendering")
                continue
            pictures += 1
            file = (book_html / docname).parent / source["srcset"]
            designed = int(source["width"])
            if source.get("media") != PHONE_MEDIA or not file.is_file():
                problems.append(f"{docname}: {source} (media or file wrong)")
            elif designed > PHONE_WIDTH_PX or _png_width(file) != 2 * designed:
                problems.append(f"{docname}: {source['srcset']} is {_png_width(file)} px for {designed} px")
    assert pictures >= 40 and not problems, f"{pictures} pictures; " + "; ".join(problems)


@pytest.mark.parametrize("viewport", [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")])
def test_a_reader_downloads_only_the_rendering_for_their_screen(browser, site, book_html, viewport):
    """Chapter 4 (ten figures) and the introduction (a figure pasted from chapter 3): a phone fetches the
    phone PNGs and no desktop PNG of a figure that has one; a desktop fetches none of the phone PNGs."""
    context = new_context(browser, viewport=viewport)
    try:
        for docname in ("notebooks/04_visualizing", "book/intro"):
            page = BeautifulSoup((book_html / f"{docname}.html").read_text(encoding="utf-8"), "html.parser")
            pairs = [(p.find("img")["src"].split("/")[-1], p.find("source")["srcset"].split("/")[-1])
                     for p in page.select(".bd-article picture")]
            assert pairs, f"{docname}: no <picture>"
            visit = open_page(browser, site, f"{docname}.html", context=context)
            fetched = {url.split("/")[-1] for url, _, _ in visit.responses if "/_images/" in url}
            visit.close()
            desktop, phone = ({d for d, _ in pairs}, {p for _, p in pairs})
            wanted, unwanted = (phone, desktop) if viewport is PHONE else (desktop, phone)
            assert wanted <= fetched, f"{docname} at {viewport['width']} px: missing {wanted - fetched}"
            assert not unwanted & fetched, f"{docname} at {viewport['width']} px: also {unwanted & fetched}"
    finally:
        context.close()


NOTES_JS = """() => Array.from(document.querySelectorAll('.bd-article figcaption'))
  .map(c => ({text: c.textContent, note: Array.from(c.querySelectorAll('.phone-only'))
              .some(n => n.getBoundingClientRect().height > 0)}))"""


SIDES = re.compile(r"\b(?:Left|Right|left|right)\b")


def stacked_side_captions(path) -> int:
    """How many figures of a chapter a phone shows stacked under a caption that says left or right (from
    the stored outputs: the caption pe_lib.show was given, or else the alt text, which the site shows)."""
    count = 0
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("image/png", {})
            text = meta.get("caption") or meta.get("alt", "")
            count += bool(meta.get("phone", {}).get("stacked") and SIDES.search(text))
    return count


@pytest.mark.parametrize("viewport", [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")])
def test_a_caption_that_says_left_and_right_says_on_a_phone_that_the_panels_are_stacked(browser, site, viewport):
    """A caption that says "Left: ... Right: ..." under panels a phone stacks says so on the phone (a note
    shown by the phone's media query only); a desktop shows no note. Checked on the chapter with the most
    such captions, counted from its stored outputs (chapters 4 and 6, checked here before, now caption
    their figures with findings that name no panel)."""
    counts = {path.stem: stacked_side_captions(path) for path in sorted((ROOT / "notebooks").glob("*.ipynb"))}
    chapter = max(counts, key=counts.get)
    assert counts[chapter] >= 1, "no chapter has a left/right caption on a stacked figure: nothing to check"
    context = new_context(browser, viewport=viewport)
    try:
        visit = open_page(browser, site, f"notebooks/{chapter}.html", context=context)
        captions = visit.page.evaluate(NOTES_JS)
        visit.close()
    finally:
        context.close()
    noted = [c["text"] for c in captions if c["note"]]
    print(f"{chapter}, {viewport['width']} px: {len(noted)} of {len(captions)} captions carry the stacked-panels note")
    if viewport is DESKTOP:
        assert noted == []
    else:
        assert len(noted) == counts[chapter], f"{chapter}: {len(noted)} of {counts[chapter]} captions carry the note"
        assert all(SIDES.search(text) for text in noted)
