r"""Looking inside a trained model of :func:`pe_lib.train_transformer`: attention, residual stream, position table.

All functions return numpy arrays but :func:`model_with_permuted_qk`, which returns the model as code for
the other RoPE layout reads it (chapter 19), and :func:`model_with_uniform_attention`, the model with chosen
blocks attending uniformly (an intervention of chapter 16). Usage::

    model = pe_lib.train_transformer("lookback", "sinusoidal")
    tokens, _, _ = pe_lib.task_batch("lookback", 8, model.seq_len, seed=1)
    a = pe_lib.trained_attention(model, tokens[0])   # (n_layers, n_heads, L, L), rows sum to 1
    s = pe_lib.residual_stream(model, tokens)        # (n_layers + 1, 8, L, d_model), for pe_lib.layer_probe
    p = pe_lib.position_table(model)                 # (L, d_model): what the model adds at the input
    pe_lib.attention_by_offset(a[0, 0])              # mean weight on the key Delta = i - j places back
    model.initial()                                  # the same model at initialisation
    pe_lib.parameter_count(model.params)             # how many numbers were trained
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._validate import check_finite_array
from ..modern.conventions import permuted_qk
from .training import TrainedTransformer, check_length, check_model, run_model


def _tokens(model, tokens) -> tuple[np.ndarray, bool]:
    arr = np.asarray(tokens)
    if arr.ndim not in (1, 2) or arr.dtype.kind not in "iu" or arr.size == 0:
        raise ValueError(f"tokens must be a non-empty integer array of shape (L,) or (batch, L), got dtype "
                         f"{arr.dtype} and shape {arr.shape}")
    vocab = model.config.vocab_size
    if arr.min() < 0 or arr.max() >= vocab:
        raise ValueError(f"tokens must lie in 0..{vocab - 1} (the model's vocabulary), got {arr.min()}..{arr.max()}")
    check_length(model, arr.shape[-1])
    return arr.reshape(-1, arr.shape[-1]), arr.ndim == 1


def predict(model, tokens) -> np.ndarray:
    """The model's most likely token at every position (argmax of the logits), same shape as ``tokens``."""
    model = check_model(model)
    batch, single = _tokens(model, tokens)
    out = run_model(model, batch).argmax(axis=-1)
    return out[0] if single else out


def trained_attention(model, tokens) -> np.ndarray:
    r"""Attention weights :math:`a^{(\ell,h)}_{ij}` of every layer and head on ``tokens``.

    ``tokens``: ``(L,)`` or ``(batch, L)`` integers. Returns ``(n_layers, n_heads, L, L)`` for one
    sequence, ``(n_layers, batch, n_heads, L, L)`` for a batch; row ``i`` is query position ``i``.
    """
    model = check_model(model)
    batch, single = _tokens(model, tokens)
    _, _, weights = run_model(model, batch, collect=True)  # (n_layers, B, H, L, L)
    return weights[:, 0] if single else weights


def residual_stream(model, tokens) -> np.ndarray:
    r"""The residual stream :math:`x^{(\ell)}` before the first block and after each block.

    ``tokens``: ``(L,)`` or ``(batch, L)``. Returns ``(n_layers + 1, L, d_model)`` or
    ``(n_layers + 1, batch, L, d_model)`` (the layout of :func:`pe_lib.run_stack`, ready for
    :func:`pe_lib.layer_probe`); index 0 is token embedding plus position vector.
    """
    model = check_model(model)
    batch, single = _tokens(model, tokens)
    _, states, _ = run_model(model, batch, collect=True)  # (n_layers + 1, B, L, d_model)
    return states[:, 0] if single else states


def position_table(model, seq_len: int | None = None) -> np.ndarray:
    r"""The vectors :math:`P_{pos}` the model adds to the token embeddings, ``(seq_len, d_model)``.

    ``"learned"``: the first ``seq_len`` rows of the trained table (at most the training length);
    ``"sinusoidal"``: :func:`pe_lib.sinusoidal` as the model uses it (float32). ``seq_len`` defaults
    to the training length. The other encodings add no vector and raise ``ValueError``.
    """
    model = check_model(model)
    encoding = model.config.encoding
    if encoding not in ("learned", "sinusoidal"):
        raise ValueError(f"a model with encoding {encoding!r} adds no position vectors; position_table needs "
                         "encoding 'learned' or 'sinusoidal'")
    seq_len = model.seq_len if seq_len is None else check_length(model, seq_len)
    if encoding == "learned":
        return np.asarray(model.params["pos"][:seq_len], dtype=np.float64)
    from ..encodings.sinusoidal import sinusoidal

    return sinusoidal(seq_len, model.config.d_model).astype(np.float32).astype(np.float64)


def attention_by_offset(weights) -> np.ndarray:
    r"""Mean attention weight on the key :math:`\Delta = i - j` places before the query, for
    :math:`\Delta = 0 .. L-1`: :math:`\bar a(\Delta) = \frac{1}{L - \Delta}\sum_{i \ge \Delta} a_{i, i-\Delta}`.

    ``weights``: ``(..., L, L)`` attention matrices. Returns ``(..., L)``.
    """
    w = check_finite_array(weights, name="weights", min_ndim=2, shape_hint="(..., L, L)")
    n = w.shape[-1]
    if w.shape[-2] != n:
        raise ValueError(f"weights must be square (..., L, L) attention matrices, got shape {w.shape}")
    return np.stack([np.diagonal(w, offset=-d, axis1=-2, axis2=-1).mean(axis=-1) for d in range(n)], axis=-1)


def trained_scores(model, tokens, *, max_offset: int | None = None) -> np.ndarray:
    r"""Attention scores before the softmax, :math:`s^{(\ell,h)}_{ij} = q_i\cdot k_j/\sqrt{d_k} + B_{h,ij}`,
    of every layer and head on ``tokens`` (:math:`-\infty` where a key is masked).

    Shapes as :func:`trained_attention`. ``max_offset``: mask the keys more than that many places from the
    query (:func:`pe_lib.trained.transformer.limit_offsets`), as :func:`pe_lib.task_accuracy` does with it.
    """
    model = check_model(model)
    batch, single = _tokens(model, tokens)
    _, _, scores = run_model(model, batch, collect=True, scores=True, max_offset=max_offset)
    return scores[:, 0] if single else scores


def offset_r_squared(weights, *, queries=None) -> float:
    r"""Share of the variance of a causal attention (or score) matrix's entries :math:`a_{ij}`,
    :math:`j \le i`, that their offset :math:`\Delta = i - j` explains:

    .. math::

        R^2 = 1 - \frac{\sum (a_{ij} - \bar a(i - j))^2}{\sum (a_{ij} - \bar a)^2},

    where :math:`\bar a(\Delta)` is the mean of the entries with offset :math:`\Delta` and :math:`\bar a`
    the mean of all, each over the entries used: rows ``queries`` (default all), keys :math:`j \le i`.
    1 when the entries depend on the offset alone (a Toeplitz matrix), 0 when the offset says nothing.

    ``weights``: ``(L, L)``; ``queries``: query rows (integers in ``0 .. L-1``). Returns a float.
    """
    w = check_finite_array(weights, name="weights", ndim=2)
    n = w.shape[0]
    if w.shape != (n, n):
        raise ValueError(f"weights must be a square (L, L) matrix, got shape {w.shape}")
    rows = np.arange(n) if queries is None else np.unique(np.asarray(queries))
    if rows.size == 0 or rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= n:
        raise ValueError(f"queries must be query rows, integers in 0..{n - 1}, got {queries!r}")
    i, j = np.tril_indices(n)
    used = np.isin(i, rows)
    a, offset = w[i[used], j[used]], (i - j)[used]
    by_offset = np.bincount(offset, weights=a) / np.bincount(offset)  # mean of each offset's entries
    total = np.sum((a - a.mean()) ** 2)
    if total == 0:
        raise ValueError("the entries are constant, so the share of their variance is undefined")
    return float(1 - np.sum((a - by_offset[offset]) ** 2) / total)


def model_with_permuted_qk(model, perm) -> TrainedTransformer:
    r"""The same trained model with the last axis of every head's query and key weights reordered by
    ``perm``, :math:`W_Q[..., p]` and :math:`W_K[..., p]` in every layer (:func:`pe_lib.permuted_qk`).
    With ``perm`` from :func:`pe_lib.layout_misread_permutation` it is the checkpoint as code written
    for the other RoPE layout reads it (chapter 19); the identity gives the model back. The other
    parameters, ``initial_params`` and ``losses`` are shared, not copied. Returns a new
    :class:`TrainedTransformer`.
    """
    model = check_model(model)
    if "blocks" not in model.params:
        raise ValueError("model.params must hold the layer blocks ('blocks') of pe_lib.train_transformer")
    return dataclasses.replace(model, params=dict(model.params, blocks=permuted_qk(model.params["blocks"], perm)))


def model_with_uniform_attention(model, blocks=(0,)) -> TrainedTransformer:
    r"""The same trained model with every head of the blocks in ``blocks`` (0-based) attending uniformly: their
    query weights :math:`W_Q` set to zero, so every score :math:`q_i \cdot k_j / \sqrt{d_k}` is 0 and the
    softmax over the keys the mask leaves gives each the same weight, :math:`1/(m+1)` for query :math:`m` of a
    causal model (a bias of ALiBi or T5 would remain; a model without an encoding has none). An intervention: if
    a model's use of position rests on uniform attention in those blocks, it keeps its accuracy. The other
    parameters are shared, not copied. Returns a new :class:`TrainedTransformer`.
    """
    model = check_model(model)
    n_layers = len(model.params["blocks"])
    if isinstance(blocks, (str, bytes)) or not hasattr(blocks, "__iter__"):
        raise ValueError(f"blocks must be a sequence of block indices 0..{n_layers - 1}, got {blocks!r}")
    blocks = tuple(blocks)
    if not blocks or any(isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not 0 <= b < n_layers
                         for b in blocks):
        raise ValueError(f"blocks must be a non-empty sequence of block indices 0..{n_layers - 1}, got {blocks!r}")
    new_blocks = [dict(block, w_q=np.zeros_like(block["w_q"])) if n in blocks else block
                  for n, block in enumerate(model.params["blocks"])]
    return dataclasses.replace(model, params=dict(model.params, blocks=new_blocks))


def parameter_count(params) -> int:
    r"""How many numbers a parameter tree holds: :math:`\sum_{\text{arrays } A} \prod_i \dim_i A`, the sum of the
    sizes of its arrays (a 0-d array counts 1), as an ``int``.

    ``params`` is a model's parameters as :func:`pe_lib.train_transformer` keeps them (``model.params``; the
    layout is in :mod:`pe_lib.trained.transformer`): dicts, lists and tuples nested in any way, whose leaves
    are numeric numpy or JAX arrays. Every array counts, whether or not the model's encoding uses it.
    ``TypeError`` for a leaf that is not a numeric array (a number, a string, ``None``...) and for a model
    passed instead of its ``params``; ``ValueError`` for a tree without any array."""
    if isinstance(params, TrainedTransformer):
        raise TypeError("parameter_count takes a parameter tree: pass model.params, not the model")
    sizes = []
    stack = [params]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        elif hasattr(node, "shape") and hasattr(node, "dtype") and np.dtype(node.dtype).kind in "biufc":
            sizes.append(int(np.prod(node.shape, dtype=np.int64)))
        else:
            raise TypeError(f"a parameter tree holds dicts, lists, tuples and numeric arrays, got a leaf of type "
                            f"{type(node).__name__}: {node!r:.60}")
    if not sizes:
        raise ValueError("the parameter tree holds no array")
    return sum(sizes)
