r"""Four looks at any position table :math:`P \in \mathbb R^{n \times d}` (row :math:`p`: the vector of
position :math:`p`), used on a real model's table in chapters 13 and 20.

* :func:`cosine_profile`: the mean cosine of rows :math:`\Delta` apart,
  :math:`c(\Delta) = \frac{1}{n-\Delta}\sum_p \cos(P_p, P_{p+\Delta})` (the diagonals of the similarity matrix);
* :func:`dot_by_offset`: the same for the dot product,
  :math:`g(\Delta) = \frac{1}{n-\Delta}\sum_p P_p\cdot P_{p+\Delta}`
  (for the sinusoidal table it is :func:`pe_lib.dot_profile` exactly, whatever :math:`p`);
* :func:`column_frequencies`: the strongest frequency of every column :math:`P_{:,k}` along the positions
  (argmax of :math:`|\mathrm{DFT}|` after removing the column's mean), in cycles per position;
* :func:`principal_components`: the rows, centred, projected on their top principal directions (SVD of
  :math:`P - \bar P`), with the share of the variance each direction holds.

Numpy only; shapes are given with each function.
"""

from __future__ import annotations

import numpy as np


def check_table(table) -> np.ndarray:
    """``table`` as a float64 ``(n, d)`` array with ``n >= 2`` finite rows, else ``ValueError``."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 2 or table.shape[1] < 1:
        raise ValueError(f"a position table is a 2-D array (positions, width) with >= 2 rows, got shape {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError("the position table has non-finite entries")
    return table


def dot_by_offset(table) -> np.ndarray:
    r""":math:`g(\Delta) = \mathrm{mean}_p\, P_p \cdot P_{p+\Delta}` for :math:`\Delta = 0 \dots n-1`,
    shape ``(n,)``."""
    table = check_table(table)
    gram = table @ table.T  # P_p . P_q
    return np.array([np.diagonal(gram, delta).mean() for delta in range(table.shape[0])])


def cosine_profile(table) -> np.ndarray:
    r""":math:`c(\Delta) = \mathrm{mean}_p \cos(P_p, P_{p+\Delta})` for :math:`\Delta = 0 \dots n-1`, shape ``(n,)``;
    ``ValueError`` if a row is zero (no direction)."""
    table = check_table(table)
    norms = np.linalg.norm(table, axis=1)
    if np.any(norms == 0):
        raise ValueError("a row of the table is zero: its cosine with other rows is undefined")
    return dot_by_offset(table / norms[:, None])


def column_frequencies(table) -> np.ndarray:
    r"""The strongest frequency :math:`f_k` (cycles per position, in :math:`[0, 1/2]`) of every column, shape ``(d,)``:
    :math:`f_k = \arg\max_{f > 0} |\sum_p (P_{pk} - \bar P_k) e^{-2\pi i f p}|` over :math:`f = 1/n, 2/n, \dots`."""
    table = check_table(table)
    spectrum = np.abs(np.fft.rfft(table - table.mean(axis=0), axis=0))[1:]  # |DFT| at f = 1/n, 2/n, ...
    return (1 + spectrum.argmax(axis=0)) / table.shape[0]


def principal_components(table, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    r"""``(coordinates, shares)``: the centred rows :math:`P - \bar P` on their top ``k`` principal directions,
    ``(n, k)``, and the share of the total variance of each of the ``min(n, d)`` directions, ``(min(n, d),)``
    (from the singular values :math:`s`: :math:`s_j^2 / \sum s^2`). Signs follow numpy's SVD."""
    table = check_table(table)
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= min(table.shape):
        raise ValueError(f"k must be an integer between 1 and {min(table.shape)}, got {k!r}")
    centred = table - table.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    return u[:, :k] * s[:k], s**2 / np.sum(s**2)
