"""M-RoPE: each rotary pair turns by one position axis; Qwen2-VL's positions for text and images."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def reference(x, positions, sections, base=10_000.0, layout="split"):
    """Pair i (dims (i, i + d/2) or (2i, 2i+1)) of row m turns by positions[m][axis] * base^(-2i/d), axis = the
    section that pair i falls in."""
    n, d = x.shape
    axis_of = [a for a, size in enumerate(sections) for _ in range(size)]
    out = np.array(x, dtype=float)
    for m in range(n):
        for i in range(d // 2):
            theta = positions[m][axis_of[i]] * base ** (-2 * i / d)
            ia, ib = (i, i + d // 2) if layout == "split" else (2 * i, 2 * i + 1)
            a, b = x[m, ia], x[m, ib]
            out[m, ia] = a * math.cos(theta) - b * math.sin(theta)
            out[m, ib] = a * math.sin(theta) + b * math.cos(theta)
    return out


@pytest.mark.parametrize("layout", ["split", "interleaved"])
@pytest.mark.parametrize(("d", "sections"), [(128, [16, 24, 24]), (16, [2, 3, 3]), (8, [4, 0]), (12, [6])])
def test_matches_the_reference(layout, d, sections):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, d))
    pos = rng.uniform(-50, 50, size=(7, len(sections)))
    np.testing.assert_allclose(pe_lib.mrope(x, pos, sections, layout=layout),
                               reference(x, pos, sections, layout=layout), rtol=0, atol=1e-12)


def test_text_tokens_get_plain_rope():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 32))  # a leading batch axis
    pos = np.arange(5.0)
    same = np.repeat(pos[:, None], 3, axis=1)  # t = h = w
    for layout in ("split", "interleaved"):
        np.testing.assert_allclose(pe_lib.mrope(x, same, [4, 6, 6], layout=layout), pe_lib.rope(x, pos, layout=layout),
                                   atol=1e-13)


@given(shift=st.lists(st.floats(-100, 100), min_size=3, max_size=3))
def test_scores_depend_on_position_differences_axis_by_axis(shift):
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(6, 16)), rng.normal(size=(6, 16))
    pos = rng.uniform(0, 30, size=(6, 3))
    scores = pe_lib.mrope(q, pos, [2, 3, 3]) @ pe_lib.mrope(k, pos, [2, 3, 3]).T
    moved = pos + np.array(shift)  # the same offset for every token, a different one per axis
    np.testing.assert_allclose(pe_lib.mrope(q, moved, [2, 3, 3]) @ pe_lib.mrope(k, moved, [2, 3, 3]).T, scores,
                               atol=1e-9)


def test_qwen2_vl_positions_by_hand():
    # 3 text tokens, an image of 2 x 3 merged patches, 2 text tokens
    pos = pe_lib.mrope_positions([3, (1, 2, 3), 2])
    np.testing.assert_array_equal(pos, [[0, 0, 0], [1, 1, 1], [2, 2, 2],
                                        [3, 3, 3], [3, 3, 4], [3, 3, 5], [3, 4, 3], [3, 4, 4], [3, 4, 5],
                                        [6, 6, 6], [7, 7, 7]])
    # a video of 2 frames of 2 x 2 patches at the start: frame-major, then row-major; the next start is 2
    video = pe_lib.mrope_positions([(2, 2, 2), 1])
    np.testing.assert_array_equal(video[:5], [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0]])
    np.testing.assert_array_equal(video[-1], [2, 2, 2])
    # a 16 x 16 image: 256 tokens, but the text after it starts only 16 positions later
    big = pe_lib.mrope_positions([1, (1, 16, 16), 1])
    assert len(big) == 258 and big[-1].tolist() == [17, 17, 17]
    assert pe_lib.mrope_positions([]).shape == (0, 3)


def test_text_after_a_long_video_starts_after_its_last_frame():
    # The Qwen2-VL paper and transformers 4.x: the next segment starts one after the largest position so
    # far. A video of 4 frames of 2 x 2 patches starting at 1 uses temporal positions 1 .. 4, so the text
    # after it starts at 5; transformers 5 (5.23.0) starts it at 1 + max(H, W) = 3 (tests/reference).
    pos = pe_lib.mrope_positions([1, (4, 2, 2), 2])
    assert pos[1 + 16 - 1].tolist() == [4, 2, 2]  # the video's last patch: frame 3, row 1, column 1, from 1
    assert pos[-2:].tolist() == [[5, 5, 5], [6, 6, 6]]


@pytest.mark.parametrize(("call", "match"), [
    (lambda: pe_lib.mrope(np.zeros((3, 8)), np.zeros((3, 3)), [1, 1, 1]), r"summing to d/2 = 4, got \[1, 1, 1\]"),
    (lambda: pe_lib.mrope(np.zeros((3, 8)), np.zeros((3, 3)), [2, 2]), r"sections must be 3 non-negative ints"),
    (lambda: pe_lib.mrope(np.zeros((3, 8)), np.zeros((3, 2)), [5, -1]), r"non-negative ints"),
    (lambda: pe_lib.mrope(np.zeros((3, 8)), np.zeros((3, 2)), [2.0, 2.0]), r"non-negative ints"),
    (lambda: pe_lib.mrope(np.zeros((3, 8)), np.zeros((3, 2)), "22"), r"non-negative ints"),
    (lambda: pe_lib.mrope(np.zeros((3, 8)), np.zeros((4, 2)), [2, 2]), r"x has 3 rows, positions 4"),
    (lambda: pe_lib.mrope(np.zeros((3, 8)), np.zeros(3), [4]), r"positions must have shape \(n, axes\)"),
    (lambda: pe_lib.mrope(np.zeros((3, 7)), np.zeros((3, 1)), [3]), r"positive even integer"),
    (lambda: pe_lib.mrope(np.zeros(8), np.zeros((1, 1)), [4]), r"x must have shape \(\.\.\., n, d\)"),
    (lambda: pe_lib.mrope(np.zeros((3, 8)), np.zeros((3, 1)), [4], layout="neox"), r"layout must be one of"),
    (lambda: pe_lib.mrope_positions(5), r"segments must be a list"),
    (lambda: pe_lib.mrope_positions([0]), r"a text run must be an integer >= 1"),
    (lambda: pe_lib.mrope_positions([(1, 2)]), r"an int \(text tokens\) or a \(T, H, W\) triple"),
    (lambda: pe_lib.mrope_positions([True]), r"an int \(text tokens\) or a \(T, H, W\) triple"),
    (lambda: pe_lib.mrope_positions([(1, 0, 2)]), r"H of a vision block must be an integer >= 1"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_mrope_turns_by_the_given_base():
    # d = 4, base 100: omega = (1, 100^(-1/2)) = (1, 0.1); pair 1 = dimensions (1, 3) in the split layout
    out = pe_lib.mrope(np.array([[0.0, 1.0, 0.0, 0.0]]), [[3, 0, 0]], [2, 0, 0], base=100.0)
    np.testing.assert_allclose(out, [[0.0, np.cos(0.3), 0.0, np.sin(0.3)]], rtol=0, atol=1e-15)


def test_mrope_names_the_head_dimension_and_refuses_sections_that_are_no_list():
    with pytest.raises(ValueError, match=r"^the last axis of x \(the head dimension d\) must be a positive even"):
        pe_lib.mrope(np.zeros((1, 5)), [[0, 0, 0]], [1, 1, 0])
    with pytest.raises(ValueError, match=r"^sections must be 3 non-negative ints .* got 2;"):
        pe_lib.mrope(np.zeros((1, 4)), [[0, 0, 0]], 2)


def test_mrope_positions_are_int64_even_when_empty():
    assert pe_lib.mrope_positions([]).dtype == np.int64 and pe_lib.mrope_positions([]).shape == (0, 3)
    assert pe_lib.mrope_positions([2, (1, 2, 2)]).dtype == np.int64


# ---- Qwen2.5-VL videos: time positions in seconds (mrope_video_positions) ---------------------------
def test_issue_45381s_video_under_each_rule():
    # The numbers printed in transformers issue 45381: 15 text tokens, a video of 84 grids of 12 x 16 merged
    # patches (16128 tokens) at fps 1 (2 s per grid), tokens_per_second 2. v5.2.0: time 15 .. 347; 5.3.0: every
    # token at 60 = 15 * 2 * 2, heights 15 for the first 300 tokens; both: widths 15 .. 30, heights up to 26.
    fixed, next_fixed = pe_lib.mrope_video_positions((84, 12, 16), start=15, second_per_grid=2.0)
    broken, next_broken = pe_lib.mrope_video_positions((84, 12, 16), start=15, second_per_grid=2.0,
                                                       rule="before PR 45400")
    assert fixed.shape == broken.shape == (16128, 3)
    assert fixed[0, 0] == 15 and fixed[-1, 0] == 347 and len(np.unique(fixed[:, 0])) == 84
    assert set(broken[:, 0].tolist()) == {60}
    assert set(broken[:300, 1].tolist()) == {15} and broken[-1, 1] == 26
    np.testing.assert_array_equal(broken[:, 2], fixed[:, 2])
    np.testing.assert_array_equal(fixed[:16, 2], np.arange(15, 31))
    np.testing.assert_array_equal(fixed[:16 * 12, 1], np.repeat(np.arange(15, 27), 16))  # row-major in a frame
    np.testing.assert_array_equal(fixed[16 * 12:16 * 13, 1], np.full(16, 15))  # the next frame starts at row 0
    assert next_fixed == next_broken == 31  # s + max(H, W), inside the video's time range
    # the seconds were truncated there too (int(next(second_per_grid_ts))): 1.5 s per grid counts as 1
    assert set(pe_lib.mrope_video_positions((2, 1, 1), start=10, second_per_grid=1.5, rule="before PR 45400")[0][:, 0]
               .tolist()) == {20}


def test_pr_48669s_examples():
    # "four grids with 0.5-second intervals now have relative temporal coordinates [0, 1, 2, 3] instead of
    # [0, 0, 0, 0]" (tokens_per_second 2); a scaled step of 1.5 accumulates: 0, 1.5, 3, 4.5 -> 0, 1, 3, 4
    def times(delta, rule, tokens=2):
        return pe_lib.mrope_video_positions((4, 1, 1), second_per_grid=delta, tokens_per_second=tokens,
                                            rule=rule)[0][:, 0].tolist()
    assert times(0.5, "transformers 5.23.0") == [0, 1, 2, 3]
    assert times(0.5, "before PR 48669") == [0, 0, 0, 0]
    assert times(1.5, "transformers 5.23.0", tokens=1) == [0, 1, 3, 4]
    assert times(1.5, "before PR 48669", tokens=1) == [0, 1, 2, 3]  # int(1.5) = 1
    assert times(2.0, "before PR 48669") == times(2.0, "transformers 5.23.0") == [0, 4, 8, 12]  # whole seconds agree


def test_the_integration_test_of_pr_45400_could_not_see_the_bug():
    # second_per_grid 0.083 truncates to 0: before either fix, every grid gets one time position, which is what a
    # test expecting "interval x 0" expects too. Since PR 48669 the grids move apart, one step per 1/0.166 grids.
    for rule in ("before PR 45400", "before PR 48669"):
        assert len(set(pe_lib.mrope_video_positions((8, 1, 1), second_per_grid=0.083, rule=rule)[0][:, 0])) == 1
    assert pe_lib.mrope_video_positions((8, 1, 1), second_per_grid=0.083)[0][:, 0].tolist() == [0] * 7 + [1]


def test_qwen_docstring_example_and_agreement_with_mrope_positions():
    # get_rope_index's docstring (the Qwen team's): fps 1, tokens_per_second 25, temporal_patch_size 2 -> 50 apart
    pos, nxt = pe_lib.mrope_video_positions((3, 2, 2), second_per_grid=2.0, tokens_per_second=25)
    assert pos[:, 0].tolist() == [0] * 4 + [50] * 4 + [100] * 4
    assert pos[:, 1].tolist() == [0, 0, 1, 1] * 3 and pos[:, 2].tolist() == [0, 1, 0, 1] * 3 and nxt == 2
    # one time step per grid (Qwen2-VL) is mrope_positions' video block
    np.testing.assert_array_equal(pe_lib.mrope_video_positions((3, 4, 5), start=7, tokens_per_second=1)[0],
                                  pe_lib.mrope_positions([7, (3, 4, 5)])[7:])


def test_fast_videos_share_time_positions_by_design():
    # tokens_per_second 2 and 2 frames per grid: above 4 frames per second two grids can share a time position
    for fps, distinct in ((4, 10), (5, 8), (8, 5)):
        times = pe_lib.mrope_video_positions((10, 1, 1), second_per_grid=2 / fps)[0][:, 0]
        assert len(set(times.tolist())) == distinct  # floor(k * 4 / fps), k = 0..9


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(grid=(2, 2)), r"grid must be a \(T, H, W\) triple of integers >= 1, got \(2, 2\)"),
    (dict(grid=5), r"grid must be a \(T, H, W\) triple"),
    (dict(grid=(0, 2, 2)), r"T of grid must be an integer >= 1, got 0"),
    (dict(grid=(1, 2, 2.0)), r"W of grid must be an integer >= 1"),
    (dict(grid=(1, 2, 2), start=-1), r"start must be an integer >= 0, got -1"),
    (dict(grid=(1, 2, 2), second_per_grid=0.0), r"second_per_grid must be > 0 .* got 0.0"),
    (dict(grid=(1, 2, 2), second_per_grid=float("nan")), r"second_per_grid must be a finite real number"),
    (dict(grid=(1, 2, 2), tokens_per_second=0), r"tokens_per_second must be an integer >= 1, got 0"),
    (dict(grid=(1, 2, 2), rule="5.3.0"), r"rule must be one of 'transformers 5.23.0', 'before PR 48669'"),
])
def test_video_positions_bad_input(kwargs, match):
    grid = kwargs.pop("grid")
    with pytest.raises(ValueError, match=match):
        pe_lib.mrope_video_positions(grid, **kwargs)
