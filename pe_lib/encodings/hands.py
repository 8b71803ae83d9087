r"""The clock's maths: the encoding's ``d_model / 2`` hands and the direction in which they turn.

Pair ``k`` of PE(pos) is the point :math:`h_k(pos) = (\sin pos\,\omega_k,\ \cos pos\,\omega_k)` on the
unit circle. Drawn with the sine as the horizontal coordinate :math:`u` and the cosine as the
vertical one :math:`v`, the hand starts at 12 o'clock and, since the cross product of the points at
positions :math:`p` and :math:`p + s` is

.. math::

    u_p\,v_{p+s} - v_p\,u_{p+s} = \sin(p\,\omega_k)\cos((p+s)\omega_k) - \cos(p\,\omega_k)\sin((p+s)\omega_k)
                                = -\sin(s\,\omega_k),

it turns clockwise at :math:`\omega_k` radians per token whenever :math:`0 < s\,\omega_k \bmod 2\pi < \pi`.
Numpy only; :mod:`pe_lib.drawing.clock` draws these hands (chapter 5).
"""

from __future__ import annotations

import numpy as np

from .._validate import check_d_model, check_finite_real
from .sinusoidal import sinusoidal

CLOCKWISE, COUNTERCLOCKWISE, STILL = "clockwise", "counterclockwise", "still"


def hand_positions(positions, d_model: int, *, base: float = 10_000.0) -> np.ndarray:
    r"""The clock hands of each position: shape ``(n, d_model // 2, 2)``.

    ``[p, k]`` is the point :math:`(\sin pos_p\,\omega_k,\ \cos pos_p\,\omega_k)` (horizontal: sin, vertical: cos),
    i.e. the columns ``2k, 2k+1`` of the paper's (interleaved) table.
    """
    table = sinusoidal(positions, d_model, base=base)  # interleaved: [sin w0 p, cos w0 p, sin w1 p, ...]
    return table.reshape(table.shape[0], -1, 2)


def cross_z(points) -> np.ndarray:
    r"""z-component of the cross product of successive 2-D points: :math:`x_t y_{t+1} - y_t x_{t+1}`.

    ``points`` has shape ``(n, ..., 2)`` (time on the first axis). Returns shape ``(n - 1, ...)``:
    negative where the point turns clockwise about the origin, positive where counterclockwise.
    """
    p = np.asarray(points, dtype=np.float64)
    if p.ndim < 2 or p.shape[-1] != 2 or p.shape[0] < 2:
        raise ValueError(f"points must have shape (n >= 2, ..., 2), got {p.shape}")
    x, y = p[..., 0], p[..., 1]
    return x[:-1] * y[1:] - y[:-1] * x[1:]  # x_t y_{t+1} - y_t x_{t+1}


def rotation_sense(points, *, atol: float = 1e-12) -> np.ndarray:
    """``"clockwise"``, ``"counterclockwise"`` or ``"still"`` for each step, from :func:`cross_z`.

    A step whose ``|cross_z| <= atol`` (no turn, or exactly half a turn) is ``"still"``.
    Returns a string array of shape ``(n - 1, ...)``.
    """
    z = cross_z(points)
    atol = check_finite_real(atol, name="atol")
    return np.where(z < -atol, CLOCKWISE, np.where(z > atol, COUNTERCLOCKWISE, STILL))


def embedded_positions(embedding, positions, *, base: float = 10_000.0) -> np.ndarray:
    r"""The inputs of the first layer for one word: :math:`e + \mathrm{PE}(pos)` for each position.

    ``embedding``: the word's vector, shape ``(d,)`` with ``d`` even. Returns shape ``(n, d)``.
    Every pair ``(2k, 2k+1)`` of the result lies on the unit circle around the same pair of ``e``.
    """
    x = np.asarray(embedding, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"embedding must be one vector of shape (d,), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("embedding must be finite, got NaN or infinity among its values")
    d = check_d_model(x.size, name="the length of embedding")
    return x + sinusoidal(positions, d, base=base)  # e + PE(pos)
