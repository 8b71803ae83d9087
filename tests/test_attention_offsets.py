"""Attention by offset (pe_lib.attention_offsets), checked against loops and hand-made attention maps."""

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
def test_both_views_match_loops(n, extra_axes, causal, seed):
    rng = np.random.default_rng(seed)
    shape = (2,) * extra_axes
    w = random_maps(rng, shape, n, causal)
    delta, profile = pe_lib.attention_by_offset(w)
    assert delta.tolist() == list(range(-(n - 1), n))
    assert profile.shape == shape + (2 * n - 1,)
    for idx in np.ndindex(*shape):
        for t, d in enumerate(delta):
            entries = [w[idx][i, i - d] for i in range(n) if 0 <= i - d < n]  # a_{i, i - Delta}
            assert profile[idx][t] == pytest.approx(np.mean(entries), abs=1e-12)
        for offset in range(n):
            got = pe_lib.weight_at_offset(w, offset)[idx]
            assert got.tolist() == [w[idx][i, i - offset] for i in range(offset, n)]
    if causal:  # nothing after the query
        assert np.all(profile[..., : n - 1] == 0)


def test_a_pure_lookback_head():
    n, k = 8, 3
    w = np.zeros((n, n))
    for i in range(n):
        w[i, max(i - k, 0)] = 1.0  # key k back, or the first key when there is none
    assert pe_lib.weight_at_offset(w, k).tolist() == [1.0] * (n - k)
    delta, profile = pe_lib.attention_by_offset(w)
    assert profile[delta == k][0] == 1.0
    assert profile[delta == k - 1][0] == pytest.approx(1 / (n - k + 1))  # only query k-1 -> key 0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pe_lib.attention_by_offset(np.ones(4)), r"\(\.\.\., n, n\)"),
        (lambda: pe_lib.attention_by_offset(np.ones((3, 4))), "square"),
        (lambda: pe_lib.weight_at_offset(np.ones((3, 3)), 3), "smaller than the number of positions 3"),
        (lambda: pe_lib.weight_at_offset(np.ones((3, 3)), -1), "offset"),
        (lambda: pe_lib.weight_at_offset(np.full((2, 2), np.nan), 0), "finite"),
    ],
)
def test_bad_input_is_refused_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()
