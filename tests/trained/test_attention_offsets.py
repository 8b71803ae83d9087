"""The weight at one offset, query by query (pe_lib.weight_at_offset), checked against loops and by hand."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def random_maps(rng, shape, n, causal):
    scores = rng.normal(size=shape + (n, n))
    if causal:
        scores = np.where(np.tril(np.ones((n, n), bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@given(st.integers(1, 9), st.integers(0, 3), st.booleans(), st.integers(0, 2**32 - 1))
def test_weight_at_offset_matches_a_loop(n, extra_axes, causal, seed):
    shape = (2,) * extra_axes
    w = random_maps(np.random.default_rng(seed), shape, n, causal)
    for offset in range(n):
        got = pe_lib.weight_at_offset(w, offset)
        assert got.shape == shape + (n - offset,)
        for idx in np.ndindex(*shape):
            assert got[idx].tolist() == [w[idx][i, i - offset] for i in range(offset, n)]  # a_{i, i - Delta}
    if n >= 2:  # agrees with the single-map function of pe_lib.relative
        flat = w.reshape(-1, n, n)
        assert np.array_equal(pe_lib.weight_at_offset(flat, 1)[0], pe_lib.mass_on_offset(flat[0], 1))


def test_a_lookback_head_that_drifts():
    n, k = 8, 3
    w = np.zeros((n, n))
    for i in range(n):
        w[i, max(i - k, 0) if i < 6 else i] = 1.0  # key k back (or the first key), but the self from query 6 on
    assert pe_lib.weight_at_offset(w, k).tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]  # queries 3 .. 7
    assert pe_lib.weight_at_offset(w, 0).tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pe_lib.weight_at_offset(np.ones(4), 0), r"\(\.\.\., n, n\)"),
        (lambda: pe_lib.weight_at_offset(np.ones((3, 4)), 0), "square"),
        (lambda: pe_lib.weight_at_offset(np.ones((3, 3)), 3), "smaller than the number of positions 3"),
        (lambda: pe_lib.weight_at_offset(np.ones((3, 3)), -1), "offset"),
        (lambda: pe_lib.weight_at_offset(np.full((2, 2), np.nan), 0), "finite"),
    ],
)
def test_bad_input_is_refused_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_score_by_offset_of_maps_with_leading_axes_by_hand():
    """(1, H, n, n) maps with H != n, each averaged by hand per offset; a 1 x 1 map is its one score; an
    empty one is refused."""
    from pe_lib.trained.attention_offsets import score_by_offset

    maps = np.array([[[1, -np.inf], [3, 5]], [[2, -np.inf], [4, 8]], [[0, -np.inf], [6, 0]]])  # (3, 2, 2)
    # offset 0: the mean of the diagonal; offset 1: the one entry below it
    np.testing.assert_array_equal(score_by_offset(maps[None]), [[[3, 3], [5, 4], [0, 6]]])
    np.testing.assert_array_equal(score_by_offset(np.array([[7]])), [7])
    with pytest.raises(ValueError, match="square maps"):
        score_by_offset(np.zeros((1, 3, 0, 0)))


def test_score_by_offset_refuses_a_non_finite_score_at_or_below_the_diagonal():
    # -inf above the diagonal (a causal mask) is fine; at or below it, where the mean reads, it is refused
    # (planted: no finiteness check, which let the NaN through into the means)
    masked = np.triu(np.full((3, 3), -np.inf), 1)
    np.testing.assert_array_equal(pe_lib.score_by_offset(masked), [0.0, 0.0, 0.0])
    for bad in (np.nan, -np.inf):
        scores = masked.copy()
        scores[2, 0] = bad
        with pytest.raises(ValueError, match="finite at and below the diagonal"):
            pe_lib.score_by_offset(scores)
