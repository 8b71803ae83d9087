"""Printing small magnitudes so that a chapter's output is the same on every machine.

An error that is rounding noise (say 2.2e-16) has last digits that depend on the CPU, the BLAS and
the order of summation, so printing it would make a stored notebook differ between machines; printing
``error < 1e-12`` instead hides the magnitude behind a boolean. :func:`magnitude_text` does neither: it
prints the value when it is above a floor and the bound when it is below.

:func:`seed_table` prints results over several seeds as a table narrow enough for a phone and for a
desktop page without wrapping: the mean on one line, the min–max under it.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import as_real_array, check_finite_real, check_positive_int


def magnitude_text(value, *, floor: float = 1e-12, digits: int = 1) -> str:
    """``value`` in scientific notation with ``digits`` decimals, or ``"< floor"`` if ``|value| < floor``.

    ``floor`` is a positive bound below which values count as rounding noise (the default ``1e-12``
    suits float64 results of size about 1). ``nan`` and infinities are printed as such. Returns a
    string, e.g. ``magnitude_text(3.1e-5) == "3.1e-05"`` and ``magnitude_text(2e-16) == "< 1e-12"``.
    """
    floor = check_finite_real(floor, name="floor")
    if floor <= 0:
        raise ValueError(f"floor must be positive, got {floor!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits must be an integer >= 0, got {digits!r}")
    value = float(value)
    if math.isfinite(value) and abs(value) < floor:
        return f"< {floor:g}"
    return f"{value:.{digits}e}"


def seed_table(rows: dict, columns, *, label: str = "", width: int = 20, decimals: int = 3, missing: str = "–") -> str:
    r"""A text table of results over seeds: for each entry of ``rows`` (a name and an array of shape
    ``(seeds, len(columns))``) one line with the mean over the seeds, :math:`\bar v = \frac1S\sum_s v_s`, and
    under it one with the range :math:`\min_s v_s`–:math:`\max_s v_s` (two short lines where
    :func:`pe_lib.spread_table` writes one long one), each value with ``decimals`` decimals; ``missing`` where a
    column is ``NaN`` for every seed. ``label`` heads the column of names, ``width`` characters wide; the value
    columns are each 14 wide, or one wider than their name. Returns the table as one string."""
    if not isinstance(rows, dict) or not rows:
        raise ValueError(f"rows must be a non-empty dict of name -> (seeds, columns) array, got {rows!r}")
    columns = [str(c) for c in columns]
    width = check_positive_int(width, name="width")
    decimals = check_positive_int(decimals, name="decimals", minimum=0)
    cols = [max(14, len(c) + 1) for c in columns]
    lines = [f"{label:<{width}}" + "".join(f"{c:>{w}}" for c, w in zip(columns, cols, strict=True))]
    for name, values in rows.items():
        v = as_real_array(values, name=f"rows[{name!r}]")
        if v.ndim != 2 or v.shape[1] != len(columns) or v.shape[0] == 0:
            raise ValueError(f"rows[{name!r}] must have shape (seeds, {len(columns)}) with at least one seed, "
                             f"got shape {v.shape}")
        mean, spread = [], []
        for k, w in enumerate(cols):
            column = v[:, k]
            if np.all(np.isnan(column)):
                mean.append(f"{missing:>{w}}")
                spread.append(" " * w)
                continue
            if np.any(np.isnan(column)) or not np.all(np.isfinite(column)):
                raise ValueError(f"rows[{name!r}], column {columns[k]!r}: every seed needs a finite value (or all "
                                 f"NaN for a missing column), got {column.tolist()}")
            mean.append(f"{column.mean():{w}.{decimals}f}")
            spread.append(f"{column.min():.{decimals}f}–{column.max():.{decimals}f}".rjust(w))
        lines.append(f"{name:<{width}}" + "".join(mean))
        lines.append((" " * width + "".join(spread)).rstrip())
    return "\n".join(lines)
