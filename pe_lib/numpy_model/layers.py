r"""A stack of randomly initialised Transformer blocks (numpy, no training), to follow positions
through depth.

One block is multi-head self-attention followed by a position-wise MLP, each wrapped in a layer
norm, with or without the residual connection:

* ``norm="post"`` (the paper, section 3.1): :math:`x \leftarrow \mathrm{LN}(x + \mathrm{Attn}(x))`,
  then :math:`x \leftarrow \mathrm{LN}(x + \mathrm{MLP}(x))`; without residual
  :math:`x \leftarrow \mathrm{LN}(\mathrm{Attn}(x))`, :math:`x \leftarrow \mathrm{LN}(\mathrm{MLP}(x))`.
* ``norm="pre"`` (GPT-2 and most later models): :math:`x \leftarrow x + \mathrm{Attn}(\mathrm{LN}(x))`,
  then :math:`x \leftarrow x + \mathrm{MLP}(\mathrm{LN}(x))`; without residual the ``x +`` is dropped.

Weights are drawn from :math:`\mathcal N(0, \mathrm{scale}^2/\mathrm{fan\_in})`, biases are zero and the
layer norms have gain 1 and bias 0, as at initialisation. ``scale=0`` gives blocks whose sublayers
output zero, which makes a pre-LN residual stack the identity.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_choice, check_d_model, check_finite_array, check_finite_real, check_positive_int
from .attention import causal_mask

NORMS = ("post", "pre")
BLOCK_KEYS = ("w_q", "w_k", "w_v", "w_o", "w_1", "b_1", "w_2", "b_2")


def _as_states(x, *, name: str = "x", min_ndim: int = 2) -> np.ndarray:
    shape = "(n, d_model) or (batch, n, d_model)" if min_ndim == 2 else "(..., d_model)"
    return check_finite_array(x, name=name, min_ndim=min_ndim, shape_hint=shape)


def layer_norm(x, *, eps: float = 1e-5) -> np.ndarray:
    r"""Layer normalisation of every vector along the last axis, gain 1 and bias 0:
    :math:`\mathrm{LN}(x) = (x - \bar x) / \sqrt{\mathrm{Var}(x) + \varepsilon}`.

    ``x``: ``(..., d)``. Returns an array of the same shape whose rows have mean 0 and variance
    :math:`\mathrm{Var}/(\mathrm{Var}+\varepsilon) \approx 1`.
    """
    x = _as_states(x, min_ndim=1)
    eps = check_finite_real(eps, name="eps")
    if eps <= 0:
        raise ValueError(f"eps must be > 0 (it keeps a constant row from dividing by zero), got {eps}")
    mean = x.mean(axis=-1, keepdims=True)  # x̄
    var = x.var(axis=-1, keepdims=True)  # Var(x) = mean (x - x̄)^2
    return (x - mean) / np.sqrt(var + eps)


def init_blocks(
    n_layers: int, d_model: int, *, n_heads: int = 4, d_ff: int | None = None, seed: int = 0, scale: float = 1.0
) -> list[dict[str, np.ndarray]]:
    r"""Random weights for ``n_layers`` blocks, drawn from one ``numpy.random.default_rng(seed)``.

    Each block is a dict with ``w_q, w_k, w_v``: ``(n_heads, d_model, d_model // n_heads)``,
    ``w_o``: ``(d_model, d_model)``, ``w_1``: ``(d_model, d_ff)``, ``b_1``: ``(d_ff,)``,
    ``w_2``: ``(d_ff, d_model)``, ``b_2``: ``(d_model,)``; ``d_ff`` defaults to ``4 * d_model`` as in
    the paper. Entries of a weight with ``fan_in`` inputs are :math:`\mathcal N(0, \mathrm{scale}^2/\mathrm{fan\_in})`,
    biases 0. Returns a list of ``n_layers`` dicts (empty for ``n_layers = 0``).
    """
    n_layers = check_positive_int(n_layers, name="n_layers", minimum=0)
    d_model = check_d_model(d_model)
    n_heads = check_positive_int(n_heads, name="n_heads")
    if d_model % n_heads:
        raise ValueError(f"n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}")
    d_ff = 4 * d_model if d_ff is None else check_positive_int(d_ff, name="d_ff")
    seed = check_positive_int(seed, name="seed", minimum=0)
    scale = check_finite_real(scale, name="scale")
    if scale < 0:
        raise ValueError(f"scale must be >= 0 (0 gives all-zero sublayers), got {scale}")
    rng = np.random.default_rng(seed)
    d_k = d_model // n_heads

    def weight(*shape):  # N(0, scale^2 / fan_in), fan_in = the second-to-last axis
        return rng.normal(0.0, scale / np.sqrt(shape[-2]), size=shape)

    return [
        {
            "w_q": weight(n_heads, d_model, d_k),
            "w_k": weight(n_heads, d_model, d_k),
            "w_v": weight(n_heads, d_model, d_k),
            "w_o": weight(d_model, d_model),
            "w_1": weight(d_model, d_ff),
            "b_1": np.zeros(d_ff),
            "w_2": weight(d_ff, d_model),
            "b_2": np.zeros(d_model),
        }
        for _ in range(n_layers)
    ]


def _check_block(block, d_model: int) -> None:
    if not isinstance(block, dict) or any(key not in block for key in BLOCK_KEYS):
        raise ValueError(f"a block must be a dict with keys {', '.join(BLOCK_KEYS)} (see pe_lib.init_blocks)")
    if block["w_o"].shape[0] != d_model:
        raise ValueError(f"the block is for d_model={block['w_o'].shape[0]}, but x has width {d_model}")


def multi_head_attention(x, block, *, causal: bool = False) -> np.ndarray:
    r""":math:`\mathrm{Attn}(x) = [\mathrm{head}_1, \dots, \mathrm{head}_h]\,W_O`, with
    :math:`\mathrm{head}_i = \mathrm{softmax}(x W_Q^i (x W_K^i)^\top/\sqrt{d_k})\, x W_V^i`
    (the formula of :func:`pe_lib.self_attention`), each sequence attending only within itself.

    All sequences and heads are computed at once, as batched matrix products: the same numbers as
    calling :func:`pe_lib.self_attention` per sequence and head, without a Python loop over them.
    ``x``: ``(n, d_model)`` or ``(batch, n, d_model)``. Returns an array of the same shape.
    """
    x = _as_states(x)
    _check_block(block, x.shape[-1])
    seqs = x.reshape(-1, *x.shape[-2:])[:, None]  # (batch, 1, n, d_model): one copy for every head
    d_k = block["w_q"].shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):  # checked below, with a clearer message
        q, k, v = seqs @ block["w_q"], seqs @ block["w_k"], seqs @ block["w_v"]  # (batch, h, n, d_k) each
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)  # q_i . k_j / sqrt(d_k): (batch, h, n, n)
    if not np.all(np.isfinite(scores)):
        raise ValueError("the attention scores overflow float64 (finite inputs, infinite products); "
                         "scale the inputs down")
    if causal:
        scores[..., ~causal_mask(scores.shape[-1])] = -np.inf  # query i sees key j only if j <= i
    # softmax along the keys, in place: e^(s - max s) / sum e^(s - max s); masked keys get e^-inf = 0
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    heads = scores @ v  # (batch, h, n, d_k)
    joined = np.swapaxes(heads, 1, 2).reshape(seqs.shape[0], -1, x.shape[-1])  # [head_1, ..., head_h] per token
    return (joined @ block["w_o"]).reshape(x.shape)  # concat(heads) W_O, one sequence at a time


def mlp(x, block) -> np.ndarray:
    r"""Position-wise feed-forward network :math:`\max(0, x W_1 + b_1)\, W_2 + b_2`.

    ``x``: ``(..., d_model)``. Returns an array of the same shape.
    """
    x = _as_states(x, min_ndim=1)
    _check_block(block, x.shape[-1])
    rows = x.reshape(-1, x.shape[-1])  # one 2-D product is much faster than a batched one
    hidden = np.maximum(0.0, rows @ block["w_1"] + block["b_1"])  # ReLU(x W_1 + b_1)
    return (hidden @ block["w_2"] + block["b_2"]).reshape(x.shape)


def transformer_block(x, block, *, residual: bool = True, norm: str = "post", causal: bool = False) -> np.ndarray:
    r"""One block: attention then MLP, each with a layer norm and (if ``residual``) a skip connection.

    post-LN: :math:`y = \mathrm{LN}(x + \mathrm{Attn}(x))`, :math:`z = \mathrm{LN}(y + \mathrm{MLP}(y))`;
    pre-LN: :math:`y = x + \mathrm{Attn}(\mathrm{LN}(x))`, :math:`z = y + \mathrm{MLP}(\mathrm{LN}(y))`;
    ``residual=False`` drops the ``x +`` and ``y +``. ``x``: ``(n, d_model)`` or ``(batch, n, d_model)``.
    Returns ``z``, same shape as ``x``.
    """
    x = _as_states(x)
    norm = check_choice(norm, NORMS, name="norm")
    keep = 1.0 if residual else 0.0  # the residual stream: x + F(x), or F(x) alone
    if norm == "post":
        y = layer_norm(keep * x + multi_head_attention(x, block, causal=causal))
        return layer_norm(keep * y + mlp(y, block))
    y = keep * x + multi_head_attention(layer_norm(x), block, causal=causal)
    return keep * y + mlp(layer_norm(y), block)


def run_stack(x, blocks, *, residual: bool = True, norm: str = "post", causal: bool = False) -> np.ndarray:
    """Run ``x`` through the blocks in order and keep every layer's output.

    ``x``: ``(n, d_model)`` or ``(batch, n, d_model)``; ``blocks``: from :func:`init_blocks`.
    Returns ``(len(blocks) + 1, *x.shape)``: index 0 is the input, index ``l`` the output of block ``l``.
    """
    x = _as_states(x)
    norm = check_choice(norm, NORMS, name="norm")
    if not isinstance(blocks, (list, tuple)):
        raise ValueError(f"blocks must be a list of blocks from pe_lib.init_blocks, got {type(blocks).__name__}")
    states = [x]
    for block in blocks:
        states.append(transformer_block(states[-1], block, residual=residual, norm=norm, causal=causal))
    return np.stack(states)
