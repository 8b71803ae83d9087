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
:math:`= (0, c_1, \dots, T)` for flash-attention's variable-length kernel), and labels whose first
entry in every document is ``-100`` (:func:`packed_labels`). What transformers 5.23.0 makes of a
pack called *without* an attention mask depends on the attention implementation:

* the mask path (``eager``, ``sdpa``, ``flex_attention``): ``create_causal_mask`` derives the document
  of every token from the positions — a new document starts wherever :math:`p_t - p_{t-1} \ne 1`
  (``find_packed_sequence_indices`` in ``masking_utils.py``) — **only if** ``attention_mask is None`` and
  ``past_key_values is None``. ``LlamaModel.forward`` creates a ``DynamicCache`` whenever ``use_cache``
  is true, and ``use_cache`` defaults to the config's, ``True``, in training mode as in evaluation
  (gradient checkpointing turns it off in training). So a plain ``model(input_ids,
  position_ids=...)`` gets the plain causal mask, and the documents see each other
  (:func:`documents_in_transformers_mask`); ``use_cache=False`` gives the block-diagonal mask;
* the flash-attention path ignores the cache here: with one row and positions that are not a single
  increasing run, it cuts the pack wherever the position equals its minimum
  (``prepare_fa_kwargs_from_position_ids`` in ``modeling_flash_attention_utils.py``;
  :func:`cu_seq_lens_from_position_ids`), or takes ``cu_seq_lens_q``/``cu_seq_lens_k`` passed by the
  collator.

``make reference`` compares these functions with the collator, with ``create_causal_mask``, with the
flash path's cut and with a whole ``LlamaForCausalLM`` forward pass.
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


def documents_in_transformers_mask(position_ids, *, use_cache: bool = True, attention_mask=None) -> np.ndarray:
    r"""The documents transformers 5.23.0's eager/sdpa mask keeps apart in a forward pass with ``position_ids``.

    :math:`d_t` as :func:`documents_from_position_ids` computes it if no ``attention_mask`` is given and
    no cache is used (``use_cache=False``); otherwise all zeros: one document, the plain causal mask
    (with an ``attention_mask``, only its pads are hidden). ``position_ids``: integers ``(T,)`` or
    ``(batch, T)``. ``use_cache``: the value the model runs with — the config's default is ``True``,
    which makes ``LlamaModel.forward`` create a ``DynamicCache`` before the mask is built.
    ``attention_mask``: ``None`` or the 2-D mask passed (only whether there is one matters here).
    Returns int64 of the shape of ``position_ids``.
    Source: ``_preprocess_mask_arguments`` in ``src/transformers/masking_utils.py`` (``if position_ids is
    not None and attention_mask is None and past_key_values is None``) and ``LlamaModel.forward``.
    """
    documents = documents_from_position_ids(position_ids)
    if not isinstance(use_cache, bool):
        raise ValueError(f"use_cache must be True or False (the value the model runs with), got {use_cache!r}")
    if use_cache or attention_mask is not None:
        return np.zeros_like(documents)  # the packed-sequence detection is skipped
    return documents


def cu_seq_lens_from_position_ids(position_ids) -> np.ndarray:
    r"""The ``cu_seq_lens`` transformers 5.23.0's flash-attention path reads off packed positions.

    The positions are flattened, and a sequence starts wherever the position equals the smallest one:
    :math:`\{t : p_t = \min_{t'} p_{t'}\}`, followed by :math:`T`. So a pack whose documents restart
    at 0 (or all at 2, as RoBERTa-like models do) is cut correctly; a document that does not restart at
    the minimum is not cut off from the one before (unlike the mask path's rule :math:`p_t - p_{t-1}
    \ne 1`). ``position_ids``: integers ``(T,)`` or ``(1, T)``. Returns int32 ``(K + 1,)``.
    Source: ``prepare_fa_kwargs_from_position_ids`` in ``src/transformers/modeling_flash_attention_utils.py``
    (used when there is one row and the positions are not one increasing run, ``_is_packed_sequence``).
    """
    p = np.asarray(position_ids)
    if p.dtype.kind not in "iu" or p.ndim not in (1, 2) or p.size == 0 or (p.ndim == 2 and p.shape[0] != 1):
        raise ValueError(f"position_ids must be a non-empty integer array of shape (T,) or (1, T) (the flash path "
                         f"packs one row), got dtype {p.dtype} and shape {p.shape}")
    p = p.reshape(-1)
    starts = np.flatnonzero(p == p.min())  # every position equal to the smallest starts a sequence
    return np.concatenate([starts, [p.size]]).astype(np.int32)


def packed_labels(documents, *, separator_id: int = -100) -> np.ndarray:
    r"""The ``labels`` ``DataCollatorWithFlattening`` returns: the documents' tokens, each document's first
    replaced by ``separator_id``.

    A causal LM's loss compares the logits at :math:`t - 1` with the label at :math:`t`; a label of
    ``-100`` is ignored. With :math:`-100` at every document's first token, the last token of a document
    is never trained to predict the first token of the next one, which it cannot see. ``documents``: a
    non-empty list of non-empty 1-D integer sequences (token ids). Returns int64 ``(T,)``.
    Source: ``DataCollatorWithFlattening.__call__`` (``[separator_id] + labels[1:]``),
    ``src/transformers/data/data_collator.py``.
    """
    if isinstance(separator_id, bool) or not isinstance(separator_id, numbers.Integral):
        raise ValueError(f"separator_id must be an integer label (the loss ignores -100), got {separator_id!r}")
    if isinstance(documents, (str, bytes, np.ndarray)) or not hasattr(documents, "__len__") or len(documents) == 0:
        raise ValueError(f"documents must be a non-empty list of token-id sequences, got {type(documents).__name__}")
    parts = [np.asarray(d) for d in documents]
    for k, d in enumerate(parts):
        if d.ndim != 1 or d.size == 0 or d.dtype.kind not in "iu":
            raise ValueError(f"every document must be a non-empty 1-D sequence of integer token ids; document {k} "
                             f"has dtype {d.dtype} and shape {d.shape}")
    return np.concatenate([np.concatenate([[int(separator_id)], d[1:]]) for d in parts]).astype(np.int64)
