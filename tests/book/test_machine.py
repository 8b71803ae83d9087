"""The numpy SIMD cap behind the book's reproducible digits (pe_lib.book.machine)."""

import pathlib
import re
import subprocess
import sys

from pe_lib.book.machine import NUMPY_ENV

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_makefile_exports_the_same_setting():
    exports = dict(re.findall(r"^export (NPY_\w+) := (.*)$", (ROOT / "Makefile").read_text(), flags=re.M))
    assert exports == NUMPY_ENV


def test_the_setting_switches_off_numpys_avx512_kernels():
    code = ("from numpy._core._multiarray_umath import __cpu_features__ as f; "
            "print(sorted(k for k in ('AVX512_ICL', 'AVX512_SKX', 'AVX512F') if f.get(k)))")
    env = {"PATH": "/usr/bin:/bin", **NUMPY_ENV}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    # AVX512F itself stays detected (it is not a dispatch target); the kernels' targets are off
    assert "AVX512_ICL" not in out and "AVX512_SKX" not in out, out

