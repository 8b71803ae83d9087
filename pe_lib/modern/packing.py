r"""Packing: several documents in one sequence, with positions that restart and a mask that separates them.

Training on short documents padded to a common length wastes most of every batch; packing instead
concatenates documents of lengths :math:`n_0, n_1, \dots` into one sequence of :math:`T = \sum_k n_k`
tokens. Two things keep each document as if it were alone:

* **positions that restart** at the start of each document: token :math:`t` of document :math:`k`
  (which starts at :math:`c_k = \sum_{k' < k} n_{k'}`) gets position :math:`s + t - c_k`, ``s`` = ``start``
  (0, or 2 for RoBERTa-like position tables);
* **a block-diagonal mask**: query :math:`i` sees key :math:`j` only if both lie in the same document
  (and :math:`j \le i` in a decoder): :math:`M_{ij} = [d_i = d_j]\,[j \le i]`.

Transformers' ``DataCollatorWithFlattening`` returns exactly these positions (and ``cu_seq_lens``
:math:`= (0, c_1, \dots, T)` for flash-attention's variable-length kernel); when a model is called
with such ``position_ids`` and no ``attention_mask``, transformers 5.23.0 *derives* the document of
every token from them — a new document starts wherever :math:`p_t - p_{t-1} \ne 1`
(``find_packed_sequence_indices`` in ``masking_utils.py``) — and builds the block-diagonal mask. So
in transformers the restarting positions are also what separates the documents: positions that run
on through the pack give one long document. ``make reference`` compares these functions with the
collator and with ``create_causal_mask``.
"""

from __future__ import annotations

import numbers

import numpy as np


def check_lengths(lengths, *, name: str = "lengths") -> np.ndarray:
    """``lengths`` as a non-empty 1-D int64 array of integers >= 1, else ``ValueError`` saying what came."""
    if isinstance(lengths, (str, bytes)):
        raise ValueError(f"{name} must be a 1-D sequence of integers >= 1, got a string {lengths!r}")
    arr = np.asarray(lengths)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of integers >= 1, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers >= 1 (token counts), got dtype {arr.dtype}: {arr.tolist()[:4]}")
    if arr.min() < 1:
        raise ValueError(f"{name} must all be >= 1 (an empty document has no tokens to pack), got {int(arr.min())}")
    return arr.astype(np.int64)


def packed_document_ids(lengths) -> np.ndarray:
    r"""The document :math:`d_t` of every token of the pack: ``[0]*n_0 + [1]*n_1 + ...``, int64 ``(T,)``.

    (The collator's ``seq_idx``.)"""
    n = check_lengths(lengths)
    return np.repeat(np.arange(n.size), n)


def packed_position_ids(lengths, *, start: int = 0) -> np.ndarray:
    r"""Positions that restart at ``start`` for every document: :math:`p_t = s + t - c_{d_t}`, int64 ``(T,)``.

    ``lengths``: the documents' token counts (integers >= 1). ``start``: the position of a document's
    first token, an integer >= 0 (``DataCollatorWithFlattening``'s ``position_ids_start``).
    """
    n = check_lengths(lengths)
    if isinstance(start, bool) or not isinstance(start, numbers.Integral) or start < 0:
        raise ValueError(f"start must be an integer >= 0 (the first position of every document), got {start!r}")
    first = np.cumsum(n) - n  # c_k, the index of each document's first token
    return int(start) + np.arange(n.sum()) - np.repeat(first, n)  # s + t - c_{d_t}


def cu_seq_lens(lengths) -> np.ndarray:
    r"""The cumulative lengths :math:`(0, c_1, \dots, c_K = T)` that flash-attention's variable-length
    kernel takes instead of a mask, int32 ``(K + 1,)``."""
    n = check_lengths(lengths)
    return np.concatenate([[0], np.cumsum(n)]).astype(np.int32)


def packed_attention_mask(lengths, *, causal: bool = True) -> np.ndarray:
    r"""The block-diagonal mask of a pack, :math:`M_{ij} = [d_i = d_j]` (and :math:`[j \le i]` if ``causal``).

    Returns a bool array ``(T, T)``: row ``i`` is the query, column ``j`` the key, True where
    attention is allowed.
    """
    d = packed_document_ids(lengths)
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be True (a decoder) or False (an encoder), got {causal!r}")
    same = d[:, None] == d[None, :]  # [d_i = d_j]
    if causal:
        same &= np.tril(np.ones((d.size, d.size), dtype=bool))  # [j <= i]
    return same


def documents_from_position_ids(position_ids) -> np.ndarray:
    r"""The document of every token, read off packed positions as transformers 5.23.0 does.

    A new document starts wherever the position does not go up by exactly one:
    :math:`d_0 = 0`, :math:`d_t = d_{t-1} + [p_t - p_{t-1} \ne 1]`. ``position_ids``: integers, shape
    ``(T,)`` or ``(batch, T)``. Returns int64 of the same shape. Source: ``find_packed_sequence_indices``
    in ``src/transformers/masking_utils.py`` (which returns ``None`` instead of all zeros).
    """
    p = np.asarray(position_ids)
    if p.dtype.kind not in "iu" or p.ndim not in (1, 2) or p.shape[-1] == 0:
        raise ValueError(f"position_ids must be a non-empty integer array of shape (T,) or (batch, T), "
                         f"got dtype {p.dtype} and shape {p.shape}")
    p = p.astype(np.int64)
    step = np.diff(p, axis=-1)  # p_t - p_{t-1}
    starts = np.concatenate([np.zeros(p.shape[:-1] + (1,), dtype=np.int64), (step != 1).astype(np.int64)], axis=-1)
    return np.cumsum(starts, axis=-1)
