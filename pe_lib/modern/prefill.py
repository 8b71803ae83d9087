r"""Chunked prefill: a long prompt run through the model in pieces, each on top of the cache of the ones before.

A prompt of :math:`L` slots is cut into chunks of at most :math:`C` slots, :math:`[b_c, b_{c+1})` with
:math:`b_c = \min(cC, L)` (``torch.split``). Chunk :math:`c` writes its keys into the cache after those of the
chunks before it and must be given exactly what one pass over the whole prompt would give its rows:

* **positions**: the prompt's own, sliced — :math:`p_{b,t}` for :math:`b_c \le t < b_{c+1}`, where
  :math:`p` is computed once from the whole ``attention_mask`` (:func:`pe_lib.position_ids_from_mask`); a
  chunk that numbered its tokens from 0, or by cache slot, would rotate them elsewhere;
* **the mask**: query :math:`t` of the chunk sees every slot :math:`j \le t` of the prompt that holds a real
  token, the cached ones of earlier chunks included, so the chunk's mask has :math:`b_{c+1}` columns:
  :math:`M_{b,t,j} = [j \le t]\,[m_{b,j} = 1]`. A mask built from the chunk alone (:math:`b_c \le j`)
  hides the cached prefix.

Then every row of every chunk equals that row of the one-pass prefill, and the logits agree to rounding.
Source: the chunked branch of ``GenerationMixin._prefill`` in transformers 5.23.0's
``generation/utils.py`` (``attention_mask[:, :current_length]``, ``position_ids[..., past_length:current_length]``);
``make reference`` catches what ``generate(prefill_chunk_size=C)`` passes to each forward call and the mask the
attention layers receive. transformers issue 43082 reported that an earlier version (5.0.0rc1) passed
``cache_position`` — the slots — as ``position_ids`` here.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_positive_int
from .padding import check_attention_mask, position_ids_from_mask


def prefill_chunk_bounds(length: int, chunk_size: int) -> np.ndarray:
    r"""The slot boundaries :math:`b_0 = 0 < b_1 < \dots < b_K = L` of a prompt of ``length`` slots cut into
    chunks of ``chunk_size``: :math:`b_c = \min(cC, L)`, the last chunk the remainder (``torch.split``).
    Both arguments: integers >= 1. Returns int64 ``(K + 1,)``, :math:`K = \lceil L / C \rceil`.
    """
    n = check_positive_int(length, name="length")
    c = check_positive_int(chunk_size, name="chunk_size")
    return np.append(np.arange(0, n, c), n).astype(np.int64)


def prefill_chunk(attention_mask, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The ``position_ids`` and the mask of the chunk of slots ``start .. stop-1`` of a (padded) prompt.

    ``attention_mask``: ``(batch, L)`` of 0s and 1s, each row with a real token (left, right or no padding).
    ``0 <= start < stop <= L``. Positions: :math:`p_{b,t}` of the whole prompt
    (:func:`pe_lib.position_ids_from_mask`) for :math:`t \in [\mathrm{start}, \mathrm{stop})`. Mask:
    :math:`M_{b,i,j} = [j \le \mathrm{start} + i]\,[m_{b,j} = 1]` for :math:`j < \mathrm{stop}`; the row of a
    pad query may be empty (its output is never read). Returns ``(positions, allowed)``: int64
    ``(batch, stop - start)`` and bool ``(batch, stop - start, stop)``.
    """
    mask = check_attention_mask(attention_mask)
    width = mask.shape[1]
    if isinstance(start, bool) or isinstance(stop, bool) or not all(
            isinstance(v, (int, np.integer)) for v in (start, stop)) or not 0 <= start < stop <= width:
        raise ValueError(f"start and stop must be integers with 0 <= start < stop <= L = {width} (the prompt's "
                         f"slots), got start={start!r}, stop={stop!r}")
    start, stop = int(start), int(stop)
    positions = position_ids_from_mask(mask)[:, start:stop]
    query = np.arange(start, stop)[:, None]  # slot of each query, (q, 1)
    causal = np.arange(stop)[None, :] <= query  # j <= t over every slot so far, cached ones included
    allowed = causal[None, :, :] & (mask[:, None, :stop] == 1)
    return positions, allowed
