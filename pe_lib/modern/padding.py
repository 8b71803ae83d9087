r"""Padded batches: the positions of the real tokens, as transformers' ``generate()`` numbers them.

A batch of prompts of different lengths is padded to one width ``L``; the ``attention_mask``
:math:`m_{b,t}` is 1 on real tokens and 0 on pads. A decoder that generates is padded on the left, so
that every row ends with its last real token. The position of a real token is the number of real
tokens before it in its row,

.. math::

    p_{b,t} = \Big(\sum_{t' \le t} m_{b,t'}\Big) - 1 \quad (m_{b,t} = 1), \qquad p_{b,t} = 0 \quad (m_{b,t} = 0),

so the first real token of every row is at position 0, whatever the padding in front of it. The
value written into a pad slot does not reach any real token: the mask hides every pad from every
query, and the pads' own outputs are never read. It only has to be a valid index (GPT-2 looks it up
in its position table); transformers 5.23.0 writes 0 (older versions wrote 1).

Each new token then gets the last position of its row plus one,
:math:`p_{b,L+n} = p_{b,L-1} + 1 + n`. With left padding that continues the prompt; with right
padding the last slot is a pad at position 0, and the new tokens are numbered 1, 2, ... — a
position the prompt already used.

Source: ``GenerationMixin._prepare_position_ids_for_generation`` (prompt) and
``_update_model_kwargs_for_generation`` (new tokens) in transformers 5.23.0,
``src/transformers/generation/utils.py``; ``make reference`` compares these functions with the
positions ``generate()`` passes to a model.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import check_choice, check_finite_array, check_positive_int
from .packing import check_lengths

PADDING_SIDES = ("left", "right")


def check_attention_mask(attention_mask, *, name: str = "attention_mask") -> np.ndarray:
    """``attention_mask`` as a 2-D int64 array of 0s and 1s with a real token in every row, else
    ``ValueError``."""
    mask = np.asarray(attention_mask)
    if mask.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be an array of 0s and 1s, got dtype {mask.dtype}")
    if mask.ndim != 2 or mask.shape[1] == 0:
        raise ValueError(f"{name} must have shape (batch, L) with L >= 1 (one row per sequence), "
                         f"got shape {mask.shape}")
    bad = ~np.isin(mask, (0, 1))
    if bad.any():
        raise ValueError(f"{name} must hold only 0 (pad) and 1 (real token), "
                         f"got {mask[bad][0].item()!r} among its values")
    mask = mask.astype(np.int64)
    empty = np.flatnonzero(mask.sum(axis=1) == 0)
    if empty.size:
        raise ValueError(f"every row of {name} needs at least one real token (a 1); row {int(empty[0])} has none")
    return mask


def padding_mask(lengths, width: int | None = None, *, side: str = "left") -> np.ndarray:
    r"""The ``attention_mask`` of a batch of sequences of ``lengths`` padded to ``width`` on ``side``.

    ``lengths``: 1-D integers >= 1. ``width``: at least the longest length (default: the longest).
    ``side``: ``"left"`` (pads first, as for generation) or ``"right"`` (pads last).
    :math:`m_{b,t} = 1` for :math:`t \ge L - n_b` (left) or :math:`t < n_b` (right).
    Returns an int64 array of shape ``(len(lengths), width)``.
    """
    n = check_lengths(lengths)
    width = int(n.max()) if width is None else check_positive_int(width, name="width")
    if width < n.max():
        raise ValueError(f"width must be at least the longest length {int(n.max())}, got {width}")
    side = check_choice(side, PADDING_SIDES, name="side")
    t = np.arange(width)
    real = t[None, :] >= (width - n)[:, None] if side == "left" else t[None, :] < n[:, None]
    return real.astype(np.int64)


def position_ids_from_mask(attention_mask) -> np.ndarray:
    r"""The position of every slot of a padded batch, as transformers 5.23.0's ``generate()`` computes it.

    :math:`p_{b,t} = \sum_{t' \le t} m_{b,t'} - 1` on real tokens, 0 on pads (see the module docstring).
    ``attention_mask``: ``(batch, L)`` of 0s and 1s, each row with a real token; left, right or any
    padding (a pad between real tokens is skipped in the count). Returns an int64 array of the same shape.
    """
    mask = check_attention_mask(attention_mask)
    return np.where(mask == 1, np.cumsum(mask, axis=1) - 1, 0)


def generation_position_ids(attention_mask, n_new: int) -> np.ndarray:
    r"""The positions of the prompt and of ``n_new`` generated tokens, as ``generate()`` numbers them.

    The prompt's are :func:`position_ids_from_mask`; new token ``n`` (0-based) of row ``b`` gets
    :math:`p_{b,L-1} + 1 + n`, the last slot's position plus one (transformers 5.23.0's
    ``_update_model_kwargs_for_generation``). Correct for left padding; after right padding the last
    slot is a pad (position 0) and the new tokens restart at 1. Returns int64 ``(batch, L + n_new)``.
    """
    prompt = position_ids_from_mask(attention_mask)
    if isinstance(n_new, bool) or not isinstance(n_new, numbers.Integral) or n_new < 0:
        raise ValueError(f"n_new must be an integer >= 0 (the number of generated tokens), got {n_new!r}")
    new = prompt[:, -1:] + 1 + np.arange(int(n_new))[None, :]  # p_{b,L-1} + 1 + n
    return np.concatenate([prompt, new], axis=1)


def pad_batch(tokens, lengths, *, side: str = "left", pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""Pad the first ``lengths[b]`` tokens of each row of ``tokens`` on ``side``, as a tokenizer pads a batch.

    ``tokens``: ``(batch, L)`` integers; row ``b`` holds a sequence in its first ``lengths[b]`` entries
    (the rest is ignored). ``side="left"`` moves each sequence to the right end of its row:
    slot :math:`t` holds token :math:`t - (L - n_b)` for :math:`t \ge L - n_b`; ``"right"`` keeps it at the
    start. Every other slot holds ``pad_id``. Returns ``(padded, attention_mask)``, both ``(batch, L)``
    (the mask as :func:`padding_mask`).
    """
    arr = np.asarray(tokens)
    if arr.ndim != 2 or arr.dtype.kind not in "iu" or arr.size == 0:
        raise ValueError(f"tokens must be a non-empty integer array of shape (batch, L), got dtype {arr.dtype} "
                         f"and shape {arr.shape}")
    n = check_lengths(lengths)
    if n.shape != (arr.shape[0],):
        raise ValueError(f"lengths must give one length per row of tokens ({arr.shape[0]}), got {n.size}")
    if isinstance(pad_id, bool) or not isinstance(pad_id, numbers.Integral):
        raise ValueError(f"pad_id must be an integer token id, got {pad_id!r}")
    mask = padding_mask(n, arr.shape[1], side=side)
    t = np.arange(arr.shape[1])
    source = t[None, :] - (arr.shape[1] - n)[:, None] if side == "left" else np.broadcast_to(t, arr.shape)
    picked = np.take_along_axis(arr, np.clip(source, 0, arr.shape[1] - 1), axis=1)  # token t - (L - n_b)
    return np.where(mask == 1, picked, pad_id).astype(arr.dtype), mask


def cache_positions(attention_mask, n_new: int = 0) -> np.ndarray:
    r"""The slots of a padded batch in the KV cache: :math:`c_t = t`, the same for every row.

    A cache stores one key per slot, pads included, so the index at which token :math:`t` is written,
    ``cache_position`` in transformers 4.x (and in remote-code models that 5.23.0's ``generate()`` still
    feeds: ``arange(sequence_length) + past_seen_tokens``), counts slots; ``position_ids`` count real
    tokens (:func:`position_ids_from_mask`). They agree on a row without pads; on a left-padded row
    :math:`c_t - p_{b,t}` is the number of pads before :math:`t`. A model called without ``position_ids``
    numbers its tokens by slot (``LlamaModel.forward``: ``arange(T) + past_key_values.get_seq_length()``)
    and so gives left-padded rows cache positions as positions. ``attention_mask``: ``(batch, L)``
    (only its shape is used, after the usual checks); ``n_new``: integer >= 0. Returns int64
    ``(batch, L + n_new)``.
    """
    mask = check_attention_mask(attention_mask)
    if isinstance(n_new, bool) or not isinstance(n_new, numbers.Integral) or n_new < 0:
        raise ValueError(f"n_new must be an integer >= 0 (the number of generated tokens), got {n_new!r}")
    slots = np.arange(mask.shape[1] + int(n_new), dtype=np.int64)
    return np.broadcast_to(slots, (mask.shape[0], slots.size)).copy()


ALIBI_COUNTS = ("tokens", "slots")


def alibi_key_bias(attention_mask, slopes, *, counts: str = "tokens") -> np.ndarray:
    r"""The ALiBi bias each key of a padded batch gets, as BLOOM (``"tokens"``) or MPT (``"slots"``) computes it.

    Both add to the score of key :math:`j` a bias that depends on the key only, relying on softmax
    being unchanged when a row is shifted by a constant:

    * ``"tokens"`` (BLOOM's ``build_alibi_tensor``): :math:`\mathrm{slope}_h\,p_{b,j}`, :math:`p_{b,j}` the key's
      position counted over real tokens (:func:`position_ids_from_mask`; 0 on pads);
    * ``"slots"`` (MPT's ``build_mpt_alibi_tensor``, cut to the last :math:`L` keys):
      :math:`\mathrm{slope}_h\,(j - (L - 1))`, counted over slots, pads included.

    Within a row the two differ by a constant on the real keys before the first pad after a real
    token, so left padding changes no attention weight. After pads in the middle of a row (right
    padding followed by generated tokens) the slot count includes the pads and the distances differ.
    ``attention_mask``: ``(batch, L)`` of 0s and 1s; ``slopes``: ``(H,)`` finite reals (e.g.
    :func:`pe_lib.alibi_slopes`). Returns float64 ``(batch, H, L)``.
    Source: ``src/transformers/models/bloom/modeling_bloom.py`` and ``models/mpt/modeling_mpt.py``
    (transformers 5.23.0).
    """
    mask = check_attention_mask(attention_mask)
    m = check_finite_array(slopes, name="slopes", ndim=1)
    counts = check_choice(counts, ALIBI_COUNTS, name="counts")
    if counts == "tokens":
        key = position_ids_from_mask(mask).astype(np.float64)  # p_{b,j}
    else:
        key = np.broadcast_to(np.arange(mask.shape[1]) - (mask.shape[1] - 1.0), mask.shape)  # j - (L - 1)
    return m[None, :, None] * key[:, None, :]
