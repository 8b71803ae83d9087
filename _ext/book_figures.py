"""Every figure of a chapter gets a visible, numbered caption: "Figure 4.2. Heat map of ...".

The caption is the finding the chapter gave ``pe_lib.show(fig, alt=..., caption=...)`` (stored in the
output's metadata), or else the figure's description, its alt text (issue 30, item 6: captions repeated
the alt text word for word; a reader wants what the figure shows, a screen reader what it looks like).

A chapter's figures are cell outputs drawn by ``pe_lib.show(fig, alt=...)``; ``tools/execute.py``
copies the description into the cell's ``mystnb.image.alt`` and myst-nb writes it into ``<img alt>``
only, where a sighted reader never sees it (issue 19, item 7). After references are resolved
(``doctree-resolved``), each such image becomes a ``figure`` node whose caption is its number (the
chapter's number from the table of contents, then the figure's place in the chapter) and its
description. The image keeps its ``alt``, so nothing changes for a screen reader but the caption,
and each figure gets an anchor (``#figure-4-2``) that a link can point to.

A page can show a chapter's figure again (issue 19, item 12): the chapter glues what ``pe_lib.shown``
gives (``myst_nb.glue("name", pe_lib.shown(fig, alt=...), display=False)``) and the page pastes it
with myst-nb's ``{glue}`` directive and its ``:doc:`` option. myst-nb pastes from another document
a bare image (its file name as alt, no size, no caption: ``{glue:figure}`` reads the page's own
notebook only). :class:`PastedFigures` runs just before myst-nb's replacement and gives the pasted
image the figure's alt text and designed size, inside a figure whose caption is that text and a link
to the chapter. The image file is the chapter's own (same bytes, same name), so nothing is copied.

On a phone every figure is shown in its phone rendering (issue 19: text of at least 10 CSS px).
``pe_lib.show`` stores it in the output's metadata (``metadata["image/png"]["phone"]``: a 2x PNG and
its designed ``width``/``height``), where nbval does not compare it and JupyterLab ignores it. Each
figure image is matched to its output by its file name, the SHA-256 of the desktop PNG's bytes that
myst-nb names it by, so a match is a check of the bytes too; the phone PNG is written into the
site's ``_images/`` and the page offers it to narrow screens::

    <picture><source media="(max-width: 600px)" srcset="…phone.png" width="420" height="…"><img …></picture>

A browser downloads one of the two. A figure wider than the phone column without a phone rendering
(the chapter was not re-executed), or a phone rendering that matches no image, fails the build.
"""

from __future__ import annotations

import base64
import hashlib
import json
import posixpath
import re
from pathlib import Path

from docutils import nodes
from myst_nb.ext.glue.crossref import ReplacePendingGlueReferences, generate_any_nodes, read_glue_cache
from myst_nb.ext.glue.utils import PendingGlueReference
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.writers.html5 import HTML5Translator

# Viewports up to this width get the phone rendering. Above it the desktop figure (760 px designed) is
# shown at 553 px or more (measured column), so its 13.9 px labels stay at 10 CSS px or more.
PHONE_MEDIA = "(max-width: 600px)"
PHONE_WIDTH_PX = 420  # pe_lib.book.figures.PHONE_WIDTH_PX: a wider figure must have a phone rendering


def _phone_renderings(env, docname: str) -> dict[str, dict]:
    """The phone renderings of a chapter's figures: {SHA-256 of the desktop PNG: metadata["phone"]}."""
    path = Path(env.doc2path(docname))
    if path.suffix != ".ipynb":
        return {}
    found = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            phone = output.get("metadata", {}).get("image/png", {}).get("phone")
            if phone and "image/png" in output.get("data", {}):  # not a figure glued for another page
                png = "".join(output["data"]["image/png"])
                found[hashlib.sha256(base64.b64decode(png)).hexdigest()] = phone
    return found


def _captions(env, docname: str) -> dict[str, str]:
    """The captions ``pe_lib.show(..., caption=...)`` gave a chapter's figures: {SHA-256 of the PNG: caption}."""
    path = Path(env.doc2path(docname))
    if path.suffix != ".ipynb":
        return {}
    found = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            caption = output.get("metadata", {}).get("image/png", {}).get("caption")
            if caption and "image/png" in output.get("data", {}):
                png = "".join(output["data"]["image/png"])
                found[hashlib.sha256(base64.b64decode(png)).hexdigest()] = caption
    return found


def add_phone_rendering(app, image, phone: dict) -> None:
    """Write ``phone``'s PNG into the site's images and note it on the image node for the HTML writer."""
    data = base64.b64decode("".join(phone["png"]))
    name = f"{hashlib.sha256(data).hexdigest()}.png"
    folder = Path(app.builder.outdir) / app.builder.imagedir
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / name).exists():
        (folder / name).write_bytes(data)
    image["phone_src"], image["phone_width"], image["phone_height"] = name, str(phone["width"]), str(phone["height"])


def _designed_width(image) -> float:
    return float(str(image.get("width", "0")).removesuffix("px") or 0)


def visit_image(self, node) -> None:
    """An image with a phone rendering: ``<picture>`` with a ``<source>`` for narrow screens, then the ``<img>``."""
    if node.get("phone_src"):
        src = posixpath.join(self.builder.imgpath, node["phone_src"])
        self.body.append(f'<picture><source media="{PHONE_MEDIA}" srcset="{src}" '
                         f'width="{node["phone_width"]}" height="{node["phone_height"]}" />')
    HTML5Translator.visit_image(self, node)


def depart_image(self, node) -> None:
    HTML5Translator.depart_image(self, node)
    if node.get("phone_src"):
        self.body.append("</picture>")


def _in_cell_output(node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.container) and "cell_output" in parent.get("classes", []):
            return True
        parent = parent.parent
    return False


def chapter_number(env, docname: str) -> str:
    """``"4"`` for the fourth chapter (as the sidebar numbers it), ``""`` for a page without a number."""
    numbers = env.toc_secnumbers.get(docname, {}).get("", ())
    return ".".join(str(n) for n in numbers)


# A caption names panels by their place on a desktop ("Left: ..., Right: ..."); the phone rendering
# stacks them in the same order. On a phone the caption says so (a note the CSS shows only where the
# phone rendering is shown, the <source>'s media query).
SIDES = re.compile(r"\b(?:Left|Right|left|right)\b")
STACKED_NOTE = " On a narrow screen the panels stand one above the other, in the same order: left on top."


def phone_note(alt: str, phone: dict | None) -> list:
    """The phone-only note for a caption whose figure is stacked on phones and whose text says left or right."""
    if not phone or not phone.get("stacked") or not SIDES.search(alt):
        return []
    return [nodes.inline(text=STACKED_NOTE, classes=["phone-only"])]


def caption_figures(app, doctree, docname: str) -> None:
    """Wrap every described image of a cell output in a numbered figure with a visible caption."""
    chapter = chapter_number(app.env, docname)
    phones = _phone_renderings(app.env, docname) if app.builder.format == "html" else {}
    captions = _captions(app.env, docname)
    used = set()
    count = 0
    for image in list(doctree.findall(nodes.image)):
        alt = (image.get("alt") or "").strip()
        if not alt or not _in_cell_output(image) or isinstance(image.parent, nodes.figure):
            continue
        target = image.parent if isinstance(image.parent, nodes.reference) else image
        if isinstance(target.parent, nodes.figure):
            continue
        count += 1
        phone = None
        if app.builder.format == "html":
            key = Path(image["uri"]).stem
            if key in phones:
                phone = phones[key]
                add_phone_rendering(app, image, phones[key])
                used.add(key)
            elif _designed_width(image) > PHONE_WIDTH_PX:
                raise ExtensionError(
                    f"{docname}: figure {count} ({Path(image['uri']).name}) is {_designed_width(image):g} px wide "
                    "and has no phone rendering: re-execute the chapter (tools/execute.py) so that pe_lib.show "
                    "stores one")
        number = f"{chapter}.{count}" if chapter else str(count)
        figure = nodes.figure(classes=["book-figure"], ids=[f"figure-{number.replace('.', '-')}"])
        target.replace_self(figure)
        figure += target
        # what the figure shows, said as a finding (pe_lib.show's caption=), or else its description (alt)
        text = captions.get(Path(image["uri"]).stem, alt)
        figure += nodes.caption(
            "", "",
            nodes.inline(text=f"Figure {number}. ", classes=["caption-number"]),
            nodes.Text(text),
            *phone_note(text, phone),
        )
    if set(phones) - used:
        raise ExtensionError(f"{docname}: {len(set(phones) - used)} phone rendering(s) of the notebook match no "
                             "figure of the page (the desktop PNG's bytes differ): re-execute the chapter")


class PastedFigures(SphinxPostTransform):
    """A figure pasted from a chapter with ``{glue}`` and ``:doc:`` keeps its alt text, size and a caption."""

    default_priority = ReplacePendingGlueReferences.default_priority - 1

    def run(self, **kwargs) -> None:
        cache = self.env.mystnb_config.output_folder
        for ref in list(self.document.findall(PendingGlueReference)):
            output = read_glue_cache(cache, ref.refdoc).get(ref.key, {})
            meta = output.get("metadata", {}).get("image/png", {})
            if ref.get("inline") or not meta.get("alt"):
                continue  # not a figure glued from pe_lib.shown: myst-nb's own replacement handles it
            pasted = generate_any_nodes(ref, output, ["image/png"], self.app.builder, self.env)
            if not pasted:
                continue
            (image,) = pasted
            image["alt"] = meta["alt"]
            if "width" in meta:
                image["width"] = f"{meta['width']}px"
            if meta.get("phone") and self.app.builder.format == "html":
                add_phone_rendering(self.app, image, meta["phone"])
            elif self.app.builder.format == "html" and _designed_width(image) > PHONE_WIDTH_PX:
                raise ExtensionError(f"{self.env.docname}: the figure pasted from {ref.refdoc} ({ref.key}) has no "
                                     "phone rendering: re-execute that chapter")
            figure = nodes.figure(classes=["book-figure", "pasted-figure"], ids=[f"figure-{ref.key}"])
            figure += image
            chapter = chapter_number(self.env, ref.refdoc)
            link = nodes.reference(
                "", f"From chapter {chapter}." if chapter else "From its chapter.",
                internal=True, refuri=self.app.builder.get_relative_uri(self.env.docname, ref.refdoc),
            )
            figure += nodes.caption("", "", nodes.Text(meta["alt"] + " "), link,
                                    *phone_note(meta["alt"], meta.get("phone")))
            ref.replace_self(figure)


def setup(app):
    app.connect("doctree-resolved", caption_figures)
    app.add_post_transform(PastedFigures)
    app.add_node(nodes.image, override=True, html=(visit_image, depart_image))
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
