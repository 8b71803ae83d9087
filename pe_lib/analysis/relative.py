r"""Attending by relative position with fixed projections and the encodings alone.

The dot product of two encodings depends only on their offset,
:math:`f(\Delta) = \mathrm{PE}(p)\cdot\mathrm{PE}(p+\Delta) = \sum_k \cos(\omega_k\Delta)`
(:func:`pe_lib.dot_profile`), and it is largest at :math:`\Delta = 0`. With the offset map
:math:`M(\phi)` (:func:`pe_lib.shift_matrix`) a query can be moved back by ``offset`` positions before
it meets the keys:

.. math::

    q_i = s\,M(-k)\,\mathrm{PE}(i) = s\,\mathrm{PE}(i-k), \qquad k_j = \mathrm{PE}(j), \qquad
    q_i\cdot k_j = s\,f\big(j - (i-k)\big),

which peaks at key :math:`j = i - k`: "attend to the token ``k`` places back". In the row-vector
convention of :func:`pe_lib.self_attention` (:math:`Q = X W_Q`) this is
:math:`W_Q = s\,M(-k)^\top = s\,M(k)` and :math:`W_K = I`.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_d_model, check_finite_real, check_positive_int
from ..encodings.shift import shift_matrix
from ..encodings.sinusoidal import sinusoidal
from ..numpy_model.attention import attention_weights
from .similarity import dot_profile

# offsets per chunk when scanning f(Delta): chunk x d_model/2 cosines stay a few MB
_CHUNK = 4096


def _profile_chunks(d_model: int, stop: int, base: float):
    """Yield ``(delta, f(delta))`` for integer offsets ``0 .. stop`` in consecutive chunks."""
    for start in range(0, stop + 1, _CHUNK):
        delta = np.arange(start, min(start + _CHUNK, stop + 1), dtype=np.float64)
        yield delta, dot_profile(delta, d_model, base=base)


def first_rise(d_model: int, *, base: float = 10_000.0, max_offset: int = 100_000) -> int | None:
    r"""Smallest integer :math:`\Delta \ge 1` with :math:`f(\Delta) > f(\Delta - 1)`, or ``None``.

    Where the dot-product profile stops decreasing for the first time (it is not monotone).
    Offsets up to ``max_offset`` are scanned, in chunks.
    """
    d_model = check_d_model(d_model)
    max_offset = check_positive_int(max_offset, name="max_offset")
    previous = None  # f at the last offset of the previous chunk
    for delta, f in _profile_chunks(d_model, max_offset, base):
        values = f if previous is None else np.concatenate([[previous], f])
        start = delta[0] if previous is None else delta[0] - 1
        rises = np.flatnonzero(np.diff(values) > 0)  # f(D) - f(D - 1) > 0
        if rises.size:
            return int(start) + int(rises[0]) + 1
        previous = f[-1]
    return None


def first_negative(d_model: int, *, base: float = 10_000.0, max_offset: int = 100_000) -> int | None:
    r"""Smallest integer :math:`\Delta \ge 1` with :math:`f(\Delta) < 0`, or ``None`` up to ``max_offset``.

    From there on some pairs of encodings are more than 90 degrees apart, although the profile
    started at its maximum ``d_model / 2``. Offsets up to ``max_offset`` are scanned, in chunks.
    """
    d_model = check_d_model(d_model)
    max_offset = check_positive_int(max_offset, name="max_offset")
    for delta, f in _profile_chunks(d_model, max_offset, base):
        negative = np.flatnonzero(f < 0)
        if negative.size:
            return int(delta[negative[0]])
    return None


def _check_pair_weights(pair_weights, d_model: int) -> np.ndarray:
    if pair_weights is None:
        return np.ones(d_model // 2)
    a = np.asarray(pair_weights, dtype=np.float64)
    if a.shape != (d_model // 2,):
        raise ValueError(
            f"pair_weights must have one weight per sin/cos pair, shape ({d_model // 2},), got shape {a.shape}"
        )
    if not np.all(np.isfinite(a)):
        raise ValueError("pair_weights must be finite, got NaN or infinity among them")
    return a


def offset_attention_projections(
    offset: float,
    d_model: int,
    *,
    base: float = 10_000.0,
    scale: float = 1.0,
    pair_weights=None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Fixed ``(W_Q, W_K)`` whose scores on pure encodings peak at key ``i - offset`` for query ``i``.

    :math:`W_Q = s\,M(\phi)\,D`, :math:`W_K = I`, with :math:`D` the diagonal matrix that repeats
    ``pair_weights`` :math:`a_k` (default all 1) over both columns of pair ``k``. On rows
    ``x_i = PE(i)`` the score is
    :math:`x_i W_Q W_K^\top x_j^\top = s \sum_k a_k \cos\big(\omega_k (j - i + \phi)\big)`,
    which with all :math:`a_k = 1` is :math:`s\,f(j - i + \phi)`.

    Returns two ``(d_model, d_model)`` arrays.
    """
    phi = check_finite_real(offset, name="offset")
    d_model = check_d_model(d_model)
    scale = check_finite_real(scale, name="scale")
    a = _check_pair_weights(pair_weights, d_model)
    # rows: x_i W_Q = s PE(i)^T M(phi) D = s (M(-phi) PE(i))^T D = s PE(i - phi)^T D
    w_q = scale * shift_matrix(phi, d_model, base=base) * np.repeat(a, 2)[None, :]
    w_k = np.eye(d_model)
    return w_q, w_k


def offset_attention(
    n: int,
    offset: float,
    d_model: int,
    *,
    base: float = 10_000.0,
    scale: float = 1.0,
    pair_weights=None,
    causal: bool = True,
) -> np.ndarray:
    r"""Attention weights of the fixed offset head on the encodings of positions ``0 .. n-1``.

    ``softmax(Q K^T / sqrt(d_model))`` with ``Q = PE W_Q``, ``K = PE W_K`` from
    :func:`offset_attention_projections`; ``causal`` masks keys after the query.
    Returns shape ``(n, n)``; row ``i`` is query position ``i``.
    """
    n = check_positive_int(n, name="n")
    pe = sinusoidal(n, d_model, base=base)
    w_q, w_k = offset_attention_projections(offset, d_model, base=base, scale=scale, pair_weights=pair_weights)
    return attention_weights(pe @ w_q, pe @ w_k, causal=causal)


def mass_on_offset(weights, offset: int) -> np.ndarray:
    r"""The weight each query ``i`` puts on key ``i - offset``: ``weights[i, i - offset]``, ``i >= offset``.

    ``weights``: an ``(n, n)`` attention matrix; ``offset``: an integer ``0 <= offset < n``.
    Returns shape ``(n - offset,)`` (queries with no key ``offset`` places back are left out).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be a square (n, n) attention matrix, got shape {w.shape}")
    offset = check_positive_int(offset, name="offset", minimum=0)
    n = w.shape[0]
    if offset >= n:
        raise ValueError(f"offset must be smaller than the number of positions {n}, got {offset}")
    i = np.arange(offset, n)
    return w[i, i - offset]
