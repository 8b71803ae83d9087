"""Re-execute notebooks in place, deterministically (``make execute``).

``jupyter execute --inplace`` stamps every cell with execution timestamps and gives every widget
a fresh random model id, so re-running an unchanged notebook dirties ``git diff``. This script runs
each notebook top to bottom with nbclient in its own folder and then removes exactly that noise:

* cell ``metadata.execution`` timestamps;
* widget state in the notebook metadata (the site hides kernel-bound widgets anyway);
* random widget model ids in outputs, renumbered in order of appearance;
* arbitrary splits of one cell's printed output into several stream outputs (merged).

It also writes what readers see in JupyterLab, derived from the cell, so that it cannot drift:

* ``jupyter.source_hidden`` / ``jupyter.outputs_hidden`` from the Jupyter Book tags ``hide-input`` /
  ``hide-output`` (Lab ignores the tags; exercise solutions are collapsed there too), and with hidden
  outputs the older ``collapsed`` flag that Lab adds when it saves;
* the plain-text stand-in of a widget output (what Lab shows before the cell is run in a live
  kernel): a sentence saying how to get the sliders, instead of ``interactive(children=(IntSlider(…``.

It stores the ``language_info`` the kernel reports, ``version`` included (the Python that ran the
notebook): JupyterLab writes the kernel's ``language_info`` into a notebook when its kernel starts, and
a stored one that differs marks the notebook unsaved as soon as it is opened (issue 19).

Finally it copies the ``alt`` text that ``pe_lib.show`` puts into a figure's output metadata into the
cell's ``mystnb.image.alt``, the place myst-nb reads it from for the page's ``<img alt=...>``.

Nothing else is touched: every number a cell prints is stored as printed, and nbval re-checks it.
Usage: ``python tools/execute.py notebooks/03_the_formula.ipynb [...]``; with ``--metadata-only`` first, it
runs nothing and only brings the metadata of the stored notebooks to this form (outputs untouched).
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from pe_lib.book.figures import PHONE_ENV
from pe_lib.book.machine import KERNEL_ENV

# the kernels this script starts inherit it: the same printed digits on AVX2 and AVX-512 processors
for _name, _value in KERNEL_ENV.items():
    os.environ.setdefault(_name, _value)
# and this one: pe_lib.show adds each figure's phone rendering, which the website serves to narrow screens
os.environ[PHONE_ENV] = "1"

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _copy_alt_text(cell: nbformat.NotebookNode) -> None:
    alts = [
        out["metadata"]["image/png"]["alt"]
        for out in cell.get("outputs", [])
        if "alt" in out.get("metadata", {}).get("image/png", {})
    ]
    if len(alts) > 1:
        raise ValueError(f"a cell shows {len(alts)} figures with alt text; show one figure per cell:\n{cell.source}")
    image = cell.metadata.get("mystnb", {}).get("image", {})
    image.pop("alt", None)
    if alts:
        image["alt"] = alts[0]
    if image:
        cell.metadata.setdefault("mystnb", {})["image"] = image
    elif "mystnb" in cell.metadata:
        cell.metadata["mystnb"].pop("image", None)
        if not cell.metadata["mystnb"]:
            del cell.metadata["mystnb"]


WIDGET_STAND_IN = "Interactive controls: run this cell in Jupyter (a live kernel) to get the sliders."
LAB_FLAGS = {"hide-input": "source_hidden", "hide-output": "outputs_hidden"}


def _lab_collapse(cell: nbformat.NotebookNode) -> None:
    tags = cell.metadata.get("tags", [])
    lab = cell.metadata.get("jupyter", {})
    for tag, flag in LAB_FLAGS.items():
        if tag in tags:
            lab[flag] = True
        else:
            lab.pop(flag, None)
    if lab:
        cell.metadata["jupyter"] = lab
    else:
        cell.metadata.pop("jupyter", None)
    # JupyterLab saves a cell with hidden outputs with the older flag "collapsed" as well: store it too, so
    # that saving an unchanged chapter in Lab leaves the file unchanged
    if lab.get("outputs_hidden"):
        cell.metadata["collapsed"] = True
    else:
        cell.metadata.pop("collapsed", None)


def _clean(nb: nbformat.NotebookNode) -> None:
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    lang = nb.metadata.get("language_info", {})
    nb.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"} | {
        k: v for k, v in lang.items() if k in ("codemirror_mode", "file_extension", "mimetype", "nbconvert_exporter")
    } | {"version": platform.python_version()}  # what this Python's kernel reports: see the docstring
    ids: dict[str, str] = {}
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        _lab_collapse(cell)
        if cell.cell_type != "code":
            continue
        _copy_alt_text(cell)
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get(WIDGET_MIME)
            if view and "model_id" in view:
                old = view["model_id"]
                view["model_id"] = ids.setdefault(old, f"{len(ids) + 1:032x}")
                out["data"]["text/plain"] = WIDGET_STAND_IN


def execute(path: Path, timeout: int = 600, *, run: bool = True) -> None:
    nb = nbformat.read(path, as_version=4)
    if run:
        _run(nb, path, timeout)
    _clean(nb)
    nbformat.validate(nb)
    text = nbformat.writes(nb) + "\n"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
        print(f"updated  {path}")
    else:
        print(f"unchanged {path}")


def _run(nb: nbformat.NotebookNode, path: Path, timeout: int) -> None:
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        coalesce_streams=True,  # the kernel splits print output at arbitrary points; merge it
    )
    client.execute()


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    run = argv[0] != "--metadata-only"
    for name in argv if run else argv[1:]:
        execute(Path(name), run=run)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
