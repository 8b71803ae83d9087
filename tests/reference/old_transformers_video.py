r"""``pe_lib.mrope_video_positions``' two pre-fix rules against the released transformers versions that had the
bugs (``make reference-old``; not collected by ``make reference`` or ``make test``: the file name does not start
with ``test_``, and it needs an older transformers than ``.venv-reference`` holds).

* ``"before PR 45400"`` against transformers 5.3.0 (issue 45381: every token of a video at one time position,
  ``torch.full(..., start_position) * time_interval``, and rows from ``repeat_interleave(W * T)``);
* ``"before PR 48669"`` against transformers 5.10.1 (PR 45400 merged, ``int(second_per_grid_ts)`` still
  truncating the seconds before the product).

The Makefile installs the pinned version (``REF_OLD_TRANSFORMERS``) with its dependencies that differ from
``.venv-reference``'s (``requirements-reference-old.txt``) into ``.venv-reference/old/`` and runs this file once
per version with ``PE_OLD_TRANSFORMERS`` set and those folders first on ``PYTHONPATH``; torch and pe_lib are
``.venv-reference``'s. Positions are integers: compared exactly, every token of the sequence (the text before
and after the video too).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
import transformers
from conftest import record
from transformers import Qwen2_5_VLConfig
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel

import pe_lib

RULES = {"5.3.0": "before PR 45400", "5.10.1": "before PR 48669"}  # version -> the pe_lib rule it had
VERSION = os.environ.get("PE_OLD_TRANSFORMERS", "")
MERGE = 2  # spatial_merge_size

# as in test_transformers_vision.py: issue 45381's video first, then shorter and longer ones
VIDEO_GRIDS = [(84, 12, 16), (4, 1, 1), (8, 3, 5), (3, 2, 2), (1, 4, 4), (40, 2, 3)]
SECONDS_PER_GRID = [0.5, 2.0, 1.5, 0.75, 2 / 3, 0.4, 1.0, 1 / 12, 0.083, 3.0]


def test_the_installed_version_is_the_pinned_one():
    assert VERSION in RULES, f"set PE_OLD_TRANSFORMERS to one of {list(RULES)} (make reference-old does)"
    assert transformers.__version__ == VERSION, (transformers.__version__, transformers.__file__)


class _VideoRopeIndex:
    """Just enough of ``Qwen2_5_VLModel`` to call its ``get_rope_index`` with a chosen ``tokens_per_second``."""

    get_rope_index = Qwen2_5_VLModel.get_rope_index
    get_vision_position_ids = Qwen2_5_VLModel.get_vision_position_ids

    def __init__(self, tokens_per_second):
        self.config = Qwen2_5_VLConfig()
        self.config.vision_config.tokens_per_second = tokens_per_second
        assert self.config.vision_config.spatial_merge_size == MERGE


def _theirs(grid, second_per_grid, tokens_per_second, before, after):
    t, h, w = grid
    types = [0] * before + [2] * (t * h * w) + [0] * after
    position_ids, _ = _VideoRopeIndex(tokens_per_second).get_rope_index(
        torch.zeros(1, len(types), dtype=torch.long), torch.tensor([types]),
        video_grid_thw=torch.tensor([[t, h * MERGE, w * MERGE]]),
        second_per_grid_ts=torch.tensor([second_per_grid], dtype=torch.float32))
    return position_ids[:, 0, :].T.numpy()  # (n, 3)


@pytest.mark.parametrize("tokens_per_second", [2, 25])
@pytest.mark.parametrize("second_per_grid", SECONDS_PER_GRID, ids=[f"{s:.3g}s" for s in SECONDS_PER_GRID])
@pytest.mark.parametrize("grid", VIDEO_GRIDS, ids=[str(g) for g in VIDEO_GRIDS])
def test_the_pre_fix_rule_matches_the_released_version(grid, second_per_grid, tokens_per_second):
    if VERSION not in RULES:
        pytest.skip("no pinned old transformers (run make reference-old)")
    before, after = 15, 10
    theirs = _theirs(grid, second_per_grid, tokens_per_second, before, after)
    seconds = float(np.float32(second_per_grid))  # the processor's float32 value, as transformers receives it
    ours, next_start = pe_lib.mrope_video_positions(grid, start=before, second_per_grid=seconds,
                                                    tokens_per_second=tokens_per_second, rule=RULES[VERSION])
    text_after = np.repeat(np.arange(next_start, next_start + after)[:, None], 3, axis=1)
    expected = np.concatenate([np.repeat(np.arange(before)[:, None], 3, axis=1), ours, text_after])
    record(f"mrope_video_positions rule {RULES[VERSION]!r} vs transformers {VERSION} get_rope_index",
           float(np.max(np.abs(expected - theirs))), 0, "max |Δ| (integers)")


@pytest.mark.parametrize("second_per_grid", [0.5, 1.5])
def test_the_bug_is_there(second_per_grid):
    """The released version does differ from 5.23.0's rule where the chapter says it does: a grid of 6 x 1 x 1
    at 0.5 s (both versions: every grid at the start) and 1.5 s (5.10.1: steps of 2, not 3; 5.3.0: all at
    start * 2 * 1)."""
    if VERSION not in RULES:
        pytest.skip("no pinned old transformers (run make reference-old)")
    theirs = _theirs((6, 1, 1), second_per_grid, 2, 0, 1)[:6, 0]
    fixed = pe_lib.mrope_video_positions((6, 1, 1), second_per_grid=second_per_grid)[0][:, 0]
    assert not np.array_equal(theirs, fixed)
    want = {(0.5, "5.3.0"): [0] * 6, (0.5, "5.10.1"): [0] * 6, (1.5, "5.3.0"): [0] * 6,
            (1.5, "5.10.1"): [0, 2, 4, 6, 8, 10]}[second_per_grid, VERSION]
    assert theirs.tolist() == want and fixed.tolist() == ([0, 1, 2, 3, 4, 5] if second_per_grid == 0.5
                                                          else [0, 3, 6, 9, 12, 15])
