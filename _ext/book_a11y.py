"""Markup that assistive technology reads correctly (axe-core: no critical or serious violation).

Runs after the HTML build over the written pages and changes three things the themes and
docutils write:

* **Bibliographies.** docutils writes each chapter's reference list as ``<div role="list">`` whose
  entries have ``role="doc-biblioentry"`` — a role ARIA deprecated, which is not a list item, so a
  screen reader announces an empty list (axe: ``aria-required-children``). Entries become
  ``role="listitem"``.
* **The search button.** Its ``aria-label="Search"`` hides the visible "Search Ctrl+K" from speech
  input users, who say what they see (axe: ``label-content-name-mismatch``): the label goes, the
  name comes from the visible text.
* **"Show code cell source".** myst-nb labels each collapsed cell ``aria-label="Toggle hidden
  content"`` while it shows "Show code cell source" / "Hide code cell source": the label goes, the
  visible text (one of the two, the other is hidden) is the name.
"""

from __future__ import annotations

import re
from pathlib import Path

FIXES = [
    # (what, pattern, replacement)
    ("bibliography entries", re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"'),
     r'\1 role="listitem"'),
    ("search button label", re.compile(r'(<button class="[^"]*search-button__button[^"]*"[^>]*?) aria-label="Search"'),
     r"\1"),
    ("cell toggle label", re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>"),
]


def accessible(html: str) -> str:
    """``html`` with the three fixes applied (wherever their markup occurs)."""
    for _, pattern, replacement in FIXES:
        html = pattern.sub(replacement, html)
    return html


def fix_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for page in outdir.rglob("*.html"):
        if page.relative_to(outdir).parts[0] in {"_static", "_sources"}:
            continue
        html = page.read_text(encoding="utf-8")
        fixed = accessible(html)
        if fixed != html:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", fix_pages, priority=950)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
