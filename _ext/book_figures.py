"""Every figure of a chapter gets a visible, numbered caption: "Figure 4.2. Heat map of ...".

A chapter's figures are cell outputs drawn by ``pe_lib.show(fig, alt=...)``; ``tools/execute.py``
copies the description into the cell's ``mystnb.image.alt`` and myst-nb writes it into ``<img alt>``
only, where a sighted reader never sees it (issue 19, item 7). After references are resolved
(``doctree-resolved``), each such image becomes a ``figure`` node whose caption is its number (the
chapter's number from the table of contents, then the figure's place in the chapter) and its
description. The image keeps its ``alt``, so nothing changes for a screen reader but the caption,
and each figure gets an anchor (``#figure-4-2``) that a link can point to.
"""

from __future__ import annotations

from docutils import nodes


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


def setup(app):
    app.connect("doctree-resolved", caption_figures)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
