"""The file manager of `make lab`: chapters reach JupyterLab with the book's markup resolved (lab_markup.py).

Started by ``jupyter lab --config=tools/jupyter_lab_config.py``; saving writes the book's markup back.

It also gives a chapter the ``language_info.version`` of the Python that serves it (the kernel of
``make lab`` is that Python): Lab writes the kernel's ``language_info`` into the notebook when the
kernel starts, and any difference marks the notebook unsaved before the learner has touched it
(issue 19). tools/execute.py stores the book's Python version; saving keeps the version on disk.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from lab_markup import from_lab, glossary_from_lab, glossary_to_lab, to_lab

GLOSSARY = "book/glossary.md"  # served as a definition list, saved as the book's {glossary} directive


def notebook_to_lab(nb: dict, path: str) -> None:
    cells = [c for c in nb["cells"] if c["cell_type"] == "markdown"]
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
    for cell, new in zip(cells, to_lab(sources, path), strict=True):
        cell["source"] = new


def notebook_from_lab(nb: dict) -> None:
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = from_lab(source)


class BookContentsManager(AsyncLargeFileManager):
    """Jupyter's file manager, with the book's chapters shown resolved in Lab and saved with the book's markup."""

    async def get(self, path, content=True, type=None, format=None, require_hash=False):  # noqa: A002
        model = await super().get(path, content=content, type=type, format=format, require_hash=require_hash)
        if content and model["type"] == "notebook" and path.strip("/").startswith("notebooks/"):
            language = model["content"]["metadata"].get("language_info", {})
            if language.get("name") == "python":
                language["version"] = platform.python_version()
            try:
                notebook_to_lab(model["content"], path.strip("/"))
            except ValueError as error:  # an unknown key: show the notebook as it is, say why in the log
                self.log.warning("book markup left as it is in %s: %s", path, error)
        if content and path.strip("/") == GLOSSARY and model["type"] == "file" and model["format"] == "text":
            model["content"] = glossary_to_lab(model["content"])
        return model

    async def save(self, model, path=""):
        if model.get("type") == "notebook" and model.get("content"):
            notebook_from_lab(model["content"])
            on_disk = Path(self._get_os_path(path.strip("/")))
            language = model["content"].get("metadata", {}).get("language_info")
            if on_disk.is_file() and isinstance(language, dict):
                stored = json.loads(on_disk.read_text(encoding="utf-8"))["metadata"].get("language_info", {})
                if "version" in stored:
                    language["version"] = stored["version"]
                else:
                    language.pop("version", None)
        if path.strip("/") == GLOSSARY and model.get("type") == "file" and model.get("format") == "text":
            model["content"] = glossary_from_lab(model["content"])
        return await super().save(model, path)
