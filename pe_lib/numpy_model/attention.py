r"""Scaled dot-product attention, small enough to read in one screen (numpy, no training).

.. math::

    \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + B\right) V

with an optional additive bias ``B`` (relative-position biases such as ALiBi or T5) and an optional
causal mask (query ``i`` sees keys ``j <= i`` only).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import as_real_array, check_finite_array, check_positive_int, check_table_size


def _check_no_overflow(arr: np.ndarray, what: str) -> None:
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} overflow float64 (finite inputs, infinite products); scale the inputs down")


def softmax(scores, axis: int = -1) -> np.ndarray:
    r""":math:`\mathrm{softmax}(s)_j = e^{s_j - \max s} / \sum_l e^{s_l - \max s}` along ``axis``.

    Entries equal to ``-inf`` (masked) get weight 0; each slice must have one finite entry.
    Returns an array of the same shape as ``scores``.
    """
    s = as_real_array(scores, name="scores")
    if np.any(np.isnan(s)) or np.any(s == np.inf):
        raise ValueError("scores must not contain NaN or +inf (use -inf to mask an entry)")
    width = max(s.ndim, 1)
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral) or not -width <= axis < width:
        raise ValueError(f"axis must be an integer from {-width} to {width - 1}, got {axis!r}")
    if s.ndim and s.shape[axis] == 0:
        raise ValueError(f"scores has no entries along axis {axis} (shape {s.shape}); a softmax needs at least one")
    top = np.max(s, axis=axis, keepdims=True)
    if np.any(top == -np.inf):
        raise ValueError("every softmax slice needs at least one entry that is not -inf (fully masked row)")
    with np.errstate(over="ignore"):  # s - top may overflow to -inf, whose weight is exactly 0
        e = np.exp(s - top)  # subtracting the max avoids overflow and does not change the result
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(n: int) -> np.ndarray:
    """Boolean ``(n, n)`` matrix, True where query ``i`` may attend to key ``j`` (``j <= i``)."""
    n = check_positive_int(n, name="n")
    check_table_size(n, n, what="causal mask")
    return np.tril(np.ones((n, n), dtype=bool))


def attention_weights(q, k, *, bias=None, causal: bool = False) -> np.ndarray:
    r"""Attention weights :math:`\mathrm{softmax}(q k^\top / \sqrt{d_k} + B)`.

    ``q``: ``(n, d_k)`` queries, ``k``: ``(m, d_k)`` keys, ``bias``: ``(n, m)`` or ``(h, n, m)``
    added to the scores, ``causal``: mask keys after the query (needs ``n == m``).
    Returns ``(n, m)``, or ``(h, n, m)`` with a per-head bias; rows sum to 1.
    """
    q = check_finite_array(q, name="q", ndim=2)
    k = check_finite_array(k, name="k", ndim=2)
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"q and k must have the same width d_k, got {q.shape[1]} and {k.shape[1]}")
    if q.shape[1] == 0 or k.shape[0] == 0:
        raise ValueError(f"attention needs d_k >= 1 and at least one key, got q {q.shape} and k {k.shape}")
    check_table_size(q.shape[0], k.shape[0], what="score matrix")
    with np.errstate(over="ignore", invalid="ignore"):  # checked below, with a clearer message
        scores = q @ k.T / np.sqrt(q.shape[1])  # q_i . k_j / sqrt(d_k)
    if bias is not None:
        b = check_finite_array(bias, name="bias")
        if b.shape[-2:] != scores.shape or b.ndim not in (2, 3):
            raise ValueError(f"bias must have shape {scores.shape} or (heads, *{scores.shape}), got {b.shape}")
        with np.errstate(over="ignore", invalid="ignore"):
            scores = scores + b
    _check_no_overflow(scores, "the scores q k^T / sqrt(d_k) (+ bias)")
    if causal:
        if q.shape[0] != k.shape[0]:
            raise ValueError(f"causal attention needs as many queries as keys, got {q.shape[0]} and {k.shape[0]}")
        scores = np.where(causal_mask(q.shape[0]), scores, -np.inf)
    return softmax(scores, axis=-1)


def self_attention(x, w_q, w_k, w_v, *, bias=None, causal: bool = False) -> np.ndarray:
    r"""One attention head over the rows of ``x``: ``softmax(QK^T/sqrt(d_k) + B) V``.

    ``x``: ``(n, d_model)``; ``w_q``, ``w_k``: ``(d_model, d_k)``; ``w_v``: ``(d_model, d_v)``.
    Q = x W_Q, K = x W_K, V = x W_V. Returns ``(n, d_v)``.
    """
    x = check_finite_array(x, name="x", ndim=2)
    w_q = check_finite_array(w_q, name="w_q", ndim=2)
    w_k = check_finite_array(w_k, name="w_k", ndim=2)
    w_v = check_finite_array(w_v, name="w_v", ndim=2)
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.shape[0] != x.shape[1]:
            raise ValueError(f"{name} must have {x.shape[1]} rows (the width of x), got shape {w.shape}")
    with np.errstate(over="ignore", invalid="ignore"):  # checked below, with a clearer message
        q, k, v = x @ w_q, x @ w_k, x @ w_v
    for name, proj in (("x @ w_q", q), ("x @ w_k", k), ("x @ w_v", v)):
        _check_no_overflow(proj, name)
    weights = attention_weights(q, k, bias=bias, causal=causal)
    return weights @ v
