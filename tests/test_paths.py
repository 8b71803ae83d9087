"""Every file of this repository that the book names exists, and every test it names is in that file.

Chapters and pages point readers to the code that checks a claim (``tests/numpy_model/test_layers.py``,
``tests/numpy_model/test_attention.py::test_self_attention_is_permutation_equivariant``). After the move
of the tests into one folder per ``pe_lib`` folder, four such paths named files that no longer existed
(issue 32); the build cannot see them, since they are text, not links. This test reads the notebooks
(every cell's source and metadata), the book's pages, the README and ``pe_lib``'s docstrings.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
PATH = re.compile(
    r"(?<![\w/.-])((?:tests|pe_lib|tools|_ext|notebooks|book)/[A-Za-z0-9_./-]*[A-Za-z0-9_]"
    r"\.(?:py|md|ipynb|yml|yaml|cfg|json|js|css|txt))(?![\w])(?:::([A-Za-z_]\w*))?"
)


# paths in other projects that the book names (with the project beside them), not files of this one
EXTERNAL = {"tools/server/README.md": "llama.cpp's server documentation (pe_lib/modern/serving.py)"}


def sources() -> list[tuple[str, str]]:
    """(where, text) for every text that may name a file."""
    out = []
    for nb_path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(nb_path, as_version=4)
        for i, cell in enumerate(nb.cells):
            out.append((f"{nb_path.name} cell {i}", cell.source + "\n" + str(cell.get("metadata", {}))))
    for md in sorted((ROOT / "book").glob("*.md")) + [ROOT / "README.md"]:
        out.append((md.relative_to(ROOT).as_posix(), md.read_text()))
    for py in sorted((ROOT / "pe_lib").rglob("*.py")):
        out.append((py.relative_to(ROOT).as_posix(), py.read_text()))
    return out


def problems_in(where: str, text: str) -> list[str]:
    """What ``text`` names that is not there: a missing file, or a ``file::test`` with no such test."""
    found = []
    for match in PATH.finditer(text):
        path, name = match.group(1), match.group(2)
        target = ROOT / path
        if path in EXTERNAL:
            continue
        if where.startswith("pe_lib/") and not target.is_file() and (ROOT / "pe_lib" / path).is_file():
            target = ROOT / "pe_lib" / path  # pe_lib's code names its own modules from the package folder
        if not target.is_file():
            found.append(f"{where}: {path} does not exist")
        elif name and not re.search(rf"^\s*(?:async\s+)?def {re.escape(name)}\(|^class {re.escape(name)}\b",
                                    target.read_text(), flags=re.M):
            found.append(f"{where}: {path} has no test {name}")
    return found


def test_every_named_file_and_test_exists():
    problems = [p for where, text in sources() for p in problems_in(where, text)]
    assert not problems, "\n".join(problems)


def test_the_check_reads_the_places_that_name_files():
    named = [m.group(1) for _, text in sources() for m in PATH.finditer(text)]
    assert len(named) >= 20, named  # the chapters, pages and docstrings name many files
    assert "tests/numpy_model/test_layers.py" in named


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("see `tests/test_layers.py`", "tests/test_layers.py does not exist"),
        ("`tests/numpy_model/test_attention.py::test_attention_is_magic`", "has no test test_attention_is_magic"),
        ("in book/notation.md and pe_lib/encodings/nothing.py.", "pe_lib/encodings/nothing.py does not exist"),
    ],
)
def test_a_planted_stale_path_fails(text, problem):
    assert any(problem in p for p in problems_in("planted", text))


def test_existing_paths_and_tests_pass():
    text = ("`tests/numpy_model/test_attention.py::test_self_attention_is_permutation_equivariant`, "
            "book/errata.md, pe_lib/analysis/probe.py and `tests/<pkg>/test_<module>.py` as a pattern")
    assert problems_in("fine", text) == []
