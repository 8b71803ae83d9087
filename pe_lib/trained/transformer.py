r"""A small pre-LN Transformer in JAX, for training on a laptop CPU (imported only by :mod:`pe_lib.training`).

``import pe_lib`` never imports this module, so JAX loads only when a model is trained or analysed.
Chapters use :func:`pe_lib.train_transformer` and friends; this module is the model they train.

The model, for tokens :math:`t_0 \dots t_{L-1}` (nanoGPT's layout, with the book's position schemes):

.. math::

    x^{(0)}_i &= E[t_i] + P_i, \qquad
        P_i = \mathrm{PE}(i) \text{ (sinusoidal)},\ W_\mathrm{pos}[i] \text{ (learned)},\ 0 \text{ (others)} \\
    y &= x^{(\ell)} + \mathrm{MHA}(\mathrm{LN}(x^{(\ell)})), \qquad
        x^{(\ell+1)} = y + \mathrm{MLP}(\mathrm{LN}(y)) \\
    \mathrm{logits}_i &= \mathrm{LN}(x^{(N)}_i)\, W_U

with :math:`N` blocks (``n_layers``). Each head :math:`h` of :math:`\mathrm{MHA}` computes
:math:`\mathrm{softmax}(q k^\top / \sqrt{d_k} + B_h)\,v` with :math:`q = \mathrm{LN}(x) W_Q^h`,
:math:`k = \mathrm{LN}(x) W_K^h`, :math:`v = \mathrm{LN}(x) W_V^h` (as :func:`pe_lib.self_attention`),
where ``"rope"`` rotates :math:`q` and :math:`k` by :func:`pe_lib.rope`'s rotation (interleaved
pairs, base 10000), ``"alibi"`` adds :math:`B_h = ` :func:`pe_lib.alibi_bias`, ``"t5"`` adds the trained
:math:`b_{h,\mathrm{bucket}(j-i)}` (:func:`pe_lib.t5_relative_bucket`, T5's 32 buckets up to distance
128, bidirectional unless the task is causal), and a causal task masks keys :math:`j > i`. The
sinusoidal table *is* :func:`pe_lib.sinusoidal` (cast to float32), the RoPE angles come from
:func:`pe_lib.frequencies`; ``tests/trained/test_transformer.py`` checks all three against the numpy functions.

The position scheme enters :func:`forward` as *data* (:func:`position_inputs`): a table added to the
input, a flag that adds the learned table, the cosines and sines of the rotation of queries and keys
(1 and 0 when there is none: an exact identity), and the bias added to the scores (ALiBi and the
causal mask). So one compiled training step serves every task and encoding of the same sizes.

Parameters are a dict (a JAX pytree), with ``d_k = d_model / n_heads`` and ``d_ff = 4 d_model``::

    embed (V, d_model)          pos (L_train, d_model)   [used by "learned" only]
    rel_bias (32, n_heads)      T5's bias per bucket and head, shared by the blocks [used by "t5" only]
    blocks: list of n_layers dicts
        ln1_g, ln1_b, ln2_g, ln2_b (d_model,)
        w_q, w_k, w_v (n_heads, d_model, d_k)   w_o (d_model, d_model)
        w_1 (d_model, d_ff)  b_1 (d_ff,)  w_2 (d_ff, d_model)  b_2 (d_model,)
    lnf_g, lnf_b (d_model,)     unembed (d_model, V)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..encodings.alibi import alibi_bias
from ..encodings.frequencies import frequencies
from ..encodings.sinusoidal import sinusoidal
from ..encodings.t5 import t5_relative_bucket
from ..modern.layer_types import layer_attention_mask, layer_positions

LN_EPS = 1e-5
ROPE_BASE = 10_000.0
# std of the learned position table at initialisation: the RMS of a sinusoidal component,
# sqrt(mean(sin^2)) = 1/sqrt(2), so that the table starts at the scale of the sinusoids it competes with
LEARNED_INIT_STD = float(np.sqrt(0.5))
T5_NUM_BUCKETS, T5_MAX_DISTANCE = 32, 128  # T5's defaults (Raffel et al. 2020)
# the schemes that differ from layer to layer, each written as the config.json of the model it copies and read
# by pe_lib.layer_positions (chapter 21), with the book's base and a window of W = 32 (a quarter of the training
# length of chapters 20-21); every fourth layer has no positional encoding (NoPE), as in the real models
WINDOW = 32
LAYER_CONFIGS = {
    "rope+nope": {"model_type": "smollm3", "no_rope_layer_interval": 4, "rope_theta": ROPE_BASE},  # SmolLM3
    "swa-rope+nope": {"model_type": "cohere2", "sliding_window": WINDOW, "sliding_window_pattern": 4,
                      "rope_theta": ROPE_BASE},  # Command R7B: RoPE in the sliding layers only
    "chunked-rope+nope": {"model_type": "llama4_text", "attention_chunk_size": WINDOW, "no_rope_layer_interval": 4,
                          "attn_temperature_tuning": False, "rope_theta": ROPE_BASE},  # Llama 4's iRoPE
}
P_ROPE = 0.25  # "p-rope" rotates the fastest quarter of each head's pairs, the rest stand still (Gemma 4's 0.25)
LAYERED = (*LAYER_CONFIGS, "p-rope")  # the encodings of position_inputs(..., n_layers=) that vary by layer


# ---- the position schemes, from the book's numpy definitions -----------------------------------
def rope_angles(seq_len: int, d_k: int) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\cos\theta` and :math:`\sin\theta` of :math:`\theta_{m,i} = m\,\omega_i` for positions
    ``m = 0 .. seq_len-1`` and the ``d_k/2`` pairs of a head (float64 angles, float32 results), each ``(L, d_k/2)``."""
    theta = np.multiply.outer(np.arange(seq_len), frequencies(d_k, base=ROPE_BASE))  # m * omega_i
    return np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)


def rope_rotate(x, cos, sin):
    r"""Rotate every interleaved pair of the last axis of ``x`` (``(..., L, d_k)``) by the angle whose
    ``cos`` and ``sin`` (``(L, d_k/2)``) are given, as :func:`pe_lib.rope`:
    :math:`y_a = x_a\cos\theta - x_b\sin\theta`, :math:`y_b = x_a\sin\theta + x_b\cos\theta`.
    Returns the same shape."""
    a, b = x[..., 0::2], x[..., 1::2]  # pair i = dimensions (2i, 2i+1)
    y_a = a * cos - b * sin  # x_a cos(theta) - x_b sin(theta)
    y_b = a * sin + b * cos  # x_a sin(theta) + x_b cos(theta)
    return jnp.stack([y_a, y_b], axis=-1).reshape(x.shape)


def attention_bias(encoding: str, seq_len: int, n_heads: int, causal: bool) -> np.ndarray:
    r"""What every head adds to its scores, ``(n_heads, L, L)`` float32: ALiBi's :math:`-m_h|i-j|` (or 0),
    and :math:`-\infty` on keys after the query when ``causal``."""
    bias = alibi_bias(seq_len, n_heads) if encoding == "alibi" else np.zeros((n_heads, seq_len, seq_len))
    if causal:
        bias = np.where(np.tril(np.ones((seq_len, seq_len), dtype=bool)), bias, -np.inf)  # j <= i only
    return bias.astype(np.float32)


def limit_offsets(bias, max_offset: int) -> np.ndarray:
    r"""``bias`` (``(..., L, L)``) with :math:`-\infty` wherever the key is more than ``max_offset``
    places from the query, :math:`|i - j| > \Delta_\max`: the query sees only offsets up to ``max_offset``.
    Float32, same shape."""
    seq_len = bias.shape[-1]
    i = np.arange(seq_len)
    far = np.abs(i[:, None] - i[None, :]) > max_offset  # |i - j| > max_offset
    return np.where(far, -np.inf, bias).astype(np.float32)


def position_inputs(encoding: str, seq_len: int, *, d_model: int, n_heads: int, causal: bool,
                    max_len: int, n_layers: int | None = None, inv_freq=None, attention_factor: float = 1.0) -> dict:
    """Everything the position scheme ``encoding`` feeds into :func:`forward` for ``seq_len`` tokens
    (numpy float32/int32 arrays):

    ``table`` ``(L, d_model)``: :func:`pe_lib.sinusoidal` for ``"sinusoidal"``, else 0;
    ``learned`` (scalar): 1 for ``"learned"``, else 0, and ``rows`` ``(L,)``: the rows of the learned
    table for positions ``0 .. L-1`` (clipped to ``max_len - 1``; only a model that does not use
    the table may ask for more positions);
    ``cos``, ``sin`` ``(L, d_k/2)``: the RoPE rotation for ``"rope"``, else 1 and 0;
    ``bias`` ``(n_heads, L, L)``: :func:`attention_bias`.

    ``inv_freq`` (``(d_k/2,)``) and ``attention_factor`` replace RoPE's :math:`\\omega_i` and scale its cosines
    and sines (a ``rope_scaling`` of :func:`pe_lib.rope_scaling_frequencies`: PI, YaRN), as transformers does.
    An encoding of :data:`LAYERED` needs ``n_layers`` and gives ``cos``, ``sin`` ``(n_layers, L, d_k/2)`` and
    ``bias`` ``(n_layers, n_heads, L, L)``, one slice per layer (:func:`layer_plan`).
    """
    if encoding in LAYERED:
        return _layered_inputs(encoding, seq_len, d_model=d_model, n_heads=n_heads, causal=causal,
                               max_len=max_len, n_layers=n_layers, inv_freq=inv_freq,
                               attention_factor=attention_factor)
    d_k = d_model // n_heads
    rel = np.arange(seq_len)[None, :] - np.arange(seq_len)[:, None]  # j - i, (L, L)
    buckets = t5_relative_bucket(rel, bidirectional=not causal, num_buckets=T5_NUM_BUCKETS,
                                 max_distance=T5_MAX_DISTANCE)
    if encoding == "rope" and inv_freq is not None:  # a rope_scaling's frequencies and attention factor
        theta = np.multiply.outer(np.arange(seq_len), np.asarray(inv_freq, np.float64))  # m * omega_i'
        cos = (attention_factor * np.cos(theta)).astype(np.float32)
        sin = (attention_factor * np.sin(theta)).astype(np.float32)
    elif encoding == "rope":
        cos, sin = rope_angles(seq_len, d_k)
    else:
        cos, sin = np.ones((seq_len, d_k // 2), np.float32), np.zeros((seq_len, d_k // 2), np.float32)
    table = sinusoidal(seq_len, d_model) if encoding == "sinusoidal" else np.zeros((seq_len, d_model))
    return {
        "table": table.astype(np.float32),
        "learned": np.float32(encoding == "learned"),
        "rows": np.minimum(np.arange(seq_len), max_len - 1).astype(np.int32),
        "cos": cos, "sin": sin,
        "bias": attention_bias(encoding, seq_len, n_heads, causal),
        "t5": np.float32(encoding == "t5"), "buckets": buckets.astype(np.int32),
    }


def layer_plan(encoding: str, n_layers: int) -> list[dict]:
    r"""The position handling of each of ``n_layers`` layers for an encoding of :data:`LAYERED`, as entries of
    :func:`pe_lib.layer_positions` (``"attention"``, ``"window"``, ``"rope"``), plus ``"pairs"``: how many of
    the fastest pairs rotate (all, or :math:`\lfloor p\,d_k/2 \rfloor` of them for ``"p-rope"``, None for all).
    Raises ``ValueError`` when no layer would lack RoPE (fewer than 4 layers for the ``+nope`` schemes)."""
    if encoding == "p-rope":
        return [{"attention": "full", "window": None, "rope": True, "pairs": P_ROPE} for _ in range(n_layers)]
    layers = [dict(la, pairs=None) for la in layer_positions(LAYER_CONFIGS[encoding] | {"num_hidden_layers": n_layers})]
    if all(la["rope"] for la in layers):
        raise ValueError(f"{encoding!r} leaves every fourth layer without positions, so it needs n_layers >= 4, "
                         f"got n_layers={n_layers}")
    return layers


def _layered_inputs(encoding, seq_len, *, d_model, n_heads, causal, max_len, n_layers, inv_freq, attention_factor):
    """:func:`position_inputs` of an encoding of :data:`LAYERED`: each layer's slice is that of ``"rope"`` or
    ``"none"``, with only the fastest pairs rotating (p-RoPE) and keys outside the layer's window masked."""
    if n_layers is None:
        raise ValueError(f"encoding {encoding!r} differs from layer to layer: position_inputs needs n_layers")
    if not causal:
        raise ValueError(f"encoding {encoding!r} copies causal decoders: it needs a causal task")
    common = dict(d_model=d_model, n_heads=n_heads, causal=causal, max_len=max_len)
    rope = position_inputs("rope", seq_len, inv_freq=inv_freq, attention_factor=attention_factor, **common)
    plain = position_inputs("none", seq_len, **common)
    cos, sin, bias = [], [], []
    for layer in layer_plan(encoding, n_layers):
        source = rope if layer["rope"] else plain
        fast = source["cos"].shape[-1] if layer["pairs"] is None else int(layer["pairs"] * source["cos"].shape[-1])
        still = np.arange(source["cos"].shape[-1]) >= fast  # pairs i >= fast stand still (omega_i = 0)
        cos.append(np.where(still, np.float32(1), source["cos"]))
        sin.append(np.where(still, np.float32(0), source["sin"]))
        seen = layer_attention_mask(layer, seq_len)  # (L, L): the keys this layer's query sees
        bias.append(np.where(seen, plain["bias"], -np.inf).astype(np.float32))
    return plain | {"cos": np.stack(cos), "sin": np.stack(sin), "bias": np.stack(bias)}


# ---- initialisation --------------------------------------------------------------------------------
def init_params(seed, *, vocab_size: int, d_model: int, n_layers: int, n_heads: int, max_len: int,
                learned_init_std: float = LEARNED_INIT_STD) -> dict:
    r"""Random parameters (numpy float32) from ``numpy.random.default_rng([seed, 1])``: every weight
    with ``fan_in`` input rows :math:`\sim\mathcal N(0, 1/\mathrm{fan\_in})`, token embeddings
    :math:`\mathcal N(0, 1)`, a learned position table :math:`\mathcal N(0, s^2)` with
    ``s = learned_init_std`` (default ``LEARNED_INIT_STD``, :math:`1/\sqrt 2`), biases 0,
    layer-norm gains 1. Returns the pytree described in the module docstring."""
    rng = np.random.default_rng([seed, 1])
    d_k, d_ff = d_model // n_heads, 4 * d_model

    def normal(shape, std):
        return (std * rng.standard_normal(shape)).astype(np.float32)

    def block():
        ones, zeros = np.ones(d_model, np.float32), np.zeros(d_model, np.float32)
        return {
            "ln1_g": ones, "ln1_b": zeros, "ln2_g": ones.copy(), "ln2_b": zeros.copy(),
            "w_q": normal((n_heads, d_model, d_k), d_model**-0.5),
            "w_k": normal((n_heads, d_model, d_k), d_model**-0.5),
            "w_v": normal((n_heads, d_model, d_k), d_model**-0.5),
            "w_o": normal((d_model, d_model), d_model**-0.5),
            "w_1": normal((d_model, d_ff), d_model**-0.5), "b_1": np.zeros(d_ff, np.float32),
            "w_2": normal((d_ff, d_model), d_ff**-0.5), "b_2": zeros.copy(),
        }

    params = {
        "embed": normal((vocab_size, d_model), 1.0),
        "blocks": [block() for _ in range(n_layers)],
        "lnf_g": np.ones(d_model, np.float32), "lnf_b": np.zeros(d_model, np.float32),
        "unembed": normal((d_model, vocab_size), d_model**-0.5),
    }
    # every model has the table (one compiled step for all encodings); only "learned" adds it, so for
    # the others its gradient is 0 and Adam leaves it as drawn
    params["pos"] = normal((max_len, d_model), learned_init_std)
    params["rel_bias"] = np.zeros((T5_NUM_BUCKETS, n_heads), np.float32)  # T5's bias per bucket and head
    return params


# ---- the forward pass ------------------------------------------------------------------------------
def layer_norm(x, g, b):
    r""":math:`\mathrm{LN}(x) = g \odot (x - \bar x)/\sqrt{\mathrm{Var}(x) + \varepsilon} + b` along the last axis."""
    mean = x.mean(axis=-1, keepdims=True)  # x̄
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # Var(x)
    return g * (x - mean) / jnp.sqrt(var + LN_EPS) + b


def attention(h, block, inputs, bias):
    r"""Multi-head attention of normalised states ``h`` (``(B, L, d_model)``).

    Returns ``(out, weights)``: ``out`` ``(B, L, d_model)`` = concat(heads) :math:`W_O`, and the
    attention weights ``(B, n_heads, L, L)``, rows summing to 1.
    """
    batch, seq_len, d_model = h.shape
    q = jnp.einsum("bld,hdk->bhlk", h, block["w_q"])  # q = LN(x) W_Q^h, (B, H, L, d_k)
    k = jnp.einsum("bld,hdk->bhlk", h, block["w_k"])  # k = LN(x) W_K^h
    v = jnp.einsum("bld,hdk->bhlk", h, block["w_v"])  # v = LN(x) W_V^h
    q = rope_rotate(q, inputs["cos"], inputs["sin"])  # R_i q_i (identity unless RoPE)
    k = rope_rotate(k, inputs["cos"], inputs["sin"])  # R_j k_j
    scores = jnp.einsum("bhik,bhjk->bhij", q, k) / jnp.sqrt(q.shape[-1]) + bias  # q_i.k_j/sqrt(d_k) + B_hij
    weights = jax.nn.softmax(scores, axis=-1)  # (B, H, L, L)
    heads = jnp.einsum("bhij,bhjk->bhik", weights, v)  # sum_j a_ij v_j
    concat = heads.transpose(0, 2, 1, 3).reshape(batch, seq_len, d_model)  # [head_1, ..., head_H]
    return concat @ block["w_o"], weights, scores


def mlp(h, block):
    r""":math:`\max(0, h W_1 + b_1) W_2 + b_2`, position-wise."""
    return jax.nn.relu(h @ block["w_1"] + block["b_1"]) @ block["w_2"] + block["b_2"]


def _layer_inputs(inputs, bias, layer: int):
    """The rotation and bias of block ``layer``: ``inputs`` and ``bias`` themselves when every layer shares them
    (``cos`` of shape ``(L, d_k/2)``), else their slice ``layer`` (shapes with a leading layer axis)."""
    if inputs["cos"].ndim == 2:  # decided while tracing: one scheme for every layer
        return inputs, bias
    return {"cos": inputs["cos"][layer], "sin": inputs["sin"][layer]}, bias[layer]


def forward(params, tokens, inputs, *, collect: bool = False, scores: bool = False, relative: bool = True):
    r"""Logits ``(B, L, V)`` for integer ``tokens`` ``(B, L)``; ``inputs`` from :func:`position_inputs`.

    ``relative=False`` leaves out T5's trained bias :math:`b_{h,\mathrm{bucket}(j-i)}`: the same logits for every
    encoding but ``"t5"`` (whose ``inputs`` scale that bias by exactly 0), without the cost of its gradient, a sum
    over the batch of every score (the training step of the other encodings compiles with ``False``).

    With ``collect=True`` returns ``(logits, states, weights)``: the residual stream
    ``(n_layers + 1, B, L, d_model)`` (index 0 is :math:`x^{(0)}`, index :math:`\ell` the output of
    block :math:`\ell`) and the attention weights ``(n_layers, B, n_heads, L, L)``.
    """
    x = params["embed"][tokens]  # E[t_i], (B, L, d_model)
    x = x + inputs["table"] + inputs["learned"] * params["pos"][inputs["rows"]]  # + PE(i) or W_pos[i]
    bias = inputs["bias"]
    if relative:  # + b_{h,bucket(j-i)}: (..., H, L, L), one relative bias for all layers, as in T5
        bias = bias + inputs["t5"] * jnp.moveaxis(params["rel_bias"][inputs["buckets"]], -1, -3)
    states, maps = [x], []
    for layer, block in enumerate(params["blocks"]):
        seen, b = _layer_inputs(inputs, bias, layer)
        out, weights, raw = attention(layer_norm(x, block["ln1_g"], block["ln1_b"]), block, seen, b)
        x = x + out  # y = x + MHA(LN(x))
        x = x + mlp(layer_norm(x, block["ln2_g"], block["ln2_b"]), block)  # x' = y + MLP(LN(y))
        states.append(x)
        maps.append(raw if scores else weights)
    logits = layer_norm(x, params["lnf_g"], params["lnf_b"]) @ params["unembed"]  # LN(x) W_U
    if collect:
        return logits, jnp.stack(states), jnp.stack(maps)
    return logits


def loss_fn(params, tokens, targets, counts, inputs, *, relative: bool = True):
    r"""Mean cross-entropy :math:`-\log p(y_i \mid \text{tokens})` over the positions that count
    (``counts``, ``(L,)`` bools) of every sequence; ``relative`` as :func:`forward`."""
    logits = forward(params, tokens, inputs, relative=relative)
    logp = jax.nn.log_softmax(logits, axis=-1)  # (B, L, V)
    nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]  # -log p(y_i), (B, L)
    weight = counts.astype(nll.dtype)  # 1 where the target counts
    return jnp.sum(nll * weight) / (nll.shape[0] * jnp.sum(weight))
