r"""The fair comparison of trained models (chapters 14 and 15): a small search per scheme, chosen on validation data.

A comparison of position schemes says something only if every scheme had the same chance. The
protocol of the book, for each scheme:

1. the same task, data and model sizes as every other scheme;
2. a small grid of training settings (learning rate :math:`\times` steps, from
   :func:`pe_lib.train_grid`; for ALiBi also the number of heads), each with several seeds;
3. the setting whose mean validation loss over the seeds is lowest (:func:`best_setting`), measured on
   *validation* sequences (:data:`pe_lib.trained.training.VALIDATION_SEED`) that are neither training
   nor *test* sequences (the default of :func:`pe_lib.task_accuracy`);
4. the test scores reported twice: each scheme at its best setting, and all at one shared setting.

Usage::

    grid = pe_lib.train_grid("lookback", "rope", seeds=(0, 1, 2))     # {(lr, steps): models}
    losses = pe_lib.validation_losses(grid, 16)                       # {(lr, steps): (seeds,) losses}
    best = pe_lib.best_setting(grid, 16)                              # the key of the lowest mean
"""

from __future__ import annotations

import numpy as np

from .._validate import check_positive_int
from .language_model import task_loss
from .training import EVAL_SEED, VALIDATION_SEED, check_model


def _check_grid(grid) -> dict:
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"grid must be a non-empty dict of setting -> models (from pe_lib.train_grid), got {grid!r}")
    for key, models in grid.items():
        if isinstance(models, (str, bytes)) or not hasattr(models, "__len__") or len(models) == 0:
            raise ValueError(f"grid[{key!r}] must be a non-empty tuple of trained models, got {models!r}")
        for m in models:
            check_model(m)
    return grid


def validation_losses(grid, seq_len: int, *, seed: int = VALIDATION_SEED, n_sequences: int = 256) -> dict:
    r"""The loss :func:`pe_lib.task_loss` of every model of ``grid`` on the validation sequences.

    ``grid``: ``{setting: models}`` (one model per seed, as :func:`pe_lib.train_grid` returns);
    ``seq_len``: the length to validate at. ``seed`` must not be the test seed
    (:data:`pe_lib.trained.training.EVAL_SEED`): settings are never chosen on the test sequences.
    Returns ``{setting: (seeds,) float array}``.
    """
    grid = _check_grid(grid)
    seed = check_positive_int(seed, name="seed", minimum=0)
    if seed == EVAL_SEED:
        raise ValueError(f"seed {seed} draws the test sequences (EVAL_SEED): choose settings on validation "
                         f"sequences, e.g. seed={VALIDATION_SEED}")
    return {key: np.array([task_loss(m, seq_len, seed=seed, n_sequences=n_sequences) for m in models])
            for key, models in grid.items()}


def best_setting(grid, seq_len: int, *, seed: int = VALIDATION_SEED, n_sequences: int = 256):
    r"""The setting of ``grid`` whose models have the lowest mean validation loss,
    :math:`\arg\min_s \frac1S\sum_{\text{seeds}} \ell_\text{val}(s)` (:func:`validation_losses`; the
    first in the order of ``grid`` on a tie). Returns the key."""
    losses = validation_losses(grid, seq_len, seed=seed, n_sequences=n_sequences)
    keys = list(losses)
    return keys[int(np.argmin([losses[k].mean() for k in keys]))]
