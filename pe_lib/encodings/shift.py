r"""The offset map: PE(pos + phi) is a fixed linear function of PE(pos).

For each sin/cos pair ``k`` (interleaved layout), with :math:`\theta_k = \phi\,\omega_k`:

.. math::

    \begin{pmatrix} \sin\omega_k(p+\phi) \\ \cos\omega_k(p+\phi) \end{pmatrix}
    = \underbrace{\begin{pmatrix} \cos\theta_k & \sin\theta_k \\
                                 -\sin\theta_k & \cos\theta_k \end{pmatrix}}_{M_k(\phi)}
      \begin{pmatrix} \sin\omega_k p \\ \cos\omega_k p \end{pmatrix}

and ``M(phi)`` is the block-diagonal matrix of the ``M_k``. It does not depend on ``p``.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_real_array, check_d_model, check_finite_real, check_table_size
from .frequencies import frequencies


def shift_matrix(offset: float, d_model: int, *, base: float = 10_000.0) -> np.ndarray:
    r"""Block-diagonal matrix ``M`` with ``M @ PE(p) == PE(p + offset)`` for every ``p``.

    Block ``k`` (rows and columns ``2k, 2k+1``) is
    :math:`\begin{pmatrix}\cos\omega_k\phi & \sin\omega_k\phi\\ -\sin\omega_k\phi & \cos\omega_k\phi\end{pmatrix}`,
    with the paper's frequencies and the interleaved layout. Returns shape ``(d_model, d_model)``.
    """
    phi = check_finite_real(offset, name="offset")
    d_model = check_d_model(d_model)
    check_table_size(d_model, d_model, what="shift matrix")
    theta = phi * frequencies(d_model, base=base)  # theta_k = phi * omega_k
    c, s = np.cos(theta), np.sin(theta)
    m = np.zeros((d_model, d_model))
    k = np.arange(d_model // 2)
    m[2 * k, 2 * k] = c
    m[2 * k, 2 * k + 1] = s
    m[2 * k + 1, 2 * k] = -s
    m[2 * k + 1, 2 * k + 1] = c
    return m


def apply_shift(vectors, offset: float, *, base: float = 10_000.0) -> np.ndarray:
    """``shift_matrix(offset, d) @ v`` for every row ``v`` of ``vectors``, without building the matrix.

    ``vectors`` has shape ``(..., d)`` with ``d`` even; each (sin, cos) pair is rotated by
    ``offset * omega_k`` in O(d) work instead of O(d^2). Returns an array of the same shape.
    """
    x = as_real_array(vectors, name="vectors")
    if x.ndim == 0:
        raise ValueError("vectors must have shape (..., d_model), got a scalar")
    d_model = check_d_model(x.shape[-1], name="the last axis of vectors")
    if not np.all(np.isfinite(x)):
        raise ValueError("vectors must be finite, got NaN or infinity among them")
    phi = check_finite_real(offset, name="offset")
    theta = phi * frequencies(d_model, base=base)
    # A (sin a, cos a) pair lies in memory like the complex number z = sin a + i cos a, and
    # z * exp(-i t) = [cos t sin a + sin t cos a] + i [cos t cos a - sin t sin a] = sin(a + t) + i cos(a + t):
    # the rotation M_k(phi) is one complex multiplication per pair, in a single pass.
    rotation = np.cos(theta) - 1j * np.sin(theta)  # exp(-i theta_k)
    z = np.ascontiguousarray(x).view(np.complex128)  # shape (..., d/2)
    out = np.empty(x.shape)
    np.multiply(z, rotation, out=out.view(np.complex128))
    return out
