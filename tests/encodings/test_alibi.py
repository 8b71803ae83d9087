"""ALiBi: the slopes of the reference rule, and a bias that grows linearly with distance."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def test_eight_heads_get_halves_down_to_one_over_256():
    halves = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
    np.testing.assert_array_equal(pe_lib.alibi_slopes(8), halves)


@pytest.mark.parametrize("h", [1, 2, 4, 16, 32, 64])
def test_power_of_two_heads_form_a_geometric_sequence_starting_at_its_ratio(h):
    slopes = pe_lib.alibi_slopes(h)
    start = 2.0 ** (-8.0 / h)
    assert slopes[0] == pytest.approx(start)
    np.testing.assert_allclose(slopes[1:] / slopes[:-1], start)
    assert slopes[-1] == pytest.approx(2.0**-8)  # always ends at 1/256


def test_non_power_of_two_hand_computed():
    # 12 heads: the 8 slopes of 8 heads, then slopes 0, 2, 4, 6 of 16 heads: 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
    expected = [2.0**-e for e in [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5]]
    np.testing.assert_allclose(pe_lib.alibi_slopes(12), expected)
    # 6 heads: 2^-2, 2^-4, 2^-6, 2^-8 (4 heads), then 2^-1, 2^-3 (every other of 8 heads)
    np.testing.assert_allclose(pe_lib.alibi_slopes(6), [2.0**-e for e in [2, 4, 6, 8, 1, 3]])
    np.testing.assert_allclose(pe_lib.alibi_slopes(3), [2.0**-4, 2.0**-8, 2.0**-2])


def _reference_rule(n):
    # the rule in words, written as a recursion: power of two -> geometric; else closest + every other of 2x
    if n & (n - 1) == 0:
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]
    p = 1 << (n.bit_length() - 1)
    return _reference_rule(p) + _reference_rule(2 * p)[0::2][: n - p]


@given(h=st.integers(1, 200))
def test_slopes_follow_the_reference_rule_and_are_distinct(h):
    slopes = pe_lib.alibi_slopes(h)
    np.testing.assert_allclose(slopes, _reference_rule(h), rtol=1e-14)
    assert slopes.shape == (h,)
    assert np.unique(slopes).size == h
    assert np.all((slopes > 0) & (slopes < 1))


@given(n=st.integers(1, 30), h=st.integers(1, 12))
def test_bias_is_minus_slope_times_distance(n, h):
    b = pe_lib.alibi_bias(n, h)
    assert b.shape == (h, n, n)
    m = pe_lib.alibi_slopes(h)
    i, j = 5 % n, 0
    np.testing.assert_allclose(b[:, i, j], -m * (i - j))
    np.testing.assert_array_equal(np.diagonal(b, axis1=1, axis2=2), 0.0)
    np.testing.assert_array_equal(b, np.swapaxes(b, 1, 2))
    # along a row (causal part) each step back lowers the bias by exactly the slope
    if n > 1:
        np.testing.assert_allclose(np.diff(b[:, n - 1, :], axis=-1), np.repeat(m[:, None], n - 1, axis=1))


def test_bias_makes_attention_decay_with_distance():
    n, h = 12, 4
    q = np.zeros((n, 2))  # no content: the scores are all equal, the bias alone decides
    w = pe_lib.attention_weights(q, q, bias=pe_lib.alibi_bias(n, h), causal=True)
    last = w[:, -1, :]
    assert np.all(np.diff(last, axis=-1) > 0)  # nearer keys get more weight
    # ratio of neighbouring weights is exp(slope)
    ratio = np.exp(pe_lib.alibi_slopes(h))[:, None] * np.ones((1, n - 1))
    np.testing.assert_allclose(last[:, 1:] / last[:, :-1], ratio)


@pytest.mark.parametrize(("args", "match"), [((0,), r"num_heads must be an integer >= 1, got 0"),
                                              ((2.0,), r"num_heads must be an integer >= 1, got 2.0")])
def test_slopes_validation(args, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.alibi_slopes(*args)


def test_bias_validation():
    with pytest.raises(ValueError, match=r"n must be an integer >= 1, got -3"):
        pe_lib.alibi_bias(-3, 8)
    with pytest.raises(ValueError, match=r"num_heads must be an integer >= 1"):
        pe_lib.alibi_bias(4, True)
