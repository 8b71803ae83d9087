"""Every figure of a chapter gets a visible, numbered caption: "Figure 4.2. Heat map of ...".

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
"""

from __future__ import annotations

from docutils import nodes
from myst_nb.ext.glue.crossref import ReplacePendingGlueReferences, generate_any_nodes, read_glue_cache
from myst_nb.ext.glue.utils import PendingGlueReference
from sphinx.transforms.post_transforms import SphinxPostTransform


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


def caption_figures(app, doctree, docname: str) -> None:
    """Wrap every described image of a cell output in a numbered figure with a visible caption."""
    chapter = chapter_number(app.env, docname)
    count = 0
    for image in list(doctree.findall(nodes.image)):
        alt = (image.get("alt") or "").strip()
        if not alt or not _in_cell_output(image) or isinstance(image.parent, nodes.figure):
            continue
        target = image.parent if isinstance(image.parent, nodes.reference) else image
        if isinstance(target.parent, nodes.figure):
            continue
        count += 1
        number = f"{chapter}.{count}" if chapter else str(count)
        figure = nodes.figure(classes=["book-figure"], ids=[f"figure-{number.replace('.', '-')}"])
        target.replace_self(figure)
        figure += target
        figure += nodes.caption(
            "", "",
            nodes.inline(text=f"Figure {number}. ", classes=["caption-number"]),
            nodes.Text(alt),
        )


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
            figure = nodes.figure(classes=["book-figure", "pasted-figure"], ids=[f"figure-{ref.key}"])
            figure += image
            chapter = chapter_number(self.env, ref.refdoc)
            link = nodes.reference(
                "", f"From chapter {chapter}." if chapter else "From its chapter.",
                internal=True, refuri=self.app.builder.get_relative_uri(self.env.docname, ref.refdoc),
            )
            figure += nodes.caption("", "", nodes.Text(meta["alt"] + " "), link)
            ref.replace_self(figure)


def setup(app):
    app.connect("doctree-resolved", caption_figures)
    app.add_post_transform(PastedFigures)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
