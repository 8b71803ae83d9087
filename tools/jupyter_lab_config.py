"""JupyterLab for the book (`make lab`): chapters open with citations, glossary terms and references resolved.

tools/lab_markup.py says why (jupyterlab-myst resolves no citation) and how; `jupyter lab --config=<this file>`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

c = get_config()  # noqa: F821 - defined by Jupyter when it reads this file
c.ServerApp.contents_manager_class = "lab_contents.BookContentsManager"
