r"""Summaries of repeated training runs: the spread over seeds, how fast a loss falls, where a model errs.

A trained model is one draw: another seed gives other initial weights and other training batches,
and a different result. The chapters on trained models therefore train every configuration with
several seeds and report the spread, never a single run:

* :func:`seed_spread` and :func:`spread_text` -- mean, minimum and maximum over seeds;
* :func:`spread_table` -- one row per configuration, one ``mean (min-max)`` cell per column;
* :func:`running_mean` and :func:`steps_to_loss` -- a smoothed loss curve and the first step at
  which it falls below a threshold (how fast a configuration learns);
* :func:`accuracy_by_position` -- the fraction of correct predictions at each position of a
  sequence, to see *where* a model fails.

Numpy only; the models come from :func:`pe_lib.train_transformer`.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_real_array, check_finite_array, check_finite_real, check_positive_int


def seed_spread(values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Mean, minimum and maximum of ``values`` (shape ``(seeds, ...)``) over the seeds, axis 0.

    :math:`\bar v = \frac1S \sum_s v_s`, :math:`\min_s v_s`, :math:`\max_s v_s` for ``S`` seeds.
    Returns three arrays of shape ``values.shape[1:]`` (0-d arrays for a 1-D input).
    """
    v = check_finite_array(values, name="values", min_ndim=1, shape_hint="(seeds, ...)")
    if v.shape[0] == 0:
        raise ValueError(f"values must hold at least one seed (axis 0), got shape {v.shape}")
    return v.mean(axis=0), v.min(axis=0), v.max(axis=0)


def spread_text(values, *, scale: float = 100.0, decimals: int = 1, unit: str | None = None) -> str:
    r"""``"mean (min–max)"`` of the 1-D seed values, each multiplied by ``scale``, rounded and followed by
    ``unit`` (default: ``"%"`` when ``scale`` is 100, else nothing).

    The default turns accuracies in [0, 1] into percent with one decimal: ``[0.991, 1.0, 0.998]``
    gives ``"99.6% (99.1%–100.0%)"``. With one seed the range is left out: ``"99.1%"``.
    """
    v = check_finite_array(values, name="values", ndim=1)
    scale = check_finite_real(scale, name="scale")
    decimals = check_positive_int(decimals, name="decimals", minimum=0)
    if unit is None:
        unit = "%" if scale == 100 else ""
    if not isinstance(unit, str):
        raise ValueError(f"unit must be a string such as '%' or '', got {unit!r}")
    mean, lo, hi = (float(x) * scale for x in seed_spread(v))
    text = f"{_fixed(mean, decimals)}{unit}"
    if v.size > 1:
        text += f" ({_fixed(lo, decimals)}{unit}–{_fixed(hi, decimals)}{unit})"
    return text


def _fixed(x: float, decimals: int) -> str:
    # fixed-point with `decimals` digits, and "0.0" rather than "-0.0" for a value that rounds to zero
    text = f"{x:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def spread_table(rows: dict, columns, *, scale: float = 100.0, decimals: int = 1, unit: str | None = None,
                 label: str = "", missing: str = "–") -> str:
    r"""A text table: one row per entry of ``rows``, one ``mean (min–max)`` cell per column.

    ``rows`` maps a row name to an array of shape ``(seeds, len(columns))``; each cell is
    :func:`spread_text` of one column (with ``scale``, ``decimals`` and ``unit``), or ``missing``
    where the whole column is ``NaN`` (a value that could not be measured, such as a learned table
    asked for a position it does not have).
    ``label`` heads the first column. Returns the table as one string, the columns right-aligned.
    """
    if not isinstance(rows, dict) or not rows:
        raise ValueError(f"rows must be a non-empty dict of name -> (seeds, columns) array, got {rows!r}")
    columns = [str(c) for c in columns]
    cells = {}
    for name, values in rows.items():
        v = as_real_array(values, name=f"rows[{name!r}]")
        if v.ndim != 2:
            raise ValueError(f"rows[{name!r}] must have shape (seeds, columns), got shape {v.shape}")
        if v.shape[1] != len(columns):
            raise ValueError(
                f"rows[{name!r}] has {v.shape[1]} columns but {len(columns)} column names were given: {columns}"
            )
        cells[str(name)] = [
            missing if np.all(np.isnan(v[:, c])) else spread_text(v[:, c], scale=scale, decimals=decimals, unit=unit)
            for c in range(v.shape[1])
        ]  # a column with some NaN but not all is refused by spread_text
    first = max(len(label), *(len(n) for n in cells))
    widths = [max(len(col), *(len(r[c]) for r in cells.values())) for c, col in enumerate(columns)]
    lines = [f"{label:<{first}}" + "".join(f"  {col:>{w}}" for col, w in zip(columns, widths, strict=True))]
    for name, row in cells.items():
        lines.append(f"{name:<{first}}" + "".join(f"  {cell:>{w}}" for cell, w in zip(row, widths, strict=True)))
    return "\n".join(lines)


def running_mean(losses, window: int) -> np.ndarray:
    r"""Mean of the last ``window`` values at every step: :math:`\bar\ell_t = \frac1w\sum_{s=t-w+1}^{t}\ell_s`.

    ``losses``: ``(..., steps)``. The first ``window - 1`` steps have no full window and are left
    out, so the result has shape ``(..., steps - window + 1)``; its entry ``t`` ends at step
    ``t + window - 1``.
    """
    ell = check_finite_array(losses, name="losses", min_ndim=1, shape_hint="(..., steps)")
    window = check_positive_int(window, name="window")
    if window > ell.shape[-1]:
        raise ValueError(f"window must be at most the number of steps {ell.shape[-1]}, got {window}")
    # each window summed on its own (a difference of cumulative sums would leave rounding errors
    # that decide ties with a threshold): (..., steps - window + 1, window) views, then their mean
    windows = np.lib.stride_tricks.sliding_window_view(ell, window, axis=-1)
    return windows.mean(axis=-1)  # (1/w) sum_{s=t-w+1}^{t} l_s


def steps_to_loss(losses, threshold: float, *, window: int = 20) -> np.ndarray:
    r"""The first step at which the running mean of the loss is below ``threshold``; ``-1`` if never.

    With :math:`\bar\ell_t` from :func:`running_mean`, the smallest step :math:`t` (counted from 1,
    the number of steps taken) with :math:`\bar\ell_t < \text{threshold}`. Averaging over
    ``window`` steps keeps one lucky batch from counting. ``losses``: ``(..., steps)``; returns an
    int array of shape ``(...)``.
    """
    threshold = check_finite_real(threshold, name="threshold")
    smooth = running_mean(losses, window)  # (..., steps - window + 1)
    below = smooth < threshold
    first = np.argmax(below, axis=-1) + window  # entry t of the running mean ends at step t + window (1-based)
    return np.where(below.any(axis=-1), first, -1)


def accuracy_by_position(predicted, targets, counts) -> np.ndarray:
    r"""Fraction of the sequences whose prediction is right, at each position.

    ``predicted``, ``targets``: ``(n_sequences, L)`` integer arrays; ``counts``: ``(L,)`` bools, the
    positions that are scored. Returns ``(L,)`` floats in [0, 1], ``NaN`` where ``counts`` is False.
    """
    p, t = np.asarray(predicted), np.asarray(targets)
    if p.ndim != 2 or p.shape != t.shape:
        raise ValueError(
            f"predicted and targets must both have shape (n_sequences, L), got {p.shape} and {t.shape}"
        )
    mask = np.asarray(counts)
    if mask.dtype != bool or mask.shape != (p.shape[1],):
        raise ValueError(f"counts must be a bool array of shape ({p.shape[1]},), got {mask.dtype} {mask.shape}")
    right = (p == t).mean(axis=0)  # (L,)
    return np.where(mask, right, np.nan)
