r"""Attention as a function of the offset between query and key, read from attention maps.

A head that "attends by relative position" puts its weight at a fixed offset
:math:`\Delta = i - j` (query position minus key position) wherever the query stands. Two views of
an attention map :math:`a_{ij}` (rows: queries ``i``, columns: keys ``j``, each row summing to 1)
test that:

* :func:`weight_at_offset` -- the weight each query puts on the key ``offset`` places back,
  :math:`a_{i,\,i-\Delta}`, as a function of the query position ``i``: constant for a purely
  relative head, drifting if the head depends on absolute positions;
* :func:`attention_by_offset` -- the mean weight at each offset over the queries that have a key
  there, :math:`\bar a(\Delta) = \frac{1}{|I_\Delta|}\sum_{i \in I_\Delta} a_{i,\,i-\Delta}`.

Both accept any leading axes (batch, heads, layers), so the maps of a whole model are summarised at
once. Numpy only; :func:`pe_lib.relative.mass_on_offset` is the single-map special case of the first.
"""

from __future__ import annotations

import numpy as np

from ._validate import check_finite_array, check_positive_int


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


def attention_by_offset(weights) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean attention weight at each offset :math:`\Delta = i - j`, over the queries that have such a key.

    ``weights``: ``(..., n, n)``. Returns ``(delta, profile)``: ``delta`` the offsets
    :math:`-(n-1), \dots, n-1` (positive: the key is *before* the query), shape ``(2n - 1,)``, and
    ``profile`` of shape ``(..., 2n - 1)`` with
    :math:`\bar a(\Delta) = \frac{1}{n - |\Delta|}\sum_{i} a_{i,\,i-\Delta}`. Under a causal mask the
    entries with :math:`\Delta < 0` are 0.
    """
    w = _check_maps(weights)
    n = w.shape[-1]
    delta = np.arange(-(n - 1), n)
    # the diagonal k of a matrix holds a_{i, i + k}: key - query = k, so Delta = -k
    profile = np.stack([np.diagonal(w, offset=-d, axis1=-2, axis2=-1).mean(axis=-1) for d in delta], axis=-1)
    return delta, profile
