r"""Synthetic sequence tasks for the trained Transformers of :mod:`pe_lib.training` (numpy only).

Each task draws ``n_sequences`` sequences of ``seq_len`` tokens uniformly from a vocabulary of
``vocab_size`` tokens and asks for one target token per position. Three tasks:

* ``"lookback"`` (causal, a decoder): the target at position :math:`i \ge k` is the input at
  :math:`i - k`,

  .. math:: y_i = x_{i-k}, \qquad i = k, \dots, L-1;

  a purely *relative* rule: the same offset everywhere, at any length. Positions :math:`i < k` have
  no token :math:`k` places back and do not count.
* ``"reverse"`` (bidirectional, an encoder): the target at position ``i`` is the input at
  :math:`L - 1 - i`,

  .. math:: y_i = x_{L-1-i}, \qquad i = 0, \dots, L-1;

  an *absolute* rule: which token to copy depends on where the query stands and on ``L``.
* ``"first"`` (causal, a decoder): the target at every position :math:`i \ge 1` is the first token,

  .. math:: y_i = x_0, \qquad i = 1, \dots, L-1;

  a rule about the *start of the sequence*: a model must recognise which token came first
  (chapter 19 pads and packs such sequences). Position 0 does not count.

A fourth task, ``"text"`` (causal), is real language: windows of a corpus and, as target, the next
character, :math:`y_i = c_{s+i+1}` (:mod:`pe_lib.trained.corpus`; every position counts).

Usage::

    tokens, targets, counts = pe_lib.task_batch("lookback", 4, 16, seed=0)
    # tokens, targets: (4, 16) ints; counts: (16,) bools, True where the target is scored
"""

from __future__ import annotations

import numpy as np

from .._validate import check_choice, check_positive_int

TASKS = ("lookback", "reverse", "first", "text")
# the causal (decoder) tasks; the others attend in both directions
CAUSAL_TASKS = ("lookback", "first", "text")
DEFAULT_VOCAB_SIZE = 16
DEFAULT_OFFSET = 3  # k of "lookback"


def check_task(task) -> str:
    """Return ``task`` if it is one of :data:`TASKS`, else raise ``ValueError`` naming them."""
    return check_choice(task, TASKS, name="task")


def is_causal(task) -> bool:
    """True for a task a decoder solves (query ``i`` may only see keys ``j <= i``)."""
    return check_task(task) in CAUSAL_TASKS


def scored_positions(task, seq_len: int, *, offset: int = DEFAULT_OFFSET) -> np.ndarray:
    r"""Which target positions count, shape ``(seq_len,)`` of bools.

    ``"lookback"``: :math:`i \ge k` (``offset`` = ``k``); ``"reverse"``: every position; ``"first"``:
    :math:`i \ge 1`.
    """
    task = check_task(task)
    seq_len = check_positive_int(seq_len, name="seq_len")
    offset = check_positive_int(offset, name="offset")
    i = np.arange(seq_len)
    if task == "lookback":
        if offset >= seq_len:
            raise ValueError(
                f"lookback with offset k={offset} needs seq_len > k (some position i >= k to score), "
                f"got seq_len={seq_len}"
            )
        return i >= offset  # y_i = x_{i-k} exists for i >= k
    if task == "first":
        if seq_len < 2:
            raise ValueError(f"first needs seq_len >= 2 (position 0 has no target), got seq_len={seq_len}")
        return i >= 1  # y_i = x_0, scored after the first token
    return np.ones(seq_len, dtype=bool)


def task_targets(task, tokens, *, offset: int = DEFAULT_OFFSET) -> np.ndarray:
    r"""The target of every position of ``tokens`` (``(..., L)`` ints), same shape.

    ``"lookback"``: ``targets[..., i] = tokens[..., i - k]`` for ``i >= k`` and ``0`` (not scored,
    see :func:`scored_positions`) for ``i < k``; ``"reverse"``: ``targets[..., i] = tokens[..., L-1-i]``;
    ``"first"``: ``targets[..., i] = tokens[..., 0]`` (position 0 included, not scored).
    """
    task = check_task(task)
    if task == "text":
        raise ValueError("the targets of 'text' are the next characters of the corpus, beyond the window: "
                         "draw them with task_batch('text', ...)")
    tokens = np.asarray(tokens)
    if tokens.ndim < 1 or tokens.dtype.kind not in "iu":
        raise ValueError(f"tokens must be an integer array of shape (..., L), got dtype {tokens.dtype}, "
                         f"shape {tokens.shape}")
    counts = scored_positions(task, tokens.shape[-1], offset=offset)  # also checks offset < L
    if task == "reverse":
        return tokens[..., ::-1].copy()  # y_i = x_{L-1-i}
    if task == "first":
        return np.broadcast_to(tokens[..., :1], tokens.shape).copy()  # y_i = x_0
    targets = np.zeros_like(tokens)
    targets[..., counts] = tokens[..., : tokens.shape[-1] - offset]  # y_i = x_{i-k}, i >= k
    return targets


def task_batch(
    task,
    n_sequences: int,
    seq_len: int,
    *,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    offset: int = DEFAULT_OFFSET,
    seed=0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``n_sequences`` random sequences of a task and their targets.

    Tokens are uniform on ``0 .. vocab_size-1``, drawn by ``numpy.random.default_rng(seed)``
    (``seed`` may be an int or a sequence of ints, as numpy accepts).
    Returns ``(tokens, targets, counts)``: two ``(n_sequences, seq_len)`` int32 arrays and the
    ``(seq_len,)`` bool mask of the positions that count (:func:`scored_positions`).
    """
    task = check_task(task)
    if task == "text":  # windows of real text (pe_lib.trained.corpus); vocab_size and offset do not apply
        from .corpus import text_batch

        return text_batch(n_sequences, seq_len, seed=seed)
    n_sequences = check_positive_int(n_sequences, name="n_sequences")
    seq_len = check_positive_int(seq_len, name="seq_len")
    vocab_size = check_positive_int(vocab_size, name="vocab_size", minimum=2)
    counts = scored_positions(task, seq_len, offset=offset)
    tokens = np.random.default_rng(seed).integers(0, vocab_size, size=(n_sequences, seq_len)).astype(np.int32)
    return tokens, task_targets(task, tokens, offset=offset), counts
