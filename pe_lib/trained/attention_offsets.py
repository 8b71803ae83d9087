r"""The weight a trained head puts at one offset, query by query: does it drift along the sequence?

A head that "attends by relative position" puts its weight at a fixed offset
:math:`\Delta = i - j` (query position minus key position) wherever the query stands.
:func:`weight_at_offset` reads, from attention maps :math:`a_{ij}` (rows: queries ``i``, columns:
keys ``j``, each row summing to 1), the weight :math:`a_{i,\,i-\Delta}` of every query as a function
of its position ``i``: constant for a purely relative head, drifting if the head depends on absolute
positions -- for example beyond the length the model was trained on.

It accepts any leading axes (layers, batch, heads), so the maps of a whole model are read at once;
:func:`pe_lib.mass_on_offset` is the single-map case, and :func:`pe_lib.attention_by_offset` (in
:mod:`pe_lib.model_analysis`) averages each offset over the queries instead. Numpy only.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_finite_array, check_positive_int


def _check_maps(weights) -> np.ndarray:
    w = check_finite_array(weights, name="weights", min_ndim=2, shape_hint="(..., n, n)")
    if w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must be square attention maps of shape (..., n, n), got shape {w.shape}")
    return w


def weight_at_offset(weights, offset: int) -> np.ndarray:
    r"""The weight every query ``i >= offset`` puts on key ``i - offset``: :math:`a_{i,\,i-\Delta}`.

    ``weights``: ``(..., n, n)`` attention maps; ``offset``: an integer :math:`0 \le \Delta < n`.
    Returns shape ``(..., n - offset)``; entry ``t`` belongs to query ``i = offset + t``.
    """
    w = _check_maps(weights)
    n = w.shape[-1]
    offset = check_positive_int(offset, name="offset", minimum=0)
    if offset >= n:
        raise ValueError(f"offset must be smaller than the number of positions {n}, got {offset}")
    i = np.arange(offset, n)
    return w[..., i, i - offset]  # a_{i, i - Delta}


def score_by_offset(scores) -> np.ndarray:
    r"""The mean score a query gives the key :math:`\Delta` places back, for every offset :math:`\Delta`:
    :math:`\bar s_\Delta = \frac{1}{n - \Delta}\sum_{i=\Delta}^{n-1} s_{i,\,i-\Delta}`.

    ``scores``: ``(..., n, n)`` attention scores before the softmax (rows: queries, columns: keys), as
    :func:`pe_lib.trained_scores` returns them; only keys at or before the query are read, so a causal
    mask's :math:`-\infty` above the diagonal does no harm. Returns ``(..., n)``, entry :math:`\Delta`.
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim < 2 or s.shape[-1] != s.shape[-2] or s.shape[-1] == 0:
        raise ValueError(f"scores must be square maps of shape (..., n, n), got shape {s.shape}")
    n = s.shape[-1]
    i, j = np.tril_indices(n)  # every (query, key) with key j <= i
    below = s[..., i, j]  # (..., n(n+1)/2)
    if not np.all(np.isfinite(below)):
        raise ValueError("scores must be finite at and below the diagonal (keys at or before the query)")
    delta = i - j
    sums = np.zeros(s.shape[:-2] + (n,))
    np.add.at(np.moveaxis(sums, -1, 0), delta, np.moveaxis(below, -1, 0))  # sum over queries, per offset
    return sums / (n - np.arange(n))  # n - Delta queries have a key Delta back
