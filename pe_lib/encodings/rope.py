r"""Rotary position embedding (RoPE; Su et al. 2021): rotate queries and keys instead of adding PE.

The ``d`` entries of a query or key (``d`` is the head width :math:`d_k`) are grouped into ``d/2`` pairs.
Pair ``k`` at position ``m`` is turned by the angle :math:`m\,\omega_k`,
:math:`\omega_k = \mathrm{base}^{-2k/d_k}`, ``k = 0 .. d/2 - 1`` (RoFormer writes :math:`\theta_i`):

.. math::

    \begin{pmatrix} y_a \\ y_b \end{pmatrix}
    = \underbrace{\begin{pmatrix} \cos m\omega_k & -\sin m\omega_k \\
                                  \sin m\omega_k & \cos m\omega_k \end{pmatrix}}_{R(m\omega_k)}
      \begin{pmatrix} x_a \\ x_b \end{pmatrix}

Because :math:`R(a)^\top R(b) = R(b-a)`, the score of a query rotated to position ``m`` and a key
rotated to position ``n`` is :math:`q^\top R_{n-m}\, k`: it depends on ``n - m`` only.

Two pairings are used in practice (``layout``):

* ``"interleaved"``: pair ``k`` is dimensions ``(2k, 2k+1)`` -- RoFormer, Meta's LLaMA code
  (complex multiplication), flash-attention with ``interleaved=True``;
* ``"split"``: pair ``k`` is dimensions ``(k, k + d/2)`` -- Hugging Face's ``rotate_half``,
  GPT-NeoX.

They are the same rotation up to the fixed permutation of dimensions
:func:`pe_lib.layout_permutation` (``[0, 2, 4, ..., 1, 3, 5, ...]``): with ``perm`` that permutation,
``rope(x[..., perm], pos, layout="split") == rope(x, pos)[..., perm]``. Hugging Face's LLaMA conversion
script applies it to the rows of each head of W_Q and W_K.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_choice, check_d_model, check_finite_array, check_positions
from .frequencies import frequencies

ROPE_LAYOUTS = ("interleaved", "split")


def _check_vectors(x, *, name: str, min_ndim: int) -> np.ndarray:
    shape = "(..., n, d)" if min_ndim == 2 else "(..., d)"
    return check_finite_array(x, name=name, min_ndim=min_ndim, shape_hint=shape)


def rope(x, positions, *, base: float = 10_000.0, layout: str = "interleaved") -> np.ndarray:
    r"""Rotate every pair of the last axis of ``x`` by ``pos * omega_k`` (rotary position embedding).

    ``x``: shape ``(..., n, d)`` with ``d`` even -- ``n`` vectors (queries or keys), one per position.
    ``positions``: an int ``n`` (positions ``0 .. n-1``) or a 1-D array of ``n`` real positions.
    ``layout``: ``"interleaved"`` pairs dimensions ``(2k, 2k+1)``, ``"split"`` pairs ``(k, k + d/2)``.

    For each pair :math:`(x_a, x_b)` with angle :math:`\theta = pos\,\omega_k`:
    :math:`y_a = x_a\cos\theta - x_b\sin\theta`, :math:`y_b = x_a\sin\theta + x_b\cos\theta`.
    Computed in float64. Returns an array of the same shape as ``x``.
    """
    x = _check_vectors(x, name="x", min_ndim=2)
    d = check_d_model(x.shape[-1], name="the last axis of x (the head dimension d)")
    pos = check_positions(positions)
    if pos.shape[0] != x.shape[-2]:
        raise ValueError(
            f"positions must give one position per row of x: x has {x.shape[-2]} rows (axis -2), "
            f"got {pos.shape[0]} positions"
        )
    layout = check_choice(layout, ROPE_LAYOUTS, name="layout")
    theta = np.multiply.outer(pos, frequencies(d, base=base))  # theta[m, k] = pos_m * omega_k, shape (n, d/2)
    c, s = np.cos(theta), np.sin(theta)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]  # pair k = dimensions (2k, 2k+1)
    else:
        a, b = x[..., : d // 2], x[..., d // 2 :]  # pair k = dimensions (k, k + d/2)
    y_a = a * c - b * s  # x_a cos(theta) - x_b sin(theta)
    y_b = a * s + b * c  # x_a sin(theta) + x_b cos(theta)
    out = np.empty_like(x)
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = y_a, y_b
    else:
        out[..., : d // 2], out[..., d // 2 :] = y_a, y_b
    return out


def rope_decay_bound(offsets, d: int, *, base: float = 10_000.0) -> np.ndarray:
    r"""RoFormer's long-range quantity :math:`\frac{1}{d_k/2}\sum_{k=1}^{d_k/2} |Z_k(\Delta)|` per offset.

    :math:`Z_k(\Delta) = \sum_{k'<k} e^{\mathrm{i}\,\Delta\,\omega_{k'}}` (partial sums over pairs; ``d`` is
    the head width :math:`d_k`; RoFormer writes :math:`S_j`).
    With :math:`g_k = \mathbf q^{(k)}\,\overline{\mathbf k^{(k)}}`, here
    :math:`(q_{2k} + \mathrm{i} q_{2k+1})\overline{(k_{2k} + \mathrm{i} k_{2k+1})}` (RoFormer's :math:`h_i`), and
    :math:`g_{d_k/2} = 0`, summation by parts gives, for the RoPE score of a query at :math:`m` and a key at
    :math:`n`, :math:`|\langle R_m \mathbf q, R_n \mathbf k\rangle|
    \le \max_k |g_{k+1} - g_k| \cdot \sum_{k=1}^{d_k/2} |Z_k(m - n)|`,
    so this mean, multiplied by ``d/2`` and that max, bounds the score.

    ``offsets``: an int ``n`` (offsets ``0 .. n-1``) or a 1-D array. Returns shape ``(len(offsets),)``.
    """
    delta = check_positions(offsets, name="offsets")
    omega = frequencies(check_d_model(d, name="d"), base=base)
    partial = np.cumsum(np.exp(1j * np.multiply.outer(delta, omega)), axis=1)  # Z_k for k = 1 .. d/2
    return np.abs(partial).mean(axis=1)


def rope_score_bound(q, k, offsets, *, base: float = 10_000.0, layout: str = "interleaved") -> np.ndarray:
    r"""RoFormer's bound on the score :math:`|\langle R_m \mathbf q, R_n \mathbf k\rangle|` per offset.

    With :math:`g_k = \mathbf q^{(k)}\,\overline{\mathbf k^{(k)}}` (pair :math:`k` of the query ``q`` and of the
    key ``k`` as complex numbers, paired as ``layout`` says; RoFormer's :math:`h_i`), :math:`g_{d_k/2} = 0`
    and the partial sums :math:`Z_k` of :func:`rope_decay_bound`, summation by parts gives
    (Su et al. 2021, long-term decay)

    .. math::

        |\langle R_m \mathbf q, R_n \mathbf k\rangle|
        \le \max_k |g_{k+1} - g_k| \sum_{k=1}^{d_k/2} |Z_k(m - n)|,

    the right-hand side being returned: ``max_k |g_{k+1} - g_k| * (d/2) * rope_decay_bound(offsets, d)``.
    ``q``, ``k``: shape ``(..., d)``, broadcast against each other. ``offsets``: an int ``n`` (offsets
    ``0 .. n-1``) or a 1-D array of ``m - n``. Returns shape ``(..., len(offsets))``.
    """
    q = _check_vectors(q, name="q", min_ndim=1)
    k = _check_vectors(k, name="k", min_ndim=1)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last axis (the head dimension d), got {q.shape[-1]} and {k.shape[-1]}"
        )
    d = check_d_model(q.shape[-1], name="the last axis of q and k (the head dimension d)")
    layout = check_choice(layout, ROPE_LAYOUTS, name="layout")
    half = d // 2
    if layout == "interleaved":
        q_c, k_c = q[..., 0::2] + 1j * q[..., 1::2], k[..., 0::2] + 1j * k[..., 1::2]  # pair k = (2k, 2k+1)
    else:
        q_c, k_c = q[..., :half] + 1j * q[..., half:], k[..., :half] + 1j * k[..., half:]  # pair k = (k, k + d/2)
    h = q_c * np.conj(k_c)  # g_k = q^(k) conj(k^(k)), shape (..., d/2)
    step = np.abs(np.diff(h, append=np.zeros_like(h[..., :1]), axis=-1)).max(axis=-1)  # max_k |g_{k+1} - g_k|
    return step[..., None] * half * rope_decay_bound(offsets, d, base=base)  # shape (..., len(offsets))
