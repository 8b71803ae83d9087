r"""Multimodal RoPE (M-RoPE, Qwen2-VL): each rotary pair turns by one of several position axes.

Text has one position per token; an image patch has a row and a column, a video patch a frame as
well. Qwen2-VL gives every token three positions :math:`(t, h, w)` and splits the :math:`d/2` rotary
pairs into consecutive *sections* (``mrope_section``, ``[16, 24, 24]`` for a head of 128): pair
:math:`i` of the first section turns by :math:`t\,\omega_i`, of the second by :math:`h\,\omega_i`, of the
third by :math:`w\,\omega_i`, with the usual :math:`\omega_i = \mathrm{base}^{-2i/d}` over all pairs (so the
temporal section gets the fastest pairs and the width section the slowest). For a text token
:math:`t = h = w`, and M-RoPE is plain RoPE.

The score of a query at :math:`p` and a key at :math:`p'` depends on :math:`p' - p` axis by axis: each
section is a RoPE of its own axis.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import check_choice, check_d_model, check_finite_array, check_finite_real, check_positive_int
from ..encodings.frequencies import frequencies
from ..encodings.rope import ROPE_LAYOUTS


def mrope(x, positions, sections, *, base: float = 10_000.0, layout: str = "split") -> np.ndarray:
    r"""Rotate pair ``i`` of every row of ``x`` by ``positions[row, axis(i)] * omega_i`` (multimodal RoPE).

    ``x``: shape ``(..., n, d)``. ``positions``: shape ``(n, A)``, one position per axis (Qwen2-VL: ``A = 3``,
    temporal, height, width), real numbers allowed. ``sections``: ``A`` non-negative ints summing to
    ``d/2``; pair ``i`` belongs to axis ``a`` when ``sum(sections[:a]) <= i < sum(sections[:a+1])``.
    ``layout``: ``"split"`` (default; pair ``i`` is dimensions ``(i, i + d/2)``, Hugging Face's
    ``rotate_half``) or ``"interleaved"`` (``(2i, 2i+1)``).

    With :math:`\theta_i = p_{\mathrm{axis}(i)}\,\omega_i`: :math:`y_a = x_a\cos\theta_i - x_b\sin\theta_i`,
    :math:`y_b = x_a\sin\theta_i + x_b\cos\theta_i`. Source: ``apply_multimodal_rotary_pos_emb`` in
    transformers' ``modeling_qwen2_vl.py`` (Wang et al. 2024); in transformers 5 the sections are applied in
    ``Qwen2VLRotaryEmbedding`` and the rotation is ``apply_rotary_pos_emb`` (checked against both by
    ``make reference``). Returns an array of the shape of ``x``.
    """
    x = check_finite_array(x, name="x", min_ndim=2, shape_hint="(..., n, d)")
    d = check_d_model(x.shape[-1], name="the last axis of x (the head dimension d)")
    pos = check_finite_array(positions, name="positions", ndim=2, shape_hint="(n, axes)")
    if pos.shape[0] != x.shape[-2]:
        raise ValueError(f"positions must give one row per row of x: x has {x.shape[-2]} rows, "
                         f"positions {pos.shape[0]}")
    layout = check_choice(layout, ROPE_LAYOUTS, name="layout")
    sec = _check_sections(sections, axes=pos.shape[1], half=d // 2)
    axis = np.repeat(np.arange(sec.size), sec)  # axis(i) for each pair i, shape (d/2,)
    theta = pos[:, axis] * frequencies(d, base=base)  # theta[m, i] = p_m[axis(i)] * omega_i, shape (n, d/2)
    c, s = np.cos(theta), np.sin(theta)
    if layout == "split":
        a, b = x[..., : d // 2], x[..., d // 2 :]  # pair i = dimensions (i, i + d/2)
    else:
        a, b = x[..., 0::2], x[..., 1::2]  # pair i = dimensions (2i, 2i+1)
    y_a, y_b = a * c - b * s, a * s + b * c
    out = np.empty_like(x)
    if layout == "split":
        out[..., : d // 2], out[..., d // 2 :] = y_a, y_b
    else:
        out[..., 0::2], out[..., 1::2] = y_a, y_b
    return out


def _check_sections(sections, *, axes: int, half: int) -> np.ndarray:
    items = list(sections) if isinstance(sections, (list, tuple, np.ndarray)) else None
    ok = items is not None and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0
                                   for v in items)
    if not ok or len(items) != axes or sum(items) != half:
        raise ValueError(
            f"sections must be {axes} non-negative ints (one per position axis) summing to d/2 = {half}, "
            f"got {sections!r}; Qwen2-VL uses [16, 24, 24] for d = 128"
        )
    return np.asarray(items, dtype=int)


def mrope_positions(segments) -> np.ndarray:
    r"""Qwen2-VL's ``(t, h, w)`` positions for a sequence of text runs and images or videos.

    ``segments``: a list whose items are an int ``n`` (``n`` text tokens) or a triple ``(T, H, W)`` (a
    vision block of ``T`` frames of ``H`` x ``W`` patches after merging, in frame-, then row-major order).
    Each segment starts at ``s`` = one more than the largest position so far (0 at the start). Text
    token ``k`` of a run gets ``(s + k, s + k, s + k)``; patch ``(f, r, c)`` gets ``(s + f, s + r, s + c)``.
    A vision block therefore uses ``T * H * W`` tokens but advances the next start by only
    ``max(T, H, W)``. Source: ``get_rope_index`` in transformers' ``modeling_qwen2_vl.py`` as of 4.57
    (``llm_pos_ids_list[-1].max() + 1``) and the Qwen2-VL paper (the next modality starts one after the
    largest position of the previous one). transformers 5 (checked: 5.23.0, by ``make reference``)
    advances by ``max(H, W)`` only, so the two differ after a video with more temporal patches than rows
    and columns (``T > max(H, W)``); everything else agrees. Returns an int64 array of shape ``(n_tokens, 3)``.
    """
    if not isinstance(segments, (list, tuple)):
        raise ValueError(f"segments must be a list of ints (text runs) and (T, H, W) triples, got {segments!r}")
    rows, start = [], 0
    for item in segments:
        if isinstance(item, numbers.Integral) and not isinstance(item, bool):
            n = check_positive_int(item, name="a text run")
            block = np.repeat(np.arange(n)[:, None], 3, axis=1)  # (k, k, k)
        elif isinstance(item, (tuple, list)) and len(item) == 3:
            t, h, w = (check_positive_int(v, name=f"{axis} of a vision block")
                       for v, axis in zip(item, "THW", strict=True))
            f, r, c = np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij")
            block = np.stack([f.ravel(), r.ravel(), c.ravel()], axis=1)  # frame-, then row-major
        else:
            raise ValueError(f"each segment must be an int (text tokens) or a (T, H, W) triple, got {item!r}")
        rows.append(block + start)
        start = int(block.max()) + start + 1  # the next segment starts after the largest position so far
    if not rows:
        return np.zeros((0, 3), dtype=np.int64)
    return np.concatenate(rows).astype(np.int64)


VIDEO_TIME_RULES = ("transformers 5.23.0", "before PR 48669", "before PR 45400")


def mrope_video_positions(grid, *, start: int = 0, second_per_grid: float = 1.0, tokens_per_second: int = 2,
                          rule: str = "transformers 5.23.0") -> tuple[np.ndarray, int]:
    r"""Qwen2.5-VL's ``(t, h, w)`` positions for one video block, with time measured in seconds, and where
    the text after it starts; as transformers 5.23.0 computes them, and as two earlier 5.x versions did.

    A video of :math:`T` temporal patches ("grids", ``temporal_patch_size`` = 2 frames each) of :math:`H
    \times W` merged patches, starting at position :math:`s`, has :math:`T H W` tokens in frame-, then
    row-major order; token :math:`i = kHW + rW + c` is grid :math:`k`, row :math:`r`, column :math:`c`.
    Qwen2.5-VL spaces the grids by time: with :math:`\Delta` = ``second_per_grid`` (seconds per grid,
    ``temporal_patch_size / fps``) and :math:`\rho` = ``tokens_per_second`` (2 in Qwen2.5-VL's configs),

    * ``"transformers 5.23.0"`` (since PR 48669, the Qwen team's formula):
      :math:`t = s + \lfloor k\rho\Delta \rfloor`, :math:`h = s + r`, :math:`w = s + c`; grids closer than
      :math:`1/\rho` seconds share a time position (``.long()`` after the product);
    * ``"before PR 48669"`` (PR 45400 merged): :math:`t = s + k\rho\lfloor\Delta\rfloor` — the seconds were
      truncated first (``int(next(second_per_grid_ts))``), so :math:`\Delta < 1` (more than 2 frames per
      second) puts every grid at :math:`s`, and :math:`\Delta = 1.5` counts as 1;
    * ``"before PR 45400"`` (transformers 5.3.0, issue 45381): every token at :math:`t = s\rho\lfloor\Delta
      \rfloor` (``torch.full(..., start_position) * time_interval``), and :math:`h = s + \lfloor i/(WT)
      \rfloor` (``repeat_interleave(W * T)``), right only for :math:`T = 1`; :math:`w = s + c`.

    In all three the text after the video starts at :math:`s + \max(H, W)` (``current_pos += max(H, W)``),
    whatever the video's time range, so it can share time positions with the last grids.
    Sources: ``get_vision_position_ids`` and ``get_rope_index`` in transformers 5.23.0's
    ``models/qwen2_5_vl/modeling_qwen2_5_vl.py`` (``make reference`` compares every position), and the lines
    the two pull requests removed. ``grid``: ``(T, H, W)``, integers >= 1, after merging (as
    :func:`mrope_positions`). ``start``: integer >= 0. ``second_per_grid``: real > 0. ``tokens_per_second``:
    integer >= 1. Computed in float64; transformers multiplies in the dtype of ``second_per_grid_ts``.
    Returns ``(positions, next_start)``: int64 ``(T*H*W, 3)`` and an int.
    """
    if not isinstance(grid, (tuple, list)) or len(grid) != 3:
        raise ValueError(f"grid must be a (T, H, W) triple of integers >= 1, got {grid!r}")
    t, h, w = (check_positive_int(v, name=f"{axis} of grid") for v, axis in zip(grid, "THW", strict=True))
    s = check_positive_int(start, name="start", minimum=0)
    delta = check_finite_real(second_per_grid, name="second_per_grid")
    if delta <= 0:
        raise ValueError(f"second_per_grid must be > 0 (seconds per temporal patch: temporal_patch_size / fps), "
                         f"got {delta!r}")
    rho = check_positive_int(tokens_per_second, name="tokens_per_second")
    rule = check_choice(rule, VIDEO_TIME_RULES, name="rule")
    k, r, c = (a.ravel() for a in np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij"))
    if rule == "transformers 5.23.0":
        time = s + np.floor(k * (rho * delta)).astype(np.int64)  # floor(k rho Delta): .long() of a product >= 0
    elif rule == "before PR 48669":
        time = s + k * (rho * int(delta))  # int(Delta) first
    else:
        time = np.full(k.size, s * rho * int(delta))  # start_position * time_interval, for every token
        r = np.arange(k.size) // (w * t)  # repeat_interleave(W * T): right only for T = 1
    positions = np.stack([time, s + r, s + c], axis=1).astype(np.int64)
    return positions, s + max(h, w)
