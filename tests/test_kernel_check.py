"""The kernel check's choice of chapters (tools/kernel_check.py) and make test's split of nbval by it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import pe_lib.trained

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import kernel_check  # noqa: E402


def trains(path: Path) -> bool:
    """Whether a chapter's code calls something of pe_lib.trained (and so runs JAX)."""
    code = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
    return any(re.search(rf"\bpe_lib\.(?:trained\.)?{name}\b", code) for name in pe_lib.trained.__all__)


def test_every_chapter_that_trains_is_checked_as_trained_by_make_test_and_the_kernel_check():
    chapters = sorted((ROOT / "notebooks").glob("*.ipynb"))
    training = [p.name for p in chapters if trains(p)]
    named = [p.name for p in chapters if p.name.startswith(kernel_check.TRAINED)]
    # as a make of its own: under make test the parent's MAKEFLAGS would add "Entering directory" lines
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    rule = "print-trained: ; @echo $(TRAINED_NOTEBOOKS)"
    shown = subprocess.run(["make", "-s", "--no-print-directory", "--eval", rule, "print-trained"], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    assert len(training) >= 5, training  # chapters 14-16, 19 and 20 at least
    # make test leaves these out of its first nbval run: the kernel check runs them (or nbval, where it cannot)
    assert training == named == [Path(p).name for p in shown]


def test_a_chapter_using_a_trained_function_counts_as_training(tmp_path):
    cell = nbformat.v4.new_code_cell("import pe_lib\nm = pe_lib.train_transformer('lookback', 'rope')")
    nb = nbformat.v4.new_notebook(cells=[cell])
    nbformat.write(nb, tmp_path / "a.ipynb")
    assert trains(tmp_path / "a.ipynb")
    nb.cells[0].source = "import pe_lib\nx = pe_lib.sinusoidal(8, 4)  # train_transformer in a comment"
    nbformat.write(nb, tmp_path / "a.ipynb")
    assert not trains(tmp_path / "a.ipynb")


def test_runnable_core_types_follow_the_processor_flags():
    flags = kernel_check.cpu_flags("processor : 0\nflags\t\t: fpu pni avx avx2 fma\n")
    assert flags == {"fpu", "pni", "avx", "avx2", "fma"}
    assert kernel_check.runnable(["SkylakeX", "Haswell", "Prescott"], flags) == (["Haswell", "Prescott"], ["SkylakeX"])
    with pytest.raises(ValueError, match="unknown OpenBLAS core type"):
        kernel_check.runnable(["Zen4"], flags)
