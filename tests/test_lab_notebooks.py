"""What a learner sees in JupyterLab: collapsed solutions, a friendly widget stand-in, a locked environment.

JupyterLab ignores Jupyter Book's ``hide-input``/``hide-output`` tags, so ``tools/execute.py`` mirrors
them into ``jupyter.source_hidden``/``outputs_hidden``; these tests check every stored notebook.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

_spec = importlib.util.spec_from_file_location("execute", ROOT / "tools" / "execute.py")
execute = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_hidden_in_the_book_means_collapsed_in_lab(path):
    nb = nbformat.read(path, as_version=4)
    wrong = []
    for i, cell in enumerate(nb.cells):
        tags = cell.metadata.get("tags", [])
        lab = cell.metadata.get("jupyter", {})
        for tag, flag in execute.LAB_FLAGS.items():
            if (tag in tags) != bool(lab.get(flag, False)):
                state = "set" if tag in tags else "absent"
                wrong.append(f"cell {i}: tag {tag!r} {state}, jupyter.{flag}={lab.get(flag)}")
    assert not wrong, f"{path.name}: run `make execute` to mirror the tags into Lab's metadata:\n" + "\n".join(wrong)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_widget_outputs_say_how_to_get_the_sliders(path):
    nb = nbformat.read(path, as_version=4)
    texts = [
        out["data"].get("text/plain")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if WIDGET_MIME in out.get("data", {})
    ]
    assert all(t == execute.WIDGET_STAND_IN for t in texts), texts


def test_lab_collapse_sets_and_clears_the_flags():
    cell = nbformat.v4.new_code_cell("x", metadata={"tags": ["hide-input", "hide-output"]})
    execute._lab_collapse(cell)
    assert cell.metadata["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    cell.metadata["tags"] = ["hide-input"]
    execute._lab_collapse(cell)
    assert cell.metadata["jupyter"] == {"source_hidden": True}
    cell.metadata["tags"] = []
    execute._lab_collapse(cell)
    assert "jupyter" not in cell.metadata


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;]+)", line)
        assert m, f"{path.name}: {raw!r} is not pinned as name==version"
        pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(3)
    return pins


def test_the_lab_environment_is_locked_beside_the_book_environment():
    book = _pins(ROOT / "requirements.txt")
    lab = _pins(ROOT / "requirements-lab.txt")
    assert {"jupyterlab", "jupyterlab-myst", "jupyter-server", "notebook-shim"} <= set(lab), sorted(lab)
    clashes = {name: (book[name], v) for name, v in lab.items() if name in book and book[name] != v}
    assert not clashes, f"pinned differently in requirements.txt and requirements-lab.txt: {clashes}"
    assert len(lab) >= 30, f"only {len(lab)} pins: the lab lock must pin JupyterLab's whole dependency closure"


# JupyterLab opens a link only if it names the file: {doc}`chapter 2 <02_why_add>` becomes a link to
# notebooks/02_why_add, a 404 (issue 19, item 4). Chapters link with [chapter 2](02_why_add.ipynb),
# which the website resolves as well. A folded solution shows its first line in Lab, so that line
# names the solution and no more (item 5). Chapters 14-16 are being rewritten on another branch,
# which takes both changes over (xfail until then).
DOC_ROLE = re.compile(r"\{doc\}`[^`]*`")
SOLUTION_FIRST_LINE = re.compile(r"^# Solution \d+[a-z]?$")
LATER: set[str] = set()


def _params():
    return [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="chapter rewritten on another branch"))
            if p.name in LATER else p for p in NOTEBOOKS]


@pytest.mark.parametrize("path", _params(), ids=lambda p: p.name)
def test_links_and_folded_solutions_work_in_lab(path):
    nb = nbformat.read(path, as_version=4)
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            problems += [f"cell {i}: {m.group(0)} (write [text](file.ipynb))" for m in DOC_ROLE.finditer(cell.source)]
            for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", cell.source):
                if "://" not in target and not (path.parent / target).is_file():
                    problems.append(f"cell {i}: link to {target}, which is no file")
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "code" and cell.source.startswith("# Solution"):  # an exercise's solution
            first = cell.source.splitlines()[0]
            if not SOLUTION_FIRST_LINE.match(first):
                problems.append(f"cell {i}: its first line, shown folded in Lab, says more: {first[:70]!r}")
            missing = [tag for tag in ("hide-input", "hide-output") if tag not in tags]
            if missing:
                problems.append(f"cell {i}: a solution without the tags {missing} (its code or answer shows)")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
