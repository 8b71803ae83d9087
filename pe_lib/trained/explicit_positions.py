r"""A trained model run with the position of every token and the keys of every query given explicitly.

:func:`pe_lib.task_accuracy` and :func:`pe_lib.predict` feed a model positions :math:`0 \dots L-1` and
its task's mask. Serving and training pipelines choose both themselves: left padding moves the real
tokens to the right end of a row, packing puts several documents in one row, a KV cache holds keys
rotated at positions of its own. :func:`predict_at` runs a model of :func:`pe_lib.train_transformer`
with ``positions`` :math:`p_{b,t}` and the mask ``allowed`` :math:`A_{b,i,j}` as data, each scheme
using the positions where it always does:

* ``"sinusoidal"`` adds :math:`\mathrm{PE}(p_{b,t})` (:func:`pe_lib.sinusoidal`), ``"learned"`` adds row
  :math:`p_{b,t}` of its table (which has one row per training position: larger positions raise
  ``ValueError``, where PyTorch raises ``IndexError``);
* ``"rope"`` rotates the query and the key of token :math:`t` by :math:`p_{b,t}\,\omega_i` — with the
  model's :math:`\omega_i`, or ``inv_freq`` and ``attention_factor`` from
  :func:`pe_lib.rope_scaling_frequencies` to try a ``rope_scaling`` on it;
* ``"alibi"`` adds :math:`-m_h\,|p_{b,i} - p_{b,j}|`;
* every head adds :math:`0` where :math:`A_{b,i,j}` and :math:`-\infty` elsewhere.

With :math:`p_{b,t} = t` and the task's own mask, :func:`predict_at` gives :func:`pe_lib.predict`'s
answers (tested). JAX is imported on the first call.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_finite_array, check_finite_real
from ..encodings.alibi import alibi_slopes
from ..encodings.frequencies import frequencies
from ..encodings.sinusoidal import sinusoidal
from ..encodings.t5 import t5_relative_bucket
from .training import _forward, check_model


def _tokens(model, tokens) -> np.ndarray:
    arr = np.asarray(tokens)
    if arr.ndim != 2 or arr.dtype.kind not in "iu" or arr.size == 0:
        raise ValueError(f"tokens must be a non-empty integer array of shape (batch, L), got dtype {arr.dtype} "
                         f"and shape {arr.shape}")
    vocab = model.config.vocab_size
    if arr.min() < 0 or arr.max() >= vocab:
        raise ValueError(f"tokens must lie in 0..{vocab - 1} (the model's vocabulary), got {arr.min()}..{arr.max()}")
    return arr.astype(np.int32)


def _positions(model, positions, shape) -> np.ndarray:
    p = np.asarray(positions)
    if p.dtype.kind not in "iu" or p.shape not in (shape, shape[1:]):
        raise ValueError(f"positions must be integers of shape {shape} (one per token) or {shape[1:]} (the same for "
                         f"every row), got dtype {p.dtype} and shape {p.shape}")
    p = np.broadcast_to(p, shape).astype(np.int64)
    if p.min() < 0:
        raise ValueError(f"positions must be >= 0, got {int(p.min())}")
    rows = model.config.seq_len  # the learned table has one row per training position
    if model.config.encoding == "learned" and p.max() >= rows:
        raise ValueError(f"a learned position table has {rows} rows (positions 0..{rows - 1}); got position "
                         f"{int(p.max())} (PyTorch would raise IndexError here)")
    return p


def _allowed(allowed, shape) -> np.ndarray:
    batch, length = shape
    a = np.asarray(allowed)
    if a.dtype != bool or a.shape not in ((batch, length, length), (length, length)):
        raise ValueError(f"allowed must be a bool array of shape ({batch}, {length}, {length}) or ({length}, {length}) "
                         f"(query i may see key j), got dtype {a.dtype} and shape {a.shape}")
    a = np.broadcast_to(a, (batch, length, length))
    empty = ~a.any(axis=-1)
    if empty.any():
        b, i = map(int, np.argwhere(empty)[0])
        raise ValueError(f"every query must see at least one key: row {b}, query {i} sees none (let a pad see "
                         "itself: its output is never read)")
    return a


def inputs_at(model, positions, allowed, *, inv_freq, attention_factor: float) -> dict:
    r"""The position inputs of :func:`pe_lib.trained.transformer.forward` for explicit ``positions``
    ``(B, L)`` ints and ``allowed`` ``(B, L, L)`` bools (see the module docstring): ``table``
    ``(B, L, d_model)``, ``learned``, ``rows`` ``(B, L)``, ``cos``/``sin`` ``(N, B, 1, L, d_k/2)`` and
    ``bias`` ``(N, B, H, L, L)`` (the same for each of the ``N`` blocks:
    :func:`~pe_lib.trained.transformer.forward` gives each block its own slice of any rotation but an
    ``(L, d_k/2)`` one), float32, and T5's ``t5`` flag and ``buckets`` ``(B, L, L)`` of the
    relative positions :math:`p_j - p_i`. ``inv_freq`` (``None``: the model's own) and ``attention_factor``
    as :func:`logits_at`, which checks all of them first."""
    config = model.config
    d_k = config.d_model // config.n_heads
    batch, length = positions.shape
    if config.encoding == "rope":
        from . import transformer as tf  # JAX: imported on first use only

        omega = frequencies(d_k, base=tf.ROPE_BASE) if inv_freq is None else inv_freq
        theta = positions[..., None] * omega  # p_{b,t} omega_i, (B, L, d_k/2)
        cos, sin = attention_factor * np.cos(theta), attention_factor * np.sin(theta)
    else:
        cos, sin = np.ones((batch, length, d_k // 2)), np.zeros((batch, length, d_k // 2))
    if config.encoding == "sinusoidal":
        table = sinusoidal(int(positions.max()) + 1, config.d_model)[positions]  # PE(p_{b,t})
    else:
        table = np.zeros((batch, length, config.d_model))
    bias = np.where(allowed, 0.0, -np.inf)[:, None]  # (B, 1, L, L)
    if config.encoding == "alibi":
        distance = np.abs(positions[:, :, None] - positions[:, None, :])  # |p_i - p_j|
        bias = bias - alibi_slopes(config.n_heads)[None, :, None, None] * distance[:, None]
    relative = positions[:, None, :] - positions[:, :, None]  # p_j - p_i, (B, L, L): T5's buckets
    buckets = t5_relative_bucket(relative, bidirectional=not config.causal)  # T5's defaults, as the model
    per_layer = (config.n_layers,)  # forward reads any cos but an (L, d_k/2) one per layer: one copy per block
    return {"table": table.astype(np.float32), "learned": np.float32(config.encoding == "learned"),
            "rows": positions.astype(np.int32),
            "cos": np.broadcast_to(cos[:, None], per_layer + cos[:, None].shape).astype(np.float32),
            "sin": np.broadcast_to(sin[:, None], per_layer + sin[:, None].shape).astype(np.float32),
            "bias": np.broadcast_to(bias, per_layer + (batch, config.n_heads, length, length)).astype(np.float32),
            "t5": np.float32(config.encoding == "t5"), "buckets": buckets.astype(np.int32)}


def logits_at(model, tokens, *, positions, allowed, inv_freq=None, attention_factor: float = 1.0) -> np.ndarray:
    r"""The logits ``(B, L, V)`` of ``model`` on ``tokens`` ``(B, L)`` with explicit ``positions`` and mask.

    ``positions``: integers >= 0, ``(B, L)`` or ``(L,)``; below the table size for ``"learned"``.
    ``allowed``: bools ``(B, L, L)`` or ``(L, L)``, True where query ``i`` may see key ``j``, every row
    with a True. ``inv_freq`` (``(d_k/2,)``) and ``attention_factor`` replace a RoPE model's
    frequencies and multiply its cosines and sines (ignored by other schemes: ``ValueError`` if given).
    """
    model = check_model(model)
    tokens = _tokens(model, tokens)
    positions = _positions(model, positions, tokens.shape)
    allowed = _allowed(allowed, tokens.shape)
    attention_factor = check_finite_real(attention_factor, name="attention_factor")
    d_k = model.config.d_model // model.config.n_heads
    if model.config.encoding != "rope" and (inv_freq is not None or attention_factor != 1.0):
        raise ValueError("inv_freq and attention_factor change RoPE; this model's encoding is "
                         f"{model.config.encoding!r}")
    if inv_freq is not None:
        inv_freq = check_finite_array(inv_freq, name="inv_freq", ndim=1)
        if inv_freq.shape != (d_k // 2,):
            raise ValueError(f"inv_freq must have one frequency per pair of a head: shape ({d_k // 2},), "
                             f"got {inv_freq.shape}")
    inputs = inputs_at(model, positions, allowed, inv_freq=inv_freq, attention_factor=attention_factor)
    return np.asarray(_forward(False)(model.params, tokens, inputs))


def predict_at(model, tokens, *, positions, allowed, inv_freq=None, attention_factor: float = 1.0) -> np.ndarray:
    """The most likely token at every slot (argmax of :func:`logits_at`), int ``(B, L)``."""
    return logits_at(model, tokens, positions=positions, allowed=allowed, inv_freq=inv_freq,
                     attention_factor=attention_factor).argmax(axis=-1)
