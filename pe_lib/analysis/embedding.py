r"""Token embeddings plus positional encodings: does the sum still say which word, and where?

The paper feeds the encoder :math:`x = \sqrt{d_\mathrm{model}}\, e_v + \mathrm{PE}(p)` for token ``v`` at
position ``p``. This module builds the pieces of the experiment of chapter 2:

* :func:`random_embeddings` — a vocabulary as a freshly initialised model has it;
* :func:`nearest_token_accuracy` and :func:`position_recovery_accuracy` — read the word, or the
  position, back out of the sum by a nearest-neighbour lookup;
* :func:`predicted_position_accuracy` — the same, predicted from the geometry alone;
* :func:`random_cosines` and :func:`cosine_matrix` — how close to orthogonal vectors are;
* :func:`transformer_parameters` — what adding or concatenating costs in parameters;
* :func:`score_terms` — the four terms an attention score of a sum splits into.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import (
    check_d_model,
    check_finite_array,
    check_finite_real,
    check_positive_int,
    check_table_size,
)
from ..encodings.sinusoidal import sinusoidal
from .similarity import dot_profile


def random_embeddings(vocab_size: int, d_model: int, *, seed: int = 0, scale: float | None = None) -> np.ndarray:
    r"""A random vocabulary: rows :math:`\mathrm{scale}\cdot e_v`, :math:`e_v \sim \mathcal N(0, I/d_\mathrm{model})`.

    The standard deviation :math:`d_\mathrm{model}^{-1/2}` is tensor2tensor's initialisation, so
    :math:`\mathbb E\lVert e_v\rVert^2 = 1`. ``scale=None`` (default) multiplies by
    :math:`\sqrt{d_\mathrm{model}}` as the paper's embedding layers do, giving entries
    :math:`\mathcal N(0, 1)` and :math:`\mathbb E\lVert \sqrt{d}\,e_v\rVert^2 = d_\mathrm{model}`;
    ``scale=1.0`` keeps the unscaled initialisation. Deterministic for a given ``seed``.

    Returns an array of shape ``(vocab_size, d_model)``.
    """
    vocab_size = check_positive_int(vocab_size, name="vocab_size")
    d_model = check_d_model(d_model)
    seed = check_positive_int(seed, name="seed", minimum=0)
    if scale is None:
        scale = float(np.sqrt(d_model))  # the paper's sqrt(d_model) factor (section 3.4)
    else:
        scale = check_finite_real(scale, name="scale")
        if scale <= 0:
            raise ValueError(f"scale must be positive (None means sqrt(d_model)), got {scale!r}")
    check_table_size(vocab_size, d_model, what="embedding table")
    rng = np.random.default_rng(seed)
    e = rng.normal(0.0, d_model**-0.5, size=(vocab_size, d_model))  # e_v ~ N(0, I / d_model)
    return scale * e


def _check_embeddings(embeddings) -> np.ndarray:
    e = np.asarray(embeddings, dtype=np.float64)
    if e.ndim != 2 or e.shape[0] == 0:
        raise ValueError(
            f"embeddings must be a 2-D array (vocab_size, d_model) with at least one row, got shape {e.shape}"
        )
    check_d_model(e.shape[1], name="the width of embeddings")
    if not np.all(np.isfinite(e)):
        raise ValueError("embeddings must be finite, got NaN or infinity among them")
    return e


def nearest_token_accuracy(embeddings, n_positions: int, *, base: float = 10_000.0) -> float:
    r"""Fraction of (token, position) pairs whose sum is still nearest to its own token.

    For every token ``v`` (row of ``embeddings``) and position ``p = 0 .. n_positions-1`` form
    :math:`x = E_v + \mathrm{PE}(p)` and find :math:`\hat v = \arg\min_u \lVert x - E_u \rVert` over
    all rows ``u``. Returns the fraction of the ``V * n_positions`` pairs with :math:`\hat v = v`,
    a float in ``[0, 1]``. ``embeddings`` has shape ``(V, d_model)``; pass them already scaled.
    """
    e = _check_embeddings(embeddings)
    n = check_positive_int(n_positions, name="n_positions")
    check_table_size(e.shape[0] * n, e.shape[0], what="distance table")
    pe = sinusoidal(n, e.shape[1], base=base)
    # ||x - E_u||^2 = ||x||^2 - 2 (E_v.E_u + PE_p.E_u) + ||E_u||^2; ||x||^2 does not depend on u
    gram = e @ e.T  # (V, V): E_v . E_u
    cross = pe @ e.T  # (n, V): PE_p . E_u
    score = np.sum(e**2, axis=1) - 2.0 * (gram[:, None, :] + cross[None, :, :])  # (V, n, V)
    nearest = np.argmin(score, axis=2)  # (V, n)
    return float(np.mean(nearest == np.arange(e.shape[0])[:, None]))


def position_recovery_accuracy(
    embeddings, n_positions: int, *, base: float = 10_000.0, tolerance: int = 0
) -> float:
    r"""Fraction of (token, position) pairs whose position is read back from the sum.

    For every token ``v`` and position ``p = 0 .. n_positions-1`` form
    :math:`x = E_v + \mathrm{PE}(p)` and find the nearest encoding
    :math:`\hat p = \arg\min_q \lVert x - \mathrm{PE}(q)\rVert`, ``q = 0 .. n_positions-1``.
    Returns the fraction of pairs with :math:`|\hat p - p| \le` ``tolerance`` (0: exactly right),
    a float in ``[0, 1]``.
    """
    e = _check_embeddings(embeddings)
    n = check_positive_int(n_positions, name="n_positions")
    tolerance = check_positive_int(tolerance, name="tolerance", minimum=0)
    check_table_size(e.shape[0] * n, n, what="distance table")
    pe = sinusoidal(n, e.shape[1], base=base)
    # ||x - PE_q||^2 = ||x||^2 - 2 (E_v.PE_q + PE_p.PE_q) + ||PE_q||^2; ||x||^2 does not depend on q
    cross = e @ pe.T  # (V, n): E_v . PE_q
    pe_gram = pe @ pe.T  # (n, n): PE_p . PE_q
    score = np.sum(pe**2, axis=1) - 2.0 * (cross[:, None, :] + pe_gram[None, :, :])  # (V, n, n)
    p_hat = np.argmin(score, axis=2)  # (V, n)
    return float(np.mean(np.abs(p_hat - np.arange(n)[None, :]) <= tolerance))


def predicted_position_accuracy(
    d_model: int, n_positions: int, *, base: float = 10_000.0, token_std: float = 1.0
) -> float:
    r"""Position-recovery accuracy predicted from confusions with the two neighbouring positions.

    With token entries i.i.d. :math:`\mathcal N(0, \sigma^2)` (``token_std`` :math:`=\sigma`), position
    ``q`` beats the true ``p`` when :math:`\lVert\Delta\rVert^2 + 2 E_v\cdot\Delta < 0`,
    :math:`\Delta = \mathrm{PE}(p) - \mathrm{PE}(q)`; :math:`E_v\cdot\Delta/\lVert\Delta\rVert` is
    :math:`\mathcal N(0, \sigma^2)`, so this happens with probability :math:`\Phi(-\lVert\Delta\rVert / 2\sigma)`.
    For neighbours :math:`\lVert\Delta\rVert = \delta = \sqrt{d_\mathrm{model} - 2 f(1)}` at every ``p``.
    Counting only the neighbours (``2 (n-1)`` of them over ``n`` positions) and ignoring overlaps:

    .. math:: 1 - \frac{2(n-1)}{n}\,\Phi\!\left(-\frac{\delta}{2\sigma}\right)

    An approximation: good when far positions are rarely confused (large ``d_model``). Returns a float.
    """
    d_model = check_d_model(d_model)
    n = check_positive_int(n_positions, name="n_positions")
    sigma = check_finite_real(token_std, name="token_std")
    if sigma <= 0:
        raise ValueError(f"token_std must be positive, got {sigma!r}")
    delta = math.sqrt(max(d_model - 2.0 * float(dot_profile([1.0], d_model, base=base)[0]), 0.0))
    phi = 0.5 * math.erfc(delta / (2.0 * sigma) / math.sqrt(2.0))  # Phi(-delta / 2 sigma)
    return 1.0 - 2.0 * (n - 1) / n * phi


def cosine_matrix(a, b) -> np.ndarray:
    r"""Cosines :math:`a_i \cdot b_j / (\lVert a_i\rVert \lVert b_j\rVert)` between the rows of ``a`` and ``b``.

    ``a``: ``(n, d)``, ``b``: ``(m, d)``, no zero rows. Returns shape ``(n, m)``, entries in ``[-1, 1]``.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"a and b must be 2-D with the same number of columns, got shapes {a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a and b must be finite, got NaN or infinity")
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    if np.any(na == 0) or np.any(nb == 0):
        raise ValueError("the cosine of a zero vector is undefined; remove the zero rows")
    return np.clip((a @ b.T) / np.multiply.outer(na, nb), -1.0, 1.0)


def random_cosines(dim: int, n_pairs: int, *, seed: int = 0) -> np.ndarray:
    r"""Cosines between ``n_pairs`` independent pairs of random vectors :math:`x, y \sim \mathcal N(0, I_\mathrm{dim})`.

    :math:`\cos = x\cdot y / (\lVert x\rVert\lVert y\rVert)` has mean 0 and
    :math:`\mathbb E[\cos^2] = 1/\mathrm{dim}` exactly (``x/‖x‖`` is uniform on the sphere, and the
    squared coordinates of a unit vector average to ``1/dim``). Returns shape ``(n_pairs,)``.
    """
    dim = check_positive_int(dim, name="dim")
    n_pairs = check_positive_int(n_pairs, name="n_pairs")
    seed = check_positive_int(seed, name="seed", minimum=0)
    check_table_size(2 * n_pairs, dim, what="sample")
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_pairs, dim))
    y = rng.normal(size=(n_pairs, dim))
    dots = np.einsum("ij,ij->i", x, y)  # x_i . y_i
    return dots / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))


def transformer_parameters(
    width: int,
    *,
    vocab_size: int,
    d_token: int,
    n_layers: int = 6,
    d_ff: int = 2048,
    num_heads: int = 8,
    d_k: int = 64,
    tie_output: bool | None = None,
) -> dict[str, int]:
    r"""Parameter count of an encoder-decoder Transformer whose layers work at ``width``.

    Linear layers have biases, every sub-layer has a LayerNorm (gain and bias). Per layer:

    * attention: :math:`W_Q, W_K, W_V` of ``width x (num_heads*d_k)`` and :math:`W_O` back to ``width``;
    * feed-forward: ``width -> d_ff -> width``;
    * encoder layer = attention + feed-forward + 2 LayerNorms, decoder layer = 2 attentions +
      feed-forward + 3 LayerNorms.

    The token table has ``vocab_size x d_token`` entries, shared by encoder and decoder. The
    pre-softmax projection either reuses it (the paper's weight tying, section 3.4: the logits are the
    dot products of ``d_token`` coordinates of the last layer's output with the table's rows) and costs
    nothing, or it is a separate ``width x vocab_size`` matrix. ``tie_output=None`` (default) ties
    exactly when ``width == d_token``; ``True`` or ``False`` chooses.

    * adding the encoding: ``width = d_token``;
    * concatenating a ``d_pe``-wide one and widening the model: ``width = d_token + d_pe``;
    * concatenating at a fixed width: ``d_token = width - d_pe`` (the word gets fewer coordinates),
      usually with ``tie_output=True``.

    Returns a dict with integer counts ``embedding``, ``encoder``, ``decoder``,
    ``output_projection`` and ``total``.
    """
    width = check_positive_int(width, name="width")
    vocab_size = check_positive_int(vocab_size, name="vocab_size")
    d_token = check_positive_int(d_token, name="d_token")
    n_layers = check_positive_int(n_layers, name="n_layers")
    d_ff = check_positive_int(d_ff, name="d_ff")
    num_heads = check_positive_int(num_heads, name="num_heads")
    d_k = check_positive_int(d_k, name="d_k")
    if d_token > width:
        raise ValueError(f"d_token ({d_token}) cannot exceed the model width ({width}); pass width >= d_token")
    if tie_output is None:
        tie_output = width == d_token
    elif not isinstance(tie_output, bool):
        raise TypeError(f"tie_output must be True, False or None, got {tie_output!r}")
    inner = num_heads * d_k
    attention = 3 * (width * inner + inner) + (inner * width + width)  # W_Q, W_K, W_V, W_O with biases
    feed_forward = (width * d_ff + d_ff) + (d_ff * width + width)  # two linear layers with biases
    layer_norm = 2 * width  # gain and bias
    encoder_layer = attention + feed_forward + 2 * layer_norm
    decoder_layer = 2 * attention + feed_forward + 3 * layer_norm
    counts = {
        "embedding": vocab_size * d_token,
        "encoder": n_layers * encoder_layer,
        "decoder": n_layers * decoder_layer,
        "output_projection": 0 if tie_output else width * vocab_size,  # tied: reuses the token table
    }
    counts["total"] = sum(counts.values())
    return counts


SCORE_TERMS = ("content-content", "content-position", "position-content", "position-position")


def score_terms(e_query, pe_query, e_key, pe_key, w_q, w_k) -> dict[str, np.ndarray]:
    r"""The four terms of the attention scores of inputs :math:`x = e + \mathrm{PE}`.

    With :math:`W = W_Q W_K^\top`, the score of a query token (embedding :math:`e_m`, encoding
    :math:`p_m = \mathrm{PE}(m)`) and a key token (:math:`e_n`, :math:`p_n`) is

    .. math::

        (e_m + p_m)\,W\,(e_n + p_n)^\top
        = \underbrace{e_m W e_n^\top}_\text{content-content}
        + \underbrace{e_m W p_n^\top}_\text{content-position}
        + \underbrace{p_m W e_n^\top}_\text{position-content}
        + \underbrace{p_m W p_n^\top}_\text{position-position}

    (the expansion written out by Transformer-XL, Dai et al. 2019, section 3.3). ``e_query`` and
    ``pe_query`` have shape ``(n_q, d_model)``, ``e_key`` and ``pe_key`` ``(n_k, d_model)``, ``w_q`` and
    ``w_k`` ``(d_model, d_k)``. Returns a dict with the keys of ``SCORE_TERMS``, each an ``(n_q, n_k)``
    array, not yet divided by :math:`\sqrt{d_k}`; their sum is :math:`(XW_Q)(X'W_K)^\top`.
    """
    eq = check_finite_array(e_query, name="e_query", ndim=2)
    pq = check_finite_array(pe_query, name="pe_query", ndim=2)
    ek = check_finite_array(e_key, name="e_key", ndim=2)
    pk = check_finite_array(pe_key, name="pe_key", ndim=2)
    wq = check_finite_array(w_q, name="w_q", ndim=2)
    wk = check_finite_array(w_k, name="w_k", ndim=2)
    if eq.shape != pq.shape or ek.shape != pk.shape:
        raise ValueError(
            f"each embedding needs an encoding of the same shape, got e_query {eq.shape} with pe_query {pq.shape} "
            f"and e_key {ek.shape} with pe_key {pk.shape}"
        )
    if wq.shape != wk.shape or wq.shape[0] != eq.shape[1] or ek.shape[1] != eq.shape[1]:
        raise ValueError(
            f"w_q and w_k must both have shape (d_model, d_k) with d_model = {eq.shape[1]} (the width of e_query), "
            f"got w_q {wq.shape}, w_k {wk.shape} and e_key {ek.shape}"
        )
    check_table_size(eq.shape[0], ek.shape[0], what="score matrix")
    q_content, q_position = eq @ wq, pq @ wq  # (n_q, d_k): e_m W_Q, p_m W_Q
    k_content, k_position = ek @ wk, pk @ wk  # (n_k, d_k): e_n W_K, p_n W_K
    return {
        "content-content": q_content @ k_content.T,  # e_m W_Q W_K^T e_n^T
        "content-position": q_content @ k_position.T,  # e_m W_Q W_K^T p_n^T
        "position-content": q_position @ k_content.T,  # p_m W_Q W_K^T e_n^T
        "position-position": q_position @ k_position.T,  # p_m W_Q W_K^T p_n^T
    }
