r"""Rotary position embedding (RoPE; Su et al. 2021): rotate queries and keys instead of adding PE.

The ``d`` entries of a query or key are grouped into ``d/2`` pairs. Pair ``i`` at position ``m`` is
turned by the angle :math:`m\,\omega_i`, :math:`\omega_i = \mathrm{base}^{-2i/d}`,
``i = 0 .. d/2 - 1``:

.. math::

    \begin{pmatrix} y_a \\ y_b \end{pmatrix}
    = \underbrace{\begin{pmatrix} \cos m\omega_i & -\sin m\omega_i \\
                                  \sin m\omega_i & \cos m\omega_i \end{pmatrix}}_{R(m\omega_i)}
      \begin{pmatrix} x_a \\ x_b \end{pmatrix}

Because :math:`R(a)^\top R(b) = R(b-a)`, the score of a query rotated to position ``m`` and a key
rotated to position ``n`` is :math:`q^\top R_{n-m}\, k`: it depends on ``n - m`` only.

Two pairings are used in practice (``layout``):

* ``"interleaved"``: pair ``i`` is dimensions ``(2i, 2i+1)`` -- RoFormer, Meta's LLaMA code
  (complex multiplication), flash-attention with ``interleaved=True``;
* ``"split"``: pair ``i`` is dimensions ``(i, i + d/2)`` -- Hugging Face's ``rotate_half``,
  GPT-NeoX.

They are the same rotation up to the fixed permutation of dimensions
:func:`pe_lib.layout_permutation` (``[0, 2, 4, ..., 1, 3, 5, ...]``): with ``p`` that permutation,
``rope(x[..., p], pos, layout="split") == rope(x, pos)[..., p]``. Hugging Face's LLaMA conversion
script applies it to the rows of each head of W_Q and W_K.
"""

from __future__ import annotations

import numpy as np

from ._validate import check_choice, check_d_model, check_finite_array, check_positions
from .frequencies import frequencies

ROPE_LAYOUTS = ("interleaved", "split")


def _check_vectors(x, *, name: str, min_ndim: int) -> np.ndarray:
    shape = "(..., n, d)" if min_ndim == 2 else "(..., d)"
    return check_finite_array(x, name=name, min_ndim=min_ndim, shape_hint=shape)


def rope(x, positions, *, base: float = 10_000.0, layout: str = "interleaved") -> np.ndarray:
    r"""Rotate every pair of the last axis of ``x`` by ``pos * omega_i`` (rotary position embedding).

    ``x``: shape ``(..., n, d)`` with ``d`` even -- ``n`` vectors (queries or keys), one per position.
    ``positions``: an int ``n`` (positions ``0 .. n-1``) or a 1-D array of ``n`` real positions.
    ``layout``: ``"interleaved"`` pairs dimensions ``(2i, 2i+1)``, ``"split"`` pairs ``(i, i + d/2)``.

    For each pair :math:`(x_a, x_b)` with angle :math:`\theta = pos\,\omega_i`:
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
    theta = np.multiply.outer(pos, frequencies(d, base=base))  # theta[m, i] = pos_m * omega_i, shape (n, d/2)
    c, s = np.cos(theta), np.sin(theta)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]  # pair i = dimensions (2i, 2i+1)
    else:
        a, b = x[..., : d // 2], x[..., d // 2 :]  # pair i = dimensions (i, i + d/2)
    y_a = a * c - b * s  # x_a cos(theta) - x_b sin(theta)
    y_b = a * s + b * c  # x_a sin(theta) + x_b cos(theta)
    out = np.empty_like(x)
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = y_a, y_b
    else:
        out[..., : d // 2], out[..., d // 2 :] = y_a, y_b
    return out


def rope_decay_bound(offsets, d: int, *, base: float = 10_000.0) -> np.ndarray:
    r"""RoFormer's long-range quantity :math:`\frac{1}{d/2}\sum_{j=1}^{d/2} |S_j(\Delta)|` per offset.

    :math:`S_j(\Delta) = \sum_{i=0}^{j-1} e^{\mathrm{i}\,\Delta\,\omega_i}` (partial sums over pairs).
    With :math:`h_i = (q_{2i} + \mathrm{i} q_{2i+1})\overline{(k_{2i} + \mathrm{i} k_{2i+1})}` and
    :math:`h_{d/2} = 0`, summation by parts gives, for the RoPE score at relative position
    :math:`\Delta = m - n`,
    :math:`|\langle R_m q, R_n k\rangle| \le \max_i |h_{i+1} - h_i| \cdot \sum_{j=1}^{d/2} |S_j(\Delta)|`,
    so this mean, multiplied by ``d/2`` and that max, bounds the score.

    ``offsets``: an int ``n`` (offsets ``0 .. n-1``) or a 1-D array. Returns shape ``(len(offsets),)``.
    """
    delta = check_positions(offsets, name="offsets")
    omega = frequencies(check_d_model(d, name="d"), base=base)
    partial = np.cumsum(np.exp(1j * np.multiply.outer(delta, omega)), axis=1)  # S_j for j = 1 .. d/2
    return np.abs(partial).mean(axis=1)


def rope_score_bound(q, k, offsets, *, base: float = 10_000.0, layout: str = "interleaved") -> np.ndarray:
    r"""RoFormer's bound on :math:`|\langle R_m q, R_n k\rangle|` for given ``q`` and ``k``, per offset.

    With :math:`h_i = \tilde q_i\,\overline{\tilde k_i}` (pair ``i`` of ``q`` and ``k`` as complex numbers,
    paired as ``layout`` says) and :math:`h_{d/2} = 0`, summation by parts gives (Su et al. 2021, long-term decay)

    .. math:: |\langle R_m q, R_n k\rangle| \le \max_i |h_{i+1} - h_i| \sum_{j=1}^{d/2} |S_j(m - n)|,

    the right-hand side being returned: ``max_i |h_{i+1} - h_i| * (d/2) * rope_decay_bound(offsets, d)``.
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
        q_c, k_c = q[..., 0::2] + 1j * q[..., 1::2], k[..., 0::2] + 1j * k[..., 1::2]  # pair i = (2i, 2i+1)
    else:
        q_c, k_c = q[..., :half] + 1j * q[..., half:], k[..., :half] + 1j * k[..., half:]  # pair i = (i, i + d/2)
    h = q_c * np.conj(k_c)  # h_i = q_i conj(k_i), shape (..., d/2)
    step = np.abs(np.diff(h, append=np.zeros_like(h[..., :1]), axis=-1)).max(axis=-1)  # max_i |h_{i+1} - h_i|
    return step[..., None] * half * rope_decay_bound(offsets, d, base=base)  # shape (..., len(offsets))
