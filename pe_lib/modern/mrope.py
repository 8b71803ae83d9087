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

from .._validate import check_choice, check_d_model, check_finite_array, check_positive_int
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
