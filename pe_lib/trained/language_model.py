r"""How well a trained model predicts held-out data: :func:`task_loss` for every task, and for models trained on
``"text"`` :func:`text_loss`, bits per character at any length (this module sits above :mod:`.training`, which
never imports it: one way through the code).

.. math:: \mathrm{bpc} = -\frac{1}{N}\sum_{n=1}^{N} \log_2 p(c_n \mid c_{wL}, \dots, c_{n-1}),

the mean over the :math:`N` scored characters of the held-out text, each predicted from the characters
before it in its own window of :math:`L` (non-overlapping windows: :func:`pe_lib.held_out_windows`, the
"nonoverlapping evaluation" of Press et al. 2022, Section 4). Usage::

    model = pe_lib.train_transformer("text", "alibi", seq_len=64, steps=2000)
    pe_lib.task_loss(model, 512)    # bits per character on windows of 512 characters (calls text_loss)
"""

from __future__ import annotations

import numpy as np

from .corpus import held_out_windows
from .training import EVAL_SEED, _evaluate, check_length, check_model, run_model

EVAL_BATCH = 32  # windows per forward pass (the last batch is padded: one compiled pass per length)


def log2_softmax(logits) -> np.ndarray:
    r""":math:`\log_2 \mathrm{softmax}(z)_v = (z_v - \max z - \log\sum_u e^{z_u - \max z}) / \ln 2` along the
    last axis (float64, same shape)."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return (z - np.log(np.exp(z).sum(axis=-1, keepdims=True))) / np.log(2.0)


def text_loss(model, seq_len, *, n_characters: int | None = None, text=None, corpus="kjv") -> float:
    r"""Mean held-out cross-entropy of ``model`` (trained on ``"text"``) in bits per character, on
    non-overlapping windows of ``seq_len`` characters (may differ from the training length; a learned
    table raises ``ValueError`` past its rows).

    ``n_characters``: score only the first that many characters of the held-out text, rounded down to whole
    windows (the same text for every length when it is a multiple of each). ``text``: score this str
    instead of the corpus's held-out text. Returns a float (``log2(128) = 7`` for a uniform guess).
    """
    model = check_model(model)
    if model.task != "text":
        raise ValueError(f"text_loss scores language models (task 'text'), got a model of task {model.task!r}: "
                         f"use task_loss or task_accuracy")
    seq_len = check_length(model, seq_len)
    tokens, targets = held_out_windows(seq_len, n_characters=n_characters, text=text, corpus=corpus)
    total = 0.0
    for start in range(0, len(tokens), EVAL_BATCH):
        batch = tokens[start:start + EVAL_BATCH]
        padded = np.concatenate([batch, np.zeros((EVAL_BATCH - len(batch), seq_len), np.int32)])
        logp = log2_softmax(run_model(model, padded)[: len(batch)])  # (B, L, V)
        total -= np.take_along_axis(logp, targets[start:start + EVAL_BATCH, :, None], axis=-1).sum()
    return float(total / targets.size)


def task_loss(model, seq_len, *, n_sequences: int = 256, seed=EVAL_SEED, max_offset: int | None = None,
              **text_options) -> float:
    r"""Mean held-out cross-entropy of ``model`` at length ``seq_len``; returns a float >= 0.

    Synthetic tasks: :math:`-\frac1N\sum \ln p(y_i)` in nats over the targets that count, on the
    sequences of :func:`task_accuracy` (same arguments). Unlike the accuracy it keeps falling once
    every target is right, so it separates models that all score 100%.

    Task ``"text"``: bits per character on non-overlapping held-out windows, computed by
    :func:`pe_lib.trained.language_model.text_loss`, which takes ``text_options`` (``n_characters``,
    ``text``, ``corpus``); ``n_sequences``, ``seed`` and ``max_offset`` do not apply to it.
    """
    model = check_model(model)
    if model.task == "text":
        if (n_sequences, seed, max_offset) != (256, EVAL_SEED, None):
            raise ValueError("task_loss of a 'text' model takes n_characters, text and corpus; n_sequences, seed "
                             f"and max_offset apply to the synthetic tasks, got {n_sequences}, {seed}, {max_offset}")
        return text_loss(model, seq_len, **text_options)
    if text_options:
        raise ValueError(f"{', '.join(sorted(text_options))} apply only to models of task 'text', "
                         f"got a model of task {model.task!r}")
    logits, targets, counts = _evaluate(model, seq_len, n_sequences, seed, max_offset)
    z = logits[:, counts].astype(np.float64)  # (B, scored, V)
    top = z.max(axis=-1, keepdims=True)
    log_p = z - top - np.log(np.exp(z - top).sum(axis=-1, keepdims=True))  # log softmax
    return float(-np.mean(np.take_along_axis(log_p, targets[..., None], axis=-1)))
