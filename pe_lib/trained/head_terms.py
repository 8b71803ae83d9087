r"""The four terms of a trained head's attention scores, and how close its positional part comes to the
shift-commuting heads of chapter 6.

The first block of a model that adds a position vector reads :math:`x_i = e_i + P_i` (token
embedding :math:`e_i = E[t_i]`, position vector :math:`P_i`) through a layer norm. The norm is linear
in :math:`x_i` up to one factor per token, :math:`1/\sigma_i` with :math:`\sigma_i^2 = \mathrm{Var}(x_i) + \varepsilon`,
so it splits exactly into a content part and a position part (:math:`\bar u` is the mean over the
coordinates of :math:`u`, :math:`\gamma, \beta` the norm's gain and shift; :math:`\beta`, the same for
every token, is counted with the content):

.. math::

    \mathrm{LN}(x_i) = \underbrace{\gamma \odot \frac{e_i - \bar e_i}{\sigma_i} + \beta}_{c_i}
                     + \underbrace{\gamma \odot \frac{P_i - \bar P_i}{\sigma_i}}_{p_i}.

The score of head :math:`h` (before the mask and the softmax) then splits into the four terms of
chapter 2 (:func:`pe_lib.score_terms`; Dai et al. 2019, section 3.3), which sum to it exactly:

.. math::

    s_{ij} = (c_i + p_i)\,W\,(c_j + p_j)^\top
           = c_i W c_j^\top + c_i W p_j^\top + p_i W c_j^\top + p_i W p_j^\top,
           \qquad W = \frac{W_Q^h W_K^{h\top}}{\sqrt{d_k}}.

Chapter 6 showed that :math:`\mathrm{PE}(m)\,W\,\mathrm{PE}(n)^\top` depends on :math:`n - m` alone for every
:math:`m, n` exactly when :math:`W` commutes with every shift rotation :math:`M(\phi)`:
block-diagonal, one scaled rotation :math:`\eta_k I + \kappa_k J` per sin/cos pair.
:func:`commuting_projection` is the nearest such matrix in the Frobenius norm.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_finite_array, check_positive_int
from ..analysis.embedding import SCORE_TERMS, score_terms
from .model_analysis import _tokens, position_table
from .training import check_model

LN_EPS = 1e-5  # the model's layer-norm epsilon (pe_lib.trained.transformer.LN_EPS; that module imports JAX)


def _head(model, head) -> int:
    n_heads = model.config.n_heads
    head = check_positive_int(head, name="head", minimum=0)
    if head >= n_heads:
        raise ValueError(f"head must be in 0..{n_heads - 1} (the model has {n_heads} heads), got {head}")
    return head


def _projections(model, head: int) -> tuple[np.ndarray, np.ndarray]:
    block = model.params["blocks"][0]
    return (np.asarray(block["w_q"][head], dtype=np.float64),  # (d_model, d_k)
            np.asarray(block["w_k"][head], dtype=np.float64))


def positional_form(model, *, head: int = 0) -> np.ndarray:
    r"""The matrix that head ``head`` of the first block applies to two raw position vectors:
    :math:`W_P = C\,\Gamma\,W\,\Gamma\,C` with :math:`W = W_Q^h W_K^{h\top}/\sqrt{d_k}`,
    :math:`\Gamma = \mathrm{diag}(\gamma)` and :math:`C = I - \frac1d \mathbf 1\mathbf 1^\top` (the norm's
    centring), so that the position-position term is :math:`P_i W_P P_j^\top / (\sigma_i\sigma_j)`.
    Returns ``(d_model, d_model)`` float64."""
    model = check_model(model)
    w_q, w_k = _projections(model, _head(model, head))
    w = w_q @ w_k.T / np.sqrt(w_q.shape[1])  # W = W_Q W_K^T / sqrt(d_k)
    g = np.asarray(model.params["blocks"][0]["ln1_g"], dtype=np.float64)
    d = w.shape[0]
    c = np.eye(d) - 1.0 / d  # x C = x - mean(x)
    return c @ (g[:, None] * w * g[None, :]) @ c


def head_score_terms(model, tokens, *, head: int = 0) -> np.ndarray:
    r"""The four terms of the first block's scores of head ``head`` on ``tokens`` (see the module doc),
    in the order content-content, content-position,
    position-content, position-position (``pe_lib.analysis.embedding.SCORE_TERMS``); their sum is
    :math:`q_i \cdot k_j/\sqrt{d_k}` before the causal mask and the softmax.

    ``model``: encoding ``"sinusoidal"`` or ``"learned"`` (the schemes that add a position vector);
    ``tokens``: ``(L,)`` or ``(batch, L)``. Returns ``(4, L, L)`` or ``(4, batch, L, L)``, float64.
    """
    model = check_model(model)
    if model.config.encoding not in ("sinusoidal", "learned"):
        raise ValueError(f"head_score_terms splits x = token + position vector; a model with encoding "
                         f"{model.config.encoding!r} adds no position vector (use 'sinusoidal' or 'learned')")
    head = _head(model, head)
    batch, single = _tokens(model, tokens)
    block = model.params["blocks"][0]
    e = np.asarray(model.params["embed"], dtype=np.float64)[batch]  # e_i = E[t_i], (B, L, d)
    p = position_table(model, batch.shape[1])  # P_i, (L, d)
    x = (e + p).astype(np.float32).astype(np.float64)  # x_i as the model forms it, in float32
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + LN_EPS)  # sigma_i, (B, L, 1)
    g, beta = (np.asarray(block[name], dtype=np.float64) for name in ("ln1_g", "ln1_b"))
    content = g * (e - e.mean(axis=-1, keepdims=True)) / sigma + beta  # c_i
    position = g * (p - p.mean(axis=-1, keepdims=True)) / sigma  # p_i
    w_q, w_k = _projections(model, head)
    w_q = w_q / np.sqrt(w_q.shape[1])  # the 1/sqrt(d_k) of the scores
    terms = [score_terms(c, q, c, q, w_q, w_k) for c, q in zip(content, position, strict=True)]
    out = np.stack([np.stack([t[name] for t in terms]) for name in SCORE_TERMS])  # (4, B, L, L)
    return out[:, 0] if single else out


def term_shares(terms, *, causal: bool = True) -> np.ndarray:
    r"""How much of the variance of the scores :math:`s = \sum_t s^{(t)}` each term carries:
    :math:`\mathrm{Cov}(s^{(t)}, s) / \mathrm{Var}(s)` over all entries (with ``causal``: the entries
    :math:`j \le i`, which the mask lets through), pooled over the batch. The shares sum to 1
    exactly; a term that works against the others has a negative share.

    ``terms``: ``(T, ..., L, L)``, e.g. from :func:`head_score_terms`. Returns ``(T,)``.
    """
    t = check_finite_array(terms, name="terms", min_ndim=3, shape_hint="(terms, ..., L, L)")
    n = t.shape[-1]
    if t.shape[-2] != n:
        raise ValueError(f"terms must end in square (L, L) score matrices, got shape {t.shape}")
    keep = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    values = t[..., keep].reshape(t.shape[0], -1)  # (T, entries)
    total = values.sum(axis=0)  # s
    deviation = total - total.mean()
    var = np.mean(deviation**2)
    if var == 0:
        raise ValueError("the scores are constant, so the shares of their variance are undefined")
    return (values - values.mean(axis=1, keepdims=True)) @ deviation / total.size / var  # Cov(s_t, s) / Var(s)


def commuting_projection(w) -> np.ndarray:
    r"""The nearest matrix (Frobenius norm) to ``w`` that commutes with every shift rotation
    :math:`M(\phi)` of :func:`pe_lib.shift_matrix` (interleaved sin/cos pairs): block-diagonal, the
    block of pair :math:`k` replaced by :math:`\eta_k I + \kappa_k J`,
    :math:`J = \begin{pmatrix}0&-1\\1&0\end{pmatrix}`, with :math:`\eta_k = (w_{2k,2k} + w_{2k+1,2k+1})/2`
    and :math:`\kappa_k = (w_{2k+1,2k} - w_{2k,2k+1})/2` (the projections on :math:`I` and :math:`J`,
    orthogonal matrices of squared norm 2), every entry outside the blocks 0 (chapter 6).
    ``w``: ``(d, d)``, ``d`` even. Returns ``(d, d)``.
    """
    w = check_finite_array(w, name="w", ndim=2)
    d = w.shape[0]
    if w.shape != (d, d) or d % 2:
        raise ValueError(f"w must be a square matrix of even size (d, d), got shape {w.shape}")
    k = np.arange(0, d, 2)
    eta = (w[k, k] + w[k + 1, k + 1]) / 2
    kappa = (w[k + 1, k] - w[k, k + 1]) / 2
    out = np.zeros_like(w)
    out[k, k] = out[k + 1, k + 1] = eta
    out[k + 1, k], out[k, k + 1] = kappa, -kappa
    return out


def commuting_share(w) -> float:
    r"""The share of :math:`\lVert w\rVert_F^2` in the shift-commuting family,
    :math:`\lVert \Pi(w)\rVert_F^2 / \lVert w\rVert_F^2` with :math:`\Pi` = :func:`commuting_projection`:
    1 for a commuting matrix, about :math:`1/d` for a matrix of independent random entries (the family
    has :math:`d` of the :math:`d^2` dimensions). Returns a float in [0, 1]."""
    w = check_finite_array(w, name="w", ndim=2)
    norm = np.sum(w**2)
    if norm == 0:
        raise ValueError("w is zero, so the share of its norm is undefined")
    return float(np.sum(commuting_projection(w) ** 2) / norm)
