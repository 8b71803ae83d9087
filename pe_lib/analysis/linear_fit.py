r"""Least-squares linear maps: "is Y a linear function of X, and how far from it?"

Given rows ``x_t`` and ``y_t``, find the matrix ``M`` minimising :math:`\sum_t \lVert M x_t - y_t\rVert^2`.
Used to show that PE(pos + phi) is linear in PE(pos) (residual ~ 0), that sine alone is not
(residual clearly > 0), and as a linear probe that reads positions out of hidden states.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_real_array


def fit_linear_map(x, y, *, intercept: bool = False) -> tuple[np.ndarray, float]:
    r"""Best ``M`` with ``y_t ≈ M x_t`` (plus ``b`` if ``intercept``), and the RMS residual.

    ``x``: ``(T, p)``, ``y``: ``(T, r)`` (or ``(T,)``). Returns ``(M, rms)`` with ``M`` of shape
    ``(r, p)`` — ``(r, p + 1)`` with the intercept as last column — and
    :math:`\mathrm{rms} = \sqrt{\tfrac{1}{T r}\sum_t \lVert M x_t - y_t \rVert^2}`.
    """
    x = as_real_array(x, name="x")
    y = as_real_array(y, name="y")
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"x must be 2-D (samples, features) with at least one sample, got shape {x.shape}")
    y2 = y[:, None] if y.ndim == 1 else y
    if y2.ndim != 2 or y2.shape[0] != x.shape[0]:
        raise ValueError(f"y must have shape ({x.shape[0]},) or ({x.shape[0]}, r), got {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y2))):
        raise ValueError("x and y must be finite, got NaN or infinity")
    design = np.hstack([x, np.ones((x.shape[0], 1))]) if intercept else x
    with np.errstate(all="ignore"):  # huge values overflow when squared: checked just below
        coef, *_ = np.linalg.lstsq(design, y2, rcond=None)  # minimises ||design @ coef - y||^2
        rms = float(np.sqrt(np.mean((design @ coef - y2) ** 2)))
    if not (np.all(np.isfinite(coef)) and np.isfinite(rms)):
        raise ValueError("the least-squares fit overflows float64 (values too large); rescale x and y")
    return coef.T, rms


def r_squared(x, y, *, intercept: bool = True) -> float:
    r"""Coefficient of determination of the best linear fit of ``y`` from ``x``:
    :math:`R^2 = 1 - \sum (\hat y - y)^2 / \sum (y - \bar y)^2` (1 = perfectly linear, 0 = no better than the mean).
    """
    m, _ = fit_linear_map(x, y, intercept=intercept)
    x = as_real_array(x, name="x")
    y2 = as_real_array(y, name="y").reshape(x.shape[0], -1)
    design = np.hstack([x, np.ones((x.shape[0], 1))]) if intercept else x
    resid = np.sum((design @ m.T - y2) ** 2)
    total = np.sum((y2 - y2.mean(axis=0)) ** 2)
    if total == 0:
        raise ValueError("y is constant, so R^2 is undefined; probe a quantity that varies")
    return float(1.0 - resid / total)
