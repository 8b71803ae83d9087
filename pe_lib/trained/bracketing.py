r"""The search of chapter 14's failing schemes, run on until the best setting can lie inside it (issue 28).

:func:`pe_lib.trained.sweeps.wider_search` trained the four arms that fail in chapter 14 (RoPE and T5's bias
on reverse, ALiBi with 8 and 16 heads on lookback) up to 8000 steps, sixteen times the chapter's 500, at
learning rates 0.001 to 0.03. Every arm chose the longest run, and RoPE the smallest rate: neither the
number of steps nor RoPE's rate was bracketed. :func:`longer_search` trains the same arms on
:data:`LONGER_GRID`: the old rates and one below them (0.0003), up to 32000 steps, 64 times the chapter's
budget. The tasks draw fresh sequences at every step, so no run can overfit its training data: more steps
can only stop helping, and whether they have is read from the validation loss
(:func:`pe_lib.trained.robustness.last_doubling_gain`).

A run here is the old search's run continued: one vmapped run per learning rate with the same seeds and
batches, read at every number of steps of the grid, so its first five readings are the stored wider
search's (``tests/trained/test_bracketing.py`` compares them). ``make experiments`` stores the result
(:func:`pe_lib.trained.sweeps.save_results`, with :func:`code_version`).
"""

from __future__ import annotations

from .sweeps import CODE_FILES as SWEEP_FILES
from .sweeps import WIDER_ARMS, wider_search

LONGER_GRID = dict(learning_rates=(3e-4, 1e-3, 3e-3, 1e-2, 3e-2), steps=(500, 1000, 2000, 4000, 8000, 16000, 32000))
CODE_FILES = (*SWEEP_FILES, "trained/bracketing.py")


def longer_search(arms=WIDER_ARMS, *, seeds=(0, 1, 2), progress: bool | None = None, log=None, **grid) -> dict:
    """:func:`pe_lib.trained.sweeps.wider_search` of ``arms`` on :data:`LONGER_GRID` (updated by ``grid``).

    Returns ``{"code_version", "grid", "arms"}``: the grid as lists, and per arm ``"task encoding heads"``
    the scores of every ``"lr steps"`` (mean and per-seed validation loss, per-seed test accuracy), as
    :func:`~pe_lib.trained.sweeps.wider_search` returns them."""
    unknown = set(grid) - set(LONGER_GRID)
    if unknown:
        raise ValueError(f"grid takes only {sorted(LONGER_GRID)}, got {sorted(unknown)}: the other settings are "
                         "the chapter's (pe_lib.trained.sweeps.BASE)")
    grid = LONGER_GRID | grid
    found = wider_search(arms, seeds=seeds, progress=progress, log=log, **grid)
    return {"code_version": code_version(), "grid": {k: list(v) for k, v in grid.items()}, "arms": found}


def code_version() -> str:
    """The code version of :data:`CODE_FILES` (:func:`pe_lib.trained.text_runs.code_version` of these files)."""
    from .text_runs import code_version as of_files

    return of_files(CODE_FILES)
