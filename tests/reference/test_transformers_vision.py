r"""M-RoPE (``pe_lib.mrope``, ``pe_lib.mrope_positions``) against Qwen2-VL's code in transformers,
``pe_lib.mrope_video_positions`` (videos with time in seconds) against Qwen2.5-VL's ``get_rope_index``, and
``pe_lib.resample_grid`` against ViT's ``interpolate_pos_encoding`` (PyTorch's bicubic ``interpolate``).

Tolerances. Positions are integers: equal. The rotation is float32 in transformers: the angle
:math:`p\,\omega_i` is rounded to float32 (absolute error up to about :math:`2\varepsilon_{32}|p\,\omega_i|`),
so rotated vectors agree to :math:`4\varepsilon_{32}(1 + \max|\theta|)` times the largest entry of the input.
Resizing runs twice. In float64 (PyTorch's ``interpolate`` takes double tensors), the same formula gives
the same numbers: 1e-12 relative to the largest value of the table. In float32 the source coordinate
:math:`x = (o + \tfrac12)\,n/m - \tfrac12` is rounded (by up to about :math:`2\varepsilon_{32}\,n`), and each of
the four kernel weights per axis moves by at most 1.35 times that (the steepest slope of Keys' kernel at
:math:`a = -0.75`): :math:`32\,\varepsilon_{32}\,n` relative to the largest value, n the larger old side.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import EPS32, record, relative_to_largest
from transformers import Qwen2_5_VLConfig, Qwen2VLConfig, ViTConfig
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel
from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
from transformers.models.qwen2_vl.modeling_qwen2_vl import (
    Qwen2VLModel,
    Qwen2VLRotaryEmbedding,
    apply_rotary_pos_emb,
)
from transformers.models.vit.modeling_vit import ViTEmbeddings

import pe_lib

RESAMPLE_TOL64 = 1e-12
MERGE = 2  # Qwen2-VL's spatial_merge_size: 2 x 2 patches become one token


class _RopeIndex:
    """Just enough of ``Qwen2VLModel`` to call its ``get_rope_index`` (which reads only the config)."""

    get_rope_index = Qwen2VLModel.get_rope_index
    get_vision_position_ids = Qwen2VLModel.get_vision_position_ids

    def __init__(self):
        self.config = Qwen2VLConfig()
        assert self.config.vision_config.spatial_merge_size == MERGE


def reference_positions(segments):
    """transformers' ``(t, h, w)`` position of every token, shape (n, 3), for pe_lib's segment list.

    A vision block ``(T, H, W)`` of merged patches is ``T * H * W`` tokens of type 1 (image, T = 1) or 2
    (video); transformers gets its grid in unmerged patches, ``(T, 2H, 2W)``.
    """
    types, images, videos = [], [], []
    for item in segments:
        if isinstance(item, int):
            types += [0] * item
        else:
            t, h, w = item
            kind = 1 if t == 1 else 2
            types += [kind] * (t * h * w)
            (images if kind == 1 else videos).append([t, h * MERGE, w * MERGE])
    n = len(types)
    position_ids, _ = _RopeIndex().get_rope_index(
        torch.zeros(1, n, dtype=torch.long), torch.tensor([types]),
        image_grid_thw=torch.tensor(images) if images else None,
        video_grid_thw=torch.tensor(videos) if videos else None)
    return position_ids[:, 0, :].T.numpy()  # (3, 1, n) -> (n, 3)


# Segments whose vision blocks have no more frames than rows or columns (T <= max(H, W)).
AGREE = [
    [3, (1, 4, 6), 5],
    [1, (1, 2, 2), 1],
    [4, (1, 7, 3), 2, (1, 1, 1), 3],  # a 1 x 1 image
    [2, (2, 3, 3), 4],  # video, T < H
    [5, (4, 8, 8), 1],  # the video of chapter 18's exercise 2
    [6, (3, 3, 2), 2, (1, 5, 5), 3],
    [(1, 3, 4), 2],  # starting with an image
    [2, (3, 2, 5)],  # ending with a video
]


@pytest.mark.parametrize("segments", AGREE, ids=[str(s) for s in AGREE])
def test_mrope_positions_match_get_rope_index(segments):
    theirs = reference_positions(segments)
    ours = pe_lib.mrope_positions(segments)
    record("mrope_positions vs get_rope_index (T <= max(H, W))", float(np.max(np.abs(ours - theirs))), 0,
           "max |Δ| (integers)")


@pytest.mark.parametrize("frames, side", [(4, 2), (8, 3), (3, 2)])
def test_mrope_positions_after_a_long_video_differ_from_transformers_5(frames, side):
    """A video with more frames than rows and columns: transformers 5 starts the next text at
    ``s + max(H, W)`` (``current_pos += max(grid_thw[1], grid_thw[2]) // spatial_merge_size`` in 5.23.0),
    inside the range of the video's temporal positions ``s .. s + T - 1``; pe_lib, the Qwen2-VL paper and
    transformers 4.x (``llm_pos_ids_list[-1].max() + 1``) start it at ``s + T``. Everything before the
    text after the video agrees."""
    text = 3
    segments = [text, (frames, side, side), 2]
    theirs, ours = reference_positions(segments), pe_lib.mrope_positions(segments)
    video_end = text + frames * side * side
    np.testing.assert_array_equal(ours[:video_end], theirs[:video_end])
    assert theirs[video_end, 0] == text + side  # transformers 5: s + max(H, W)
    assert ours[video_end, 0] == text + frames  # pe_lib: s + max(T, H, W)
    record("mrope_positions, text after a video with T > max(H, W)",
           float(np.max(np.abs(ours[:video_end] - theirs[:video_end]))), 0,
           "max |Δ| before the text that follows (then: see docstring)")


@pytest.mark.parametrize("segments", [[3, (1, 4, 6), 5], [2, (2, 3, 3), 4], [8]], ids=["image", "video", "text"])
def test_mrope_rotation_matches_qwen2_vl(segments):
    """``pe_lib.mrope`` against ``Qwen2VLRotaryEmbedding`` + ``apply_rotary_pos_emb`` (``rotate_half``)."""
    head_dim, heads, sections, base = 128, 2, [16, 24, 24], 1_000_000.0
    config = Qwen2VLTextConfig(hidden_size=head_dim * heads, num_attention_heads=heads, num_key_value_heads=heads,
                               rope_parameters={"rope_type": "default", "mrope_section": sections, "rope_theta": base})
    rotary = Qwen2VLRotaryEmbedding(config)
    positions = pe_lib.mrope_positions(segments)  # (n, 3)
    n = positions.shape[0]
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 1, heads, n, head_dim)).astype(np.float32)  # (batch, heads, n, d)
    position_ids = torch.tensor(positions.T[:, None, :])  # (3, batch, n)
    cos, sin = rotary(torch.tensor(q), position_ids)
    q_rot, k_rot = apply_rotary_pos_emb(torch.tensor(q), torch.tensor(k), cos, sin)
    ours_q = pe_lib.mrope(q.astype(np.float64), positions, sections, base=base)
    ours_k = pe_lib.mrope(k.astype(np.float64), positions, sections, base=base)
    tolerance = 4 * EPS32 * (1.0 + float(np.max(positions))) * float(np.max(np.abs(q)))  # omega_0 = 1
    diff = max(float(np.max(np.abs(ours_q - q_rot.double().numpy()))),
               float(np.max(np.abs(ours_k - k_rot.double().numpy()))))
    record("mrope rotation vs Qwen2-VL", diff, tolerance, "max |Δ|, bound 4 eps32 (1 + max p) max |x|")


class _VideoRopeIndex:
    """Just enough of ``Qwen2_5_VLModel`` to call its ``get_rope_index`` with a chosen ``tokens_per_second``."""

    get_rope_index = Qwen2_5_VLModel.get_rope_index
    get_vision_position_ids = Qwen2_5_VLModel.get_vision_position_ids

    def __init__(self, tokens_per_second):
        self.config = Qwen2_5_VLConfig()
        self.config.vision_config.tokens_per_second = tokens_per_second
        assert self.config.vision_config.spatial_merge_size == MERGE


# (T, H, W) after merging; the first is issue 45381's video (84 grids of 12 x 16, 15 text tokens before it)
VIDEO_GRIDS = [(84, 12, 16), (4, 1, 1), (8, 3, 5), (3, 2, 2), (1, 4, 4), (40, 2, 3)]
# seconds per grid = temporal_patch_size / fps for fps 4, 1, 4/3, 8/3, 3, 5, 2, 24 and PR 45400's 0.083
SECONDS_PER_GRID = [0.5, 2.0, 1.5, 0.75, 2 / 3, 0.4, 1.0, 1 / 12, 0.083]


@pytest.mark.parametrize("tokens_per_second", [2, 4, 25])
@pytest.mark.parametrize("second_per_grid", SECONDS_PER_GRID, ids=[f"{s:.3g}s" for s in SECONDS_PER_GRID])
@pytest.mark.parametrize("grid", VIDEO_GRIDS, ids=[str(g) for g in VIDEO_GRIDS])
def test_video_positions_match_qwen2_5_vl_get_rope_index(grid, second_per_grid, tokens_per_second):
    """``pe_lib.mrope_video_positions`` (rule "transformers 5.23.0") against ``Qwen2_5_VLModel.get_rope_index``
    for 15 text tokens, the video, 10 text tokens: every (t, h, w) of the video, and the text after it starting
    at ``next_start``. ``second_per_grid_ts`` is a float32 tensor, as the processor returns it; pe_lib is given
    the same float32 value, in float64."""
    t, h, w = grid
    before, after = 15, 10
    types = [0] * before + [2] * (t * h * w) + [0] * after
    seconds = torch.tensor([second_per_grid], dtype=torch.float32)
    position_ids, _ = _VideoRopeIndex(tokens_per_second).get_rope_index(
        torch.zeros(1, len(types), dtype=torch.long), torch.tensor([types]),
        video_grid_thw=torch.tensor([[t, h * MERGE, w * MERGE]]), second_per_grid_ts=seconds)
    theirs = position_ids[:, 0, :].T.numpy()  # (n, 3)
    ours, next_start = pe_lib.mrope_video_positions(grid, start=before, second_per_grid=float(seconds[0]),
                                                    tokens_per_second=tokens_per_second)
    text_after = np.repeat(np.arange(next_start, next_start + after)[:, None], 3, axis=1)
    expected = np.concatenate([np.repeat(np.arange(before)[:, None], 3, axis=1), ours, text_after])
    record("mrope_video_positions vs Qwen2.5-VL get_rope_index", float(np.max(np.abs(expected - theirs))), 0,
           "max |Δ| (integers)")


def test_text_after_issue_45381s_video_starts_inside_its_time_range():
    """transformers 5.23.0 starts the text after a video at s + max(H, W) (here 15 + 16 = 31) while the video's
    time positions run to s + floor(83 * 2 * 2) = 347; issue 45381 shows v5.2.0 starting it at 348."""
    types = [0] * 15 + [2] * (84 * 12 * 16) + [0] * 10
    position_ids, _ = _VideoRopeIndex(2).get_rope_index(
        torch.zeros(1, len(types), dtype=torch.long), torch.tensor([types]),
        video_grid_thw=torch.tensor([[84, 24, 32]]), second_per_grid_ts=torch.tensor([2.0]))
    time = position_ids[0, 0].numpy()
    assert time[15 + 84 * 12 * 16 - 1] == 347 and time[-10] == 31


# ---- resizing a learned table: ViT's interpolate_pos_encoding ------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("old, new", [(14, (24, 24)), (14, (7, 7)), (16, (12, 20)), (7, (9, 4)), (4, (16, 16)),
                                      (14, (14, 10))])
def test_resample_grid_matches_vit_interpolate_pos_encoding(old, new, dtype):
    d = 32
    config = ViTConfig(image_size=old * 16, patch_size=16, hidden_size=d, num_hidden_layers=1,
                       num_attention_heads=4, intermediate_size=64)
    embeddings = ViTEmbeddings(config).to(dtype)
    rng = np.random.default_rng(old * 100 + new[0])
    table = rng.normal(size=(old * old, d)).astype(np.float32)  # a "learned" table, without the class token
    cls = rng.normal(size=(1, d)).astype(np.float32)
    embeddings.position_embeddings.data = torch.tensor(np.concatenate([cls, table])[None], dtype=dtype)
    tokens = torch.zeros(1, new[0] * new[1] + 1, d, dtype=dtype)  # only its length is read
    theirs = embeddings.interpolate_pos_encoding(tokens, new[0] * 16, new[1] * 16)[0].double().numpy()
    np.testing.assert_array_equal(theirs[0], cls[0])  # the class token is passed through
    ours = pe_lib.resample_grid(table.astype(np.float64), (old, old), new)
    _record_resample("ViT interpolate_pos_encoding", dtype, ours, theirs[1:], old)


def _record_resample(what, dtype, ours, theirs, n):
    if dtype == torch.float64:
        record(f"resample_grid vs {what}, float64", relative_to_largest(ours, theirs), RESAMPLE_TOL64,
               "max |Δ| / max |table|")
    else:
        record(f"resample_grid vs {what}, float32", relative_to_largest(ours, theirs), 32 * EPS32 * n,
               "max |Δ| / max |table|, bound 32 eps32 n")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("method", ["bicubic", "bilinear"])
@pytest.mark.parametrize("old, new", [((14, 14), (24, 24)), ((14, 14), (5, 9)), ((6, 10), (23, 3)), ((1, 5), (3, 8)),
                                      ((9, 9), (9, 9))])
def test_resample_grid_matches_torch_interpolate(method, old, new, dtype):
    """``torch.nn.functional.interpolate(..., align_corners=False)`` on a non-square table, both methods."""
    d = 8
    rng = np.random.default_rng(sum(old) * 31 + sum(new))
    table = rng.normal(size=(old[0] * old[1], d)).astype(np.float32)
    image = torch.tensor(table.reshape(1, old[0], old[1], d), dtype=dtype).permute(0, 3, 1, 2)  # (1, d, h, w)
    resized = torch.nn.functional.interpolate(image, size=new, mode=method, align_corners=False)
    theirs = resized.permute(0, 2, 3, 1).reshape(-1, d).double().numpy()
    ours = pe_lib.resample_grid(table.astype(np.float64), old, new, method=method)
    _record_resample(f"torch interpolate ({method})", dtype, ours, theirs, max(old))
