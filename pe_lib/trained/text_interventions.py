r"""Stored text models scored with their position scheme altered at evaluation, and the loss at each position.

Nothing here trains: each function runs a model trained on ``"text"`` (for instance one of chapter 20's
stored models, :func:`pe_lib.trained.text_runs.load_models`) on the held-out windows of
:func:`pe_lib.held_out_windows` and returns the cross-entropy of every predicted character,

.. math:: b_{w,i} = -\log_2 p(c_{wL+i+1} \mid c_{wL}, \dots, c_{wL+i}), \qquad
    w = 0 \dots W-1,\ i = 0 \dots L-1,

with one of two interventions that ask *why* a scheme fails past its training length :math:`L_0`
(``model.config.seq_len``):

* ``"clamp buckets"`` (T5's bias only): the relative distance is clipped to the range training showed
  before it is put in a bucket,

  .. math:: \tilde b(j - i) = \mathrm{bucket}\bigl(\mathrm{clip}(j - i,\ -(L_0 - 1),\ L_0 - 1)\bigr),

  so a key further back than :math:`L_0 - 1` gets the bias of the largest bucket training reached,
  :math:`\mathrm{bucket}(-(L_0-1))`, instead of the untrained (still zero) bias of a bucket beyond it. For a
  causal model the bucket is non-decreasing in the distance :math:`i - j \ge 0`, so this *is* the bucket
  index clamped, :math:`\min(\mathrm{bucket}(j-i), \mathrm{bucket}(-(L_0-1)))`.
* ``"hide far keys"`` (any scheme): the score of every key more than :math:`L_0 - 1` places from the
  query is :math:`-\infty` (:func:`pe_lib.trained.transformer.limit_offsets` with
  :math:`\Delta_\max = L_0 - 1`, the mask of chapter 15): a query never sees an offset training did not
  show, though with two layers information from further back still arrives through the keys' own states,
  and an absolute scheme still meets positions it never saw.

Usage::

    bits = window_bits(model, 512)                          # (W, 512) bits of each predicted character
    bits.mean()                                              # = pe_lib.task_loss(model, 512) (bits per character)
    window_bits(model, 512, intervention="hide far keys").mean()
    position_means(bits, 32)                                 # (16,) mean bits over positions 0-31, 32-63, ...
"""

from __future__ import annotations

import numpy as np

from .._validate import check_choice, check_finite_array, check_positive_int
from ..encodings.t5 import t5_relative_bucket
from .corpus import held_out_windows
from .language_model import EVAL_BATCH, log2_softmax
from .training import _forward, _inputs, check_length, check_model

INTERVENTIONS = ("clamp buckets", "hide far keys")


def clamped_t5_buckets(seq_len: int, train_len: int, *, causal: bool = True) -> np.ndarray:
    r"""T5's bucket of every query-key pair of ``seq_len`` tokens with the relative distance clipped to what
    windows of ``train_len`` tokens contain: entry :math:`(i, j)` is
    :math:`\mathrm{bucket}(\mathrm{clip}(j - i, -(L_0 - 1), L_0 - 1))` with :math:`L_0` = ``train_len``, T5's 32
    buckets up to distance 128 (:func:`pe_lib.t5_relative_bucket`, bidirectional unless ``causal``), as the
    models of :mod:`pe_lib.trained.transformer` bucket. Returns ``(seq_len, seq_len)`` int32."""
    from . import transformer as tf  # the bucket settings the models were trained with

    seq_len = check_positive_int(seq_len, name="seq_len")
    train_len = check_positive_int(train_len, name="train_len")
    i = np.arange(seq_len)
    rel = np.clip(i[None, :] - i[:, None], -(train_len - 1), train_len - 1)  # j - i, clipped
    return t5_relative_bucket(rel, bidirectional=not causal, num_buckets=tf.T5_NUM_BUCKETS,
                              max_distance=tf.T5_MAX_DISTANCE).astype(np.int32)


def intervened_inputs(model, seq_len: int, intervention: str | None = None) -> dict:
    """The position inputs :func:`pe_lib.trained.transformer.forward` reads for ``seq_len`` tokens
    (:func:`pe_lib.trained.transformer.position_inputs`), altered by ``intervention`` (one of
    :data:`INTERVENTIONS`, or ``None`` for none; see the module docstring). ``ValueError`` for an unknown
    intervention, ``"clamp buckets"`` on a model without T5's bias, or a length a learned table cannot reach."""
    model = check_model(model)
    seq_len = check_length(model, seq_len)
    config = model.config
    if intervention is None:
        return _inputs(config, seq_len)
    check_choice(intervention, INTERVENTIONS, name="intervention")
    if intervention == "hide far keys":
        return _inputs(config, seq_len, max_offset=config.seq_len - 1)
    if config.encoding != "t5":
        raise ValueError(f"intervention 'clamp buckets' changes T5's buckets; this model's encoding is "
                         f"{config.encoding!r}, which has none: use 'hide far keys' or intervention=None")
    inputs = _inputs(config, seq_len)
    inputs["buckets"] = clamped_t5_buckets(seq_len, config.seq_len, causal=config.causal)
    return inputs


def window_bits(model, seq_len: int, *, intervention: str | None = None, n_characters: int | None = None,
                text=None, corpus="kjv") -> np.ndarray:
    r"""The cross-entropy in bits of every character a text model predicts on the held-out windows of
    ``seq_len`` characters (:func:`pe_lib.held_out_windows`, which takes ``n_characters``, ``text`` and
    ``corpus``), with the position scheme altered by ``intervention`` (see :func:`intervened_inputs`).

    Entry :math:`(w, i)` is :math:`-\log_2 p(c_{wL+i+1} \mid c_{wL} \dots c_{wL+i})`; with no intervention
    its mean is :func:`pe_lib.task_loss`'s bits per character. Returns ``(n_windows, seq_len)`` float64.
    """
    model = check_model(model)
    if model.task != "text":
        raise ValueError(f"window_bits scores language models (task 'text'), got a model of task {model.task!r}")
    inputs = intervened_inputs(model, seq_len, intervention)
    tokens, targets = held_out_windows(seq_len, n_characters=n_characters, text=text, corpus=corpus)
    bits = np.empty(targets.shape, dtype=np.float64)
    for start in range(0, len(tokens), EVAL_BATCH):
        batch = tokens[start:start + EVAL_BATCH]
        padded = np.concatenate([batch, np.zeros((EVAL_BATCH - len(batch), seq_len), np.int32)])
        logp = log2_softmax(np.asarray(_forward(False)(model.params, padded, inputs))[: len(batch)])  # (B, L, V)
        bits[start:start + len(batch)] = -np.take_along_axis(logp, targets[start:start + EVAL_BATCH, :, None],
                                                             axis=-1)[..., 0]
    return bits


def position_means(bits, width: int = 1) -> np.ndarray:
    r"""The mean of ``bits`` (``(n_windows, L)``, from :func:`window_bits`) over the windows and over
    consecutive blocks of ``width`` positions: entry :math:`k` is the mean of :math:`b_{w,i}` over all
    :math:`w` and :math:`kW \le i < (k+1)W`. ``L`` must be a multiple of ``width``. Returns ``(L / width,)``."""
    bits = check_finite_array(bits, name="bits", ndim=2)
    width = check_positive_int(width, name="width")
    if bits.shape[1] % width:
        raise ValueError(f"width={width} must divide the number of positions, {bits.shape[1]}")
    return bits.reshape(bits.shape[0], -1, width).mean(axis=(0, 2))
