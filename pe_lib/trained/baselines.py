r"""What a model can score on the tasks of :mod:`pe_lib.tasks` without knowing the order of the tokens.

A model that knows *which* tokens a sequence holds but not *where* they stand can still beat chance
(:math:`1/V` for ``V`` tokens): the target is one of the tokens it sees, so the most frequent
candidate is the best guess. Given the candidates -- the tokens among which the target hides, each
equally likely to be it -- the guess "the most frequent candidate" is right with probability

.. math::

    a_i = \frac{\max_t \#\{\text{candidates equal to } t\}}{\#\text{candidates}},

the order-blind accuracy at position ``i``:

* ``"reverse"`` (target :math:`x_{L-1-i}`): the candidates are the other :math:`L - 1` tokens of the
  sequence (the query knows its own token); in the middle of an odd-length sequence the target is
  the query's own token, so :math:`a_i = 1`;
* ``"lookback"`` (target :math:`x_{i-k}`) and ``"first"`` (target :math:`x_0`): the candidates are the
  :math:`i` tokens before the query.

A Transformer without any positional information and without a causal mask is
permutation-equivariant (chapter 1), so on ``"reverse"`` it can do no better than this. Numpy only.
"""

from __future__ import annotations

import numpy as np

from .tasks import DEFAULT_OFFSET, check_task, scored_positions


def order_blind_accuracy(task, tokens, *, offset: int = DEFAULT_OFFSET) -> np.ndarray:
    r"""The order-blind accuracy :math:`a_i` of every position, averaged over the sequences in ``tokens``.

    ``tokens``: ``(n_sequences, L)`` non-negative integers. Returns ``(L,)`` floats in [0, 1], ``NaN``
    at the positions the task does not score (:func:`pe_lib.scored_positions`).
    """
    task = check_task(task)
    x = np.asarray(tokens)
    if x.ndim != 2 or x.dtype.kind not in "iu" or x.size == 0 or x.min() < 0:
        raise ValueError(
            f"tokens must be a non-empty array of non-negative integers of shape (n_sequences, L), got dtype "
            f"{x.dtype} and shape {x.shape}"
        )
    n, seq_len = x.shape
    counts = scored_positions(task, seq_len, offset=offset)  # also checks offset against seq_len
    one_hot = np.eye(int(x.max()) + 1, dtype=np.int64)[x]  # (n, L, V)
    if task == "reverse":
        others = one_hot.sum(axis=1, keepdims=True) - one_hot  # the sequence without the query's token
        acc = others.max(axis=-1) / (seq_len - 1) if seq_len > 1 else np.ones((n, seq_len))
        middle = np.arange(seq_len) == seq_len - 1 - np.arange(seq_len)  # i = L-1-i: its own token
        acc[:, middle] = 1.0
    else:
        before = np.cumsum(one_hot, axis=1) - one_hot  # tokens 0 .. i-1, (n, L, V)
        acc = before.max(axis=-1) / np.maximum(np.arange(seq_len), 1)  # max count / i
    return np.where(counts, acc.mean(axis=0), np.nan)
