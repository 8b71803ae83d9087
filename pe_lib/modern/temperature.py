r"""Why attention spreads out as the context grows, and the temperatures that hold it together.

A query that prefers one key by a logit margin :math:`m` over :math:`n - 1` others with logits near 0 gives
it the weight :math:`e^m / (e^m + n - 1)`, which falls like :math:`1/n`: the longer the context, the flatter
the softmax, and its entropy climbs towards :math:`\ln n`. Two fixes scale the logits with the length:

* **Scalable-Softmax** (SSMax; Nakanishi 2025, arXiv:2501.19399) multiplies the logits of a query that sees
  :math:`n` keys by :math:`s \ln n`; the target's weight is then :math:`n^{sm} / (n^{sm} + n - 1)`, which
  stays put when :math:`sm = 1` and tends to 1 when :math:`sm > 1`.
* **Llama 4's temperature tuning** multiplies the query at position :math:`p` (0-based) of a NoPE layer by
  :math:`\tau(p) = 1 + a \ln\!\big(1 + \lfloor (p + 1)/F \rfloor\big)`, with ``attn_scale`` :math:`a` and
  ``floor_scale`` :math:`F`: 1 for the first :math:`F - 1` positions, then a step every :math:`F` tokens that
  grows like :math:`a \ln p` (transformers' ``Llama4TextAttention.forward``, which counts positions from the
  cache length, not from ``position_ids``).
"""

from __future__ import annotations

import numpy as np

from .._validate import as_real_array, check_finite_real, check_positive_int, check_table_size
from ..numpy_model.attention import softmax


def nope_temperature(positions, floor_scale: float = 8192, attn_scale: float = 0.1) -> np.ndarray:
    r"""Llama 4's query scale on NoPE layers: :math:`\tau(p) = 1 + a\,\ln(1 + \lfloor (p+1)/F \rfloor)`.

    ``positions``: integer token positions :math:`p \ge 0` (any shape; counted from 0 as the cache counts).
    ``floor_scale`` :math:`F > 0` (Llama 4: 8192) and ``attn_scale`` :math:`a \ge 0` (Llama 4: 0.1), as in
    ``config.json``. Returns float64 of the shape of ``positions``. Source: transformers 5.23.0,
    ``models/llama4/modeling_llama4.py`` (``attn_scales``), after Scalable-Softmax (arXiv:2501.19399).
    """
    p = as_real_array(positions, name="positions")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p != np.floor(p)):
        raise ValueError("positions must be whole numbers >= 0 (token positions counted from 0), got "
                         f"{p.ravel()[~(np.isfinite(p) & (p >= 0) & (p == np.floor(p)))][0]!r} among them")
    floor = check_finite_real(floor_scale, name="floor_scale")
    if floor <= 0:
        raise ValueError(f"floor_scale must be > 0 (Llama 4 uses 8192), got {floor!r}")
    scale = check_finite_real(attn_scale, name="attn_scale")
    if scale < 0:
        raise ValueError(f"attn_scale must be >= 0 (Llama 4 uses 0.1), got {scale!r}")
    return 1.0 + scale * np.log1p(np.floor((p + 1.0) / floor))


def softmax_entropy(weights, axis: int = -1) -> np.ndarray:
    r"""Entropy :math:`H = -\sum_j w_j \ln w_j` (nats) of attention weights along ``axis`` (0 ln 0 = 0).

    ``weights``: non-negative, each slice summing to 1 (within 1e-9). Returns the array without ``axis``.
    :math:`H = 0` when one key takes all the weight, :math:`\ln n` when :math:`n` keys share it equally.
    """
    w = as_real_array(weights, name="weights")
    if w.ndim == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be an array of finite numbers >= 0 (softmax outputs)")
    total = np.sum(w, axis=axis)
    if not np.allclose(total, 1.0, rtol=0, atol=1e-9):
        raise ValueError(f"each slice of weights must sum to 1, got sums from {total.min():.6g} to {total.max():.6g}")
    logs = np.log(np.where(w > 0, w, 1.0))
    return -np.sum(w * logs, axis=axis)


def scalable_softmax(logits, s: float, axis: int = -1) -> np.ndarray:
    r"""Scalable-Softmax: :math:`\mathrm{softmax}(s \ln n \cdot z)`, with :math:`n` the number of unmasked keys.

    ``logits`` :math:`z`: real, ``-inf`` for masked keys; ``s > 0`` the learned scale (one per head in the
    paper). Returns weights of the shape of ``logits``. Source: Nakanishi 2025, arXiv:2501.19399, eq. (3);
    with :math:`s \ln n = 1` it is the ordinary softmax.
    """
    z = as_real_array(logits, name="logits")
    scale = check_finite_real(s, name="s")
    if scale <= 0:
        raise ValueError(f"s must be > 0, got {scale!r}")
    if z.ndim == 0:
        raise ValueError("logits must have at least one axis (the keys)")
    n = np.sum(z > -np.inf, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):  # -inf * positive stays -inf; the NaN of -inf * 0 cannot occur (n >= 1)
        scaled = np.where(z > -np.inf, z * scale * np.log(np.maximum(n, 1)), -np.inf)
    return softmax(scaled, axis=axis)


def target_weight(n, margin: float, *, s: float | None = None) -> np.ndarray:
    r"""The weight a softmax gives one key whose logit beats :math:`n - 1` others (logit 0) by ``margin``.

    :math:`w(n) = e^{m} / (e^{m} + n - 1)`, or with Scalable-Softmax scale ``s``,
    :math:`n^{s m} / (n^{s m} + n - 1)`. ``n``: counts of keys :math:`\ge 1` (any shape). Returns float64 of
    that shape. The idealised case of the module docstring: every other key equally far below the target.
    """
    counts = as_real_array(n, name="n")
    if np.any(counts < 1) or np.any(counts != np.floor(counts)) or not np.all(np.isfinite(counts)):
        raise ValueError("n must be whole numbers of keys >= 1")
    m = check_finite_real(margin, name="margin")
    if s is None:
        return 1.0 / (1.0 + (counts - 1.0) * np.exp(-m))
    scale = check_finite_real(s, name="s")
    if scale <= 0:
        raise ValueError(f"s must be > 0, got {scale!r}")
    return 1.0 / (1.0 + (counts - 1.0) * counts ** (-scale * m))


def entropy_by_length(lengths, *, seed: int = 0, sigma: float = 1.0, samples: int = 64,
                      s: float | None = None) -> np.ndarray:
    r"""Mean entropy of one query's attention over :math:`n` keys with random logits, for each ``n`` in ``lengths``.

    Logits :math:`z_j \sim \mathcal{N}(0, \sigma^2)` (a query that prefers no key in particular), ``samples``
    draws per length from ``numpy.random.default_rng(seed)``; ordinary softmax, or Scalable-Softmax with ``s``.
    Returns ``(len(lengths),)`` float64 in nats. With the softmax it tracks :math:`\ln n - \sigma^2/2` for
    large :math:`n` (each key's weight is :math:`e^{z_j} / \sum_l e^{z_l}`); with SSMax it stops growing.
    """
    ns = [check_positive_int(v, name="lengths") for v in np.atleast_1d(np.asarray(lengths)).tolist()]
    sig = check_finite_real(sigma, name="sigma")
    if sig < 0:
        raise ValueError(f"sigma must be >= 0, got {sig!r}")
    k = check_positive_int(samples, name="samples")
    for n in ns:
        check_table_size(k, n, what="samples x keys")  # refuse before drawing samples x n normals
    rng = np.random.default_rng(seed)
    out = []
    for n in ns:
        z = sig * rng.standard_normal((k, n))
        w = softmax(z, axis=-1) if s is None else scalable_softmax(z, s, axis=-1)
        out.append(float(np.mean(softmax_entropy(w, axis=-1))))
    return np.array(out)
