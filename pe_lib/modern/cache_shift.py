r"""Moving cached RoPE keys: the rotation that turns keys rotated at position :math:`m` into keys at :math:`m + \delta`.

A KV cache stores every key *after* its rotation :math:`R(m\,\omega)`. When an engine renumbers the
cached tokens — llama.cpp's context shift drops the oldest tokens and moves the rest back by
:math:`\delta`; a cached prompt prefix is reused at another offset — each stored key must be turned
by the difference. Rotations of one plane add their angles, :math:`R(\delta\omega)\,R(m\omega) =
R((m+\delta)\omega)`, so

.. math::

    \mathrm{shift}(R(m\omega)\,k, \delta) = R(\delta\,\omega)\,R(m\omega)\,k = R((m + \delta)\,\omega)\,k,

the key rotated from scratch at its new position: a fixed rotation per pair, the same for every
cached token, without the unrotated keys. Skipping it leaves every cached key :math:`\delta`
places away from where the new queries believe it is, and a RoPE score only sees that distance.

(The other design stores keys unrotated and rotates the whole cache at every step: llama.cpp's
open PR #3234 "store non-RoPEd K cache" measured the cost.)
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import (
    check_base,
    check_choice,
    check_d_model,
    check_finite_array,
    check_finite_real,
    check_positive_int,
)
from ..encodings.frequencies import frequencies
from ..encodings.rope import ROPE_LAYOUTS


def rope_shift(keys, delta, *, base: float = 10_000.0, layout: str = "interleaved",
               inv_freq=None) -> np.ndarray:
    r"""Turn every pair of the last axis of ``keys`` by :math:`\delta\,\omega_i`: cached keys moved
    by ``delta`` positions.

    ``keys``: shape ``(..., d)`` with ``d`` even, already rotated (any number of them). ``delta``: a
    real number, the same for every key (negative moves them back). ``layout``: ``"interleaved"``
    pairs dimensions ``(2i, 2i+1)``, ``"split"`` pairs ``(i, i + d/2)`` (Hugging Face's ``rotate_half``).
    ``inv_freq``: the frequencies :math:`\omega_i`, shape ``(d/2,)`` — the model's own, e.g. from
    :func:`pe_lib.rope_scaling_frequencies`; default :math:`\mathrm{base}^{-2i/d}`. For each pair,
    :math:`y_a = x_a\cos\delta\omega_i - x_b\sin\delta\omega_i`,
    :math:`y_b = x_a\sin\delta\omega_i + x_b\cos\delta\omega_i`.
    Returns float64 of the same shape; ``rope_shift(pe_lib.rope(x, m), delta) == pe_lib.rope(x, m + delta)``.
    """
    k = check_finite_array(keys, name="keys", min_ndim=1, shape_hint="(..., d)")
    d = check_d_model(k.shape[-1], name="the last axis of keys (the head dimension d)")
    delta = check_finite_real(delta, name="delta")
    layout = check_choice(layout, ROPE_LAYOUTS, name="layout")
    if inv_freq is None:
        omega = frequencies(d, base=check_base(base))
    else:
        omega = check_finite_array(inv_freq, name="inv_freq", ndim=1)
        if omega.shape != (d // 2,):
            raise ValueError(f"inv_freq must give one frequency per pair: {d // 2} for keys of width {d}, "
                             f"got shape {omega.shape}")
    c, s = np.cos(delta * omega), np.sin(delta * omega)  # (d/2,)
    if layout == "interleaved":
        a, b = k[..., 0::2], k[..., 1::2]  # pair i = dimensions (2i, 2i+1)
    else:
        a, b = k[..., : d // 2], k[..., d // 2 :]  # pair i = dimensions (i, i + d/2)
    out = np.empty_like(k)
    y_a, y_b = a * c - b * s, a * s + b * c  # R(delta omega_i) (x_a, x_b)
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = y_a, y_b
    else:
        out[..., : d // 2], out[..., d // 2 :] = y_a, y_b
    return out


SLIDING_LAYOUTS = ("ring", "shift")


def sliding_window_slots(n_tokens: int, window: int, *, layout: str = "ring") -> np.ndarray:
    r"""The position of the key held in each slot of a sliding-window cache after ``n_tokens`` tokens.

    A cache for a window of :math:`W` tokens has :math:`W` slots; after :math:`n` tokens it holds the last
    :math:`\min(n, W)` of them. Which slot holds which depends on the engine:

    * ``"ring"``: token :math:`p` is written to slot :math:`p \bmod W` and overwrites the token
      :math:`W` before it, so slot :math:`s` holds the largest :math:`p < n` with :math:`p \equiv s
      \pmod W` (Mistral's reference code: ``cache_positions = positions % cache_size`` in
      ``mistral_inference/cache.py``, commit 5d4cc685);
    * ``"shift"``: once full, the cache rolls left by one and writes the new token last, so slot
      :math:`k` holds position :math:`\max(0, n - W) + k` (transformers 5.23.0's
      ``StaticSlidingWindowLayer``).

    Either way the slot is not the position: each key keeps the rotation of its position :math:`p`,
    and a mask or a cache shift must use :math:`p`. ``n_tokens``, ``window``: integers >= 1.
    Returns int64 ``(min(n_tokens, window),)``, entry ``s`` = the position in slot ``s``.
    """
    n = check_positive_int(n_tokens, name="n_tokens")
    w = check_positive_int(window, name="window")
    layout = check_choice(layout, SLIDING_LAYOUTS, name="layout")
    kept = np.arange(max(0, n - w), n)  # the last min(n, W) positions, oldest first
    if layout == "shift":
        return kept
    slots = np.empty(kept.size, dtype=np.int64)
    slots[kept % w] = kept  # p goes to slot p mod W
    return slots


def context_shift(n_tokens: int, n_ctx: int, n_keep: int, *, n_discard: int = 0,
                  add_bos: bool = True) -> tuple[np.ndarray, int]:
    r"""llama.cpp's server context shift: which cached positions survive, and by how much they move.

    When a slot's cache is full (:math:`n + 1 \ge n_\text{ctx}`, :math:`n` = ``n_tokens``) the server keeps
    the first :math:`k` tokens, drops the next :math:`m`, and moves the rest back by :math:`m`, turning their
    keys with ``rope_shift`` (:math:`\delta = -m`). :math:`k` = ``n_keep`` (``-1``: the whole prompt, here
    :math:`n`), plus one for the BOS token if ``add_bos``, at most :math:`n_\text{ctx} - 4`;
    :math:`m` = ``n_discard`` if nonzero, else :math:`\lfloor (n - k)/2 \rfloor`, then clamped to
    :math:`m \le n - k - 1`: at least the newest token survives. (The clamp is llama.cpp PR 24786, in the
    commit 0c1e57098 that llama-cpp-python 0.3.36 bundles and ``make reference-llamacpp`` runs; at the earlier
    commit fb402660 an ``n_discard`` of all :math:`n - k` remaining tokens was taken as given.)
    Returns ``(new_positions, delta)``: int64 ``(n,)`` with the new position of each old position
    :math:`0..n-1` (``-1`` where dropped: :math:`k \le p < k + m`), and :math:`\delta = -m`.
    Source: ``update_slots`` in ``tools/server/server-context.cpp`` (llama.cpp commit 0c1e57098:
    ``n_discard = std::clamp(n_discard, 0, std::max(0, n_left - 1))``, then
    ``llama_memory_seq_rm(n_keep, n_keep + n_discard)``, ``llama_memory_seq_add(..., -n_discard)``).
    """
    n = check_positive_int(n_tokens, name="n_tokens")
    ctx = check_positive_int(n_ctx, name="n_ctx", minimum=5)
    if isinstance(n_keep, bool) or not isinstance(n_keep, numbers.Integral) or n_keep < -1:
        raise ValueError(f"n_keep must be an integer >= -1 (-1 keeps the whole prompt), got {n_keep!r}")
    m = check_positive_int(n_discard, name="n_discard", minimum=0)
    if not isinstance(add_bos, bool):
        raise ValueError(f"add_bos must be True or False, got {add_bos!r}")
    k = n if n_keep == -1 else int(n_keep)
    k = min(ctx - 4, k + int(add_bos))
    if n + 1 < ctx:
        raise ValueError(f"no context shift: it happens when n_tokens + 1 >= n_ctx; got n_tokens={n}, n_ctx={ctx}")
    m = m if m else (n - k) // 2  # n_left / 2 in C integer division (n - k >= 3 here: n >= ctx - 1, k <= ctx - 4)
    m = min(m, n - k - 1)  # PR 24786: the newest token is never dropped
    p = np.arange(n)
    new = np.where(p < k, p, p - m)
    new[(p >= k) & (p < k + m)] = -1
    return new.astype(np.int64), -m


SINK_CACHE_ENGINES = ("streaming-llm", "transformers")


def sink_cache_positions(n_tokens: int, start_size: int = 4, recent_size: int = 512, *,
                         engine: str = "streaming-llm") -> tuple[np.ndarray, np.ndarray]:
    r"""StreamingLLM's cache: which tokens it keeps after ``n_tokens``, and the position each is rotated at.

    Xiao et al. (2024) keep the first :math:`s` tokens, the *attention sinks* that models give much weight
    whatever they hold, and the :math:`r` most recent ones: once :math:`n > s + r`, the cache holds the
    tokens :math:`0..s-1` and :math:`n-r..n-1` (``StartRecentKVCache.__call__``). Positions are counted *in
    the cache*: keys are stored unrotated and rotated at every step at their slot :math:`0, 1, \dots`, and
    the next query at the slot after the last (``pos_shift/modify_llama.py``). So the offsets the model meets
    never exceed :math:`s + r`. Source: ``mit-han-lab/streaming-llm``, commit d729b3ff.

    ``engine="transformers"``: the ``SinkCache(window_length=s + r, num_sink_tokens=s)`` that transformers
    shipped until 4.52.4, fed one token at a time through the model's forward (a prompt shorter than
    :math:`s + r` may come first). Same tokens kept, other positions: it stores keys rotated, gives each new
    token the position :math:`e_t = \min(t, s + r)` (the cache length before it is added) and, at every step
    from the one that fills the cache, turns every kept non-sink key back by one position, whether a token was
    dropped or not. A kept token :math:`t \ge s` is therefore at :math:`e_t - (n - \max(t + 1, s + r - 1))`:
    once the first :math:`r` tokens after the fill are gone, at its slot plus one, so position :math:`s` is
    left empty; before that, the tokens cached when it filled sit one place further back still.
    Source: ``SinkCache.update`` in ``transformers/cache_utils.py`` (4.52.4), run by ``make reference-sinks``.

    ``n_tokens``, ``recent_size``: integers >= 1 (``recent_size`` >= 2 for ``"transformers"``, whose slice
    keeps the whole cache when the window has one place besides the sinks); ``start_size``: integer >= 0.
    Returns ``(kept, positions)``: int64 arrays, the text positions of the cached tokens in order and the
    position each key is rotated at (``"streaming-llm"``: :math:`0..|\text{kept}|-1`).
    """
    n = check_positive_int(n_tokens, name="n_tokens")
    s = check_positive_int(start_size, name="start_size", minimum=0)
    r = check_positive_int(recent_size, name="recent_size")
    engine = check_choice(engine, SINK_CACHE_ENGINES, name="engine")
    p = np.arange(n)
    kept = p if n <= s + r else np.concatenate([p[:s], p[n - r:]])  # the sinks, then the most recent r
    if engine == "streaming-llm":
        return kept.astype(np.int64), np.arange(kept.size, dtype=np.int64)
    if r < 2:
        raise ValueError("engine='transformers' needs recent_size >= 2: with window_length = num_sink_tokens + 1, "
                         "SinkCache's slice [-window_length + num_sink_tokens + 1:] is [0:], the whole cache, "
                         f"which then grows without end; got recent_size={r}")
    w = s + r  # window_length
    entered = np.minimum(kept, w)  # the cache length when token t was added
    turned_back = n - np.maximum(kept + 1, w - 1)  # steps after t that shift the cache (from the (w-1)-th on)
    positions = np.where(kept < s, kept, entered - np.maximum(turned_back, 0))
    return kept.astype(np.int64), positions.astype(np.int64)


def prefix_cache_hit(cached_tokens, tokens, block_size: int) -> int:
    r"""How many leading tokens of ``tokens`` a prefix cache of ``cached_tokens`` can serve, in whole blocks.

    vLLM hashes every full block of :math:`B` tokens together with the hash of the block before it,
    :math:`h_k = H(h_{k-1}, t_{kB}, \dots, t_{kB+B-1})`, so a cached block is found only if the whole
    prefix up to its end is the same: block :math:`k` of ``tokens`` is reusable iff
    :math:`t_{0..(k+1)B-1}` equals the cached prompt's. Its keys were rotated at positions
    :math:`kB, \dots, kB+B-1`, and a hit reuses them at exactly those positions; the same tokens after
    another preamble are a miss. ``cached_tokens``, ``tokens``: 1-D integer sequences;
    ``block_size``: integer >= 1. Returns :math:`B` times the number of leading reusable blocks (an int).
    Source: ``hash_block_tokens`` and ``get_request_block_hasher`` in ``vllm/v1/core/kv_cache_utils.py``
    (commit 001cabc1), without the extra keys (LoRA, multimodal, cache salt) that separate requests further.
    """
    b = check_positive_int(block_size, name="block_size")
    arrays = []
    for name, value in (("cached_tokens", cached_tokens), ("tokens", tokens)):
        arr = np.asarray(value)
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise ValueError(f"{name} must be a 1-D sequence of integer token ids, got dtype {arr.dtype} "
                             f"and shape {arr.shape}")
        arrays.append(arr.astype(np.int64))
    cached, new = arrays
    full = min(cached.size, new.size) // b  # blocks both prompts fill
    same = cached[: full * b] == new[: full * b]
    reusable = np.cumprod(same.reshape(full, b).all(axis=1))  # a block counts only if all before it do
    return int(reusable.sum()) * b


STALE_ROLES = ("target in the cache", "stale key at the target's position", "clean", "not scored")


def stale_cache_roles(n_cached: int, length: int, delta: int, lookback: int) -> np.ndarray:
    r"""What a stale cache does to each new token of a look-back task, by position.

    The first ``n_cached`` keys were rotated at :math:`j + \delta` instead of :math:`j`; token :math:`i
    \ge n` (``n = n_cached``) must find token :math:`i - o` (``o = lookback``). Role of token :math:`i`:

    * 0, its target is in the cache (:math:`i - o < n`): the target's key sits :math:`\delta` off;
    * 1, its target is new, but a cached key appears at the target's position: cached token
      :math:`j = i - o - \delta` with :math:`0 \le j < n` looks exactly as far back as the target;
    * 2, clean: neither; 3, not scored (:math:`i < n`, or :math:`i < o`).

    ``n_cached``, ``length``, ``lookback``: integers >= 1 with ``n_cached < length``; ``delta``: an
    integer >= 0. Returns int64 ``(length,)``; :data:`STALE_ROLES` names the roles.
    """
    n = check_positive_int(n_cached, name="n_cached")
    total = check_positive_int(length, name="length")
    o = check_positive_int(lookback, name="lookback")
    d = check_positive_int(delta, name="delta", minimum=0)
    if n >= total:
        raise ValueError(f"n_cached must be below length (some new tokens to score), got {n} and {total}")
    i = np.arange(total)
    target = i - o
    roles = np.full(total, 3, dtype=np.int64)
    scored = (i >= n) & (target >= 0)
    decoy = (target - d >= 0) & (target - d < n) & (target >= n) & (d > 0)
    roles[scored] = 2
    roles[scored & decoy] = 1
    roles[scored & (target < n)] = 0
    return roles
