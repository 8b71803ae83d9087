"""The reference comparisons (``make reference``): pe_lib against the real transformers and diffusers.

These tests import torch, transformers and diffusers, which only ``.venv-reference`` has
(``requirements-reference.txt``); ``make test`` and ``make unit`` never collect this folder
(``norecursedirs`` in ``pyproject.toml``). Every comparison records its largest difference and its
tolerance in :data:`RESULTS`; the table is printed at the end of the run.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers

transformers.logging.set_verbosity_error()  # HF logs warnings for some configs we test on purpose
torch.set_num_threads(1)  # the comparisons are small; a shared machine has 2 cores

EPS32 = float(np.finfo(np.float32).eps)  # 2**-23, the spacing of float32 numbers just above 1

# comparison name -> [number of cases, largest difference, tolerance, how the difference is measured]
RESULTS: dict[str, list] = {}


def record(name: str, difference: float, tolerance: float, measure: str, *, at_least: bool = False) -> None:
    """Keep the largest ``difference`` seen for comparison ``name`` (and check it against ``tolerance``).

    ``at_least``: a wrong account that must differ: keep the smallest difference, which must reach ``tolerance``
    (the name says so in the table)."""
    if at_least:
        name = f"{name} (at least {tolerance:.3g}: smallest)"
        entry = RESULTS.setdefault(name, [0, float(difference), tolerance, measure])
        entry[0] += 1
        entry[1] = min(entry[1], float(difference))
        assert difference >= tolerance, f"{name}: difference {difference:.3g} below {tolerance:.3g}: the accounts agree"
        return
    entry = RESULTS.setdefault(name, [0, 0.0, tolerance, measure])
    entry[0] += 1
    entry[1] = max(entry[1], float(difference))
    entry[2] = max(entry[2], float(tolerance))
    assert difference <= tolerance, f"{name}: difference {difference:.3g} above the tolerance {tolerance:.3g}"


def relative_each(ours, theirs) -> float:
    """max_i |ours_i - theirs_i| / |ours_i|: every entry to its own relative precision."""
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, f"shapes differ: {ours.shape} vs {theirs.shape}"
    return float(np.max(np.abs(ours - theirs) / np.abs(ours)))


def relative_to_largest(ours, theirs) -> float:
    """max |ours - theirs| / max |ours|: the difference relative to the largest value."""
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, f"shapes differ: {ours.shape} vs {theirs.shape}"
    return float(np.max(np.abs(ours - theirs)) / np.max(np.abs(ours)))


def pytest_configure(config):
    # pe_lib warns (RopeScalingWarning) where transformers logs a warning, for configs tested on purpose
    config.addinivalue_line("filterwarnings", "ignore::pe_lib.modern.rope_scaling.RopeScalingWarning")


def pytest_terminal_summary(terminalreporter):
    if not RESULTS:
        return
    try:  # make reference-sinks puts an older huggingface-hub first, which today's diffusers cannot import
        diffusers = __import__("diffusers").__version__
    except ImportError:
        diffusers = "(not importable with these packages)"
    versions = f"torch {torch.__version__}, transformers {transformers.__version__}, diffusers {diffusers}"
    terminalreporter.section(f"largest differences ({versions})")
    width = max(len(name) for name in RESULTS)
    terminalreporter.write_line(f"{'comparison':<{width}}  cases  largest     tolerance  measured as")
    for name, (cases, largest, tolerance, measure) in RESULTS.items():
        terminalreporter.write_line(f"{name:<{width}}  {cases:5d}  {largest:<10.3g}  {tolerance:<9.3g}  {measure}")


@pytest.fixture(autouse=True)
def _no_grad():
    with torch.no_grad():
        yield
