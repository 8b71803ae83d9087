"""The checking pipeline itself: nbval in strict mode catches a changed digit, and
``make execute`` (tools/execute.py) is deterministic."""

from __future__ import annotations

import difflib
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "03_the_formula.ipynb"


def _nbval(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"), "-o", "addopts=", "-q", str(path)],
        capture_output=True, text=True, cwd=path.parent, check=False,
    )


def test_nbval_strict_fails_on_a_changed_digit(tmp_path):
    nb = nbformat.read(CHAPTER, as_version=4)
    changed = False
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "stream" and "9646.6" in out.get("text", ""):
                out["text"] = out["text"].replace("9646.6", "9646.7")
                changed = True
    assert changed, "the chapter no longer prints the longest wavelength 9646.6"
    target = tmp_path / CHAPTER.name
    nbformat.write(nb, target)
    result = _nbval(target)
    assert result.returncode == 1, result.stdout[-2000:]
    assert "9646.7" in result.stdout and "1 failed" in result.stdout


def test_execute_leaves_an_unchanged_notebook_byte_identical(tmp_path):
    target = tmp_path / CHAPTER.name
    shutil.copy(CHAPTER, target)
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "execute.py"), str(target)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    diff = "".join(
        difflib.unified_diff(CHAPTER.read_text().splitlines(True), target.read_text().splitlines(True), n=2)
    )
    assert "unchanged" in result.stdout, f"re-execution changed the notebook:\n{diff[:4000]}"
    assert target.read_bytes() == CHAPTER.read_bytes()
