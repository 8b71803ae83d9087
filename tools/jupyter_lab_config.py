"""JupyterLab for the book (`make lab`): chapters open with citations, glossary terms and references resolved.

tools/lab_markup.py says why (jupyterlab-myst resolves no citation) and how; `jupyter lab --config=<this file>`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

c = get_config()  # noqa: F821 - defined by Jupyter when it reads this file
c.ServerApp.contents_manager_class = "lab_contents.BookContentsManager"
# Lab settings of the book (tools/lab_settings/overrides.json, JupyterLab's documented "overrides.json"): a
# markdown file opens rendered (Markdown Preview, drawn by jupyterlab-myst), not as source in the editor.
# A link to book/glossary.md or book/errata.md goes through Lab's "rendermime:handle-local-link", whose
# DocumentRegistry.defaultRenderedWidgetFactory ends at the default viewer (its own lookup of
# "defaultRendered" iterates the indices of the file-type list, not the names, in Lab 4.5), the editor
# unless this override names the preview. "Open With > Editor" still opens the source.
c.LabApp.app_settings_dir = str(Path(__file__).resolve().parent / "lab_settings")

# Two small extensions of the book's own, plain JavaScript without a build (tools/lab_extensions/): book-lab-links,
# after a click on a link to another file, scrolls the opened chapter or page to the link's fragment once
# the file has rendered (its header says why Lab alone does not); book-lab-style draws the chapters' tables
# with rules and a header line, and keeps printed lines wrapped.
c.LabApp.extra_labextensions_path = [str(Path(__file__).resolve().parent / "lab_extensions")]
